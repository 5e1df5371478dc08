"""Environment images: names, plans, the offline build of the fixture's image, and grades run in it."""

from __future__ import annotations

from dataclasses import replace

import pytest

from repoanchor.evals.demo.fixture_project import materialize_fixture
from repoanchor.evals.harness import container_run, grading, instance_env
from repoanchor.evals.harness.datasets import load_dataset
from repoanchor.evals.harness.dependencies.build_system import LEGACY_BUILD, build_requires
from repoanchor.evals.images import names
from repoanchor.evals.images.build import build_group, build_image, build_inputs, groups, inputs_for
from repoanchor.scaffolds.records import InfraError
from tests.support.docker_engine import docker_engine_fixture  # noqa: F401
from tests.support.env_images import CACHE, fixture_env_image_fixture  # noqa: F401


@pytest.mark.parametrize(
    ("instance_id", "expected"),
    [
        ("django__django-11099", "swebench/sweb.eval.x86_64.django_1776_django-11099:latest"),
        ("pytest-dev__pytest-5262", "swebench/sweb.eval.x86_64.pytest-dev_1776_pytest-5262:latest"),
        ("Org__Repo-1", "swebench/sweb.eval.x86_64.org_1776_repo-1:latest"),
    ],
)
def test_published_names_follow_swebench(instance_id, expected):
    assert names.published_image_name(instance_id) == expected


def test_env_image_names_are_valid_docker_names():
    flask = "repoanchor/sweb.env.pallets__flask.2.3:0123456789ab"
    assert names.env_image_name("pallets/flask", "2.3", "0123456789abcdef") == flask
    assert names.env_image_name("Org/My Repo", None, "ab" * 8) == "repoanchor/sweb.env.org__my-repo.none:abababababab"


@pytest.mark.parametrize(
    ("pyproject", "expected"),
    [
        ('[build-system]\nrequires = ["flit_core >=3.2,<4"]\n', ["flit_core >=3.2,<4"]),
        ('[project]\nname = "x"\n', LEGACY_BUILD),
        ("this is [not toml", LEGACY_BUILD),
        (None, LEGACY_BUILD),
    ],
    ids=["declared", "no-build-system", "malformed", "no-pyproject"],
)
def test_build_requirements_are_read_from_pyproject(tmp_path, pyproject, expected):
    if pyproject is not None:
        (tmp_path / "pyproject.toml").write_text(pyproject)
    assert build_requires(tmp_path) == expected


def test_a_group_that_cannot_be_planned_fails_alone_with_its_reason(tmp_path):
    rows = [
        {"instance_id": "pallets__flask-1", "repo": "pallets/flask", "version": "2.3", "base_commit": "0" * 40},
        {"instance_id": "pallets__flask-2", "repo": "pallets/flask", "version": "2.3", "base_commit": "0" * 40},
    ]
    ((key, group),) = groups(rows).items()
    record = build_group(key, group, tmp_path / "no-clones-here", tmp_path / "cache")
    assert record.status == "failed"
    assert record.instances == ["pallets__flask-1", "pallets__flask-2"]
    assert "no git repository" in record.error
    assert "pallets__flask" in record.error


def test_the_image_is_found_by_its_labels_and_not_rebuilt(fixture_env_image, docker_engine, tmp_path):
    labels = docker_engine.images.get(fixture_env_image).labels
    assert labels["repoanchor.kind"] == "env"
    assert labels["repoanchor.env.repo"] == "fixture/ledger"
    assert labels["repoanchor.env.python"] == "3.11"
    assert container_run.find_env_image("fixture/ledger", "0.3") == fixture_env_image
    assert container_run.find_env_image("fixture/ledger", "9.9") is None
    ((key, rows),) = groups(load_dataset_rows(tmp_path)).items()
    again = build_group(key, rows, None, CACHE)
    assert (again.status, again.image) == ("cached", fixture_env_image)


def load_dataset_rows(root):
    _, dataset = materialize_fixture(root / "fixture")
    return load_dataset(dataset).rows


def test_commands_in_the_image_have_its_python_and_no_network(fixture_env_image, tmp_path):
    repo, dataset = materialize_fixture(tmp_path)
    env = container_run.env_image_spec(load_dataset(dataset).rows[0])
    script = (
        "python -c 'import sys, pytest; print(sys.prefix, pytest.__version__)'; id -u; "
        "python -c 'import socket; socket.create_connection((\"pypi.org\", 443), timeout=3)' || echo NO-NETWORK; "
        "pip download --no-deps -d /tmp/x requests >/dev/null 2>&1 || echo NO-INDEX; ls ledger"
    )
    timed_out, output = container_run.run_in_tree(repo, script, env, timeout=60)
    assert not timed_out
    assert f"{container_run.IMAGE_VENV} " in output
    assert "\n1000\n" in output
    assert "NO-NETWORK" in output
    assert "NO-INDEX" in output
    assert "parsing.py" in output  # the tree was copied to /testbed


@pytest.mark.parametrize("instance_id", ["fixture__ledger-1", "fixture__ledger-2", "fixture__ledger-3"])
def test_grades_in_the_image_equal_local_grades(fixture_env_image, tmp_path, instance_id):
    cache, dataset = tmp_path, materialize_fixture(tmp_path)[1]
    row = load_dataset(dataset).by_id()[instance_id]
    verdicts = {}
    for provider in ("local", "image"):
        workdir = tmp_path / provider
        env = instance_env.prepare(row, provider, workdir, repo_cache=cache, cache_dir=tmp_path / "venvs")
        assert env.route == ("env-image" if provider == "image" else "current")
        for patch in ("", row["patch"]):
            run = grading.run_tests(workdir, row, patch, env, timeout=300)
            verdicts[provider, bool(patch)] = (grading.grade(row, run.outcomes, run.status).status, run.outcomes)
    assert verdicts["image", True] == verdicts["local", True]
    assert verdicts["image", False] == verdicts["local", False]
    assert verdicts["image", True][0] == "RESOLVED_FULL"
    assert verdicts["image", False][0] == "RESOLVED_NO"


def test_a_missing_environment_image_is_an_infra_error_naming_the_command(docker_engine):
    row = {"instance_id": "nobody__nothing-1", "repo": "nobody/nothing", "version": "0"}
    with pytest.raises(InfraError, match="repoanchor images build"):
        container_run.env_image_spec(row)
    assert container_run.choose_provider(row, "auto")[0] == "local"
    assert "no environment image" in container_run.choose_provider(row, "auto")[1]
    assert container_run.choose_provider(row, "image") == ("image", None)


def test_the_build_itself_runs_every_time_from_the_layer_cache(fixture_env_image, docker_engine, tmp_path):
    # The session's image may be years old on this engine: the build call still runs here (the layers of an
    # unchanged context come from the engine's cache), and its result is no environment image of a task.
    made = build_inputs(load_dataset_rows(tmp_path)[0], None, CACHE)
    assert made.tag == fixture_env_image
    build_image(docker_engine, made, "repoanchor/test-rebuild:latest", kind="test")
    try:
        labels = docker_engine.images.get("repoanchor/test-rebuild:latest").labels
        assert labels["repoanchor.kind"] == "test"
        assert labels["repoanchor.env.digest"] == fixture_env_image.rsplit(":", 1)[1]
        assert container_run.find_env_image("fixture/ledger", "0.3") == fixture_env_image
    finally:
        docker_engine.images.remove("repoanchor/test-rebuild:latest", force=True)


def test_a_current_env_images_interpreter_is_its_venvs_through_any_link(fixture_env_image, docker_engine, tmp_path):
    """tox --current-env (sphinx) links .tox/py39/bin/python to the venv's interpreter: in the image too, that
    link must start the venv, not the bare Python under it."""
    plan = replace(build_inputs(load_dataset_rows(tmp_path)[0], None, CACHE).plan, wrap_interpreter=True)
    made = inputs_for(plan, CACHE)
    assert made.tag != fixture_env_image
    build_image(docker_engine, made, "repoanchor/test-wrapped:latest", kind="test")
    try:
        venv = container_run.IMAGE_VENV
        probe = (
            f"mkdir -p /tmp/t/bin && ln -s {venv}/bin/python /tmp/t/bin/python && "
            "/tmp/t/bin/python -c 'import sys, pytest; print(sys.prefix)' && python3 -c 'import pytest'"
        )
        output = docker_engine.containers.run(
            "repoanchor/test-wrapped:latest", ["bash", "-c", probe], network_mode="none", remove=True
        )
        assert output.decode().strip() == venv
    finally:
        docker_engine.images.remove("repoanchor/test-wrapped:latest", force=True)
