"""Runs of other harnesses (mini-swe-agent batches, SWE-agent, OpenHands) read into our run layout."""
