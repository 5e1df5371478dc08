"""The command names the step rubric knows (../shared/STEPS.md): OpenCode's tools, shell programs by category,
git's subcommands, the stream editors and their in-place flag, and the wrappers stripped before a command."""

from __future__ import annotations

import re

OPENCODE_TOOLS = {
    "read": "read", "grep": "search", "glob": "search", "list": "search", "ls": "search",
    "edit": "edit", "write": "edit", "apply_patch": "edit", "patch": "edit", "multiedit": "edit",
}  # fmt: skip

SEARCH = {"ls", "find", "grep", "egrep", "fgrep", "rg", "ag", "ack", "tree", "locate", "which", "whereis", "wc"}
READ = {"cat", "head", "tail", "less", "more", "nl", "bat", "diff", "cmp", "stat", "file", "xxd", "od", "hexdump",
        "strings", "sort", "uniq", "cut", "jq"}  # fmt: skip
EDIT = {"cp", "mv", "rm", "mkdir", "touch", "rmdir", "ln", "chmod", "patch", "truncate", "unzip", "tar",
        "apply_patch", "applypatch"}  # fmt: skip
"""`apply_patch`/`applypatch`: the patch tool Codex-style models call from the shell (`apply_patch <<'EOF'`)."""
TEST = {"pytest", "py.test", "tox", "nox", "make", "ninja", "cmake", "runtests.py", "runtests"}
OTHER = {"echo", "printf", "pwd", "env", "export", "sleep", "true", "false", "cd", "source", "whoami", "date",
         "apt-get", "apt", "conda", "yum", "uname", "id", "set", "unset", "exit", "clear", "history"}  # fmt: skip
STREAM_EDITORS = ("sed", "perl", "awk")
IN_PLACE = re.compile(r"-[a-zA-Z0-9]*i\S*|--in-place\S*")
"""sed's and perl's in-place flag, alone or among others (`-i`, `-pi`, `-i.bak`, `--in-place=.orig`, perl's `-0pi`,
whose `-0` sets the record separator)."""
WRAPPERS = {"sudo", "time", "nohup", "timeout", "command", "exec", "nice", "stdbuf"}
GIT = {
    "status": "read", "diff": "read", "log": "read", "show": "read", "blame": "read",
    "grep": "search", "ls-files": "search", "ls-tree": "search",
    "apply": "edit", "checkout": "edit", "restore": "edit", "stash": "edit", "reset": "edit", "commit": "edit",
    "add": "edit", "rm": "edit", "mv": "edit", "am": "edit", "cherry-pick": "edit", "revert": "edit",
    "clean": "edit", "merge": "edit", "rebase": "edit", "switch": "edit",
}  # fmt: skip
