"""RepoMirage-Extend: four explicit structural tasks derived from a validated variant.

`build_extend_tasks` turns (variant tree, its metadata, a dataset row) into tasks — proxy chain
completion, runtime target identification, missing constant recovery, multi-file issue
resolution — each with a prompt, the erased repository, the files the agent may change, ground
truth kept apart and a dynamic validator (`validate_extend`); every task is self-checked when
built. `summarize_instance` and `assign_families` put each instance into exactly one family.
"""

from repoanchor.evals.suites.extend.assign import Assignment, InstanceSummary, assign_families, summarize_instance
from repoanchor.evals.suites.extend.build import build_extend_tasks, self_check, validate_extend
from repoanchor.evals.suites.extend.models import (
    FAMILIES,
    ExtendTask,
    FamiliesConfig,
    MissingConstantConfig,
    MultiFileConfig,
    ProxyChainConfig,
    RuntimeTargetConfig,
    SelfCheck,
    ValidationResult,
)
from repoanchor.evals.suites.extend.scope import changed_paths, scope_violations

__all__ = [
    "FAMILIES",
    "Assignment",
    "ExtendTask",
    "FamiliesConfig",
    "InstanceSummary",
    "MissingConstantConfig",
    "MultiFileConfig",
    "ProxyChainConfig",
    "RuntimeTargetConfig",
    "SelfCheck",
    "ValidationResult",
    "assign_families",
    "build_extend_tasks",
    "changed_paths",
    "scope_violations",
    "self_check",
    "summarize_instance",
    "validate_extend",
]
