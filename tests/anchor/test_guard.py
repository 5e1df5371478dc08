"""Stage-1 guard: every change except INSTRUCTION.md is found, recorded and reverted, in a real worktree."""

from __future__ import annotations

import subprocess
from pathlib import Path

from repoanchor.anchor.guard import changed_paths, revert_violations
from repoanchor.scaffolds.environments.local import LocalCheckout
from tests.support.bug_repo import make_bug_repo


def test_no_changes_and_instruction_only_are_not_violations(tmp_path: Path):
    with LocalCheckout(make_bug_repo(tmp_path)) as env:
        assert revert_violations(env, env.base) == []
        env.execute("echo '## Plan' > INSTRUCTION.md")
        assert revert_violations(env, env.base) == []
        assert (Path(env.workdir) / "INSTRUCTION.md").read_text() == "## Plan\n"


def test_edits_deletions_renames_new_and_staged_files_are_reverted(tmp_path: Path):
    repo = make_bug_repo(tmp_path)
    with LocalCheckout(repo) as env:
        work = Path(env.workdir)
        env.execute(
            "echo notes > INSTRUCTION.md; sed -i 's/a - b/a + b/' calc.py; git mv test_calc.py test_moved.py;"
            " mkdir -p new/deep; echo x > new/deep/file.py; echo y > 'odd name.txt'; echo z > staged.py;"
            " git add staged.py"
        )
        violations = revert_violations(env, env.base)
        assert sorted((v["path"], v["change"]) for v in violations) == [
            ("calc.py", "M"),
            ("new/deep/file.py", "??"),
            ("odd name.txt", "??"),
            ("staged.py", "A"),
            ("test_calc.py", "D"),
            ("test_moved.py", "R"),
        ]
        assert changed_paths(env) == [("??", "INSTRUCTION.md")]
        assert "a - b" in (work / "calc.py").read_text()
        assert (work / "test_calc.py").exists()
        assert not (work / "new").exists()
    status = subprocess.run(["git", "-C", str(repo), "status", "--porcelain"], capture_output=True, text=True)
    assert status.stdout == ""
