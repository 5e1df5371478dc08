"""Steps: shell command splitting, the STEPS.md classifier, and tidy per-step rows."""
