"""Proxy Chain Completion: middle links of import proxy chains are erased; the agent rebuilds them.

Candidates are the middle files of every ``import_proxy`` chain (not the head the importing
module names, not the leaf that runs the original import). K are erased (default 3), at most
one per chain, and no two from chains forwarding a common name: then the module a link must
forward from is the only module left unimported that forwards its names, so the answer is
unique. The prompt names the erased files (the prior work did not and guessed their paths).

The check runs in the variant's Python (see probe.py):
- every chain's entry import (the original statement next to the rewritten one, as the entry
  module runs it) yields the *same object*, whose definition identity (module, qualname, code
  file) is the one recorded on the intact variant;
- every module of a repaired chain is loaded, and each erased file really forwards from the
  next link: with that link swapped for a stub of sentinels, the reloaded file hands out the
  sentinels. Importing the runtime target directly (the shortcut the prior validator accepted)
  hands out the real object and fails.
The project's tests and the scope check come on top (see build.py).
"""

from __future__ import annotations

from pathlib import Path

from repoanchor.evals.suites.extend.base import BuildContext, Plan, last_line
from repoanchor.evals.suites.extend.common import module_of, package_of, run_probe
from repoanchor.evals.suites.extend.models import ValidatorSpec
from repoanchor.perturb.variant_git import tracked_files
from repoanchor.prompts import render

UNDESCRIBED = "what it forwards cannot be described"
"""probe.py's opening of an `unavailable` chain whose import worked and whose objects could not be described."""


class ProxyChain:
    name = "proxy_chain"

    def plan(self, ctx: BuildContext) -> Plan | str:
        config = ctx.config.proxy_chain
        chains = [_chain(ctx.variant, index, entry) for index, entry in enumerate(ctx.entries("import_proxy"))]
        if not chains:
            return "no proxy chain in the variant (proxy-imports was not applied)"
        roots = sorted({r for c in chains for r in c.pop("roots")})
        chains = _resolving(chains, run_probe(ctx.config, ctx.variant, {"proxy": {"chains": chains}}, roots))
        if not isinstance(chains, str):
            chains = _stable(chains, ctx)
        if isinstance(chains, str):
            return chains
        chosen = _choose(chains, config.k, ctx.rng(self.name))
        if isinstance(chosen, str):
            return chosen
        erased = [
            {
                "path": chains[c]["files"][i],
                "module": chains[c]["modules"][i],
                "next": chains[c]["modules"][i + 1],
                "names": chains[c]["names"],
                "chain": c,
            }
            for c, i in chosen
        ]
        original = {e["path"]: (ctx.variant / e["path"]).read_text(encoding="utf-8") for e in erased}
        shortcut = {e["path"]: (ctx.variant / chains[e["chain"]]["files"][-1]).read_text("utf-8") for e in erased}
        files = sorted(original)
        prompt = render(ctx.config.template("proxy_chain"), files=files, placeholder=config.placeholder)
        gt = {"chains": chains, "erased": erased, "roots": roots, "solution": {"files": original}, "shortcut": shortcut}
        return Plan(files, prompt, gt, erase={path: config.placeholder + "\n" for path in files})

    def check(self, worktree: Path, gt: dict, spec: ValidatorSpec) -> list[str]:
        chains = [{k: v for k, v in c.items() if k not in ("identities", "origins")} for c in gt["chains"]]
        erased = [{"module": e["module"], "next": e["next"], "names": e["names"]} for e in gt["erased"]]
        found = run_probe(spec, worktree, {"proxy": {"chains": chains, "erased": erased}}, set(gt["roots"]))["proxy"]
        reasons = []
        for chain, result in zip(gt["chains"], found["chains"], strict=True):
            where = f"{chain['visible']}: {chain['imported']!r}"
            if result.get("unavailable"):
                reasons.append(f"{where}: {_unavailable(result['unavailable'], 'now')}")
                continue
            if result["error"]:
                reasons.append(f"{where} fails: {last_line(result['error'])}")
                continue
            for name in chain["names"]:
                if not result["same_object"].get(name):
                    reasons.append(f"{where}: {name} is not the object the original import binds")
                elif result["identities"].get(name) != chain["identities"][name]:
                    reasons.append(
                        f"{where}: {name} is {result['identities'].get(name)}, not {chain['identities'][name]}"
                    )
        for item in gt["erased"]:
            missing = [m for m in gt["chains"][item["chain"]]["modules"] if not found["loaded"].get(m)]
            if missing:
                reasons.append(f"{item['path']}: chain modules never imported: {', '.join(missing)}")
        for item, result in zip(gt["erased"], found["routes"], strict=True):
            if result["error"]:
                reasons.append(
                    f"{item['path']}: cannot resolve {', '.join(item['names'])}: {last_line(result['error'])}"
                )
            elif not all(result["routed"].values()):
                reasons.append(f"{item['path']} does not forward {', '.join(item['names'])} from {item['next']}")
        return reasons

    def decoy(self, gt: dict) -> dict:
        """The shortcut: the first erased link imports the runtime target directly (the leaf's code)."""
        files = dict(gt["solution"]["files"])
        first = gt["erased"][0]["path"]
        files[first] = gt["shortcut"][first]
        return {"files": files}


def _chain(root: Path, index: int, entry: dict) -> dict:
    files = [part.strip() for part in entry["chain"].split("->")]
    modules = [module_of(rel, root) for rel in files]
    entry_module = module_of(entry["visible_path"], root)
    return {
        "id": index,
        "path": entry["chain"],
        "visible": entry["visible_path"],
        "entry": entry_module[0],
        "package": package_of(entry["visible_path"], root),
        "imported": entry["imported"],
        "names": [n.strip() for n in entry["names"].split(",")],
        "files": files,
        "head": modules[0][0],
        "modules": [m for m, _ in modules],
        "roots": {r for _, r in modules} | {entry_module[1]},
    }


def _resolving(chains: list[dict], facts: dict) -> list[dict] | str:
    """The chains usable for a task, renumbered, each with the identities of what it forwards; or why none.

    A chain whose original import fails in the instance's environment (an optional or platform-only
    dependency, guarded by try/except in the project), or whose objects the probe cannot describe without
    failing, cannot be checked by running it: it is left out.
    A chain that fails where its original import works is a broken perturbation: no task at all."""
    usable, unavailable = [], []
    for chain, found in zip(chains, facts["proxy"]["chains"], strict=True):
        if found.get("unavailable"):
            unavailable.append(f"{chain['imported']!r} ({_unavailable(found['unavailable'], 'there')})")
            continue
        if found["error"] or not all(found["same_object"].values()):
            return f"the intact variant's chain {chain['path']} does not resolve: {last_line(found['error'])}"
        usable.append({**chain, "id": len(usable), "identities": found["identities"], "origins": found["origins"]})
    if not usable:
        return (
            f"no proxy chain routes an import that works in the instance's environment: all {len(chains)} "
            f"route imports that fail there or forward what cannot be described there, e.g. {unavailable[0]}"
        )
    return usable


def _unavailable(text: str, when: str) -> str:
    """Why the probe could not check a chain: its original import failed, or describing its objects did."""
    if text.startswith(UNDESCRIBED):
        return f"{UNDESCRIBED} {when}: {last_line(text)}"
    return f"the original import fails {when}: {last_line(text)}"


def _stable(chains: list[dict], ctx: BuildContext) -> list[dict] | str:
    """The chains whose forwarded objects are the same in every checkout: none of their names comes from
    a file the install step generates (setuptools_scm's `_version.py`: untracked, its value follows the
    checkout's git state, so an intact answer would read a different version), directly or re-exported.
    Renumbered; or why none is left."""
    tracked = tracked_files(ctx.source, "HEAD")
    if tracked is None:  # not a repository: nothing tells generated files apart
        return chains
    kept, generated = [], []
    for chain in chains:
        untracked = sorted({path for files in chain["origins"].values() for path in files} - tracked)
        if untracked:
            generated.append(f"{chain['imported']!r} ({untracked[0]} is generated at install)")
            continue
        kept.append({**chain, "id": len(kept)})
    if not kept:
        return f"no proxy chain forwards a tracked module: all {len(chains)} route generated ones, e.g. {generated[0]}"
    return kept


def _choose(chains: list[dict], k: int, rng) -> list[tuple[int, int]] | str:
    """K (chain, position) middle links: one per chain, no forwarded name shared between them."""
    candidates = [(c["id"], i) for c in chains for i in range(1, len(c["files"]) - 1)]
    rng.shuffle(candidates)
    chosen, used_chains, used_names = [], set(), set()
    for chain, position in candidates:
        names = set(chains[chain]["names"])
        if chain in used_chains or names & used_names:
            continue
        chosen.append((chain, position))
        used_chains.add(chain)
        used_names |= names
        if len(chosen) == k:
            return sorted(chosen)
    return (
        f"not enough middle-layer proxy files: {len(chosen)} usable (one per chain, no shared name) "
        f"of {len(candidates)} candidates, need {k}"
    )
