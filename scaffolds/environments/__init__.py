"""Where agent commands run: the Environment protocol, a local worktree, a network-less container."""
