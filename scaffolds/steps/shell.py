"""Split a bash command line into simple commands for the step classifier.

A quote-aware scanner finds the control operators (`;`, `&&`, `||`, `|`, `&`, newlines,
subshell parentheses, `$( )` and backticks), heredoc bodies and redirections; each simple
command's words are then split with `shlex`.  The scanner only needs to be good enough to
label agent steps, so it does not expand variables or globs.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field

# Redirection operators are wrapped in NUL bytes so that shlex keeps them as words that no
# quoted argument (e.g. `grep '>' f`) can be confused with.
_MARK = "\x00"
_REDIRS = (">>", ">|", ">&", "&>>", "&>", "<<<", ">", "<")


class ShellParseError(ValueError):
    """Raised for shell text we cannot split (unbalanced quotes or parentheses)."""


@dataclass
class SimpleCommand:
    words: list[str]
    writes: list[str] = field(default_factory=list)  # files written by redirections
    heredoc: str | None = None  # body of a `<<EOF` heredoc feeding this command
    text: str = ""  # the raw text, for explaining labels


def _matching(text: str, start: int, close: str) -> int:
    """Index of the `close` that ends a `$(`/backtick group opened just before `start`."""
    depth, quote, i = 1, "", start
    while i < len(text):
        c = text[i]
        if quote:
            if c == "\\" and quote == '"':
                i += 1
            elif c == quote:
                quote = ""
        elif c == "\\":
            i += 1
        elif c in "'\"" and close != "`":
            quote = c
        elif close == ")" and c == "(":
            depth += 1
        elif c == close:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    raise ShellParseError(f"unbalanced {close!r}")


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.commands: list[SimpleCommand] = []
        self.buf: list[str] = []
        self.heredocs: list[tuple[str, list[str]]] = []  # (delimiter, owner words buffer)
        self.pending: list[tuple[str, int]] = []  # heredocs whose body starts at next newline

    def flush(self) -> None:
        raw = "".join(self.buf)
        self.buf = []
        if raw.strip():
            self.commands.append(_to_command(raw))

    def run(self) -> list[SimpleCommand]:
        text, i, quote = self.text, 0, ""
        while i < len(text):
            c = text[i]
            if quote:
                if c == "\\" and quote == '"' and i + 1 < len(text):
                    self.buf.append(text[i : i + 2])
                    i += 2
                    continue
                if c == quote:
                    quote = ""
                elif quote == '"' and text.startswith("$(", i):
                    i = self.substitution(i + 2, ")")
                    continue
                self.buf.append(c)
                i += 1
                continue
            if c == "\\":
                if text.startswith("\\\n", i):  # line continuation
                    i += 2
                    continue
                self.buf.append(text[i : i + 2])
                i += 2
                continue
            if c in "'\"":
                quote = c
                self.buf.append(c)
            elif c == "#" and (not self.buf or self.buf[-1][-1:].isspace()):
                while i < len(text) and text[i] != "\n":  # comment
                    i += 1
                continue
            elif text.startswith("$(", i):
                i = self.substitution(i + 2, ")")
                continue
            elif c == "`":
                i = self.substitution(i + 1, "`")
                continue
            elif text.startswith("<<", i) and not text.startswith("<<<", i):
                i = self.heredoc_start(i + 2)
                continue
            elif c in "<>" or text.startswith("&>", i):
                i = self.redirection(i)
                continue
            elif c == "\n":
                self.flush()
                i = self.heredoc_bodies(i + 1)
                continue
            elif c in ";|&()":
                self.flush()
            else:
                self.buf.append(c)
            i += 1
        if quote:
            raise ShellParseError(f"unbalanced quote {quote}")
        if self.pending:
            self.flush()
            self.heredoc_bodies(len(text))
        self.flush()
        return self.commands

    def substitution(self, start: int, close: str) -> int:
        """Commands inside `$( )` / backticks are classified too; the word becomes a placeholder."""
        end = _matching(self.text, start, close)
        self.commands.extend(split_commands(self.text[start:end]))
        self.buf.append("__SUBST__")
        return end + 1

    def redirection(self, i: int) -> int:
        op = next(o for o in _REDIRS if self.text.startswith(o, i))
        # A lone fd number right before the operator (`2>`, `1>>`) belongs to the operator.
        if op[0] == ">" and self.buf and self.buf[-1].isdigit() and (len(self.buf) < 2 or self.buf[-2].isspace()):
            self.buf.pop()
        self.buf.append(f" {_MARK}{op}{_MARK} ")
        return i + len(op)

    def heredoc_start(self, i: int) -> int:
        m = re.compile(r"-?\s*(['\"]?)([\w.-]+)\1").match(self.text, i)
        if not m:
            raise ShellParseError("heredoc without delimiter")
        self.buf.append(f" {_MARK}<<{_MARK} {m.group(2)} ")
        self.pending.append((m.group(2), len(self.commands)))
        return m.end()

    def heredoc_bodies(self, i: int) -> int:
        """Consume the bodies of pending heredocs, starting at the line at `i`."""
        for delim, index in self.pending:
            lines = []
            while i < len(self.text):
                end = self.text.find("\n", i)
                end = len(self.text) if end < 0 else end
                line, i = self.text[i:end], end + 1
                if line.strip() == delim:
                    break
                lines.append(line)
            if index < len(self.commands):
                self.commands[index].heredoc = "\n".join(lines)
        self.pending = []
        return i


def _to_command(raw: str) -> SimpleCommand:
    try:
        tokens = shlex.split(raw, posix=True)
    except ValueError as exc:
        raise ShellParseError(str(exc)) from exc
    words: list[str] = []
    writes: list[str] = []
    it = iter(tokens)
    for tok in it:
        if not (tok.startswith(_MARK) and tok.endswith(_MARK)):
            words.append(tok)
            continue
        op, target = tok.strip(_MARK), next(it, "")
        if op in (">", ">>", ">|", "&>", "&>>") or (op == ">&" and not target.isdigit() and target != "-"):
            writes.append(target)
    return SimpleCommand(words=words, writes=writes, text=raw.replace(_MARK, "").strip())


def base_name(path: str) -> str:
    """Last path component: `/usr/bin/python3`, `./runtests.py` and `/testbed/fix_it.py` are named by it."""
    return path.rstrip("/").rsplit("/", 1)[-1]


def split_commands(text: str) -> list[SimpleCommand]:
    """All simple commands in `text`, in order; raises ShellParseError when it cannot split."""
    return _Scanner(text).run()
