"""The instance's setup in an Extend checkout: its pre-install steps once per tree, its install step every time.

swebench's pre-install steps edit files in place: Sphinx's spec runs `sed -i
's/sphinxcontrib-applehelp/sphinxcontrib-applehelp<=1.0.7/' setup.py`, which, run a second time in the same tree,
writes `sphinxcontrib-applehelp<=1.0.7<=1.0.7` and breaks the install (the intact variant has its baseline tests
run, then its probes). So they run behind a marker kept in the tree (in `.git/` where there is one): a copy of a
tree carries both the edits and the marker, a clone neither. As before, the setup's exit code is the install
step's; the install step runs each time, as it re-points a shared venv's editable install at the tree in hand.
"""

from __future__ import annotations

import hashlib

MARKER = "repoanchor-pre-install"


def setup_script(settings) -> str:
    """Bash for `settings.pre_setup_cmd` (once per tree) then `settings.setup_cmd`; "" when there is neither."""
    pre, install = settings.pre_setup_cmd.strip(), settings.setup_cmd.strip()
    if not pre:
        return install
    stamp = hashlib.sha256(pre.encode()).hexdigest()[:16]
    once = (
        f"marker=.git/{MARKER}; [ -d .git ] || marker=.{MARKER}\n"
        f'if [ "$(cat "$marker" 2>/dev/null)" != {stamp} ]; then\n'
        f'{{ {pre}\n}}\necho {stamp} > "$marker"\n'
        "fi"
    )
    return f"{once}\n{install}".strip()
