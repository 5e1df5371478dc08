"""Runtime Target Identification: a masked module's forwarder is erased; the agent restores it.

Candidates are ``wrapper_module`` entries (a public ``pkg/mod.py`` that runs a hidden sibling
as ``pkg.mod``) with at least ``min_decoys`` decoys left beside them and at least one function
or class whose code lives in the hidden file (so the check below has something to look at).
The whole forwarder is replaced by the placeholder (the prior work replaced only the hidden
file's name, which gave the shape of the answer away; ``erase: reference`` does that, for the
RepoMirage preset); the decoys stay.

The check imports the public module in the variant's Python and requires, for every function
and class the intact module had from its implementation: the same name, ``__module__`` and
``__qualname__``; code whose file is the real implementation (a decoy is named as such); and
that code running in the public module's own globals, as the forwarder made it (a star-import
from the hidden module binds the right functions, but ``mock.patch("pkg.mod.x")`` would then no
longer reach them). The prior validator only looked for the file name as a substring.
"""

from __future__ import annotations

import random
from pathlib import Path, PurePosixPath

from repoanchor.evals.suites.extend.base import BuildContext, Plan, last_line
from repoanchor.evals.suites.extend.common import module_of, run_probe
from repoanchor.evals.suites.extend.models import ValidatorSpec
from repoanchor.perturb.mirage.masking.forwarder import forwarder_source
from repoanchor.prompts import render


class RuntimeTarget:
    name = "runtime_target"

    def plan(self, ctx: BuildContext) -> Plan | str:
        config = ctx.config.runtime_target
        wrappers = ctx.entries("wrapper_module")
        if not wrappers:
            return "no masked module in the variant (runtime-target-masking was not applied)"
        decoys = {}
        for entry in ctx.entries("decoy"):
            decoys.setdefault(entry["owner"], []).append(entry["visible_path"])
        targets = [_target(ctx.variant, w, sorted(decoys.get(w["visible_path"], []))) for w in wrappers]
        roots = sorted({t.pop("root") for t in targets})
        spec = {"runtime": {"targets": targets}}
        facts = run_probe(ctx.config, ctx.variant, spec, roots)["runtime"]
        usable, why = [], {}
        for target, found in zip(targets, facts, strict=True):
            target["definitions"] = [d for d in found["definitions"] if d["files"] == [target["runtime_path"]]]
            if found["error"]:
                why[target["path"]] = f"does not import: {last_line(found['error'])}"
            elif len(target["decoys"]) < config.min_decoys:
                why[target["path"]] = f"{len(target['decoys'])} decoy(s), need {config.min_decoys}"
            elif not target["definitions"]:
                why[target["path"]] = "no function or class whose code is in the implementation"
            else:
                usable.append(target)
        if len(usable) < config.k:
            detail = "; ".join(f"{p}: {r}" for p, r in sorted(why.items()))
            return f"not enough masked modules with decoys: {len(usable)} usable, need {config.k} ({detail})"
        chosen = sorted(ctx.rng(self.name).sample(usable, config.k), key=lambda t: t["path"])
        original = {t["path"]: (ctx.variant / t["path"]).read_text(encoding="utf-8") for t in chosen}
        files = sorted(original)
        erased = {path: config.placeholder + "\n" for path in files}
        if config.erase == "reference":
            erased = {t["path"]: _without_reference(original[t["path"]], t, config.placeholder) for t in chosen}
            if any(text is None for text in erased.values()):
                return "a forwarder does not name its implementation's file exactly once"
        modules = [t["module"] for t in chosen]
        words = {"files": files, "modules": modules, "placeholder": config.placeholder, "erase": config.erase}
        prompt = render(ctx.config.template("runtime_target"), **words)
        gt = {"targets": chosen, "roots": roots, "solution": {"files": original}}
        return Plan(files, prompt, gt, erase=erased)

    def check(self, worktree: Path, gt: dict, spec: ValidatorSpec) -> list[str]:
        targets = [{"module": t["module"]} for t in gt["targets"]]
        facts = run_probe(spec, worktree, {"runtime": {"targets": targets}}, set(gt["roots"]))
        reasons = []
        for target, found in zip(gt["targets"], facts["runtime"], strict=True):
            if found["error"]:
                reasons.append(f"importing {target['module']} fails: {last_line(found['error'])}")
                continue
            reasons += _compare(target, {d["name"]: d for d in found["definitions"]})
        return reasons

    def decoy(self, gt: dict) -> dict:
        """A forwarder as good as the real one, pointed at a decoy."""
        files = dict(gt["solution"]["files"])
        target = gt["targets"][0]
        folder = PurePosixPath(target["path"]).parent
        decoy = PurePosixPath(target["decoys"][0]).relative_to(folder).with_suffix("").as_posix()
        stem = PurePosixPath(target["path"]).stem
        files[target["path"]] = forwarder_source(random.Random(0), stem, decoy, set())
        return {"files": files}


def _without_reference(text: str, target: dict, placeholder: str) -> str | None:
    """The forwarder with its implementation's file name (a string literal) replaced by the placeholder."""
    literal = f'"{PurePosixPath(target["runtime_path"]).name}"'
    return text.replace(literal, f'"{placeholder}"') if text.count(literal) == 1 else None


def _target(root: Path, wrapper: dict, decoys: list[str]) -> dict:
    module, import_root = module_of(wrapper["visible_path"], root)
    return {
        "path": wrapper["visible_path"],
        "module": module,
        "runtime_path": wrapper["runtime_path"],
        "decoys": decoys,
        "root": import_root,
    }


def _compare(target: dict, found: dict[str, dict]) -> list[str]:
    reasons, where = [], target["module"]
    decoys = set(target["decoys"])
    for expected in target["definitions"]:
        name, actual = expected["name"], found.get(expected["name"])
        if actual is None:
            reasons.append(f"{where}.{name} is missing")
            continue
        if actual["files"] != expected["files"]:
            kind = "a decoy" if decoys & set(actual["files"]) else "not the implementation"
            reasons.append(f"{where}.{name} runs code from {', '.join(actual['files']) or 'nowhere'} ({kind})")
        if (actual["module"], actual["qualname"]) != (expected["module"], expected["qualname"]):
            reasons.append(
                f"{where}.{name} is {actual['module']}.{actual['qualname']}, "
                f"not {expected['module']}.{expected['qualname']}"
            )
        if not actual["module_globals"]:
            reasons.append(f"{where}.{name}: its code does not run in the namespace of {where}")
    stray = sorted(d["name"] for d in found.values() if decoys & set(d["files"]))
    if stray:
        reasons.append(f"{where} binds decoy code: {', '.join(stray)}")
    return reasons
