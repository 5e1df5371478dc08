"""Sites are nodes, not coordinates: a candidate holds the very node object to rewrite.

`SiteCollector` is a read-only visitor base that tracks the enclosing scope so that each
site gets a stable, human-readable label such as ``Parser.parse/If#2``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import libcst as cst


@dataclass(frozen=True, eq=False)
class Site:
    """A candidate node plus whatever the transform learnt about it while collecting."""

    node: cst.CSTNode
    where: str
    data: dict[str, Any] = field(default_factory=dict)


class SiteCollector(cst.CSTVisitor):
    """Visitor that knows its scope path and labels the sites it adds."""

    def __init__(self) -> None:
        super().__init__()
        self.sites: list[Site] = []
        self.scope: list[str] = []
        self._ordinals: Counter[str] = Counter()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool | None:
        self.scope.append(node.name.value)
        return True

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_ClassDef(self, node: cst.ClassDef) -> bool | None:
        self.scope.append(node.name.value)
        return True

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def label(self, node: cst.CSTNode) -> str:
        scope = ".".join(self.scope) or "<module>"
        kind = type(node).__name__
        self._ordinals[(scope, kind)] += 1
        return f"{scope}/{kind}#{self._ordinals[(scope, kind)]}"

    def add(self, node: cst.CSTNode, **data: Any) -> Site:
        site = Site(node, self.label(node), data)
        self.sites.append(site)
        return site
