"""runtime-target-masking: a module's code moves to a hidden sibling; its import path forwards.

For a selected ``pkg/mod.py`` the variant gets:

- ``pkg/<hidden>.py``: the module's bytes, unchanged, in the *same folder*, so that
  ``__file__``-relative data reads, relative imports and ``inspect.getsourcefile`` keep working;
- ``pkg/mod.py`` rewritten as a forwarder that executes the hidden file as ``pkg.mod`` itself
  (see `perturb.mirage.masking_forwarder`): every import, ``isinstance``, pickle (classes keep
  ``__module__ == "pkg.mod"`` and their ``__qualname__``), ``mock.patch("pkg.mod.name")``,
  ``logging.getLogger(__name__)``, ``importlib.reload`` and ``python -m pkg.mod`` behave as with
  the plain module, and the module namespace holds no helper name;
- ``pkg/mod/<decoy>.py`` x K (option ``decoys``, default 3) in a folder *without*
  ``__init__.py``: mutated copies of the code (see `perturb.mirage.masking_decoys`) that nothing
  ever imports. With option ``decoy_layout: siblings`` (the RepoMirage code's layout) they go to
  ``pkg/`` beside the hidden file instead, so the real file is no longer the only candidate outside
  a decoy folder; they are then importable modules of the package (an import-everything loop runs
  them), which the suite's test validation judges.

Why the forwarder is a module file and not the forwarding package ``pkg/mod/__init__.py`` the
issue names: it is strictly better on every observable we found, and equal on the rest.
``pkgutil.walk_packages`` imports every *package* it lists in order to read its ``__path__``,
and lets any exception but ImportError escape: with a package forwarder, walking masked click
imports ``click._winconsole``, whose ``assert sys.platform == "win32"`` aborts the whole walk,
where the original walk only listed the module (measured). A package also reports
``ispkg=True`` and a package spec before import, and ``python -m pkg.mod`` fails on it ("is a
package and cannot be directly executed"); the module file keeps all three as they were. The
decoys lose nothing: a folder without ``__init__.py`` is skipped by ``pkgutil.iter_modules``,
``pkg.mod`` has no ``__path__`` so ``import pkg.mod.<decoy>`` fails, and the importer prefers
``mod.py`` to a namespace folder of the same name, so the folder changes no import. It sits
right next to the public entry point, where a reader looks for the code.

The hidden module is listed by ``iter_modules`` (it must sit in ``pkg/`` for ``__file__``);
importing it by its own name runs the code a second time under that name, as importing any
module twice would; its name starts with the module's stem so that import-everything loops meet
the public module first (see `perturb.mirage.masking_names.hidden_name`). Refusals and their
reasons (``__init__.py``, top-level modules, scripts run by path, ...) are documented in
`perturb.mirage.masking_eligibility`.

One transaction per module: the hidden file, the forwarder and the decoys commit together or
not at all. Names come from a per-module RNG derived from the seed, so a module's names do not
depend on which other modules were selected (unless a draw collides with a name taken earlier).
"""

from __future__ import annotations

import random
from pathlib import PurePosixPath

import libcst as cst

from repoanchor.perturb.mirage.masking.decoys import Decoy, make_decoys
from repoanchor.perturb.mirage.masking.eligibility import DOCTEST_MODULES, TreeSurvey, refusal, survey_tree
from repoanchor.perturb.mirage.masking.forwarder import forwarder_source
from repoanchor.perturb.mirage.masking.names import hidden_name, module_name
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.source.sourcefile import SourceError, decode_source
from repoanchor.perturb.speed.bigstack import run_with_big_stack
from repoanchor.perturb.treectx import TransactionAborted, TreeContext
from repoanchor.perturb.validation.compile_check import compile_error

DEFAULT_DECOYS = 3
MAX_DECOYS = 20


class RuntimeTargetMasking:
    id = "runtime-target-masking"
    family = "repomirage"
    description = "Move a module's code to a hidden sibling that the module's file runs; add decoys never imported."
    keyword_bound = False
    scope = "tree"
    option_names = frozenset({"decoys", "collection", "test_command", "decoy_layout"})

    def apply_tree(self, ctx: TreeContext, modules: list[str]) -> None:
        count, siblings = decoy_count(ctx.options), decoy_layout(ctx.options) == "siblings"
        pytest_options_only = collection_option(ctx.options) == "pytest-options"
        if not modules:
            return
        survey = survey_tree(ctx.root, pytest_options_only=pytest_options_only, listed=ctx.listed)
        command = str(ctx.options.get("test_command") or "")
        if not survey.doctest_config and DOCTEST_MODULES.search(command):
            survey.doctest_config = f"the test command ({command[:120]})"
        base = ctx.rng.getrandbits(64)
        for module in sorted(modules):
            reason = _refusal(ctx, module, survey)
            if reason:
                ctx.skip(module, reason)
                continue
            shortfall: list[str] = []
            with ctx.transaction(module):
                shortfall = _mask(ctx, module, random.Random(f"{base}|{module}"), count, siblings)
            if shortfall and ctx.outcomes[-1].kind == "applied":
                # Masked all the same: the move is the perturbation, the decoys its garnish.
                ctx.skip(module, f"decoy-shortfall: {shortfall[0]}", "<decoys>")


def decoy_count(options: dict) -> int:
    """The ``decoys`` option: an integer 0..20 (a digit string from a command line is accepted)."""
    value = options.get("decoys", DEFAULT_DECOYS)
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DECOYS:
        raise ValueError(f"runtime-target-masking option 'decoys' must be an integer 0..{MAX_DECOYS}, got {value!r}")
    return value


LAYOUTS = ("folder", "siblings")


def decoy_layout(options: dict) -> str:
    """The ``decoy_layout`` option: ``folder`` (default, pkg/mod/ without __init__.py) or ``siblings``."""
    value = options.get("decoy_layout", LAYOUTS[0])
    if value not in LAYOUTS:
        raise ValueError(f"runtime-target-masking option 'decoy_layout' must be one of {LAYOUTS}, got {value!r}")
    return value


COLLECTION = ("any-config", "pytest-options")


def collection_option(options: dict) -> str:
    """The ``collection`` option: where a ``--doctest-modules`` (pytest importing every file, decoys
    included) refuses masking. ``any-config`` (default): anywhere in a pytest, tox or nox config;
    ``pytest-options``: only in pytest's own option sections, i.e. when every pytest run collects modules
    (suites use it: their test command is the instance's, never a tox env's)."""
    value = options.get("collection", COLLECTION[0])
    if value not in COLLECTION:
        raise ValueError(f"runtime-target-masking option 'collection' must be one of {COLLECTION}, got {value!r}")
    return value


def _refusal(ctx: TreeContext, module: str, survey: TreeSurvey) -> str | None:
    if not module.endswith(".py"):
        return f"not-a-module: {module} is not a .py file"
    if not (ctx.root / module).exists() and not (ctx.root / module).is_symlink():
        return f"missing: {module} is no longer in the variant tree (moved by an earlier transform)"
    if read := ctx.read_by_name.get(module):
        return f"path-referenced: {read}, to read as text, where the forwarder would be read instead"
    name = PurePosixPath(module).name
    if quoted := sorted(function for file, function in ctx.project.quoted_frames if file == name):
        where = f"a test's expected traceback shows {name} by name (in {quoted[0]})"
        return f"quoted-in-test: {where}; its code would run under the hidden file's name"
    return refusal(ctx.root, module, survey)


def _mask(ctx: TreeContext, module: str, rng: random.Random, count: int, siblings: bool = False) -> list[str]:
    """Write the hidden module, the forwarder and the decoys; return why decoys fell short, if they did."""
    data = ctx.read(module)
    text = _checked_text(data, module, ctx.project.min_python)
    decoys, shortfall = run_with_big_stack(_decoys, ctx, module, data, text, rng, count)
    rel = PurePosixPath(module)
    folder, stem = rel.parent, rel.stem
    avoid = identifiers_in(text) | identifiers_in(
        ctx.read((folder / "__init__.py").as_posix()).decode("utf-8", "replace")
    )
    hidden = hidden_name(rng, stem, ctx.taken, avoid, ctx.vocabulary)
    decoy_names = [module_name(rng, stem, ctx.taken, avoid, ctx.vocabulary) for _ in decoys]
    drawn = avoid | ctx.taken
    forwarder = forwarder_source(rng, stem, hidden, drawn, ctx.vocabulary)
    ctx.taken.update(drawn - avoid)

    hidden_rel = (folder / f"{hidden}.py").as_posix()
    ctx.create(hidden_rel, data)
    ctx.write(module, forwarder)
    ctx.site("<module>", text, forwarder)
    ctx.resolve_path("wrapper_module", visible=module, runtime=hidden_rel)
    decoy_folder = folder if siblings else folder / stem
    for name, decoy in zip(decoy_names, decoys, strict=True):
        _write_decoy(ctx, module, (decoy_folder / f"{name}.py").as_posix(), decoy)
    return [shortfall] if shortfall else []


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


def _decoys(
    ctx: TreeContext, rel: str, data: bytes, text: str, rng: random.Random, count: int
) -> tuple[list[Decoy], str | None]:
    """Runs on the big-stack thread: LibCST recurses as deep as the code nests."""
    try:
        tree = ctx.parse(rel, data)
    except (cst.ParserSyntaxError, RecursionError) as exc:  # compile() accepted it, LibCST did not
        first = str(exc).splitlines()[0] if str(exc) else ""
        raise TransactionAborted(f"unparseable: libcst: {type(exc).__name__}: {first}") from exc
    return make_decoys(tree, text, rng, count)
