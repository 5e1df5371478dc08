"""A transform that ends its process at once, like a worker killed for memory: the sampler must
record the lost variant instead of losing the batch."""

from __future__ import annotations

import os


class ExitsProcess:
    id = "exits-process"
    family = "test"
    description = "kills its process on purpose"
    keyword_bound = False

    def candidates(self, module, ctx):
        os._exit(3)

    def apply(self, module, sites, ctx):
        return module
