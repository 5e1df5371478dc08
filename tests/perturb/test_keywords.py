"""Keyword extraction: the deterministic offline extractor, and litellm's real client against a scripted
OpenAI-compatible server (cache hit makes no request, corrupt cache, server error, no key on disk)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from repoanchor.perturb.sampler.keywords import (
    KeywordConfig,
    KeywordError,
    build_messages,
    cache_key,
    extract_keywords,
    normalize,
)
from repoanchor.perturb.sampler.keywords_offline import offline_keywords
from repoanchor.scaffolds.models.scripted_server import Reply, ScriptedServer

SECRET = "sk-test-0123456789-very-secret"
ISSUE = """merge_with drops values

When I call `merge_with(sum, d1, d2)` the result misses keys. The docs say it "merges
dictionaries" but it doesn't. Traceback:

```
  File "/usr/lib/python3/site-packages/toolz/dicttoolz.py", line 42, in merge_with
    raise KeyError('missing key')
KeyError: 'missing key'
```
Tested on toolz 1.0.0 and Python 3.11 with list(...) and print(...). See https://example.com/a/b.
"""
ANSWER = json.dumps(
    {"methods": ["toolz.dicttoolz.merge_with", "valmap()", "class", "__init__"], "string_literals": ["missing key", ""]}
)


@pytest.fixture
def llm(monkeypatch, tmp_path: Path):
    """A scripted server and a KeywordConfig pointed at it through litellm's openai provider."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ScriptedServer() as server:
        yield (
            server,
            KeywordConfig(model="openai/scripted", api_base=server.base_url, cache_dir=tmp_path / "kw", retries=0),
        )


def test_offline_extractor_ranks_code_like_names_and_quoted_strings():
    methods, literals = offline_keywords(ISSUE)
    assert methods[0] == "merge_with"  # a call, in backticks, in a traceback frame and in prose
    assert not {"list", "print", "sum", "toolz", "Python", "docs", "the", "site", "packages"} & set(methods)
    assert literals[0] == "missing key"
    assert "merges\ndictionaries" not in literals
    assert not [lit for lit in literals if "/" in lit or lit[0].isdigit()]
    assert offline_keywords(ISSUE) == (methods, literals)  # deterministic
    assert offline_keywords("don't do it's thing 'x' \"3.11\" 'a/b.py'") == ([], [])


@pytest.mark.parametrize(
    ("issue", "methods", "literals"),
    [
        ("`Widget.render()` and baz_qux() break; `parseHTTP` too", ["render", "baz_qux", "parseHTTP"], []),
        (
            "Error message 'Invalid value for option' appears twice: 'Invalid value for option'",
            [],
            ["Invalid value for option"],
        ),
        ("", [], []),
    ],
)
def test_offline_examples(issue: str, methods: list[str], literals: list[str]):
    assert offline_keywords(issue) == (methods, literals)


def test_normalize_keeps_bare_identifier_methods_and_real_literals():
    answer = json.loads(ANSWER)
    assert normalize(answer, 20) == (("merge_with", "valmap"), ("missing key",))
    assert normalize({"methods": ["a1", "a1", "b2"], "string_literals": []}, 1) == (("a1",), ())


def test_no_issue_and_no_model_need_no_server():
    assert extract_keywords(None).source == "none"
    offline = extract_keywords(ISSUE, KeywordConfig())
    assert (offline.source, offline.reason, offline.model) == ("offline", "no model configured", None)
    assert offline.methods[0] == "merge_with"


def test_llm_answer_is_used_and_cached_and_the_key_never_written(llm):
    server, config = llm
    server.push(ANSWER)
    first = extract_keywords(ISSUE, config)
    assert (first.source, first.methods, first.string_literals) == ("llm", ("merge_with", "valmap"), ("missing key",))
    assert not first.cached
    (request,) = server.requests
    assert request.body["model"] == "scripted"
    assert request.body["temperature"] == 0
    assert request.body["response_format"] == {"type": "json_object"}
    assert "merge_with(sum, d1, d2)" in request.body["messages"][-1]["content"]
    assert request.headers["authorization"] == f"Bearer {SECRET}"  # from the environment, not from us
    second = extract_keywords(ISSUE, config)
    assert len(server.requests) == 1  # the cache answered
    assert second == first
    assert second.cached
    files = list((config.cache_dir).iterdir())
    assert [f.name for f in files] == [f"{cache_key('openai/scripted', build_messages(ISSUE), config.api_base)}.json"]
    assert cache_key("openai/scripted", build_messages(ISSUE), "http://elsewhere/v1") not in files[0].name
    assert SECRET.encode() not in files[0].read_bytes()
    assert "OPENAI" not in files[0].read_text()
    assert json.loads(files[0].read_text())["model"] == "openai/scripted"


def test_corrupt_cache_file_is_named_in_a_warning_and_recomputed(llm):
    server, config = llm
    path = config.cache_dir / f"{cache_key('openai/scripted', build_messages(ISSUE), config.api_base)}.json"
    path.parent.mkdir(parents=True)
    path.write_text('{"format": "repoanchor.keywords-cache/1", "answer": {"methods": [')
    server.push(ANSWER)
    with pytest.warns(UserWarning, match=f"corrupt keyword cache file {path}"):
        keywords = extract_keywords(ISSUE, config)
    assert keywords.source == "llm"
    assert len(server.requests) == 1
    assert json.loads(path.read_text())["answer"]["methods"][0] == "toolz.dicttoolz.merge_with"
    assert not [p for p in path.parent.iterdir() if p.suffix == ".tmp"]


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        (Reply(status=500), "llm call failed (InternalServerError, HTTP 500)"),
        (Reply(status=401), "llm call failed (AuthenticationError, HTTP 401)"),
        (Reply("I think the keywords are merge_with."), "llm call failed (JSONDecodeError)"),
        (Reply('{"methods": "merge_with"}'), "llm call failed (ValueError)"),
    ],
)
def test_failed_call_or_bad_answer_is_an_error_unless_the_offline_fallback_is_chosen(llm, reply: Reply, reason: str):
    server, config = llm
    server.push(reply)
    with pytest.raises(KeywordError, match="--keywords-fallback offline") as error:
        extract_keywords(ISSUE, config)
    assert reason.removeprefix("llm call failed ").strip("()").split(",")[0] in str(error.value)
    server.push(reply)
    with pytest.warns(UserWarning, match="keyword extraction with openai/scripted"):
        keywords = extract_keywords(ISSUE, config.model_copy(update={"fallback": "offline"}))
    assert keywords.source == "offline"
    assert keywords.reason.startswith(reason)
    assert keywords.methods == tuple(offline_keywords(ISSUE)[0])
    assert not config.cache_dir.exists() or not list(config.cache_dir.iterdir())


def test_fenced_json_answer_is_accepted(llm):
    server, config = llm
    server.push(f"Here you go:\n```json\n{ANSWER}\n```\n")
    assert extract_keywords(ISSUE, config).methods == ("merge_with", "valmap")


def test_an_unreachable_server_is_an_error_or_the_chosen_fallback(tmp_path: Path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    with ScriptedServer() as server:
        base = server.base_url
    config = KeywordConfig(model="openai/scripted", api_base=base, cache_dir=tmp_path, retries=0, timeout=5)
    with pytest.raises(KeywordError) as error:
        extract_keywords(ISSUE, config)
    assert SECRET not in str(error.value)
    with pytest.warns(UserWarning, match="keyword extraction") as caught:
        keywords = extract_keywords(ISSUE, config.model_copy(update={"fallback": "offline"}))
    assert keywords.source == "offline"
    assert "llm call failed" in keywords.reason
    assert all(SECRET not in str(w.message) for w in caught)


def test_unwritable_cache_costs_a_warning_not_the_answer(llm):
    server, config = llm
    config.cache_dir.write_text("a file where the cache folder should be")
    server.push(ANSWER)
    with pytest.warns(UserWarning, match="not written"):
        keywords = extract_keywords(ISSUE, config)
    assert keywords.source == "llm"
