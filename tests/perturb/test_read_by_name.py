"""A module whose text some code reads as a file, naming it by a path literal (lark's standalone tool), is left to
the file passes: masking, proxy-imports and constant-externalization each refuse it, saying who reads it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from repoanchor.perturb.mirage.read_by_name import modules_read_by_name
from repoanchor.perturb.results import Applied, Skipped
from repoanchor.perturb.tree import ApplyConfig, apply_tree
from tests.support.trees import make_tree

LEXER = '''\
"""Tokens."""
import re

###{standalone
import string

WORD = re.compile(r"[a-z]+")
LIMIT = 40


def tokens(text):
    found = []
    for match in WORD.finditer(text.lower()):
        if len(found) >= LIMIT:
            break
        found.append(match.group(0))
    return found


def letters():
    return string.ascii_lowercase
###}
'''
STANDALONE = '''\
"""Writes a module holding the marked code of the modules it names, as lark's tools/standalone.py does."""
import os
import re

FILES = ["lexer.py", "parts/joiner.py"]
_SECTION = re.compile(r"###\\{standalone\\n(.*?)###\\}", re.S)


def build():
    here = os.path.dirname(os.path.dirname(__file__))
    code = ["import re"]
    for name in FILES:
        with open(os.path.join(here, name)) as handle:
            code.extend(_SECTION.findall(handle.read()))
    return "\\n".join(code)
'''
JOINER = """\
import os

###{standalone
SEPARATOR = "-"


def join(words):
    if not words:
        return ""
    return SEPARATOR.join(words)
###}
"""
OTHER = 'import os\nimport re\nNAME = "other"\n\n\ndef sep():\n    if os.sep:\n        return re.escape(os.sep)\n'
CHECKS = 'import os\n\n\ndef is_package(folder):\n    return os.path.exists(os.path.join(folder, "__init__.py"))\n'
LOADER = (
    'import importlib\n\nPLUGINS = ["other.py"]\n\n\n'
    'def load():\n    return [importlib.import_module("pkg." + p[:-3]) for p in PLUGINS]\n'
)
SHOW = (
    'def show(path):\n    """A file\'s text.\n\n    >>> show("other.py")\n    """\n'
    "    with open(path) as f:\n        return f.read()\n"
)
CLI = (
    'import os\n\n\ndef find_app():\n    """The user\'s app: [\'app.py\'] in the working folder."""\n'
    "    if os.path.exists(\"app.py\"):  # 'app.py' is the user's, as flask's cli looks for it\n"
    '        with open("app.py") as f:\n            return f.read()\n'
)
READ_ACTION = (  # black's tests read action/main.py so, and run its functions
    "from pathlib import Path\n\nACTION = Path(__file__).parent.parent / 'pkg' / 'action.py'\n\n\n"
    "def source():\n    return ACTION.read_text()\n"
)
TREE = {
    "pkg/__init__.py": "",
    "pkg/lexer.py": LEXER,
    "pkg/parts/__init__.py": "",
    "pkg/parts/joiner.py": JOINER,
    "pkg/tools/__init__.py": "",
    "pkg/tools/standalone.py": STANDALONE,
    "pkg/other.py": OTHER,
    "pkg/checks.py": CHECKS,
    "pkg/loader.py": LOADER,
    "pkg/show.py": SHOW,
    "pkg/cli.py": CLI,
    "pkg/app.py": "import os\n\nHOME = os.getcwd()\n",
    "pkg/action.py": "import re\n\nPATTERN = re.compile('x')\n",
    "checks/read_action.py": READ_ACTION,
}
USE = (
    "from pkg.tools.standalone import build\n"
    "scope = {}\nexec(build(), scope)\n"
    "print(scope['join'](scope['tokens']('Hello, Standalone World')), len(scope['letters']()))\n"
)
TREE_TRANSFORMS = ["runtime-target-masking", "proxy-imports", "constant-externalization"]


def test_path_literals_name_modules_bare_or_with_their_folders(tmp_path: Path):
    src = make_tree(tmp_path / "src", TREE)
    named = modules_read_by_name(src)
    assert named == {
        "pkg/lexer.py": "pkg/tools/standalone.py names it ('lexer.py')",
        "pkg/parts/joiner.py": "pkg/tools/standalone.py names it ('parts/joiner.py')",
        "pkg/action.py": "checks/read_action.py names it ('pkg/action.py')",
    }  # '__init__.py' names every package; loader.py reads nothing; show.py's is a doctest's; cli.py's 'app.py'
    # is the user's: cli.py finds no file beside itself


@pytest.mark.parametrize("transform", TREE_TRANSFORMS)
def test_a_module_read_as_text_is_refused_and_what_reads_it_still_works(tmp_path: Path, transform: str):
    src = make_tree(tmp_path / "src", TREE)
    out = tmp_path / "out"
    report = apply_tree(src, out, ApplyConfig([transform], fraction=1.0, check_interpreters=False))

    def run(root: Path) -> str:
        env = {**os.environ, "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        proc = subprocess.run([sys.executable, "-c", USE], cwd=root, env=env, capture_output=True, text=True)
        assert proc.returncode == 0, proc.stderr
        return proc.stdout

    assert run(out) == run(src) == "hello-standalone-world 26\n"
    reasons = {o.file: o.reason for o in report.outcomes if isinstance(o, Skipped)}
    for module in ("pkg/lexer.py", "pkg/parts/joiner.py"):
        assert "pkg/tools/standalone.py names it" in reasons[module]
        assert (out / module).read_bytes() == (src / module).read_bytes()
    assert "pkg/other.py" in {o.file for o in report.outcomes if isinstance(o, Applied)}  # the rest is perturbed
