"""Generated names hold no word a test expects absent from output.

pytest 8.3.4's ``test_raises_with_invalid_regex`` asserts ``no_fnmatch_line("*line*")`` on a report that shows the
source of pytest's own ``RaisesContext.__init__``; the all-14 stack had bound ``fresh_line_line86`` there."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from repoanchor.perturb.naming import ADJECTIVES, NOUNS, fresh_name, vocabulary
from repoanchor.perturb.source.absent_words import absent_words
from repoanchor.perturb.tree import ApplyConfig, apply_tree


@pytest.mark.parametrize(
    ("test", "words"),
    [
        ('result.stdout.no_fnmatch_line("*line*")\n', {"line"}),
        ("result.stdout.no_fnmatch_line(\n    '*text-line-after*'\n)\n", {"text", "line", "after"}),
        ('result.stdout.no_re_match_line(r"^DEBUG .* seen$")\n', {"seen"}),  # capitals and short runs left out
        ('result.stdout.no_fnmatch_line(f"*{tail}*")\n', {"tail"}),  # a name in braces: one more word avoided
        ('assert "cache miss" not in out\n', {"cache", "miss"}),
        ('result.stdout.fnmatch_lines(["*line 3*"])\nassert "a" in out\n', set()),  # positive checks
        ("assert key not in {'line': 1}\n", set()),  # no literal tested with `not in`
    ],
)
def test_the_words_negative_checks_look_for(test: str, words: set[str]):
    assert absent_words({"tests/test_x.py": test.encode()}) == words


def test_fresh_names_hold_no_avoided_word():
    avoid = frozenset({"line", "text", "note"})
    names = [fresh_name(random.Random(seed), set(), avoid=avoid) for seed in range(2000)]
    assert not [name for name in names if any(word in name for word in avoid)]
    unguarded = [fresh_name(random.Random(seed), set()) for seed in range(2000)]
    assert [name for name in unguarded if "line" in name]  # the draw does make such names without `avoid`
    adjectives, nouns = vocabulary(avoid)
    assert "line" not in nouns
    assert len(nouns) == len(NOUNS) - 3
    assert adjectives == ADJECTIVES


def test_a_word_most_of_the_vocabulary_holds_is_not_avoided():
    assert vocabulary(frozenset({"e"})) == (ADJECTIVES, NOUNS)  # a run that short is never read, but were it


def _tree(root: Path, check: str) -> Path:
    function = "def f{i}(x):\n    y = x + {i}\n    for k in x:\n        y += k\n    return y\n\n\n"
    body = "".join(function.format(i=i) for i in range(120))
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(body)
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text(f"def test_report(result):\n    {check}\n")
    return root


@pytest.mark.parametrize("transform", ["dead-string-assign", "local-rename", "dead-code", "for-to-while"])
def test_a_variant_binds_no_name_holding_a_word_a_test_expects_absent(tmp_path: Path, transform: str):
    config = ApplyConfig([transform], fraction=1.0, seed=0, transform_keywords={"dead-string-assign": ["probe"]})
    made = {}
    for name, check in (("guarded", 'result.stdout.no_fnmatch_line("*line*")'), ("plain", "assert result")):
        src = _tree(tmp_path / name / "src", check)
        apply_tree(src, tmp_path / name / "out", config)
        text = (tmp_path / name / "out" / "pkg" / "mod.py").read_text()
        made[name] = set(re.findall(r"[a-z]+_[a-z]+_[a-z]+\d\d", text))
    assert made["plain"], "the transform made no name"
    assert [name for name in made["plain"] if "line" in name]  # same seed, no negative check: such names appear
    assert made["guarded"]
    assert not [name for name in made["guarded"] if "line" in name]


LINE_WORDS = [f"{head}line" for head in ("pipe", "base", "out", "time", "dead", "sky", "stream", "guide", "story")]
LINE_WORDS += [f"{head}line" for head in ("hair", "head", "life", "neck", "shore", "water", "tree", "under", "side")]
OTHER_WORDS = [f"{a}{b}" for a in ("amber", "cobalt", "delta", "ember", "fjord", "garnet") for b in ("wood", "stone")]
OTHER_WORDS += [f"{a}{b}" for a in ("harbor", "indigo", "jasper", "kestrel") for b in ("field", "gate", "mark")]


def _worded_tree(root: Path, check: str) -> Path:
    """A package whose identifiers give a project vocabulary, a third of it words holding ``line``, named only in
    annotations (no constant is named after them): every such word in a generated name was drawn."""
    annotations = "".join(f"    {word}: int\n" for word in LINE_WORDS + OTHER_WORDS)
    body = "".join(
        f"def {word}_{i}(value):\n    limit = {100 + i}\n    return value * limit + {i * 7}\n\n\n"
        for i, word in enumerate(OTHER_WORDS)
    )
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "words.py").write_text(f"class Words:\n{annotations}")
    (root / "pkg" / "mod.py").write_text(body)
    use = "from pkg import mod\n\n\ndef run(value):\n    return mod.amberwood_0(value)\n"
    (root / "pkg" / "use.py").write_text(use)
    (root / "tests").mkdir()
    (root / "tests" / "test_mod.py").write_text(f"def test_report(result):\n    {check}\n")
    return root


def _generated_names(src: Path, out: Path) -> set[str]:
    """File stems and identifiers the variant has and its source has not."""
    names = set()
    for path in out.rglob("*"):
        rel = path.relative_to(out)
        if path.is_file() and not (src / rel).exists():
            names.add(path.stem)
            names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text()))
    for rel in ("pkg/mod.py", "pkg/use.py"):
        source_words = set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", (src / rel).read_text()))
        names |= set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", (out / rel).read_text())) - source_words
    return names


@pytest.mark.parametrize("transform", ["constant-externalization", "proxy-imports"])
def test_repomirage_names_from_the_project_hold_no_word_a_test_expects_absent(tmp_path: Path, transform: str):
    config = ApplyConfig([transform], fraction=1.0, seed=0)
    made = {}
    for name, check in (("guarded", 'result.stdout.no_fnmatch_line("*line*")'), ("plain", "assert result")):
        src = _worded_tree(tmp_path / name / "src", check)
        apply_tree(src, tmp_path / name / "out", config)
        made[name] = _generated_names(src, tmp_path / name / "out")
    assert [name for name in made["plain"] if "line" in name]  # same seed, no negative check: such names appear
    assert made["guarded"]
    assert not [name for name in made["guarded"] if "line" in name]
