"""Label a step that runs Python: `python -c`, a heredoc fed to `python -`, a script by name (by what it holds
where the run wrote it, else by its name), `-m` runners. Each answer is a `Verdict`, which `classify` turns
into its Label.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from repoanchor.scaffolds.steps.formatters import formatter_category
from repoanchor.scaffolds.steps.python_code import environment_query, only_reads, parses, rewritten_file
from repoanchor.scaffolds.steps.shell import SimpleCommand, base_name

Verdict = tuple[str, str, str]
"""(category, the part of the command that decided it, the rule's name)."""

# Scripts named like this are written to rewrite source files (e.g. `python apply_fix.py`);
# running them changes files on disk, unlike reproduction or test scripts.
PATCH_SCRIPT = re.compile(r"^(fix|patch|apply|insert|modify|edit|update|replace|rewrite)[_\-]")
PY_WRITE = re.compile(
    r"""open\([^)]*['"](?:w|a|x|r\+)b?\+?['"]|mode\s*=\s*['"][wax]|\.write_(?:text|bytes)\("""
    r"""|(?<!stdout)(?<!stderr)\.write\(|\.writelines\(|shutil\.\w+\(|os\.(?:remove|unlink|rename|replace)\("""
    r"""|\.unlink\(|\.rename\(|\.mkdir\(|\.touch\("""
)
PYTHON_C = re.compile(r"(?:^|[\s;&|(])python[\d.]*\s+-c\s")
PY_READ_SOURCE = re.compile(r"getsource\(|\.read\(\)|\.read_text\(|\.readlines\(\)|linecache\.")


def python_step(args: list[str], cmd: SimpleCommand, scripts: Mapping[str, str]) -> Verdict:
    """`args`: the words after the interpreter's name; `scripts`: files the run wrote before (path -> text)."""
    text = cmd.text
    if any(a in ("--version", "-V", "-VV") for a in args):
        return "other", text, "python-version"
    if "-c" in args and args.index("-c") + 1 < len(args):
        return python_code(args[args.index("-c") + 1], text, "python-c")
    if "-m" in args and args.index("-m") + 1 < len(args):
        module, *rest = args[args.index("-m") + 1 :]
        if formatted := formatter_category(module, rest):  # `python -m black a.py` rewrites a.py
            return formatted, text, "formatter"
        return "test", text, "python-m-test" if module in ("pytest", "unittest", "tox") else "python-m"
    script = next((a for a in args if not a.startswith("-")), None)
    if script is None or script == "-":
        if cmd.heredoc:  # `python - <<EOF` runs the heredoc body
            return python_code(cmd.heredoc, text, "python-heredoc")
        return "other", text, "python-repl"
    source = script_source(scripts, script)
    if source is not None:  # the run wrote this script itself: what it does decides, not its name
        return _python_script(source, script, text)
    return _by_name(script, text)


def script_source(scripts: Mapping[str, str], script: str) -> str | None:
    """The content the run wrote to `script`: by the path as given, without a leading `./`, or by file name
    where exactly one written file has it (the script was written as /testbed/x.py and run as x.py)."""
    for key in (script, script.removeprefix("./")):
        if key in scripts:
            return scripts[key]
    named = [path for path in scripts if base_name(path) == base_name(script)]
    return scripts[named[0]] if len(named) == 1 else None


def _python_script(source: str, script: str, text: str) -> Verdict:
    """A script the run wrote, run by name: an edit where it rewrites a file it read (a fix script); one that
    writes only files of its own (a reproduction's settings module) is the test it sets up. A script that does
    not parse is judged by its name, as one the run did not write."""
    if not parses(source):
        return _by_name(script, text)
    rewritten = rewritten_file(source)
    if rewritten is not None:
        return "edit", f"{text} (rewrites {rewritten})", "python-script-rewrites"
    if PY_WRITE.search(source):
        return "test", text, "python-script-runs-code"
    return python_code(source, text, "python-script")


def _by_name(script: str, text: str) -> Verdict:
    if PATCH_SCRIPT.match(base_name(script)):
        return "edit", text, "python-patch-script"
    return "test", text, "python-script"


def python_code(code: str, text: str, origin: str) -> Verdict:
    """Python source run inline or as a script: does it write files, only print source, or run code?"""
    write = PY_WRITE.search(code)
    if write:
        return "edit", write.group(0), f"{origin}-writes"
    query = environment_query(code)
    if query is not None:
        return query, text, f"{origin}-{'locates' if query == 'search' else 'version'}"
    if PY_READ_SOURCE.search(code) and only_reads(code):
        return "read", text, f"{origin}-prints-source"
    return "test", text, f"{origin}-runs-code"


def misquoted_python_write(text: str) -> Verdict | None:
    """A `python -c "..."` whose code the shell cut at a quote inside it, written to change a file: labelled by
    what the agent wrote (the shell then runs the pieces, which fail)."""
    write = PY_WRITE.search(text) if PYTHON_C.search(text) else None
    return ("edit", write.group(0), "python-c-writes-misquoted") if write else None
