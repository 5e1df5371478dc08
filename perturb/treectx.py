"""Context for whole-tree transformations (the RepoMirage family): journaled writes, rollback.

A tree transformation rewrites several files at once (a target module plus the proxies, hidden
modules, decoys or JSON resources it creates), so the unit of success is a *transaction* per
target module: every write inside `with ctx.transaction(module):` is journaled, every Python
file written is compiled (running interpreter plus the project's oldest grammar) when the block
ends, and on any exception or compile error the whole transaction is undone and reported as
`Failed`. All paths are relative to the variant root and may never resolve outside it.
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import libcst as cst

from repoanchor.perturb.context import ProjectInfo
from repoanchor.perturb.results import Applied, Failed, Outcome, SiteRecord, Skipped, snippet
from repoanchor.perturb.source.sourcefile import SourceError, decode_source
from repoanchor.perturb.speed.parsed import ParsedModules
from repoanchor.perturb.validation.compile_check import compile_error


class TransactionAborted(Exception):
    """Raised inside a transaction to abandon it with a reason (recorded as Skipped)."""


@dataclass
class TreeContext:
    transform_id: str
    root: Path
    """The variant tree being built; every write stays inside it."""
    rng: random.Random
    project: ProjectInfo
    fraction: float = 0.7
    options: dict[str, Any] = field(default_factory=dict)
    """Transform hyperparameters (e.g. proxy depth, decoy count), defaults live in each transform."""
    taken: set[str] = field(default_factory=set)
    """Identifiers and module names already used anywhere in the tree; fresh names avoid them."""
    vocabulary: tuple[str, ...] | None = None
    """Words of the project's own identifiers for every generated name (modules, forwarder locals, the
    constants' binding and resource files; mirage/vocabulary.py); None: the transforms' generic vocabularies."""
    outcomes: list[Outcome] = field(default_factory=list)
    resolution: list[dict[str, str]] = field(default_factory=list)
    """path_resolution_map entries: {kind, visible_path, runtime_path, ...}."""
    committed: set[str] = field(default_factory=set)
    """Every path written, created or removed by a committed transaction."""
    modules: ParsedModules = field(default_factory=ParsedModules)
    """The variant's parsed modules, shared by its tree transforms (`parse`, `write_module`)."""
    listed: dict[str, tuple[str, bool]] | None = None
    """Folders the source tree lists at run time (`mirage.listing.listed_elsewhere`), read before any transform:
    one before (constant-externalization) may move a path's strings out of a module, or add a `__file__` read to
    an `__init__`. None: not read, and each `__init__` of the tree in hand is asked."""
    links: dict[str, str] = field(default_factory=dict)
    """Tree-relative path -> the link in the source tree that points at it (`source.files.link_targets`)."""
    read_by_name: dict[str, str] = field(default_factory=dict)
    """Tree-relative module -> why some code of the source tree reads its text as a file (`mirage.read_by_name`):
    no tree transform moves code out of it."""
    _journal: list[tuple[str, bytes | None]] | None = None
    _pending_resolution: list[dict[str, str]] = field(default_factory=list)
    _sites: list[SiteRecord] = field(default_factory=list)
    _written: dict[str, bytes] = field(default_factory=dict)
    """What this transaction wrote, by path: compiled from here at its end instead of read back."""
    _real_root: Path | None = None

    def path(self, rel: str) -> Path:
        target = self.root / rel
        if self._real_root is None:
            self._real_root = self.root.resolve()
        if target.is_symlink() or not target.resolve().is_relative_to(self._real_root):
            raise PermissionError(f"{rel} resolves outside the variant tree")
        return target

    def linked(self, rel: str) -> str | None:
        """The link that points at `rel` or at a folder above it, or None: a module reached through one runs in
        the link's package too, where the proxies and resources placed beside it are not."""
        for place in (rel, *(parent.as_posix() for parent in PurePosixPath(rel).parents if str(parent) != ".")):
            if place in self.links:
                return self.links[place]
        return None

    def exists(self, rel: str) -> bool:
        return self.path(rel).exists()

    def read(self, rel: str) -> bytes:
        return self.path(rel).read_bytes()

    def parse(self, rel: str, data: bytes) -> cst.Module:
        """LibCST's tree of `data`, read from `rel`: parsed once per variant, whichever transform reads it."""
        return self.modules.parse(rel, data)

    def write_module(self, rel: str, module: cst.Module) -> None:
        """`write` the code of `module` to `rel`, and keep the tree for the next transform that reads it. Statements
        an earlier emission of the file made are reused (`ParsedModules.emission`)."""
        emission = self.modules.emission(rel)
        data = emission.code(module, keep=self.modules.wanted(rel)).encode(module.encoding)
        self.write(rel, data)
        self.modules.keep(rel, data, module, emission)

    def write(self, rel: str, data: bytes | str) -> None:
        """Create or overwrite a file (journaled; only inside a transaction)."""
        self._write(rel, self._journaled(rel), data)

    def create(self, rel: str, data: bytes | str) -> None:
        """Write a file that must not exist yet (new proxies, hidden modules, resources)."""
        target = self.path(rel)
        if target.exists():
            raise FileExistsError(f"{rel} already exists in the variant tree")
        self._write(rel, self._journaled(rel, target), data)

    def _write(self, rel: str, target: Path, data: bytes | str) -> None:
        data = data.encode() if isinstance(data, str) else data
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(data)
        self._written[rel] = data

    def remove(self, rel: str) -> None:
        self._journaled(rel).unlink()
        self._written.pop(rel, None)

    def resolve_path(self, kind: str, visible: str, runtime: str, **extra: str) -> None:
        """Record that `visible` is resolved at runtime through `runtime` (kept on commit only)."""
        self._pending_resolution.append({"kind": kind, "visible_path": visible, "runtime_path": runtime, **extra})

    def site(self, where: str, before: str, after: str) -> None:
        """Record one rewrite of the current transaction for the variant's metadata."""
        self._sites.append(SiteRecord(where, snippet(before), snippet(after)))

    def skip(self, file: str, reason: str, where: str = "") -> None:
        self.outcomes.append(Skipped(self.transform_id, file, reason, where))

    @contextmanager
    def transaction(self, file: str) -> Iterator[None]:
        """All-or-nothing rewrite of one target module and the files it creates."""
        self._journal, self._pending_resolution, self._sites, self._written = [], [], [], {}
        try:
            yield
            error = self._compile_written()
            if error:
                raise _CompileFailure(error)
        except TransactionAborted as exc:
            self._undo()
            self.skip(file, str(exc))
        except _CompileFailure as exc:
            self._undo()
            self.outcomes.append(Failed(self.transform_id, file, f"output does not compile, rolled back: {exc}"))
        except Exception:  # one module's failure must not stop the tree: recorded, rolled back
            self._undo()
            self.outcomes.append(Failed(self.transform_id, file, traceback.format_exc(limit=8)))
        else:
            if self._sites:
                self.outcomes.append(Applied(self.transform_id, file, tuple(self._sites)))
                self.resolution.extend(self._pending_resolution)
                self.committed.update(rel for rel, _ in self._journal or [])
            else:
                self._undo()
                self.skip(file, "no change: nothing to rewrite in this module")
        finally:
            self._journal, self._written = None, {}

    def _journaled(self, rel: str, target: Path | None = None) -> Path:
        """`rel`'s path (`target`: already checked by `path`), its original content journaled once."""
        if self._journal is None:
            raise RuntimeError("tree writes are only allowed inside ctx.transaction()")
        target = target or self.path(rel)
        if not any(entry[0] == rel for entry in self._journal):
            self._journal.append((rel, target.read_bytes() if target.exists() else None))
        return target

    def _undo(self) -> None:
        for rel, original in reversed(self._journal or []):
            target = self.root / rel
            if original is None:
                target.unlink(missing_ok=True)
                _remove_empty_parents(target.parent, self.root)
            else:
                target.write_bytes(original)

    def _compile_written(self) -> str | None:
        for rel, _ in self._journal or []:
            data = self._written.get(rel)  # None: removed, never written
            if not rel.endswith(".py") or data is None:
                continue
            if not data.strip():
                continue
            try:
                error = compile_error(decode_source(data, max_bytes=len(data)), rel, self.project.min_python)
            except SourceError as exc:
                error = str(exc)
            if error:
                return f"{rel}: {error}"
        return None

    def written(self) -> list[str]:
        return [rel for rel, _ in self._journal or []]


class _CompileFailure(Exception):
    pass


def _remove_empty_parents(folder: Path, root: Path) -> None:
    while folder != root and folder.is_relative_to(root) and folder.is_dir() and not any(folder.iterdir()):
        folder.rmdir()
        folder = folder.parent
