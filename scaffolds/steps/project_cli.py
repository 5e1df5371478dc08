"""The project's own command-line programs: STEPS.md labels running the project's CLI a test.

Two sources. Without context, the console scripts of projects SWE-bench and its kin (SWE-bench-extra,
SWE-Gym) draw instances from, which agents run to reproduce an issue (`pylint x.py`, `sphinx-build`,
`sqlfluff lint q.sql`, `mypy t.py`). Where a trajectory names its instance (`owner__repo-123`), also the
repository's own name and its prefixed forms (`dvc`, `conan`, `django-admin`, `moto_server`), so a project
outside the list is still recognised. Formatters that rewrite files (`black`, `isort`) are not in the
context-free list: only as the instance's own project are they its CLI.
"""

from __future__ import annotations

import re

KNOWN = frozenset({
    "pylint", "pyreverse", "symilar", "epylint", "pylint-config",  # pylint-dev/pylint
    "sphinx-build", "sphinx-quickstart", "sphinx-apidoc", "sphinx-autogen",  # sphinx-doc/sphinx
    "django-admin", "django-admin.py",  # django/django
    "flask",  # pallets/flask
    "sqlfluff",  # sqlfluff/sqlfluff
    "isympy",  # sympy/sympy
    "fitsheader", "fitsdiff", "fitscheck", "fitsinfo", "showtable", "volint", "wcslint", "samp_hub",  # astropy
    "mypy", "dmypy", "stubgen", "stubtest", "mypyc",  # python/mypy
    "dvc", "conan", "moto_server", "cfn-lint", "pydicom", "bokeh", "pyvista",  # SWE-Gym and SWE-bench dev repos
})  # fmt: skip
_NUMBER = re.compile(r"-\d+$")
_AFFIXES = ("-python", "python-", "-py", "py-")


def project_stems(instance_id: str | None) -> frozenset[str]:
    """The repository's name (lower case) from a SWE-bench instance id or a task id built on one, with and without a
    python affix (`pvlib__pvlib-python-1154` -> pvlib-python, pvlib); empty where the id has no `owner__repo` shape."""
    if not instance_id or "__" not in instance_id:
        return frozenset()
    repo = _NUMBER.sub("", instance_id.split("__")[1]).lower()  # a task id's suffix (`__spt-3`) left out
    if not repo:
        return frozenset()
    stems = {repo}
    for affix in _AFFIXES:
        bare = repo.removesuffix(affix) if affix.startswith("-") else repo.removeprefix(affix)
        if bare and bare != repo:
            stems.add(bare)
    return frozenset(stems)


def is_project_cli(name: str, stems: frozenset[str] = frozenset()) -> bool:
    """`name` (a command's base name) is a known project CLI, or the instance's project's own program."""
    if name in KNOWN:
        return True
    return any(name == stem or name.startswith((f"{stem}-", f"{stem}_")) for stem in stems)
