"""The step classifier against hand labels and one edge case per STEPS.md rule."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repoanchor.scaffolds.steps.classify import PHASE, Label, classify
from repoanchor.scaffolds.steps.project_cli import project_stems
from repoanchor.scaffolds.steps.shell import ShellParseError, split_commands

LABELS = Path(__file__).with_name("labelled_commands.jsonl")


def test_hand_labelled_commands_agree():
    rows = [json.loads(line) for line in LABELS.read_text().splitlines() if line.strip()]
    assert len(rows) >= 150
    wrong = []
    for row in rows:
        label = classify("bash", row["command"])
        if label.category != row["category"]:
            wrong.append((row["source"], row["command"][:120], row["category"], label))
    for item in wrong:
        print("DISAGREE", *item)
    assert 1 - len(wrong) / len(rows) >= 0.95, wrong


CASES = [
    # OpenCode tool types map directly.
    ("read", "src/a.py", "read", "tool-read"),
    ("grep", "def foo", "search", "tool-grep"),
    ("glob", "**/*.py", "search", "tool-glob"),
    ("list", ".", "search", "tool-list"),
    ("edit", "{}", "edit", "tool-edit"),
    ("write", "{}", "edit", "tool-write"),
    ("apply_patch", "*** Begin Patch", "edit", "tool-apply_patch"),
    ("todowrite", "[]", "other", "tool-other"),
    # search
    ("bash", "ls -la", "search", "search-command"),
    ("bash", "find . -name '*.py'", "search", "search-command"),
    ("bash", "rg -n foo src", "search", "search-command"),
    ("bash", "git grep -n foo", "search", "git-grep"),
    ("bash", "wc -l src/*.py", "search", "search-command"),
    ("bash", "which python", "search", "search-command"),
    ("bash", "pip show requests", "search", "pip-locate"),
    ("bash", "find . -exec grep -l foo {} \\;", "search", "search-command"),
    ("bash", "find . -name '*.py' | xargs grep -l foo", "search", "search-command"),
    # read
    ("bash", "cat a.py", "read", "read-command"),
    ("bash", "sed -n '10,20p' a.py", "read", "sed-print"),
    ("bash", "nl -ba a.py | sed -n '1,5p'", "read", "read-command"),
    ("bash", "awk 'NR>=3 && NR<=9' a.py", "read", "awk-print"),
    ("bash", "git diff", "read", "git-diff"),
    ("bash", "git --no-pager log -3", "read", "git-log"),
    ("bash", "git stash list", "read", "git-stash-view"),
    ("bash", 'python -c "import inspect, m; print(inspect.getsource(m.f))"', "read", "python-c-prints-source"),
    ("bash", "python -c \"print(open('a.py').read())\"", "read", "python-c-prints-source"),
    # edit
    ("bash", "sed -i 's/a/b/' a.py", "edit", "sed-in-place"),
    ("bash", "sed -i.bak -e 's/a/b/' a.py", "edit", "sed-in-place"),
    ("bash", "perl -pi -e 's/a/b/' a.py", "edit", "perl-in-place"),
    ("bash", "perl -0pi -e 's/a\\nb/c/' a.py", "edit", "perl-in-place"),  # -0: slurp; the flags bundled
    ("bash", "apply_patch <<'EOF'\n*** Begin Patch\n*** Update File: a.py\n*** End Patch\nEOF", "edit", "file-op"),
    ("bash", "applypatch < fix.diff", "edit", "file-op"),
    ("bash", "black sympy/core/add.py && isort sympy/core/add.py", "edit", "formatter"),
    ("bash", "autopep8 --in-place --aggressive a.py", "edit", "formatter"),
    ("bash", "ruff format a.py", "edit", "formatter"),
    ("bash", "ruff check --fix a.py", "edit", "formatter"),
    ("bash", "black --check --diff a.py", "other", "formatter"),
    ("bash", "yapf a.py", "other", "formatter"),  # prints the formatted code
    ("bash", "ruff check a.py", "other", "unknown-command"),  # a linter writes nothing
    ("bash", "echo x > a.txt", "edit", "redirect-write"),
    ("bash", "echo x >> a.txt", "edit", "redirect-write"),
    ("bash", "echo x | tee a.txt", "edit", "tee-file"),
    ("bash", "cat > r.py <<'EOF'\nprint(1 > 0)\nEOF", "edit", "redirect-write"),
    ("bash", "cat <<EOF > r.py\nx = 1\nEOF\npython r.py", "edit", "redirect-write"),
    ("bash", "python - <<'EOF'\nopen('a.py', 'w').write('x')\nEOF", "edit", "python-heredoc-writes"),
    ("bash", "python -c \"from pathlib import Path; Path('a').write_text('x')\"", "edit", "python-c-writes"),
    ("bash", "python -c \"import shutil; shutil.copy('a', 'b')\"", "edit", "python-c-writes"),
    ("bash", "python -c \"f = open('a', mode='a'); f.write('x')\"", "edit", "python-c-writes"),
    ("bash", "python apply_fix.py", "edit", "python-patch-script"),
    ("bash", "patch -p1 < fix.diff", "edit", "file-op"),
    ("bash", "git apply fix.patch", "edit", "git-apply"),
    ("bash", "git checkout -- a.py", "edit", "git-checkout"),
    ("bash", "git stash", "edit", "git-stash"),
    ("bash", "git restore a.py", "edit", "git-restore"),
    ("bash", "cp a.py a.py.bak", "edit", "file-op"),
    ("bash", "mkdir -p out && touch out/x", "edit", "file-op"),
    ("bash", "find . -name '*.pyc' -delete", "edit", "find-delete"),
    ("bash", "find . -name '*.py' -exec sed -i 's/a/b/' {} +", "edit", "sed-in-place"),
    # /dev/null and fd duplication are not writes.
    ("bash", "python r.py > /dev/null 2>&1", "test", "python-script"),
    ("bash", "grep foo a.py 2>/dev/null", "search", "search-command"),
    ("bash", "ls &> /dev/null", "search", "search-command"),
    # test
    ("bash", "pytest -q tests", "test", "test-runner"),
    ("bash", "python -m pytest tests/test_a.py -x", "test", "python-m-test"),
    ("bash", "tox -e py311", "test", "test-runner"),
    ("bash", "./runtests.py expressions", "test", "test-runner"),
    ("bash", "python tests/runtests.py expressions", "test", "python-script"),
    ("bash", "python manage.py test", "test", "python-script"),
    ("bash", "python reproduce.py", "test", "python-script"),
    ("bash", 'python -c "import pkg; print(pkg.f(1))"', "test", "python-c-runs-code"),
    ("bash", "make", "test", "test-runner"),
    ("bash", "python setup.py build_ext --inplace", "test", "python-script"),
    ("bash", "npm test", "test", "npm-test"),
    ("bash", "bin/test sympy/core", "test", "run-script"),
    # other
    ("bash", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git add -A && git diff --cached", "other", "submit"),
    ("bash", "submit", "other", "submit"),
    ("bash", "pip install -e .", "other", "pip-install"),
    ("bash", "python -m pip install pytest", "other", "pip-install"),
    ("bash", "apt-get install -y gcc", "other", "environment"),
    ("bash", "python --version", "other", "python-version"),
    ("bash", 'python -c "import numpy; print(numpy.__version__)"', "other", "python-c-version"),
    ("bash", "echo $PATH", "other", "environment"),
    ("bash", "pwd", "other", "environment"),
    ("bash", "sleep 5", "other", "environment"),
    ("bash", "cd /testbed", "other", "cd"),
    ("bash", "frobnicate --all", "other", "unknown-command"),
    ("bash", "", "other", "empty"),
    # compound commands: edit > test > search > read > other; a leading cd is ignored.
    ("bash", "cd /testbed && grep -n foo a.py", "search", "search-command"),
    ("bash", "cat a.py | grep foo", "search", "search-command"),
    ("bash", "ls; cat a.py", "search", "search-command"),
    ("bash", "python r.py || cat log.txt", "test", "python-script"),
    ("bash", "cat a.py\npytest\nsed -i 's/a/b/' a.py", "edit", "sed-in-place"),
    ("bash", "(cd sub && pytest)", "test", "test-runner"),
    ("bash", "echo $(grep -c foo a.py)", "search", "search-command"),
    ("bash", 'echo "found: $(ls src)"', "search", "search-command"),
    ("bash", "echo `cat a.py`", "read", "read-command"),
    ("bash", "timeout 60 python -m pytest", "test", "python-m-test"),
    ("bash", "FOO=1 python r.py", "test", "python-script"),
    ("bash", "bash -c 'sed -i s/a/b/ a.py'", "edit", "sed-in-place"),
    # quoted operators are not operators
    ("bash", "grep -n '>' a.py", "search", "search-command"),
    ("bash", "grep -E 'a|b; c && d' a.py", "search", "search-command"),
    ("bash", "grep foo a.py # && rm a.py", "search", "search-command"),
    # unbalanced quotes never crash
    ("bash", "grep -n 'foo a.py", "search", "unparsed-fallback"),
    ("bash", "echo 'x > a.txt", "edit", "unparsed-fallback"),
    ("bash", 'frobnicate "oops', "other", "unparsed-fallback"),
    # a real DeepSeek step: `\'` does not escape inside single quotes, so the quoting never closes; the words of
    # the sed script (`which`, `from`) are not commands, the command is an in-place edit
    ("bash", "sed -i '2c\\    # of verbose_name (which may be the model\\'s one)' ./a.py", "edit", "unparsed-fallback"),
    ("bash", "perl -pi -e 's/it\\'s/its/' a.py", "edit", "unparsed-fallback"),
    ("bash", "echo 'which cat is it", "other", "unparsed-fallback"),
    # a real trajectory's awk (pvlib): `\'` ends its script's quoting early; awk prints lines, as when it parses
    (
        "bash",
        "cd /testbed && awk 'NR >= 94 {print NR \": \" $0} /r?\\'\\'\\'/ {d = !d}' pvlib/iam.py",
        "read",
        "unparsed-fallback",
    ),
    ("bash", "awk -i inplace '{print}' 'a.py", "edit", "unparsed-fallback"),
    ("bash", "perl 'fix.pl", "test", "unparsed-fallback"),
    ("bash", "cd /testbed && grep -rn 'it's' .", "search", "unparsed-fallback"),
    ("bash", "x=$(git diff 'a) && echo $x", "read", "unparsed-fallback"),
    ("bash", "timeout 60 python -m pytest -k 'a", "test", "unparsed-fallback"),
    # a leading `cd` never explains a label: the part that decides does (STEPS.md: a leading cd is ignored)
    ("bash", "cd /testbed && pip install pytz -q", "other", "pip-install"),
    ("bash", "cd /testbed", "other", "cd"),
    # perl one-liners with -e among combined flags print; a perl script runs
    ("bash", "echo 0110 | perl -lpe '$_=pack \"B*\",$_'", "read", "perl-print"),
    ("bash", "perl -ne 'print if /def /' a.py", "read", "perl-print"),
    ("bash", "perl tools/check.pl", "test", "perl-print"),
    # python that reads source and also runs code is a test; environment queries are other; locating is search
    ("bash", "python -c \"exec(open('tests/t.py').read()); test_new()\"", "test", "python-c-runs-code"),
    ("bash", 'python -c "import inspect, m; print(inspect.getsource(m.f)); m.f(1)"', "test", "python-c-runs-code"),
    ("bash", 'python -c "import inspect, m; print(inspect.getsource(m.f))"', "read", "python-c-prints-source"),
    (
        "bash",
        "python -c \"import asgiref; print('asgiref available')\" 2>/dev/null || echo no",
        "test",
        "python-c-runs-code",
    ),
    ("bash", "python -c \"import asgiref; print('asgiref', asgiref.__version__)\"", "other", "python-c-version"),
    (
        "bash",
        "python -c \"import sys; sys.path.insert(0, '.'); import django; print(django.__version__)\"",
        "other",
        "python-c-version",
    ),
    ("bash", 'python -c "import django; print(django.__file__)"', "search", "python-c-locates"),
    ("bash", 'python -c "import django.db.models"', "test", "python-c-runs-code"),
    ("bash", 'python -c "import m; print(m.compute())"', "test", "python-c-runs-code"),
    # a docstring's quotes end a `python -c "..."` early: its lines are not commands (no run-script from "a/b")
    (
        "bash",
        'python -c "\nold = \'\'\'    def f(self):\n        """\n        Doc, see a/b.\n        """\n'
        "        return 1'''\nprint(old)\n\"",
        "test",
        "python-c-runs-code",
    ),
    # ...and where that code was written to change a file, the step is the edit the agent wrote (a real DeepSeek step)
    (
        "bash",
        "cd /testbed && python -c \"\nwith open('q.py') as f:\n    c = f.read()\nold = '''    def f(self):\n"
        "        \"\"\"\n        Doc.\n        \"\"\"'''\nwith open('q.py', 'w') as f:\n    f.write(c)\n\"",
        "edit",
        "python-c-writes-misquoted",
    ),
    # submit commands: mini-swe-agent 0.x (then micro-swe-agent), SWE-agent's own with an argument
    ("bash", "echo MICRO_SWE_AGENT_FINAL_OUTPUT && git add -A && git diff --cached", "other", "submit"),
    ("bash", "submit 'flag{hidden}'", "other", "submit"),
    ("bash", "submitter --all", "other", "unknown-command"),
    # the projects' own CLIs (STEPS.md: a test) known without context; a formatter only as its own project
    ("bash", "cd /testbed && sqlfluff fix test.sql --dialect ansi -f 2>&1", "test", "project-cli"),
    ("bash", 'echo "select 1;;" | sqlfluff lint -', "test", "project-cli"),
    ("bash", "pylint --disable=all --enable=W0611 t.py", "test", "project-cli"),
    ("bash", "cd /tmp/docs && sphinx-build -b html . _build", "test", "project-cli"),
    ("bash", "black t.py", "edit", "formatter"),  # elsewhere a formatter rewrites the file: an edit
    ("bash", "python -m isort a.py", "edit", "formatter"),
    ("bash", "git apply --check fix.patch", "read", "git-apply-view"),  # checks it, applies nothing
    ("bash", "git apply --stat --apply fix.patch", "edit", "git-apply"),
    ("bash", "patch -p1 --dry-run < fix.patch", "read", "patch-dry-run"),
    ("bash", "sort -u names.txt | uniq -c", "read", "read-command"),
    ("bash", "coverage run -m pytest tests/test_a.py && coverage report", "test", "coverage-run"),
    ("bash", "hexdump -C test.sql", "read", "read-command"),
]


@pytest.mark.parametrize(("tool", "command", "category", "rule"), CASES)
def test_rule(tool, command, category, rule):
    label = classify(tool, command)
    assert (label.category, label.rule) == (category, rule), label
    assert label.phase == PHASE[category]
    assert isinstance(label, Label)


@pytest.mark.parametrize(
    ("instance_id", "command", "category", "rule"),
    [
        ("iterative__dvc-3527", "dvc status --cloud", "test", "project-cli"),
        ("conan-io__conan-11594", "cd /w && conan create . --build missing", "test", "project-cli"),
        ("django__django-11206", "django-admin startproject p", "test", "project-cli"),
        ("getmoto__moto-5752", "moto_server -p 5000", "test", "project-cli"),
        ("psf__black-4005", "black --line-length 80 t.py", "test", "project-cli"),
        ("psf__black-4005", "blacken-docs x.md", "other", "unknown-command"),  # a prefix without its separator
        ("pypa__pip-10454", "pip install -e .", "other", "pip-install"),  # tables come before the project
        ("pypa__pip-10454", "pip-compile req.in", "test", "project-cli"),
        ("simonw__datasette-1563", "datasette serve db.sqlite", "test", "project-cli"),
        (None, "datasette serve db.sqlite", "other", "unknown-command"),
        ("not-an-instance", "datasette serve db.sqlite", "other", "unknown-command"),
        (None, "dvc status", "test", "project-cli"),  # a known project's CLI needs no context
    ],
)
def test_the_instances_own_programs_are_its_cli(instance_id, command, category, rule):
    label = classify("bash", command, project=project_stems(instance_id))
    assert (label.category, label.rule) == (category, rule), label


@pytest.mark.parametrize(
    ("instance_id", "stems"),
    [
        ("pvlib__pvlib-python-1154", {"pvlib-python", "pvlib"}),
        ("Project-MONAI__MONAI-5543", {"monai"}),
        ("pytest-dev__pytest-7432", {"pytest"}),
        ("owner__py-thing-2", {"py-thing", "thing"}),
        ("sympy__sympy", {"sympy"}),
        ("sqlfluff__sqlfluff-1625__spt-3", {"sqlfluff"}),  # a suite's task id
        ("owner__-12", set()),
        ("flask", set()),
        ("", set()),
    ],
)
def test_project_stems_come_from_the_repository_name(instance_id, stems):
    assert project_stems(instance_id) == stems


def test_label_is_frozen_and_explains_itself():
    label = classify("bash", "cd /testbed && cat a.py | grep foo")
    assert label.decided_by == "grep foo"
    with pytest.raises(AttributeError):
        label.category = "edit"


def test_heredoc_body_is_attached_and_not_parsed_as_commands():
    commands = split_commands("cat > a.py <<'EOF'\nrm -rf /\nEOF\nls")
    assert [c.words[0] for c in commands] == ["cat", "ls"]
    assert commands[0].heredoc == "rm -rf /"
    assert commands[0].writes == ["a.py"]


def test_split_raises_on_unbalanced_quote():
    with pytest.raises(ShellParseError):
        split_commands("echo 'x")
