"""Missing Constant Recovery: K entries of the JSON resources are erased; the agent restores them.

Candidates are the distinct (resource, key) pairs of the ``json_value`` entries; K are drawn
(default 5; fewer candidates -> skipped with the reason). Design choice: by default both the key
*and* the value are erased (``erase="key_and_value"``), replaced by ``"<placeholder>_<n>":
"<placeholder>"`` entries appended in a seeded order (their position and numbering say nothing
about the lost keys). The prior work kept the values under the placeholder keys, which makes the
task a matching puzzle; that behaviour is ``erase="key"``. With values erased, a constant is
only drawn when its value is written somewhere else in the repository (tests, docs, code: see
`_evidenced`), so every task is solvable from what the agent can read; the key names are
always recoverable, since the loading code subscripts the resource with literal keys. The
prompt names the JSON files and the loader bindings that read each (all of them, not only the
ones using the lost keys).

The check: each listed resource, parsed, equals the original exactly, recursively, with exact
types (1, 1.0 and true differ; the prior validator used ``==``), no placeholder left; then, in
the variant's Python, each loader binding hands out the original value with its original type
for every erased key; the project's tests and the scope check come on top (see build.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

from repoanchor.evals.suites.extend.base import BuildContext, Plan, last_line
from repoanchor.evals.suites.extend.common import exact_difference, module_of, run_probe
from repoanchor.evals.suites.extend.constant_choice import choose
from repoanchor.evals.suites.extend.models import ValidatorSpec
from repoanchor.perturb.source.files import NEVER_COPY
from repoanchor.prompts import render

MAX_EVIDENCE_BYTES = 1_000_000


class MissingConstant:
    name = "missing_constant"

    def plan(self, ctx: BuildContext) -> Plan | str:
        config = ctx.config.missing_constant
        entries = {(e["runtime_path"], e["key"]): e for e in ctx.entries("json_value")}
        if not entries:
            return "no externalized constant in the variant (constant-externalization was not applied)"
        resources = {path: json.loads((ctx.variant / path).read_text("utf-8")) for path, _ in entries}
        candidates = sorted(entries)
        rng = ctx.rng(self.name)
        rng.shuffle(candidates)
        texts = (
            _texts(ctx.variant, set(resources)) if config.erase == "key_and_value" and config.require_evidence else None
        )
        evidenced = None if texts is None else (lambda c: _evidenced(resources[c[0]][c[1]], texts))
        erased = choose(ctx, candidates, lambda c: _erased(ctx.variant, entries[c], resources, ""), evidenced, config.k)
        if isinstance(erased, str):
            return erased
        for n, item in enumerate(erased, 1):
            item["placeholder_key"] = f"{config.placeholder}_{n}"
        roots = sorted({e.pop("root") for e in erased})
        files = sorted({e["path"] for e in erased})
        original = {path: (ctx.variant / path).read_text("utf-8") for path in files}
        erase = {}
        for path in files:
            data = {
                k: v for k, v in resources[path].items() if not any(e["path"] == path and e["key"] == k for e in erased)
            }
            for item in (e for e in erased if e["path"] == path):
                data[item["placeholder_key"]] = config.placeholder if config.erase == "key_and_value" else item["value"]
            erase[path] = json.dumps(data, indent=2, ensure_ascii=False) + "\n"
        loaders = {path: _loaders(ctx.entries("json_value"), path) for path in files}
        words = {"files": files, "loaders": loaders, "placeholder": config.placeholder, "erase": config.erase}
        prompt = render(ctx.config.template("missing_constant"), **words)
        gt = {
            "resources": {p: resources[p] for p in files},
            "erased": erased,
            "roots": roots,
            "solution": {"files": original},
        }
        return Plan(files, prompt, gt, erase=erase)

    def check(self, worktree: Path, gt: dict, spec: ValidatorSpec) -> list[str]:
        reasons = []
        for path, expected in sorted(gt["resources"].items()):
            try:
                actual = json.loads((Path(worktree) / path).read_text("utf-8"))
            except (OSError, ValueError) as exc:
                reasons.append(f"{path}: not readable JSON: {exc}")
                continue
            difference = exact_difference(expected, actual)
            if difference:
                reasons.append(f"{path}: {difference}")
        if reasons:
            return reasons  # the loaders would only repeat what is wrong with the files
        entries = [{k: e[k] for k in ("module", "binding", "key")} for e in gt["erased"]]
        found = run_probe(spec, worktree, {"constants": {"entries": entries}}, set(gt["roots"]))
        for item, result in zip(gt["erased"], found["constants"], strict=True):
            where = f"{item['module']}.{item['binding']}[{item['key']!r}]"
            if result["error"]:
                reasons.append(f"{where} fails: {last_line(result['error'])}")
            elif (result["type"], result["repr"]) != (item["type"], item["repr"]):
                reasons.append(f"{where} is {result['type']} {result['repr']}, not {item['type']} {item['repr']}")
        return reasons

    def decoy(self, gt: dict) -> dict:
        """The right keys with one value of the wrong type (2.0 for 2, 1 for true, ...)."""
        numeric = [e for e in gt["erased"] if isinstance(e["value"], (bool, int, float))]
        item = (numeric or gt["erased"])[0]
        data = json.loads(gt["solution"]["files"][item["path"]])
        data[item["key"]] = wrong_type(item["value"])
        return {
            "files": {**gt["solution"]["files"], item["path"]: json.dumps(data, indent=2, ensure_ascii=False) + "\n"}
        }


def wrong_type(value: object) -> object:
    """A value that `==` may still call equal, of another JSON type."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return float(value)
    if isinstance(value, float):
        return int(value) if value.is_integer() else str(value)
    return [value]


def _erased(root: Path, entry: dict, resources: dict, placeholder_key: str) -> dict:
    module, import_root = module_of(entry["visible_path"], root)
    value = resources[entry["runtime_path"]][entry["key"]]
    return {
        "path": entry["runtime_path"],
        "key": entry["key"],
        "value": value,
        "type": type(value).__name__,
        "repr": repr(value),
        "module": module,
        "binding": entry["binding"],
        "placeholder_key": placeholder_key,
        "root": import_root,
    }


def _loaders(entries: list[dict], path: str) -> list[dict]:
    pairs = sorted({(e["visible_path"], e["binding"]) for e in entries if e["runtime_path"] == path})
    return [{"module": module, "binding": binding} for module, binding in pairs]


def _texts(root: Path, resources: set[str]) -> list[str]:
    """Every other text file of the tree (the resources themselves are no evidence)."""
    texts = []
    for path in sorted(root.rglob("*")):
        rel = path.relative_to(root).as_posix()
        if rel in resources or set(path.relative_to(root).parts) & NEVER_COPY or not path.is_file():
            continue
        if path.is_symlink() or path.stat().st_size > MAX_EVIDENCE_BYTES:
            continue
        try:
            texts.append(path.read_text("utf-8"))
        except (UnicodeDecodeError, OSError):
            continue
    return texts


def _evidenced(value: object, texts: list[str]) -> bool:
    """Whether the value, with its type, is written somewhere: a string's text, a number's literal."""
    if isinstance(value, str):
        forms = {value, repr(value)[1:-1], json.dumps(value)[1:-1]}
        return any(form and form in text for form in forms for text in texts)
    if isinstance(value, bool) or value is None:
        words = {True: ("True", "true"), False: ("False", "false"), None: ("None", "null")}[value]
        pattern = re.compile(r"\b(?:" + "|".join(words) + r")\b")
    else:
        pattern = re.compile(r"(?<![\w.])" + re.escape(repr(value)) + r"(?![\w.])")
    return any(pattern.search(text) for text in texts)
