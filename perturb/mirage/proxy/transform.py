"""proxy-imports: route a module's imports through chains of real proxy modules beside it.

``import os`` in ``pkg/mod.py`` becomes ``from ._lazy_io_loaders import os``; that module
forwards ``os`` from the next one, and so on for ``depth`` modules (option "depth", default 4)
until the leaf runs the original ``import os``. The names of one statement are split across up
to ``fanout`` parallel chains (option "fanout", default 2). The target binds exactly the same
names to the same objects, so ``mod.os``, re-exports, ``__all__`` and ``mock.patch`` targets are
unchanged. How a chain stays lazy, optional and cycle-safe: `perturb.mirage.proxy_chain`; where
proxies may live and which modules are refused: `perturb.mirage.proxy_policy`; which statements:
`perturb.mirage.proxy_scan`. A φ share of each module's candidate statements is rewritten.
"""

from __future__ import annotations

from typing import ClassVar

import libcst as cst

from repoanchor.perturb.engine import select_sites
from repoanchor.perturb.mirage.base import ModuleByModule
from repoanchor.perturb.mirage.proxy.chain import leaf_source, link_source, plan, split_rewrite, target_statements
from repoanchor.perturb.mirage.proxy.frame_targets import frame_refusal
from repoanchor.perturb.mirage.proxy.instrumented import import_hook_file, instrumented
from repoanchor.perturb.mirage.proxy.policy import Placement, Refusal, placement
from repoanchor.perturb.mirage.proxy.scan import has_relative_import, scan
from repoanchor.perturb.naming import identifiers_in
from repoanchor.perturb.sites import Site
from repoanchor.perturb.source.sourcefile import SourceError, decode_source
from repoanchor.perturb.speed.codegen import code_for_node
from repoanchor.perturb.traversal.replace import replace_nodes
from repoanchor.perturb.treectx import TreeContext

DEFAULTS = {"depth": 4, "fanout": 2}


class ProxyImports(ModuleByModule):
    option_names = frozenset({"depth", "fanout"})
    id: ClassVar[str] = "proxy-imports"
    description: ClassVar[str] = "route imports through chains of proxy modules (same names, same objects)"

    def prepare(self, ctx: TreeContext, modules: list[str]) -> tuple[int, int, str | None, dict]:
        return *options(ctx.options), import_hook_file(ctx.root), {}

    def apply_module(self, ctx: TreeContext, rel: str, state: tuple[int, int, str | None, dict]) -> None:
        _rewrite_module(ctx, rel, *state)


def options(raw: dict) -> tuple[int, int]:
    """(depth, fanout) from the transform's options; a bad value is a configuration error."""
    unknown = sorted(set(raw) - set(DEFAULTS))
    if unknown:
        raise ValueError(f"proxy-imports: unknown option(s) {', '.join(unknown)}; known: depth, fanout")
    values = {**DEFAULTS, **raw}
    for key, value in values.items():
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"proxy-imports: option {key} must be an integer >= 1, got {value!r}")
    return values["depth"], values["fanout"]


def _rewrite_module(
    ctx: TreeContext, rel: str, depth: int, fanout: int, hook_file: str | None, frame_readers: dict
) -> None:
    """`frame_readers`: {file: what reads its importer's frame, or None}, filled as statements are checked."""
    try:
        data = ctx.read(rel)
        text = decode_source(data)
        if why := instrumented(text, hook_file):
            raise Refusal(why)
        module = ctx.parse(rel, data)
        place = placement(ctx, rel, text, has_relative_import(module), ctx.listed)
    except (SourceError, Refusal) as exc:
        ctx.skip(rel, str(exc))
        return
    except OSError as exc:
        ctx.skip(rel, f"unreadable: {exc}")
        return
    except (cst.ParserSyntaxError, RecursionError) as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        ctx.skip(rel, f"unparseable: not valid Python 3 ({first})")
        return
    sites, refusals = scan(module, place.relative)
    for where, reason in refusals:
        ctx.skip(rel, reason, where)
    sites = [site for site in sites if not _frame_refused(ctx, rel, site, frame_readers)]
    if not sites:
        ctx.skip(rel, "no candidate import: the module has no import statement that can be proxied")
        return
    chosen = select_sites(sites, ctx.fraction, ctx.rng)
    avoid = identifiers_in(ctx.read(place.package_init).decode("utf-8", "replace")) if place.package_init else set()
    with ctx.transaction(rel):
        rewrites, paths = {}, []
        for site in chosen:
            statements = _write_chains(ctx, rel, place, site, depth, fanout, avoid)
            node, path, rewrite = split_rewrite(site, statements)
            rewrites[id(node)] = rewrite
            paths.append(path)
        ctx.write_module(rel, replace_nodes(module, rewrites, paths))


def _frame_refused(ctx: TreeContext, rel: str, site: Site, frame_readers: dict) -> bool:
    if why := frame_refusal(ctx, rel, site.node, frame_readers):
        ctx.skip(rel, why, site.where)
    return why is not None


def _write_chains(ctx: TreeContext, rel: str, place: Placement, site: Site, depth: int, fanout: int, avoid):
    """Create the statement's proxy chains and record them; return the statements replacing it."""
    chains = plan(site.data["bindings"], depth, fanout, ctx.rng, ctx.taken, avoid, ctx.vocabulary)
    for chain in chains:
        paths = [_module_path(place, name) for name in chain.modules]
        for index, path in enumerate(paths[:-1]):
            ctx.create(path, link_source(chain.names, chain.modules[index + 1], place.relative, ctx.rng))
        ctx.create(paths[-1], leaf_source(chain.bindings, ctx.rng))
        ctx.resolve_path(
            "import_proxy",
            visible=rel,
            runtime=paths[-1],
            chain=" -> ".join(paths),
            imported=site.data["text"],
            names=", ".join(chain.names),
        )
    statements = target_statements(site.node, chains, place.relative)
    ctx.site(site.where, site.data["text"], "\n".join(code_for_node(s) for s in statements))
    return statements


def _module_path(place: Placement, name: str) -> str:
    return f"{place.folder}/{name}.py" if place.folder else f"{name}.py"
