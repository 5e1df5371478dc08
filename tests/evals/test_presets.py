"""Named presets: every shipped file validates, ours equals the code's defaults, what `presets show` prints is
exactly what suite build, perturb sample and eval record, options given on the command line win, and the
papers' deviations hold under their preset (14-SPT catalogue, per-keyword passes, 250 steps at temperature 1)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from repoanchor.evals.cli.main import app
from repoanchor.evals.cli.presets import with_matrix_preset
from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.presets.apply import sampler_fields, suite_fields
from repoanchor.evals.presets.model import PresetError, load_preset, names, record
from repoanchor.evals.runs.matrix import MatrixConfig
from repoanchor.evals.suites.kinds import SuiteConfig
from repoanchor.perturb.sampler.sampler import SamplerConfig, draw_plan
from repoanchor.perturb.transforms import REPOMIRAGE_IDS, SPT_IDS
from repoanchor.scaffolds.models.model import ModelConfig
from repoanchor.scaffolds.records import Limits
from tests.support.toy_project import write_toy_project

runner = CliRunner()


def shown(name: str) -> dict:
    result = runner.invoke(app, ["presets", "show", name])
    assert result.exit_code == 0, result.output
    return yaml.safe_load(result.output)


@pytest.fixture(scope="module")
def ledger(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("ledger")
    materialize_fixture(root)
    return root / "dataset.jsonl"


def test_the_shipped_presets_are_listed_and_valid():
    assert names() == ["jagged-frontier", "repoanchor", "repomirage"]
    listed = runner.invoke(app, ["presets", "list"]).output.splitlines()
    assert [line.split("\t")[0] for line in listed] == names()


def test_our_preset_is_exactly_the_code_defaults():
    ours = load_preset("repoanchor")
    suite = SuiteConfig(kind="perturb")
    assert ours.suite.fields() == {
        "other_file_rate": suite.other_file_rate, "fraction": suite.fraction, "transforms": suite.transforms,
        "options": suite.options, "n_variants": suite.n_variants,
    }  # fmt: skip
    defaults = SamplerConfig().model_dump()
    assert {key: defaults[key] for key in ours.sampler} == ours.sampler
    assert ours.run.limits == Limits().model_dump()
    assert ours.run.temperature == ModelConfig.model_fields["temperature"].default
    assert ours.anchor.stage1_tests == "allowed"


@pytest.mark.parametrize("name", ["repoanchor", "repomirage", "jagged-frontier"])
def test_show_prints_the_record(name):
    assert shown(name) == record(load_preset(name))
    as_json = runner.invoke(app, ["presets", "show", name, "--json"])
    assert json.loads(as_json.output) == shown(name)


@pytest.mark.parametrize("name", ["repomirage", "jagged-frontier"])
def test_an_original_suite_records_the_preset_as_shown(ledger, tmp_path, name):
    out = tmp_path / "suite"
    args = ["suite", "build", str(ledger), "--suite", "original", "--out", str(out), "--preset", name]
    result = runner.invoke(app, [*args, "--repo-cache", str(ledger.parent)])
    assert result.exit_code == 0, result.output
    assert json.loads((out / "manifest.json").read_text())["preset"] == shown(name)


def test_suite_build_takes_the_preset_where_no_option_was_given(ledger):
    args = ["suite", "build", str(ledger), "--preset", "repomirage", "--fraction", "0.5", "--dry-run"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    plan = json.loads(result.output)
    assert plan["preset"] == shown("repomirage")
    config = plan["config"]
    assert (config["other_file_rate"], config["fraction"]) == (0.0, 0.5)  # the preset's rate, the given phi
    assert config["options"]["runtime-target-masking"] == {"decoys": 1, "decoy_layout": "siblings"}


def test_an_spt_suite_under_jagged_frontier_samples_the_paper_way(ledger):
    result = runner.invoke(app, ["suite", "build", str(ledger), "--suite", "spt", "--preset", "jagged-frontier",
                                 "--dry-run"])  # fmt: skip
    config = json.loads(result.output)["config"]
    assert config["n_variants"] == 20
    assert config["sampler"]["catalogue"] == list(SPT_IDS)
    assert config["sampler"]["keyword_passes"] == "per-keyword"


def test_perturb_sample_records_the_preset_as_shown(tmp_path):
    src = write_toy_project(tmp_path / "src", modules=3)
    out = tmp_path / "variants"
    result = runner.invoke(app, ["perturb", "sample", str(src), str(out), "--preset", "jagged-frontier", "-n", "2"])
    assert result.exit_code == 0, result.output
    metas = [json.loads(path.read_text()) for path in sorted(out.glob("*.json"))]
    assert len(metas) == 2  # -n given: it wins over the preset's 20
    for meta in metas:
        assert meta["sampler"]["preset"] == shown("jagged-frontier")
        assert meta["sampler"]["catalogue"] == list(SPT_IDS)
        assert set(meta["plan"]["transforms"]) <= set(SPT_IDS)


@pytest.mark.parametrize(("name", "mirage_drawn"), [("jagged-frontier", False), ("repoanchor", True)])
def test_only_the_14_spts_are_drawn_under_jagged_frontier(name, mirage_drawn):
    config = SamplerConfig(**{**sampler_fields(load_preset(name)), "n": 200})
    drawn = {t for index in range(200) for t in draw_plan(config, index).transforms}
    assert bool(drawn & set(REPOMIRAGE_IDS)) is mirage_drawn
    assert drawn >= set(SPT_IDS)


def test_jagged_frontier_runs_250_steps_at_temperature_1(tmp_path):
    config = tmp_path / "matrix.yaml"
    models = [{"name": "m", "temperature": 0.0}]
    matrix = {"suites": ["suite"], "scaffolds": ["mini-swe-agent"], "models": models, "limits": {"steps": 40}}
    config.write_text(yaml.safe_dump(matrix))
    matrix = with_matrix_preset(MatrixConfig.load(config), "jagged-frontier")
    assert (matrix.limits.steps, matrix.limits.command_timeout, matrix.limits.cost) == (250, 60.0, 3.0)
    assert [model.temperature for model in matrix.models] == [1.0]
    assert matrix.model_dump(mode="json")["preset"] == shown("jagged-frontier")  # what matrix.json holds


def test_suite_fields_leave_unset_settings_to_our_defaults():
    assert suite_fields(load_preset("repomirage"), "spt") == suite_fields(load_preset("repomirage"), "perturb")
    assert "sampler" not in suite_fields(load_preset("repomirage"), "spt")  # RepoMirage has no sampler


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("name: x\ndescription: d\nsource: s\nsuite: {fraction: 2}\n", "suite.fraction: Input should be less"),
        ("name: x\ndescription: d\nsource: s\nrun: {limits: {stepz: 3}}\n", "run.limits.stepz: Extra inputs"),
        ("name: x\ndescription: d\nsource: s\nsampler: {catalogue: [nope]}\n", "sampler: unknown transform ids"),
        ("name: x\nsource: s\n", "description: Field required"),
        ("- a list\n", "expected a mapping"),
    ],
)
def test_a_bad_preset_file_is_one_line_naming_file_and_field(tmp_path, text, message):
    path = tmp_path / "mine.yaml"
    path.write_text(text)
    with pytest.raises(PresetError, match=f"^{path}: "):
        load_preset(str(path))
    result = runner.invoke(app, ["presets", "show", str(path)])
    assert result.exit_code == 2
    assert message in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_an_unknown_preset_name_exits_2(ledger):
    result = runner.invoke(app, ["suite", "build", str(ledger), "--preset", "nope", "--dry-run"])
    assert result.exit_code == 2
    assert "unknown preset 'nope'; shipped: jagged-frontier, repoanchor, repomirage" in result.output


def test_repomirage_forbids_stage1_tests_in_every_anchor_condition(tmp_path):
    config = tmp_path / "matrix.yaml"
    conditions = [{"name": "plain"}, {"name": "anchor", "anchor": True}]
    matrix = {"suites": ["suite"], "scaffolds": ["mini-swe-agent"], "models": [{"name": "m"}], "conditions": conditions}
    config.write_text(yaml.safe_dump(matrix))
    loaded = MatrixConfig.load(config)
    assert [c.stage1_tests for c in loaded.conditions] == ["allowed", "allowed"]  # our default
    matrix = with_matrix_preset(loaded, "repomirage")
    assert [c.stage1_tests for c in matrix.conditions] == ["allowed", "forbidden"]
    assert matrix.limits.steps == 250
    assert [model.temperature for model in matrix.models] == [0.0]  # the paper states none: ours stays


def test_an_extend_suite_under_repomirage_assigns_one_family_and_moves_numbers_only(ledger):
    result = runner.invoke(app, ["suite", "build", str(ledger), "--suite", "extend", "--preset", "repomirage",
                                 "--dry-run"])  # fmt: skip
    config = json.loads(result.output)["config"]
    assert config["extend"]["assign"] == {"proxy_k": 144, "constant_k": 144}
    assert config["options"]["constant-externalization"] == {"types": ["int", "float"], "keep_trivial": True}
    assert (config["other_file_rate"], config["fraction"]) == (0.0, 1.0)  # the gold files, every site
