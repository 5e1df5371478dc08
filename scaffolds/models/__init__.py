"""Models: the litellm wrapper, the scripted OpenAI-compatible server, the relay OpenCode talks to."""
