"""Issue 20, must-show 4: a screenshot-free check of the HTML report.

The demo's report shape (results tables and plots leading the trajectory analysis, the oracle label) is built
from a small synthetic matrix; the page is parsed with html.parser and each embedded PNG's labels chunk
(written from the matplotlib objects before saving) is read back: every figure has a title, axis labels, a
labelled colourbar where it has one, a caption and the oracle label; the methods header has an entry for
every table printed, naming the estimator that table's rows used.
"""

from __future__ import annotations

import base64
import json
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest

from repoanchor.evals.analysis.analyze import analyze
from repoanchor.evals.analysis.figure_png import png_labels
from repoanchor.evals.analysis.methods import MARK, MARK_COLUMN, mark_excluding_zero
from repoanchor.evals.analysis.outcomes import BINARY, CLUSTERED
from repoanchor.evals.analysis.page import counts_as_integers, markdown_table
from repoanchor.evals.analysis.results.write import ORACLE_LABEL, compute_results, policy_label, save_results
from repoanchor.evals.runs.run_matrix import MATRIX_FILE
from repoanchor.evals.runs.run_one import TRUSTED_POLICIES
from tests.support.synthetic_matrix import Effects, matrix_config, write_matrix, write_suite

SOURCES = [f"o__p-{i}" for i in range(8)]
LABEL = "MODEL: ORACLE POLICY (scripted; applies the ground-truth patch; not a language model)."


class Page(HTMLParser):
    """Figures (heading, image bytes, caption), table section headings, methods entries (data-table → text)."""

    def __init__(self):
        super().__init__()
        self.figures, self.tables, self.methods, self.method_lines = [], [], {}, []
        self._where, self._text, self._figure, self._method = None, [], None, None

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "figure":
            self._figure = {"heading": "", "png": b"", "caption": ""}
        elif tag == "img" and self._figure is not None:
            self._figure["png"] = base64.b64decode(attrs["src"].split("base64,", 1)[1])
        elif tag == "section" and attrs.get("class") == "table":
            self._where = "table"
        elif tag == "li" and "data-table" in attrs:
            self._method = attrs["data-table"]
        if tag in ("h2", "figcaption", "li"):
            self._text = []

    def handle_data(self, data):
        self._text.append(data)

    def handle_endtag(self, tag):
        text = "".join(self._text).strip()
        if tag == "h2" and self._figure is not None:
            self._figure["heading"] = text
        elif tag == "h2" and self._where == "table":
            self.tables.append(text)
            self._where = None
        elif tag == "figcaption":
            self._figure["caption"] = text
        elif tag == "figure":
            self.figures.append(self._figure)
            self._figure = None
        elif tag == "li" and self._method:
            self.methods[self._method] = text
            self._method = None
        elif tag == "li":
            self.method_lines.append(text)


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    root = tmp_path_factory.mktemp("page")
    suites = [write_suite(root / "suites", "original", SOURCES), write_suite(root / "suites", "perturb", SOURCES, 2)]
    effects = Effects(SOURCES, seed=1, perturb=-0.6, anchor=0.1, hints=0.0)
    rng = np.random.default_rng(3)

    def outcome(unit):
        source = unit.instance_id.split("__perturb")[0]
        return bool(rng.random() < effects.p(source, unit.suite, unit.condition))

    config = matrix_config(root, suites, repeats=1)
    write_matrix(config, outcome, cost=lambda unit: 1.0)
    results = compute_results([root / "matrix"], label=LABEL)
    save_results(results, root / "out" / "results")
    analyze(
        [root / "matrix"], root / "out", n_boot=200, extra_tables=results.shown(), figures=results.figures,
        label=LABEL, methods=results.methods(),
    )  # fmt: skip
    pages = {}
    for name in ("report.html", "results/results.html"):
        page = Page()
        page.feed((root / "out" / name).read_text(encoding="utf-8"))
        pages[name] = page
    return results, pages, root / "out"


@pytest.mark.parametrize("name", ["report.html", "results/results.html"])
def test_every_figure_has_a_title_axis_labels_a_caption_and_the_oracle_label(report, name):
    page = report[1][name]
    assert len(page.figures) >= (2 if name.startswith("results") else 4)
    for figure in page.figures:
        labels = png_labels(figure["png"])
        assert labels["title"], figure["caption"]
        assert figure["heading"] == labels["title"]
        assert figure["caption"]
        assert figure["caption"] != labels["title"]
        assert labels["note"] == LABEL
        for axes in labels["axes"]:
            assert axes["y"], (labels["title"], axes)  # a colourbar's label is its y label
            assert axes["colorbar"] or axes["x"], (labels["title"], axes)
    heatmaps = [f for f in page.figures if any(a["colorbar"] for a in png_labels(f["png"])["axes"])]
    assert heatmaps or name.startswith("results")


@pytest.mark.parametrize("name", ["report.html", "results/results.html"])
def test_the_methods_header_names_the_estimator_of_every_table(report, name):
    results, pages, _ = report
    page = pages[name]
    assert page.tables
    assert set(page.tables) <= set(page.methods)
    tables = {title: frame for title, frame, _ in results.shown()}
    paired = {title: frame for title, frame in tables.items() if "estimator" in frame}
    assert len(paired) == 3  # Perturb and the two Conditions tables say per row which estimator they used
    for title, frame in paired.items():
        used = set(frame["estimator"])
        assert ("binary" in used) == (BINARY in page.methods[title]), title
        assert ("clustered" in used) == (CLUSTERED in page.methods[title]), title
    assert "Wilson" in page.methods["Units, resolve rates and infrastructure errors"]
    assert "percentile bootstrap over instances (10,000, seed 0)" in page.methods["Effort deltas"]
    if name == "report.html":
        assert "200 replicates, seed 0" in page.methods["Transition probabilities"]
        assert "n: transitions out of a" in page.methods["Transition probabilities"]


def test_an_interval_excluding_zero_is_marked_and_the_marker_explained(report):
    results, pages, _ = report
    perturb = mark_excluding_zero(results.tables["perturb"][1])
    excluded = (perturb["low"] > 0) | (perturb["high"] < 0)
    assert excluded.any()  # the perturbation's effect (-0.6) is far from 0
    assert (perturb[MARK_COLUMN] == np.where(excluded, MARK, "")).all()
    rates = mark_excluding_zero(results.tables["outcomes"][1])
    assert MARK_COLUMN not in rates  # a rate's interval is not a test against 0
    for page in pages.values():  # the marker's meaning is in the methods header of both pages
        assert any(f"{MARK} in {MARK_COLUMN}" in line for line in page.method_lines)
    frame = pd.DataFrame({"difference": [0.2], "low": [float("nan")], "high": [0.3]})
    assert mark_excluding_zero(frame)[MARK_COLUMN].tolist() == [""]


def test_counts_print_as_counts_and_missing_values_as_empty_cells(report):
    frame = pd.DataFrame({"pairs": [2.0, np.nan], "rate": [1.0, np.nan], "original_graded": [3.0, np.nan]})
    shown = counts_as_integers(frame)
    assert markdown_table(shown).splitlines()[2:] == ["| 2 | 1.000 | 3 |", "|  |  |  |"]
    for page in ("report.html", "results/results.html"):
        text = (report[2] / page).read_text(encoding="utf-8")
        assert "&lt;NA&gt;" not in text
        assert ">nan<" not in text


def test_the_oracle_label_comes_from_the_matrices_own_models(report, tmp_path):
    matrix = report[2].parent / "matrix"
    assert compute_results([matrix]).label is None  # a language model ("openai/m"): no label
    record = json.loads((matrix / MATRIX_FILE).read_text(encoding="utf-8"))
    for name, models in {
        "oracle": [{"name": "oracle", "model": TRUSTED_POLICIES[0]}],
        "mixed": [{"name": "oracle", "model": TRUSTED_POLICIES[0]}, {"name": "m", "model": "openai/m"}],
    }.items():
        (tmp_path / name).mkdir()
        (tmp_path / name / MATRIX_FILE).write_text(json.dumps({**record, "models": models}), encoding="utf-8")
    assert policy_label([tmp_path / "oracle"]) == ORACLE_LABEL == LABEL
    assert policy_label([tmp_path / "mixed"]).endswith("model(s) oracle; the others are language models.")
