"""Label agent steps by category and phase, following ../shared/STEPS.md.

`classify(tool, command_or_input, scripts)` is pure: it looks only at the tool name, the command
text and, where given, the scripts the run wrote before (`sequence.py`).  Every label records the
part of the command that decided it and a short rule name, so that any label can be explained and audited.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from repoanchor.scaffolds.steps.formatters import formatter_category
from repoanchor.scaffolds.steps.project_cli import is_project_cli
from repoanchor.scaffolds.steps.python_steps import misquoted_python_write, python_step
from repoanchor.scaffolds.steps.shell import ShellParseError, SimpleCommand, base_name, split_commands
from repoanchor.scaffolds.steps.vocabulary import (
    EDIT,
    GIT,
    IN_PLACE,
    OPENCODE_TOOLS,
    OTHER,
    READ,
    SEARCH,
    STREAM_EDITORS,
    TEST,
    WRAPPERS,
)

PHASE = {"search": "explore", "read": "explore", "edit": "edit", "test": "test", "other": "other"}
# STEPS.md: a compound command takes the label of its highest-priority part.
PRIORITY = ("edit", "test", "search", "read", "other")
SUBMIT_MARKERS = (
    "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
    "MINI_SWE_AGENT_FINAL_OUTPUT",
    "MICRO_SWE_AGENT_FINAL_OUTPUT",
)
"""mini-swe-agent's submit commands: 2.x, 1.x, and 0.x (still named micro-swe-agent)."""
SUBMIT_COMMAND = re.compile(r"submit(?:\s|$)")
"""SWE-agent's own submit command, bare or with an argument (`submit 'flag{...}'` in its CTF demonstrations)."""
HARMLESS_TARGETS = {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty"}


@dataclass(frozen=True)
class Label:
    category: str
    phase: str
    decided_by: str
    rule: str


def _label(category: str, decided_by: str, rule: str) -> Label:
    return Label(category, PHASE[category], decided_by.strip()[:200], rule)


def classify(
    tool: str, command_or_input: str, scripts: Mapping[str, str] | None = None, project: frozenset[str] = frozenset()
) -> Label:
    """`scripts`: files the run wrote earlier (path -> content; `steps/sequence.py`), so that `python X.py` is
    labelled by what X does where the run wrote X itself; else by its name. `project`: the instance's
    repository names (`project_cli.project_stems`), whose programs are the project's CLI."""
    tool = (tool or "bash").lower()
    if tool in OPENCODE_TOOLS:
        return _label(OPENCODE_TOOLS[tool], tool, f"tool-{tool}")
    if tool not in ("bash", "shell", "sh"):
        return _label("other", tool, "tool-other")
    return classify_shell(command_or_input or "", scripts or {}, project)


def classify_shell(text: str, scripts: Mapping[str, str] | None = None, project: frozenset[str] = frozenset()) -> Label:
    if any(marker in text for marker in SUBMIT_MARKERS) or SUBMIT_COMMAND.match(text.strip()):
        return _label("other", text.strip().splitlines()[0], "submit")
    try:
        commands = split_commands(text)
    except ShellParseError:
        return _fallback(text, project)
    fragments = any(_fragment(_without_prefixes(list(cmd.words))) for cmd in commands)
    if fragments and (misquoted := misquoted_python_write(text)):
        return _label(*misquoted)
    labels = [_command(cmd, scripts or {}, project) for cmd in commands]
    labels = [lb for lb in labels if lb is not None]
    if not labels:
        return _label("other", text, "empty")
    # STEPS.md: a leading `cd DIR` is ignored, so it never explains a label another part of the same rank gives
    decisive = [lb for lb in labels if lb.rule != "cd"] or labels
    return min(decisive, key=lambda lb: PRIORITY.index(lb.category))  # first part wins ties


def _fallback(text: str, project: frozenset[str] = frozenset()) -> Label:
    """Unparseable shell (e.g. unbalanced quotes): the command word that starts each part, where parts are cut at
    `&&`, `||`, `;`, `|`, newlines and `$(`/backquote openings. Words inside an argument (a sed script, a quoted
    message) are not commands: scanning every token labelled `sed -i '...which...'` a search."""
    if re.search(r"(?<![0-9&<>])>>?\s*(?!/dev/null|&)[\w./'\"]", text):
        return _label("edit", ">", "unparsed-fallback")
    best = _label("other", text, "unparsed-fallback")
    for part in _UNPARSED_PARTS.split(text):
        words = _without_prefixes([w.strip("'\"()`{}") for w in part.split()])
        if not words or not words[0]:
            continue
        cat = _unparsed_category(base_name(words[0]), words[1:], project)
        if cat and PRIORITY.index(cat) < PRIORITY.index(best.category):
            best = _label(cat, part, "unparsed-fallback")
    return best


_UNPARSED_PARTS = re.compile(r"&&|\|\||[;|\n]|\$\(|`")


def _without_prefixes(words: list[str]) -> list[str]:
    """The words from the command itself on: variable assignments and wrappers (`timeout 60`, `sudo`) dropped."""
    while words and (re.match(r"^\w+=", words[0]) or words[0] in WRAPPERS):
        wrapper = words.pop(0)
        if words and wrapper == "timeout" and re.fullmatch(r"[\d.]+[smh]?", words[0]):
            words.pop(0)
    return words


def _stream_editor(name: str, args: list[str]) -> str:
    """sed, perl or awk: edit in place, else print (read), except a perl script run from a file (test)."""
    if any(IN_PLACE.fullmatch(a) for a in args) or "inplace" in args:
        return "edit"
    inline = any(re.fullmatch(r"-[a-zA-Z]*[eE][a-zA-Z]*", a) for a in args)  # -e, -ne, -lpe: a one-liner
    return "test" if name == "perl" and not inline else "read"


def _unparsed_category(name: str, args: list[str], project: frozenset[str]) -> str | None:
    if name in STREAM_EDITORS:
        return _stream_editor(name, args)
    if name == "git" and args:
        return GIT.get(args[0], "other")
    return _table(name) or ("test" if is_project_cli(name, project) else None)


def _table(name: str) -> str | None:
    for cat, names in (("search", SEARCH), ("read", READ), ("edit", EDIT), ("test", TEST), ("other", OTHER)):
        if name in names:
            return cat
    if re.fullmatch(r"python[\d.]*|pip[\d.]*", name):
        return "test" if name.startswith("python") else "other"
    return None


def _command(cmd: SimpleCommand, scripts: Mapping[str, str], project: frozenset[str]) -> Label | None:
    for target in cmd.writes:
        if target not in HARMLESS_TARGETS:
            return _label("edit", f"> {target}", "redirect-write")
    words = _without_prefixes(list(cmd.words))
    if not words or words == ["__SUBST__"] or _fragment(words):
        return None  # nothing runs, or a line of a quoted argument that a stray quote cut into a "command"
    return _words(words, cmd, scripts, project)


def _fragment(words: list[str]) -> bool:
    """A "command" (its words, prefixes dropped) whose name spans lines: text of a quoted argument that a quote
    inside it cut loose (a docstring's triple quotes inside `python -c "..."`)."""
    return bool(words) and "\n" in words[0]


def _words(
    words: list[str],
    cmd: SimpleCommand,
    scripts: Mapping[str, str] | None = None,
    project: frozenset[str] = frozenset(),
) -> Label:
    name, args, text = base_name(words[0]), words[1:], cmd.text
    if name == "cd":
        return _label("other", text, "cd")
    if name == "git":
        while args and args[0].startswith("-"):  # global options: -C DIR, --no-pager
            args = args[2:] if args[0] in ("-C", "-c") else args[1:]
        sub = args[0] if args else ""
        if (sub == "stash" and args[1:2] in (["list"], ["show"])) or (sub == "apply" and _dry_run(args)):
            return _label("read", text, f"git-{sub}-view")
        return _label(GIT.get(sub, "other"), text, f"git-{sub or 'bare'}")
    if name in ("xargs", "find"):
        return _find_or_xargs(name, args, cmd, scripts or {}, project)
    if name in STREAM_EDITORS:
        category = _stream_editor(name, args)
        return _label(category, text, f"{name}-{'in-place' if category == 'edit' else 'print'}")
    if name == "patch" and _dry_run(args):
        return _label("read", text, "patch-dry-run")
    if name == "tee":
        files = [a for a in args if not a.startswith("-") and a not in HARMLESS_TARGETS]
        return _label("edit", text, "tee-file") if files else _label("other", text, "tee-null")
    if re.fullmatch(r"pip[\d.]*|uv", name) or (name.startswith("python") and args[:2] == ["-m", "pip"]):
        return _pip(args[2:] if args[:1] == ["-m"] else args, text)
    if re.fullmatch(r"python[\d.]*|pypy3?", name):
        return _label(*python_step(args, cmd, scripts or {}))
    if (formatted := formatter_category(name, args)) and not is_project_cli(name, project):
        return _label(formatted, text, "formatter")
    if name in ("bash", "sh", "zsh") and args[:1] == ["-c"] and len(args) > 1:
        return classify_shell(args[1], scripts, project)
    if name in ("bash", "sh") and args:
        return _label("test", text, "shell-script")
    if name in ("npm", "yarn", "pnpm") and args[:1] in (["test"], ["run"]):
        return _label("test", text, "npm-test")
    if name == "coverage" and args[:1] == ["run"]:  # `coverage run -m pytest`, `coverage run script.py`
        return _label("test", text, "coverage-run")
    if name == "manage.py" or (args and base_name(args[0]) == "manage.py"):
        return _label("test", text, "django-manage")
    for cat, rule in (("search", "search-command"), ("read", "read-command"), ("edit", "file-op"),
                      ("test", "test-runner"), ("other", "environment")):  # fmt: skip
        if _table(name) == cat:
            return _label(cat, text, rule)
    if is_project_cli(name, project):  # STEPS.md: running the project's CLI is a test
        return _label("test", text, "project-cli")
    if "/" in words[0] or name.endswith((".py", ".sh")):  # ./runtests.py, bin/test: project code
        return _label("test", text, "run-script")
    return _label("other", text, "unknown-command")


def _dry_run(args: list[str]) -> bool:
    """`git apply` or `patch` told only to check or describe a patch: nothing on disk changes."""
    return bool({"--check", "--stat", "--numstat", "--summary", "--dry-run"} & set(args)) and "--apply" not in args


def _find_or_xargs(
    name: str, args: list[str], cmd: SimpleCommand, scripts: Mapping[str, str], project: frozenset[str]
) -> Label:
    if name == "find":
        if "-delete" in args:
            return _label("edit", cmd.text, "find-delete")
        if "-exec" in args or "-execdir" in args:
            start = args.index("-exec" if "-exec" in args else "-execdir") + 1
            inner = [a for a in args[start:] if a not in (";", "+", "\\;")]
            if inner:
                label = _words(inner, SimpleCommand(inner, text=cmd.text), scripts, project)
                if PRIORITY.index(label.category) < PRIORITY.index("search"):
                    return label
        return _label("search", cmd.text, "search-command")
    while args and args[0].startswith("-"):  # xargs options; -I/-n/-P take a value
        args = args[2:] if args[0] in ("-I", "-n", "-P", "-d", "-L") else args[1:]
    if not args:
        return _label("other", cmd.text, "xargs-echo")
    return _words(args, SimpleCommand(args, text=cmd.text), scripts, project)


def _pip(args: list[str], text: str) -> Label:
    sub = next((a for a in args if not a.startswith("-") and a != "pip"), "")
    if sub in ("show", "list", "freeze"):
        return _label("search", text, "pip-locate")
    return _label("other", text, f"pip-{sub or 'bare'}")
