"""Scaffold adapters by name. Each class has `name` and `run(task, env, model, limits, out) -> RunRecord`.

A plain dict, so adding a scaffold is one line here; importing it stays cheap because every adapter
imports its scaffold (mini-swe-agent, litellm, a binary) only when it runs.
"""

from __future__ import annotations

from repoanchor.scaffolds.mini.adapter import MiniSweAgent
from repoanchor.scaffolds.opencode.adapter import OpenCode

SCAFFOLDS = {"mini-swe-agent": MiniSweAgent, "opencode": OpenCode}
