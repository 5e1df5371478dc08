"""Where agent commands run: the Environment protocol, a standalone local checkout, a network-less container."""
