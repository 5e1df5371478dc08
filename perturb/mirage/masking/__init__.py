"""runtime-target-masking: a module's code hidden in a sibling file run by a forwarder, with decoys."""
