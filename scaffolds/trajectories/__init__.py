"""Trajectories in one normalised format, and readers that detect and convert each scaffold's."""
