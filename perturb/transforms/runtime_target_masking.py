"""runtime-target-masking: a module's code moves to a hidden sibling; its import path forwards.

For a selected ``pkg/mod.py`` the variant gets:

- ``pkg/<hidden>.py``: the module's bytes, unchanged, in the *same folder*, so that
  ``__file__``-relative data reads, relative imports and ``inspect.getsourcefile`` keep working;
- ``pkg/mod/__init__.py``: a forwarder that executes the hidden file as ``pkg.mod`` itself
  (see `perturb.mirage.masking_forwarder`): every import, ``isinstance``, pickle (classes keep
  ``__module__ == "pkg.mod"`` and their ``__qualname__``), ``mock.patch("pkg.mod.name")``,
  ``logging.getLogger(__name__)`` and ``importlib.reload`` behave as with the plain module, and
  the module namespace holds no helper name;
- ``pkg/mod/<decoy>.py`` x K (option ``decoys``, default 3): mutated copies of the code (see
  `perturb.mirage.masking_decoys`) that nothing ever imports.

Why a forwarding *package* and not a small forwarding ``pkg/mod.py``: the folder is the one
place where decoys can sit right next to the public entry point and still be unreachable. At
runtime ``pkg.mod`` has no ``__path__`` (the forwarder removes it, so the module looks exactly
like the plain module it was), hence ``import pkg.mod.<decoy>`` fails and
``pkgutil.walk_packages`` does not descend into the folder; as siblings of ``mod.py`` the
decoys would be listed by ``pkgutil.iter_modules(pkg.__path__)`` and imported by every "import
all modules" test. The costs are small and known: before the first import ``find_spec`` reports
a package and ``iter_modules`` reports ``ispkg=True`` for ``pkg.mod``; ``python -m pkg.mod``
cannot run a package without ``__main__``, so modules run that way are refused (see
`perturb.mirage.masking_eligibility` for every refusal and why ``__init__.py``, top-level
modules and ``if __name__ == "__main__"`` blocks are treated as they are). The hidden module is
listed by ``iter_modules`` (it must sit in ``pkg/`` for ``__file__``); importing it by its own
name runs the code a second time under that name, like importing any module twice.

One transaction per module: the hidden file, the removal of ``mod.py``, the forwarder and the
decoys commit together or not at all. Names come from a per-module RNG derived from the seed,
so a module's names do not depend on which other modules were selected.
"""

from __future__ import annotations

import random
from pathlib import PurePosixPath

import libcst as cst

from repoanchor.perturb.compile_check import compile_error
from repoanchor.perturb.engine import run_with_big_stack
from repoanchor.perturb.mirage.masking_decoys import Decoy, make_decoys
from repoanchor.perturb.mirage.masking_eligibility import TreeSurvey, refusal, survey_tree
from repoanchor.perturb.mirage.masking_forwarder import forwarder_source
from repoanchor.perturb.mirage.masking_names import module_name
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.sourcefile import SourceError, decode_source
from repoanchor.perturb.treectx import TransactionAborted, TreeContext

DEFAULT_DECOYS = 3
MAX_DECOYS = 20


class RuntimeTargetMasking:
    id = "runtime-target-masking"
    family = "repomirage"
    description = "Move a module's code to a hidden sibling run by a forwarding package; add decoys never imported."
    keyword_bound = False
    scope = "tree"

    def apply_tree(self, ctx: TreeContext, modules: list[str]) -> None:
        count = decoy_count(ctx.options)
        if not modules:
            return
        survey = survey_tree(ctx.root)
        base = ctx.rng.getrandbits(64)
        for module in sorted(modules):
            reason = _refusal(ctx, module, survey)
            if reason:
                ctx.skip(module, reason)
                continue
            with ctx.transaction(module):
                _mask(ctx, module, random.Random(f"{base}|{module}"), count)


def decoy_count(options: dict) -> int:
    """The ``decoys`` option: an integer 0..20 (a digit string from a command line is accepted)."""
    value = options.get("decoys", DEFAULT_DECOYS)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DECOYS:
        raise ValueError(f"runtime-target-masking option 'decoys' must be an integer 0..{MAX_DECOYS}, got {value!r}")
    return value


def _refusal(ctx: TreeContext, module: str, survey: TreeSurvey) -> str | None:
    if not module.endswith(".py"):
        return f"not-a-module: {module} is not a .py file"
    if not (ctx.root / module).exists() and not (ctx.root / module).is_symlink():
        return f"missing: {module} is no longer in the variant tree (moved by an earlier transform)"
    return refusal(ctx.root, module, survey)


def _mask(ctx: TreeContext, module: str, rng: random.Random, count: int) -> None:
    data = ctx.read(module)
    text = _checked_text(data, module, ctx.project.min_python)
    decoys, shortfall = run_with_big_stack(_decoys, data, rng, count)
    if shortfall:  # masked all the same: the move is the perturbation, decoys are its garnish
        ctx.skip(module, f"decoy-shortfall: {shortfall}", "<decoys>")
    rel = PurePosixPath(module)
    folder, stem = rel.parent, rel.stem
    init = folder / "__init__.py"
    avoid = identifiers_in(text) | identifiers_in(ctx.read(init.as_posix()).decode("utf-8", "replace"))
    hidden = module_name(rng, stem, ctx.taken, avoid)
    decoy_names = [module_name(rng, stem, ctx.taken, avoid) for _ in decoys]
    drawn = avoid | ctx.taken
    forwarder = forwarder_source(rng, stem, hidden, drawn)
    ctx.taken.update(drawn - avoid)

    hidden_rel, forwarder_rel = (folder / f"{hidden}.py").as_posix(), (folder / stem / "__init__.py").as_posix()
    ctx.create(hidden_rel, data)
    ctx.remove(module)
    ctx.create(forwarder_rel, forwarder)
    ctx.site("<module>", f"{module}", forwarder)
    ctx.resolve_path("wrapper_module", visible=module, runtime=hidden_rel, forwarder=forwarder_rel)
    for name, decoy in zip(decoy_names, decoys, strict=True):
        _write_decoy(ctx, module, (folder / stem / f"{name}.py").as_posix(), decoy)


def _write_decoy(ctx: TreeContext, module: str, rel: str, decoy: Decoy) -> None:
    ctx.create(rel, decoy.source)
    ctx.site(rel, "", "\n".join(decoy.mutations))
    ctx.resolve_path("decoy", visible=rel, runtime="never imported", owner=module, mutations=list(decoy.mutations))


def _checked_text(data: bytes, module: str, min_python: tuple[int, int]) -> str:
    """The module's text if it is something we may move and mutate, else the skip reason."""
    try:
        text = decode_source(data)
    except SourceError as exc:
        raise TransactionAborted(str(exc)) from exc
    error = compile_error(text, module, min_python)
    if error:
        raise TransactionAborted(f"unparseable: {error}")
    return text


def _decoys(data: bytes, rng: random.Random, count: int) -> tuple[list[Decoy], str | None]:
    """Runs on the big-stack thread: LibCST recurses as deep as the code nests."""
    try:
        tree = cst.parse_module(data)
    except (cst.ParserSyntaxError, RecursionError) as exc:  # compile() accepted it, LibCST did not
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise TransactionAborted(f"unparseable: libcst: {type(exc).__name__}: {first}") from exc
    return make_decoys(tree, rng, count)
