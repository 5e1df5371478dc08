"""What running in environment images costs, as ratios measured in one run, on the embedded fixture.

(a) the image build (the fixture's (repo, version), wheels already fetched, `docker build --no-cache`) beside
finding it built; (b) per task, a container of the image holding a copy of the tree (start, copy, one
command, removal) beside the same command on the host; (c) grading the gold patch of each fixture instance in
the image beside the local provider. Each the best of `--rounds`. Needs a Docker engine with the base image.

    python benchmarks/image_overhead.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from timing import best  # noqa: E402  (beside this script)

from repoanchor.evals.demo.fixture_project import materialize_fixture  # noqa: E402
from repoanchor.evals.harness import container_run, grading, instance_env  # noqa: E402
from repoanchor.evals.harness.datasets import load_dataset  # noqa: E402
from repoanchor.evals.images.build import build_env_image, build_image, build_inputs  # noqa: E402
from repoanchor.scaffolds.environments.docker_container import connect  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="repoanchor-bench-") as scratch:
        root = Path(scratch)
        repo, dataset = materialize_fixture(root / "fixture")
        rows = load_dataset(dataset).rows
        cache = root / "cache"
        build_env_image(rows[0], None, cache)  # the image, plan and wheels exist from here on
        made = build_inputs(rows[0], None, cache)
        client = connect()
        tag = made.tag.replace("repoanchor/", "repoanchor/bench-", 1)
        try:
            build_s = best(args.rounds, lambda: build_image(client, made, tag, nocache=True, kind="benchmark"))
        finally:
            client.images.remove(tag, force=True)
            client.close()
        found_s = best(args.rounds, lambda: build_env_image(rows[0], None, cache))
        env = container_run.env_image_spec(rows[0])
        container_s = best(args.rounds, lambda: container_run.run_in_tree(repo, "git status --short", env, 60))
        host_s = best(args.rounds, lambda: subprocess.run(["git", "status", "--short"], cwd=repo, check=True))
        grades = {}
        for provider in ("local", "image"):
            for row in rows:
                work = root / f"{provider}-{row['instance_id']}"
                spec = instance_env.prepare(row, provider, work, repo_cache=root / "fixture", cache_dir=cache / "v")
                grades.setdefault(provider, 0.0)
                job = lambda work=work, row=row, spec=spec: grading.run_tests(work, row, row["patch"], spec)  # noqa: E731
                grades[provider] += best(args.rounds, job)
    print(json.dumps({
        "image_build_s": round(build_s, 2), "image_found_s": round(found_s, 3),
        "build_over_found": round(build_s / found_s, 1),
        "container_task_s": round(container_s, 3), "host_command_s": round(host_s, 4),
        "container_over_host": round(container_s / host_s, 1),
        "grade_local_s": round(grades["local"], 2), "grade_image_s": round(grades["image"], 2),
        "grade_image_over_local": round(grades["image"] / grades["local"], 2), "instances": len(rows),
    }, indent=1))  # fmt: skip


if __name__ == "__main__":
    main()
