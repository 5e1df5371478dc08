"""The mini-swe-agent adapter and our Environment behind its environment protocol."""
