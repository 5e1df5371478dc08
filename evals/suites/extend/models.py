"""Records of the Extend suite: per-family settings, a generated task, a validation result.

A task's agent-visible part (prompt, repository, allowed files) and its validator spec (how to
run the checks) live on `ExtendTask`; everything that would give the answer away (erased
contents, original values, definition identities, the gold patch) lives in the task's
ground-truth file, which never enters the task's repository.
"""

from __future__ import annotations

import sys
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

FAMILIES = ("proxy_chain", "runtime_target", "missing_constant", "multi_file")
FAMILY_NUMBER = {name: index for index, name in enumerate(FAMILIES, 1)}
"""Task ids are `<instance_id>__extend-<n>`: n is fixed per family, whatever else was built."""
DEFAULT_PLACEHOLDER = "# YOUR CODE HERE"
SCOPE_IGNORE = ("**/__pycache__/**", "**/*.py[co]", "**/.pytest_cache/**")
"""Litter a run leaves behind (bytecode, pytest cache): never counted as a change."""


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ProxyChainConfig(_Strict):
    k: int = Field(3, ge=1)
    """Middle-layer proxy files erased (at most one per chain, and no two chains forwarding the same names)."""
    placeholder: str = DEFAULT_PLACEHOLDER


class RuntimeTargetConfig(_Strict):
    k: int = Field(1, ge=1)
    """Forwarders erased; each must keep at least `min_decoys` decoys beside it."""
    placeholder: str = DEFAULT_PLACEHOLDER
    min_decoys: int = Field(1, ge=0)
    erase: Literal["forwarder", "reference"] = "forwarder"
    """forwarder: the whole entry point is replaced by the placeholder; reference: only the implementation's
    file name in it is (the prior work's behaviour, which leaves the shape of the answer in place)."""


class MissingConstantConfig(_Strict):
    k: int = Field(5, ge=1)
    placeholder: str = "YOUR CODE HERE"
    erase: Literal["key_and_value", "key"] = "key_and_value"
    """key_and_value: keys and values are both gone (recover them from code and tests);
    key: the value stays under the placeholder key (the prior work's behaviour)."""
    require_evidence: bool = True
    """With key_and_value, only pick constants whose value is written somewhere else in the
    repository (tests, docs, code), so that every erased value can be recovered."""


class MultiFileConfig(_Strict):
    min_files: int = Field(2, ge=2)
    """Python files the gold patch must touch."""


class FamiliesConfig(_Strict):
    families: list[Literal["proxy_chain", "runtime_target", "missing_constant", "multi_file"]] | None = None
    """Families to build for this instance (e.g. the one `assign_families` chose); None = all four."""
    proxy_chain: ProxyChainConfig = ProxyChainConfig()
    runtime_target: RuntimeTargetConfig = RuntimeTargetConfig()
    missing_constant: MissingConstantConfig = MissingConstantConfig()
    multi_file: MultiFileConfig = MultiFileConfig()
    python: str = sys.executable
    """The variant's Python: it runs the probes and (through `{python}`) the tests."""
    test_cmd: str = "{python} -m pytest -q -p no:cacheprovider"
    """`{python}`: the variant's Python; `{tests}`, `{directives}`: the instance's test files, as pytest paths or
    swebench's test directives (see project_tests.test_command)."""
    test_log_parser: str | None = None
    """A swebench log parser (`parse_log_django`) reading the test command's output; None: junit XML."""
    test_env: dict[str, str] = Field(default_factory=dict)
    pre_setup_cmd: str = ""
    """Run (bash) once per checkout before `setup_cmd`: the instance's pre-install steps, which may edit files
    in place and must not run twice on one tree (`setup_steps`)."""
    setup_cmd: str = ""
    """Run (bash) in every checkout before its tests or probes: the instance's install step, so what it
    generates (a setuptools_scm `_version.py`, egg-info, an editable install pointing here) is there as in
    the instance's own environment."""
    setup_lock: str | None = None
    """A file locked from setup to the end of the run: checkouts sharing one venv must not re-point its
    editable install while another one's tests run (the same lock grading takes)."""
    image: str | None = None
    """An environment image (`repoanchor images build`): probes and tests run in a network-less container of
    it (`extend.in_image`), `python` being the image's interpreter; None runs them on the host."""
    test_timeout_s: float = 900.0
    probe_timeout_s: float = 300.0
    self_check: bool = True
    scope_ignore: list[str] = Field(default_factory=lambda: list(SCOPE_IGNORE))
    prompts: Literal["explained", "minimal"] = "explained"
    """explained: the prompt names the erased files and the mechanism (chain, forwarder, loader); minimal:
    the RepoMirage code's baseline wording, which names neither (prompts/extend/minimal/)."""

    def template(self, family: str) -> str:
        return f"extend/{'minimal/' if self.prompts == 'minimal' else ''}{family}"


class ValidatorSpec(_Strict):
    """How to run a task's checks; the data they compare against is in the ground-truth file."""

    family: str
    python: str
    test_cmd: str
    test_log_parser: str | None = None
    """A swebench log parser reading the test command's output; None: junit XML."""
    test_env: dict[str, str] = Field(default_factory=dict)
    pre_setup_cmd: str = ""
    """Run (bash) once per checkout before `setup_cmd`: the instance's pre-install steps, which may edit files
    in place and must not run twice on one tree (`setup_steps`)."""
    setup_cmd: str = ""
    """Run (bash) in every checkout before its tests or probes: the instance's install step, so what it
    generates (a setuptools_scm `_version.py`, egg-info, an editable install pointing here) is there as in
    the instance's own environment."""
    setup_lock: str | None = None
    """A file locked from setup to the end of the run: checkouts sharing one venv must not re-point its
    editable install while another one's tests run (the same lock grading takes)."""
    image: str | None = None
    """An environment image (`repoanchor images build`): probes and tests run in a network-less container of
    it (`extend.in_image`), `python` being the image's interpreter; None runs them on the host."""
    test_timeout_s: float
    probe_timeout_s: float
    scope_ignore: list[str]


class CaseResult(_Strict):
    passed: bool
    failed_stage: str | None = None
    reasons: list[str] = Field(default_factory=list)


class SelfCheck(_Strict):
    status: Literal["passed", "failed", "deferred", "skipped"]
    """deferred: the family needs a grader (multi_file) and none was given."""
    reason: str | None = None
    cases: dict[str, CaseResult] = Field(default_factory=dict)


class ExtendTask(_Strict):
    task_id: str
    instance_id: str
    """The dataset instance the task comes from (the pairing key)."""
    family: str
    status: Literal["ok", "skipped", "rejected"]
    reason: str | None = None
    """Why a task is skipped (not enough candidates) or rejected (its self-check failed)."""
    prompt: str = ""
    repo: str | None = None
    """The agent's repository: a git repo with one commit, the erasure applied."""
    base_commit: str | None = None
    allowed_files: list[str] | None = None
    """Files the agent may change; None = any non-test file (multi_file)."""
    ground_truth: str | None = None
    validator: ValidatorSpec | None = None
    self_check: SelfCheck | None = None

    def suite_row(self, repo_relative: str) -> dict:
        """The agent-visible fields of this task's tasks.jsonl row (no ground truth)."""
        return {
            "instance_id": self.task_id,
            "problem_statement": self.prompt,
            "base_commit": self.base_commit,
            "repoanchor_suite": "extend",
            "repoanchor_repo": repo_relative,
            "repoanchor_source_instance": self.instance_id,
            "repoanchor_family": self.family,
            "repoanchor_allowed_files": self.allowed_files,
        }


class ValidationResult(_Strict):
    passed: bool
    reasons: list[str] = Field(default_factory=list)
    failed_stage: Literal["scope", "dynamic", "tests", "grader"] | None = None
    checks: dict[str, bool] = Field(default_factory=dict)
    """Stage -> passed, for every stage that ran."""
