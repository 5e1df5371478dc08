"""Which constants Missing Constant Recovery erases: the first K, in the seeded order, whose value is written
elsewhere in the repository (when values are erased: `evidenced`) and whose module imports in the instance's
environment and hands out the recorded value (`run_probe`).

Candidates are examined a batch at a time, in that order, so a large package costs the text scan and the imports
of the first few candidates, not of all: SymPy 1.12 has thousands of constants and 60 MB of text, and scanning
all of it for every constant took over 13 minutes of an instance's build. Only when the batches run out without
K does every candidate get examined, and then the reasons count them all, as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from itertools import islice
from pathlib import Path

from repoanchor.evals.suites.extend.base import BuildContext, last_line
from repoanchor.evals.suites.extend.common import run_probe

BATCH = 16


def choose(
    ctx: BuildContext, candidates: list, describe: Callable[[object], dict], evidenced: Callable[[object], bool] | None,
    k: int,
) -> list[dict] | str:  # fmt: skip
    """The first `k` usable candidates (described: module, binding, key, type, repr, root), or why there are not.

    A module that cannot import there (an optional or platform-only dependency, an example script that downloads
    its data or reads a file that is not there) cannot host a checkable constant and is passed over, as is one
    whose name another candidate's root takes first (`shadowed_by`); one that imports but hands out another value
    is a broken perturbation: no task at all."""
    items = [describe(c) for c in candidates]
    roots = sorted({item["root"] for item in items})  # every candidate's: where a top-level name is found first
    usable, unavailable, seen, rest = [], [], 0, []
    for start in range(0, len(items), BATCH):
        rest = candidates[start + BATCH :]
        found = [items[i] for i in range(start, min(start + BATCH, len(items))) if _kept(candidates[i], evidenced)]
        seen += len(found)
        broken = _probe(ctx, found, roots, k, usable, unavailable)
        if broken:  # as when every candidate was examined first: too few evidenced ones say so instead
            if seen + _count(rest, evidenced, k - seen) >= k:
                return broken
            break
        if len(usable) == k:
            return usable
    total = seen + _count(rest, evidenced, len(rest))
    if total < k:
        kind = "with their value written elsewhere in the repository" if evidenced else "in all"
        return f"not enough constants: {total} {kind} of {len(candidates)}, need {k}"
    shown = f"; passed over (no import here, or shadowed on the path): {unavailable[0]}" if unavailable else ""
    return f"not enough constants whose module imports: {len(usable)} of {total}, need {k}{shown}"


def _kept(candidate, evidenced: Callable | None) -> bool:
    return evidenced is None or evidenced(candidate)


def _count(candidates: Iterable, evidenced: Callable | None, limit: int) -> int:
    """How many of `candidates` are kept, counting no further than `limit`."""
    return sum(1 for _ in islice((c for c in candidates if _kept(c, evidenced)), max(limit, 0)))


def _probe(ctx, items: list[dict], roots: list[str], k: int, usable: list, unavailable: list) -> str | None:
    """Append to `usable`, in order and up to `k` in all, the items whose module hands out the recorded value;
    the reason the perturbation is broken if such an item comes first."""
    shadowed = {id(item): shadowed_by(ctx.variant, item, roots) for item in items}
    unavailable += [f"{item['module']} (shadowed by {shadowed[id(item)]})" for item in items if shadowed[id(item)]]
    items = [item for item in items if not shadowed[id(item)]]
    if not items:
        return None
    probed = [{key: value for key, value in item.items() if key != "root"} for item in items]
    facts = run_probe(ctx.config, ctx.variant, {"constants": {"entries": probed}}, sorted({i["root"] for i in items}))
    for item, found in zip(items, facts["constants"], strict=True):
        where, error = f"{item['binding']}[{item['key']!r}]", found["error"] or ""
        if error and found.get("stage") == "import":  # the suite's variant passed the import check against the original
            unavailable.append(f"{item['module']} ({last_line(error)})")
        elif error or (found["type"], found["repr"]) != (item["type"], item["repr"]):
            return f"the intact variant's {where} is not {item['repr']}: {last_line(found['error'])}"
        else:
            usable.append(item)
            if len(usable) == k:
                return None
    return None


def shadowed_by(tree: Path, item: dict, roots: list[str]) -> str | None:
    """The file that `import <module>` finds before `item`'s own with `roots` on sys.path in this order, if any.

    Example folders each holding a top-level ``good.py`` (pylint's ``doc/data/messages/*/good.py``) name the
    same module from different roots: only the first can be probed or graded, the others are passed over."""
    top = item["module"].split(".")[0]
    for root in roots:
        folder = tree / root if root else tree
        found = next((f for f in (folder / top / "__init__.py", folder / f"{top}.py") if f.is_file()), None)
        if found is not None:
            return None if root == item["root"] else found.relative_to(tree).as_posix()
    return None
