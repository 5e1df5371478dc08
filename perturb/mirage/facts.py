"""What the tree transforms read from the source tree, once per variant, before any of them writes.

From the source, not the variant: by then the file passes have rewritten its files (a literal split, a block
wrapped) and each tree transform adds to what the next one reads (proxies, hidden twins, JSON resources).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from repoanchor.perturb.mirage.listing import listed_elsewhere
from repoanchor.perturb.mirage.read_by_name import modules_read_by_name
from repoanchor.perturb.mirage.vocabulary import project_vocabulary
from repoanchor.perturb.source.files import link_targets, python_files

if TYPE_CHECKING:
    from repoanchor.perturb.tree import ApplyConfig


class SourceFacts(NamedTuple):
    """The source tree's facts every tree transform of a variant is given (`TreeContext`)."""

    vocabulary: tuple[str, ...] | None
    """Words for generated names."""
    listed: dict[str, tuple[str, bool]]
    """The folders some module lists at run time (`mirage.listing.listed_elsewhere`)."""
    links: dict[str, str]
    """The paths links point at (`source.files.link_targets`)."""
    read_by_name: dict[str, str]
    """The modules some code reads as files (`mirage.read_by_name`)."""


def read_source(src: Path, files: list[str], config: ApplyConfig) -> SourceFacts:
    return SourceFacts(
        _vocabulary(src, files, config), listed_elsewhere(src), link_targets(src), modules_read_by_name(src)
    )


def _vocabulary(src: Path, files: list[str], config: ApplyConfig) -> tuple[str, ...] | None:
    """Words for generated names, read from a source tree (never the output: no generated name feeds back)."""
    root = config.vocabulary_from.resolve() if config.vocabulary_from else src
    if root != src:
        options = {"include_tests": config.include_tests, "include_build": config.include_build}
        files = python_files(root, test_patterns=config.test_patterns, **options)[0]
    return project_vocabulary(root, files)
