"""A venv for a spec that tests through `tox --current-env` (sphinx) is its own interpreter through any link."""

from __future__ import annotations

import subprocess
import sys

from repoanchor.evals.harness.dependencies.current_env import needs_wrapper, wrap_interpreter


def test_a_current_env_specs_interpreter_is_its_venvs_through_any_link(tmp_path):
    """sphinx's spec runs `tox --current-env`, whose tox-current-env links `.tox/py39/bin/python` to the running
    interpreter: through that link a venv's python was the base Python, without the venv's packages."""
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, capture_output=True)
    probe = ["-c", "import sys; print(sys.prefix)"]
    link = tmp_path / "tox" / "bin" / "python"
    link.parent.mkdir(parents=True)
    link.symlink_to(venv / "bin" / "python")
    assert subprocess.run([str(link), *probe], capture_output=True, text=True).stdout.strip() != str(venv)
    assert needs_wrapper({"test_cmd": "tox --current-env -epy39 -v --"})
    assert not needs_wrapper({"test_cmd": "pytest -rA"})
    wrap_interpreter(venv)
    for path in (link, venv / "bin" / "python", venv / "bin" / "python3"):
        assert subprocess.run([str(path), *probe], capture_output=True, text=True).stdout.strip() == str(venv)
