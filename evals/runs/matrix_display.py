"""The run matrix's progress bar and live summary line (rich, on stderr), or nothing when disabled.

The line counts what the results say: the agents' endings (exit statuses) apart from infrastructure
errors and crashes, and the money spent against the budget, e.g.

    matrix ━━━━━━━━━━━━━━━━━━━━━━━  12/40 0:01:13  Submitted 9 · LimitsExceeded 2 · infra 1 · crashed 0 · $1.42/$20
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn


class Display:
    def __init__(self, enabled: bool, total: int, finished: Iterable[dict], budget: float) -> None:
        self.budget = budget
        self.endings: Counter[str] = Counter()
        self.problems: Counter[str] = Counter({"infra_error": 0, "crashed": 0})
        self.cost = 0.0
        finished = list(finished)
        for record in finished:
            self._count(record)
        self.progress = None
        if enabled:
            self.progress = Progress(
                TextColumn("[bold]matrix"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.fields[live]}"),
                console=Console(stderr=True),
            )
            self.task = self.progress.add_task("matrix", total=total, completed=len(finished), live=self.line())

    def _count(self, record: dict) -> None:
        if record["status"] == "done":
            self.endings[str(record["exit_status"])] += 1
        else:
            self.problems[record["status"]] += 1
        self.cost += record.get("cost") or 0.0

    def line(self) -> str:
        endings = [f"{status} {count}" for status, count in sorted(self.endings.items())]
        problems = [f"infra {self.problems['infra_error']}", f"crashed {self.problems['crashed']}"]
        money = f"${self.cost:.4g}" + (f"/${self.budget:g}" if self.budget else "")
        return " · ".join([*endings, *problems, money])

    def add(self, record: dict) -> None:
        self._count(record)
        if self.progress is not None:
            self.progress.update(self.task, advance=1, live=self.line())

    def __enter__(self) -> Display:
        if self.progress is not None:
            self.progress.start()
        return self

    def __exit__(self, *exc) -> None:
        if self.progress is not None:
            self.progress.stop()
