"""Which JSON file each module's constants go to: a small seeded pool of files per folder.

One file per module would make every resource point at its module; one file per folder makes
every folder's resource the same obvious file. A folder with n selected modules gets between
one and about n/2 files, each module draws one, and a file is named only when first used, so
no empty resource is ever created. The files sit next to the modules that read them.
"""

from __future__ import annotations

import math
import random
from collections import Counter
from pathlib import PurePosixPath

from repoanchor.perturb.mirage.constants.names import resource_stem
from repoanchor.perturb.treectx import TreeContext


class ResourcePool:
    def __init__(self, ctx: TreeContext, base: int, modules: list[str]) -> None:
        self.ctx = ctx
        self.base = base
        self.counts = Counter(str(PurePosixPath(rel).parent) for rel in modules)
        self.sizes: dict[str, int] = {}
        self.names: dict[tuple[str, int], str] = {}
        self.rngs: dict[str, random.Random] = {}

    def resource_for(self, rel: str) -> str:
        """The variant-relative path of the JSON file that module `rel` reads."""
        folder = str(PurePosixPath(rel).parent)
        rng = self._folder_rng(folder)
        if folder not in self.sizes:
            per_file = rng.choice((2, 3, 4, 6))
            self.sizes[folder] = max(1, math.ceil(self.counts.get(folder, 1) / per_file))
        slot = random.Random(f"{self.base}|slot|{rel}").randrange(self.sizes[folder])
        if (folder, slot) not in self.names:
            label = PurePosixPath(folder).name or PurePosixPath(rel).stem
            self.names[(folder, slot)] = resource_stem(rng, self.ctx.taken, label, self.ctx.vocabulary) + ".json"
        name = self.names[(folder, slot)]
        return name if folder == "." else f"{folder}/{name}"

    def _folder_rng(self, folder: str) -> random.Random:
        if folder not in self.rngs:
            self.rngs[folder] = random.Random(f"{self.base}|folder|{folder}")
        return self.rngs[folder]
