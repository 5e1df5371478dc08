"""Which Extend family each instance gets: RepoMirage's assignment rules, as a pure function.

Per instance, `summarize_instance` counts proxy chains, externalized constants and the Python
files the gold patch touches. `assign_families` then ranks the instances three times (by each
count, descending; ties by ascending instance_id) and assigns each to exactly one family:

1. ``touched_file_count > 1`` (configurable) -> multi_file;
2. the proxy top-K, minus instances already assigned -> proxy_chain;
3. the constant top-K, minus instances already assigned -> missing_constant;
4. proxy_chain, then missing_constant, are topped back up to K along their rankings with
   unassigned instances;
5. the rest -> runtime_target, ordered by the largest of the three counts (descending, then id).

One deliberate difference from the prior code: an instance with a zero count never enters that
count's group (not in its top-K, not by top-up): it has nothing to erase.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from repoanchor.evals.suites.extend.multi_file import touched_python_files


class InstanceSummary(BaseModel):
    model_config = ConfigDict(extra="forbid")

    instance_id: str
    proxy_count: int = 0
    constant_count: int = 0
    touched_file_count: int = 0
    touched_files: list[str] = []
    middle_layer_candidate_count: int = 0
    max_proxy_depth: int = 0
    wrapper_count: int = 0
    decoy_count: int = 0


class Assignment(BaseModel):
    model_config = ConfigDict(extra="forbid")

    groups: dict[str, list[str]]
    """family -> instance ids, in the order the family's rule ranked them."""
    per_instance: dict[str, dict]
    """instance id -> {family, proxy_rank, constant_rank, touched_files_rank}."""
    summary: dict


def summarize_instance(metadata: dict, row: dict) -> InstanceSummary:
    entries = metadata.get("path_resolution_map", [])
    chains = [len(e["chain"].split("->")) for e in entries if e.get("kind") == "import_proxy"]
    touched = touched_python_files(row.get("patch", ""))
    return InstanceSummary(
        instance_id=str(row["instance_id"]),
        proxy_count=len(chains),
        constant_count=sum(1 for e in entries if e.get("kind") == "json_value"),
        touched_file_count=len(touched),
        touched_files=touched,
        middle_layer_candidate_count=sum(max(0, n - 2) for n in chains),
        max_proxy_depth=max(chains, default=0),
        wrapper_count=sum(1 for e in entries if e.get("kind") == "wrapper_module"),
        decoy_count=sum(1 for e in entries if e.get("kind") == "decoy"),
    )


def _ranked(summaries: list[InstanceSummary], field: str) -> list[str]:
    return [s.instance_id for s in sorted(summaries, key=lambda s: (-getattr(s, field), s.instance_id))]


def assign_families(
    summaries: list[InstanceSummary], *, proxy_k: int = 144, constant_k: int = 144, touched_files_min: int = 2
) -> Assignment:
    by_id = {s.instance_id: s for s in summaries}
    if len(by_id) != len(summaries):
        raise ValueError("duplicate instance_id in the summaries")
    rank = {field: _ranked(summaries, field) for field in ("proxy_count", "constant_count", "touched_file_count")}
    assigned: dict[str, str] = {}
    groups: dict[str, list[str]] = {f: [] for f in ("multi_file", "proxy_chain", "missing_constant", "runtime_target")}

    def take(family: str, iid: str) -> None:
        assigned[iid] = family
        groups[family].append(iid)

    for iid in rank["touched_file_count"]:
        if by_id[iid].touched_file_count >= touched_files_min:
            take("multi_file", iid)
    rules = (("proxy_chain", "proxy_count", proxy_k), ("missing_constant", "constant_count", constant_k))
    for family, field, k in rules:
        for iid in rank[field][:k]:
            if iid not in assigned and getattr(by_id[iid], field) > 0:
                take(family, iid)
    for family, field, k in rules:
        for iid in rank[field]:
            if len(groups[family]) >= k:
                break
            if iid not in assigned and getattr(by_id[iid], field) > 0:
                take(family, iid)
    rest = [iid for iid in by_id if iid not in assigned]
    top = {iid: max(by_id[iid].proxy_count, by_id[iid].constant_count, by_id[iid].touched_file_count) for iid in rest}
    for iid in sorted(rest, key=lambda i: (-top[i], i)):
        take("runtime_target", iid)
    positions = {field: {iid: n for n, iid in enumerate(ids, 1)} for field, ids in rank.items()}
    per_instance = {
        iid: {
            "family": assigned[iid],
            "proxy_rank": positions["proxy_count"][iid],
            "constant_rank": positions["constant_count"][iid],
            "touched_files_rank": positions["touched_file_count"][iid],
        }
        for iid in sorted(by_id)
    }
    summary = {
        "touched_files_rule": f">= {touched_files_min}",
        "proxy_top_k": proxy_k,
        "constant_top_k": constant_k,
        **{f"{family}_count": len(ids) for family, ids in groups.items()},
        "total_instances": len(by_id),
    }
    return Assignment(groups=groups, per_instance=per_instance, summary=summary)
