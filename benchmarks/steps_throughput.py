"""Step parser throughput and mini-swe-agent adapter overhead, measured in one run. Prints JSON.

1. Steps classified per second: every trajectory under the shared data folder is read and every action
   classified by the STEPS.md rubric (reading and classifying timed separately), repeated `--rounds` times.
2. Adapter overhead per step: the same scripted turns (N bash commands, then submit) served by the scripted
   server to (a) a bare mini-swe-agent DefaultAgent + LocalEnvironment on a plain copy of the repository
   and (b) our adapter (LocalCheckout, trajectory normalisation, patch, records). Both use the real
   litellm client over HTTP; the ratio is (b)/(a) wall time, the overhead is their difference per step.

    python benchmarks/steps_throughput.py [--rounds 3] [--turns 30] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from repoanchor.scaffolds.steps.classify import classify  # noqa: E402
from repoanchor.scaffolds.steps.sequence import action_text  # noqa: E402
from repoanchor.scaffolds.trajectories.readers import read_many  # noqa: E402
from tests.support.shared import shared_path  # noqa: E402


def classification_rate(rounds: int) -> dict:
    files = sorted(p for p in shared_path("data", "trajectories").rglob("*") if p.is_file())
    if not files:
        return {"error": f"no trajectories under {shared_path('data', 'trajectories')}"}
    read_s, classify_s, steps = [], [], 0
    for _ in range(rounds):
        t0 = time.perf_counter()
        batch = read_many(files)
        t1 = time.perf_counter()
        actions = [action for trajectory in batch.trajectories for action in trajectory.actions]
        for action in actions:
            classify(action.tool, action_text(action))
        t2 = time.perf_counter()
        read_s.append(t1 - t0)
        classify_s.append(t2 - t1)
        steps = len(actions)
    best_classify, best_read = min(classify_s), min(read_s)
    return {
        "files": len(files),
        "steps": steps,
        "classify_steps_per_s": round(steps / best_classify),
        "read_and_classify_steps_per_s": round(steps / (best_classify + best_read)),
    }


def scripted_turns(n: int):
    from repoanchor.scaffolds.models.scripted_server import Reply
    from tests.support.bug_repo import FIX_SED

    commands = [f"grep -n 'def' calc.py | head -{1 + i % 3}" for i in range(n - 1)] + [FIX_SED]
    commands.append("echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT")
    return [Reply(f"step {i}", tool_calls=[_call(i, command)]) for i, command in enumerate(commands)], len(commands)


def _call(i: int, command: str) -> dict:
    arguments = json.dumps({"command": command})
    return {"id": f"call_{i}", "type": "function", "function": {"name": "bash", "arguments": arguments}}


def bare_run(repo: Path, base_url: str, scratch: Path) -> float:
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models import get_model

    copy = scratch / "bare"
    shutil.copytree(repo, copy)
    model = get_model(config={"model_name": "openai/scripted", "model_kwargs": {"api_base": base_url}})
    agent = DefaultAgent(
        model,
        LocalEnvironment(cwd=str(copy)),
        system_template="You fix bugs.",
        instance_template="{{task}}",
        step_limit=0,
        cost_limit=0,
    )
    t0 = time.perf_counter()
    info = agent.run("Fix add().")
    elapsed = time.perf_counter() - t0
    assert info["exit_status"] == "Submitted", info
    return elapsed


def adapter_run(repo: Path, base_url: str, scratch: Path, run_index: int) -> float:
    from repoanchor.scaffolds.environments.local import LocalCheckout
    from repoanchor.scaffolds.mini.adapter import MiniSweAgent
    from repoanchor.scaffolds.models.model import ModelConfig
    from repoanchor.scaffolds.records import Limits

    model = ModelConfig(model="openai/scripted", api_base=base_url)
    t0 = time.perf_counter()
    with LocalCheckout(repo) as env:
        record = MiniSweAgent().run("Fix add().", env, model, Limits(), scratch / f"adapter-{run_index}")
    elapsed = time.perf_counter() - t0
    assert record.exit_status == "Submitted", record
    return elapsed


def adapter_overhead(turns: int, repeats: int) -> dict:
    from repoanchor.scaffolds.mini.adapter import prepare_imports
    from repoanchor.scaffolds.models.scripted_server import ScriptedServer
    from tests.support.bug_repo import make_bug_repo

    os.environ.setdefault("OPENAI_API_KEY", "sk-benchmark-not-a-secret")
    os.environ.setdefault("MSWEA_COST_TRACKING", "ignore_errors")
    prepare_imports(max_retries=0)
    import litellm  # the import (~5 s) happens once, before any timing
    import minisweagent.models.litellm_model  # noqa: F401

    litellm.suppress_debug_info = True
    bare, ours = [], []
    with tempfile.TemporaryDirectory() as tmp, ScriptedServer() as server:
        scratch = Path(tmp)
        repo = make_bug_repo(scratch)
        steps = 0
        for index in range(repeats):
            replies, steps = scripted_turns(turns)
            server.push(*replies)
            bare.append(bare_run(repo, server.base_url, scratch / f"b{index}"))
            server.push(*replies)
            ours.append(adapter_run(repo, server.base_url, scratch, index))
    bare_s, ours_s = statistics.median(bare), statistics.median(ours)
    return {
        "steps_per_run": steps,
        "repeats": repeats,
        "bare_median_s": round(bare_s, 3),
        "adapter_median_s": round(ours_s, 3),
        "ratio": round(ours_s / bare_s, 2),
        "overhead_ms_per_step": round(1000 * (ours_s - bare_s) / steps, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--turns", type=int, default=30)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    result = {"classification": classification_rate(args.rounds), "adapter": adapter_overhead(args.turns, args.repeats)}
    print(json.dumps(result, indent=1))


if __name__ == "__main__":
    main()
