"""`repoanchor show RUN`: one run's trajectory, readably, in the terminal.

For a run folder (a plain run, an anchored run's stages, a matrix unit and its attempts) or a trajectory file:
each step's index, phase and category (the STEPS.md rubric), the command, and the first lines of its output.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

WIDTH = 160
"""Characters kept of a command or output line: enough to read it, short enough to scan."""


def header(trajectory) -> str:
    cost = "unknown" if trajectory.cost is None else f"${trajectory.cost:.4f}"
    tokens = f"{trajectory.input_tokens or '?'} in / {trajectory.output_tokens or '?'} out"
    return (
        f"model {trajectory.model or '?'} · ended {trajectory.exit_status or '?'} · "
        f"{len(trajectory.actions)} steps · cost {cost} · tokens {tokens}"
    )


def clip(text: str) -> str:
    return text if len(text) <= WIDTH else text[: WIDTH - 1] + "…"


def step_lines(action, label, output_lines: int) -> list[str]:
    """The step's label and command, then its exit code and the first `output_lines` lines of its output."""
    from repoanchor.scaffolds.steps.sequence import action_text

    text = action_text(action)
    command = text.rstrip().splitlines() or [""]  # a command ending in a newline is still one line
    more = f"  (+{len(command) - 1} lines)" if len(command) > 1 else ""
    lines = [f"#{action.index:<3} {label.phase:<8}{label.category:<7} {action.tool}: {clip(command[0])}{more}"]
    status = "tool error" if action.tool_error else f"exit {action.exit_code}" if action.exit_code is not None else ""
    status = status or ("exit code not recorded" if action.output_excerpt.strip() else "")
    output = [line for line in action.output_excerpt.splitlines() if line.strip()]
    shown = [clip(line) for line in output[:output_lines]]
    if len(output) > output_lines:
        shown.append(f"… {len(output) - output_lines} more lines")
    if status or shown:
        lines.append(f"     ↳ {status}" + ("" if shown else " (no output)"))
        lines += [f"       {line}" for line in shown]
    return lines


def show_command(
    run: Annotated[
        Path,
        typer.Argument(exists=True, help="A run folder (plain, anchored, a matrix unit) or one trajectory file."),
    ],
    output_lines: Annotated[int, typer.Option(min=0, help="Output lines shown per step.")] = 3,
) -> None:
    """Print one run's trajectory: every step with its phase, category, command and an output excerpt.

    Examples:

        repoanchor show runs/single

        repoanchor show runs/matrix/units/UNIT_ID --output-lines 10
    """
    from repoanchor.evals.analysis.steps_frame import collect
    from repoanchor.scaffolds.steps.sequence import labels_in_order
    from repoanchor.scaffolds.trajectories.readers import read_trajectory
    from repoanchor.scaffolds.trajectories.trajectory import TrajectoryError

    files, errors = collect([run])
    if errors:
        raise typer.BadParameter(str(errors[0]), param_hint="RUN")
    for path in files:
        try:
            trajectory = read_trajectory(path)
        except TrajectoryError as error:  # bad input, as for `steps`: one line, exit 2
            raise typer.BadParameter(str(error), param_hint="RUN") from None
        typer.echo(f"== {path}")
        typer.echo(header(trajectory))
        for note in trajectory.notes:
            typer.echo(f"note: {note}")
        for action, label in zip(
            trajectory.actions, labels_in_order(trajectory.actions, trajectory.instance_id), strict=True
        ):
            typer.echo("\n".join(step_lines(action, label, output_lines)))
        typer.echo("")
