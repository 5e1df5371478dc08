"""A run's steps labelled in order: `python X.py` by what the run wrote into X (STEPS.md: a Python script that
writes files is an edit, one that runs code a test, one that only prints a file a read), else by X's name."""

from __future__ import annotations

import pytest

from repoanchor.scaffolds.steps.sequence import action_text, labels_in_order
from repoanchor.scaffolds.trajectories.trajectory import Action

WRITES = "import re\ntext = open('src/m.py').read()\nopen('src/m.py', 'w').write(text.replace('a', 'b'))\n"
RUNS = "from m import f\nprint(f(1))\n"
SETS_UP = "with open('test_settings.py', 'w') as f:\n    f.write('DEBUG = True')\nimport django\ndjango.setup()\n"
READS = "with open('src/m.py') as fh:\n    for n, line in enumerate(fh.readlines()):\n        print(n, line)\n"


def bash(index: int, command: str) -> Action:
    return Action(index=index, tool="bash", command=command, tool_input={"command": command}, turn_index=index)


def heredoc(index: int, path: str, body: str) -> Action:
    return bash(index, f"cat <<'EOF' > {path}\n{body}EOF")


def labels(actions: list[Action]) -> list[tuple[str, str]]:
    return [(label.category, label.rule) for label in labels_in_order(actions)]


@pytest.mark.parametrize(
    ("name", "body", "label"),
    [
        ("test_fix.py", WRITES, ("edit", "python-script-rewrites")),  # a fix named like a test
        ("fix_repro.py", SETS_UP, ("test", "python-script-runs-code")),  # writes its own settings only
        ("patch_field.py", READS, ("read", "python-script-prints-source")),  # a reader named like a patch
        ("fix_check.py", RUNS, ("test", "python-script-runs-code")),
        ("reproduce.py", RUNS, ("test", "python-script-runs-code")),
    ],
)
def test_a_script_the_run_wrote_is_labelled_by_what_it_does_not_its_name(name, body, label):
    written_as, run_as = f"/testbed/{name}", f"cd /testbed && python {name}"
    assert labels([heredoc(0, written_as, body), bash(1, run_as)]) == [("edit", "redirect-write"), label]


def test_without_the_script_its_name_decides_as_before():
    assert labels([bash(0, "python fix_field.py"), bash(1, "python reproduce.py")]) == [
        ("edit", "python-patch-script"),
        ("test", "python-script"),
    ]


def test_the_latest_content_counts_and_the_script_is_found_by_its_written_path():
    steps = [heredoc(0, "scripts/fix.py", RUNS), bash(1, "python scripts/fix.py"),
             heredoc(2, "scripts/fix.py", WRITES), bash(3, "python ./scripts/fix.py")]  # fmt: skip
    assert [category for category, _ in labels(steps)] == ["edit", "test", "edit", "edit"]


def test_a_written_script_that_does_not_parse_is_judged_by_its_name():
    steps = [heredoc(0, "fix_it.py", "def broken(:\n"), bash(1, "python fix_it.py")]
    assert labels(steps)[1] == ("edit", "python-patch-script")


def test_two_written_scripts_of_one_name_leave_the_name_to_decide():
    steps = [heredoc(0, "a/fix_it.py", RUNS), heredoc(1, "b/fix_it.py", RUNS), bash(2, "python fix_it.py")]
    assert labels(steps)[2] == ("edit", "python-patch-script")


def test_opencode_writes_count_too():
    write = Action(index=0, tool="write", tool_input={"filePath": "/repo/check.py", "content": WRITES}, turn_index=0)
    assert labels([write, bash(1, "python /repo/check.py")]) == [
        ("edit", "tool-write"),
        ("edit", "python-script-rewrites"),
    ]


def test_a_typed_tools_text_leaves_out_unset_fields():
    """OpenHands' editor records every argument, most of them None: the step's text shows the ones set."""
    args = {"command": "view", "path": "/repo/a.py", "file_text": None, "old_str": None, "view_range": None, "x": ""}
    action = Action(index=0, tool="read", tool_input=args, turn_index=0)
    assert action_text(action) == "command=view path=/repo/a.py"


def test_the_instances_repository_names_its_cli():
    actions = [bash(0, "cd /testbed && datasette serve fixtures.db"), bash(1, "datasette-publish x")]
    assert labels(actions) == [("other", "unknown-command")] * 2
    by_instance = [(lb.category, lb.rule) for lb in labels_in_order(actions, "simonw__datasette-1563")]
    assert by_instance == [("test", "project-cli")] * 2
