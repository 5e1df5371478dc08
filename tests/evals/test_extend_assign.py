"""Family assignment (RepoMirage §4.2) on hand-made summaries: ranks, ties, top-up, remainder."""

from __future__ import annotations

import pytest

from repoanchor.evals.suites.extend import InstanceSummary, assign_families, summarize_instance


def _s(iid: str, proxy: int = 0, constant: int = 0, touched: int = 1) -> InstanceSummary:
    return InstanceSummary(instance_id=iid, proxy_count=proxy, constant_count=constant, touched_file_count=touched)


def test_each_rule_in_order():
    summaries = [
        _s("multi", proxy=99, constant=99, touched=3),  # multi-file wins over everything
        _s("p1", proxy=9, constant=8),
        _s("p2", proxy=7, constant=1),
        _s("c1", proxy=1, constant=9),
        _s("c2", proxy=0, constant=5),
        _s("rest", proxy=2, constant=2),
    ]
    result = assign_families(summaries, proxy_k=2, constant_k=2)
    assert result.groups == {
        "multi_file": ["multi"],
        "proxy_chain": ["p1", "p2"],
        "missing_constant": ["c1", "c2"],
        "runtime_target": ["rest"],
    }
    assert sorted(i for ids in result.groups.values() for i in ids) == sorted(s.instance_id for s in summaries)
    # touched-file ties (all 1) fall back to instance ids: multi, c1, c2, p1 -> 4th
    expected = {"family": "proxy_chain", "proxy_rank": 2, "constant_rank": 3, "touched_files_rank": 4}
    assert result.per_instance["p1"] == expected
    assert result.summary == {
        "touched_files_rule": ">= 2",
        "proxy_top_k": 2,
        "constant_top_k": 2,
        "multi_file_count": 1,
        "proxy_chain_count": 2,
        "missing_constant_count": 2,
        "runtime_target_count": 1,
        "total_instances": 6,
    }


def test_ties_break_by_instance_id():
    summaries = [_s("b", proxy=5), _s("a", proxy=5), _s("c", proxy=5)]
    result = assign_families(summaries, proxy_k=2, constant_k=0)
    assert result.groups["proxy_chain"] == ["a", "b"]
    assert result.groups["runtime_target"] == ["c"]
    assert [result.per_instance[i]["proxy_rank"] for i in "abc"] == [1, 2, 3]


def test_top_up_walks_the_ranking_after_both_top_k():
    # x is in both top-2s: proxy takes it first; constant's top-2 then yields only y, and the
    # top-up walks on to z. The proxy top-up runs before the constant top-up.
    summaries = [
        _s("x", proxy=10, constant=10),
        _s("y", proxy=1, constant=9),
        _s("w", proxy=9, constant=0),
        _s("z", proxy=3, constant=4),
        _s("v", proxy=4, constant=3),
    ]
    result = assign_families(summaries, proxy_k=2, constant_k=2)
    assert result.groups["proxy_chain"] == ["x", "w"]
    assert result.groups["missing_constant"] == ["y", "z"]
    assert result.groups["runtime_target"] == ["v"]


def test_proxy_tops_up_before_constants():
    # m is multi-file; each top-2 loses it and keeps one instance; d, beyond both top-2s,
    # is taken by the proxy top-up, which runs first.
    summaries = [
        _s("m", proxy=9, constant=9, touched=2),
        _s("a", proxy=8, constant=0),
        _s("c", proxy=0, constant=8),
        _s("d", proxy=5, constant=5),
    ]
    result = assign_families(summaries, proxy_k=2, constant_k=2)
    assert result.groups["proxy_chain"] == ["a", "d"]
    assert result.groups["missing_constant"] == ["c"]
    assert result.groups["runtime_target"] == []


def test_zero_counts_never_enter_a_group():
    result = assign_families([_s("a"), _s("b", constant=1)], proxy_k=5, constant_k=5)
    assert result.groups["proxy_chain"] == []
    assert result.groups["missing_constant"] == ["b"]
    assert result.groups["runtime_target"] == ["a"]


def test_remainder_sorted_by_largest_metric():
    summaries = [_s("a", proxy=1, constant=1), _s("b", proxy=0, constant=7), _s("c", proxy=6, constant=0, touched=1)]
    result = assign_families(summaries, proxy_k=0, constant_k=0)
    assert result.groups["runtime_target"] == ["b", "c", "a"]


def test_threshold_and_purity():
    summaries = [_s("a", touched=2), _s("b", touched=3)]
    assert assign_families(summaries, touched_files_min=3).groups["multi_file"] == ["b"]
    assert assign_families(summaries) == assign_families(list(reversed(summaries)))
    with pytest.raises(ValueError, match="duplicate"):
        assign_families([_s("a"), _s("a")])


def test_summary_from_metadata_and_row():
    metadata = {
        "path_resolution_map": [
            {"kind": "import_proxy", "chain": "p/_a.py -> p/_b.py -> p/_c.py -> p/_d.py"},
            {"kind": "import_proxy", "chain": "p/_e.py -> p/_f.py"},
            {"kind": "json_value", "key": "k"},
            {"kind": "wrapper_module"},
            {"kind": "decoy"},
            {"kind": "decoy"},
        ]
    }
    patch = "diff --git a/p/x.py b/p/x.py\n--- a/p/x.py\n+++ b/p/x.py\ndiff --git a/README b/README\n"
    summary = summarize_instance(metadata, {"instance_id": "i", "patch": patch})
    assert summary.model_dump() == {
        "instance_id": "i",
        "proxy_count": 2,
        "constant_count": 1,
        "touched_file_count": 1,
        "touched_files": ["p/x.py"],
        "middle_layer_candidate_count": 2,
        "max_proxy_depth": 4,
        "wrapper_count": 1,
        "decoy_count": 2,
    }


def test_a_suite_keeps_only_each_instances_assigned_family():
    from repoanchor.evals.suites.extend.suite import assign_one_family

    summaries = [
        {"instance_id": "a", "proxy_count": 9, "constant_count": 1, "touched_file_count": 1},
        {"instance_id": "b", "proxy_count": 1, "constant_count": 8, "touched_file_count": 1},
        {"instance_id": "c", "proxy_count": 2, "constant_count": 2, "touched_file_count": 3},
    ]
    families = ("proxy_chain", "runtime_target", "missing_constant", "multi_file")
    tasks = [
        {"instance_id": f"{i}__extend-{n}", "repoanchor_source_instance": i, "repoanchor_family": family}
        for i in "abc"
        for n, family in enumerate(families, 1)
    ]
    kept, dropped = assign_one_family(tasks, summaries, {"proxy_k": 1, "constant_k": 1})
    assert [(t["repoanchor_source_instance"], t["repoanchor_family"]) for t in kept] == [
        ("a", "proxy_chain"),
        ("b", "missing_constant"),
        ("c", "multi_file"),
    ]
    assert len(dropped) == 9
    assert {d["stage"] for d in dropped} == {"extend-unassigned"}
    assert assign_one_family(tasks, summaries, {"proxy_k": 1, "constant_k": 1}) == (kept, dropped)
