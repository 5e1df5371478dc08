"""The OpenCode adapter: installing the binary, running its process, reading its trajectories."""
