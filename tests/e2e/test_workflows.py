"""The project's own workflows (.github/) keep the promises CONTRIBUTING.md and the README make.

- every ``uses:`` is this checkout (``./``) or pinned by a full commit SHA with its version in a
  comment on the same line;
- CI runs ``.ci/run``, the tests on every supported Python and on macOS and Windows, and builds,
  checks and runs the sdist and wheel;
- the self-test runs the action from the checkout three ways, and the diagnostic it expects is
  the one the product prints for that input;
- the release is gated on the tag, publishes with trusted publishing only (``id-token: write``
  in one job, a ``release`` environment, no secret), attests, and moves the major tag;
- Dependabot watches the action's pin, the workflows, the examples and the Python dependencies;
  the lock-refresh workflow regenerates requirements.lock, which Dependabot does not read.

The linters (actionlint, zizmor, check-jsonschema) run over the same files in ``.ci/lint.sh``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from jev_select import contracts as c
from jev_select.core.inputs import parse_inputs
from jev_select.errors import InputError, input_error_message

ROOT = Path(__file__).resolve().parents[2]
WORKFLOWS = ROOT / ".github" / "workflows"
PINNED_LINE = re.compile(
    r"uses: (?P<action>[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+)@(?P<sha>[0-9a-f]{40})"
    r" # v(?P<version>[0-9]+(?:\.[0-9]+){0,2})$"
)


ALL = ["ci.yml", "lock-refresh.yml", "release.yml", "self-test.yml"]


def _load(name: str) -> dict[str, Any]:
    loaded = yaml.safe_load((WORKFLOWS / name).read_text("utf-8"))
    assert isinstance(loaded, dict)
    # YAML 1.1 reads the key `on` as True.
    if True in loaded:
        loaded["on"] = loaded.pop(True)
    return loaded


def _steps(job: dict[str, Any]) -> list[dict[str, Any]]:
    steps = job.get("steps", [])
    assert isinstance(steps, list)
    return steps


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in _steps(job))


def test_the_three_workflows_exist() -> None:
    assert sorted(path.name for path in WORKFLOWS.glob("*.y*ml")) == ALL


@pytest.mark.parametrize("name", ALL)
def test_every_reference_is_this_checkout_or_a_commented_full_sha(name: str) -> None:
    lines = [
        line.strip().removeprefix("- ")
        for line in (WORKFLOWS / name).read_text("utf-8").splitlines()
        if line.strip().removeprefix("- ").startswith("uses:")
    ]
    assert lines
    for line in lines:
        if line.startswith("uses: ./ "):
            continue
        assert PINNED_LINE.fullmatch(line), line


@pytest.mark.parametrize("name", ALL)
def test_nothing_is_granted_at_the_top_and_checkouts_keep_no_credentials(name: str) -> None:
    workflow = _load(name)
    assert workflow["permissions"] == {}
    for job in workflow["jobs"].values():
        assert "permissions" in job
        for step in _steps(job):
            if str(step.get("uses", "")).startswith("actions/checkout@"):
                assert step["with"]["persist-credentials"] is False


def test_ci_runs_the_full_check_every_python_both_other_systems_and_the_wheel() -> None:
    workflow = _load("ci.yml")
    assert set(workflow["on"]) >= {"push", "pull_request"}
    jobs = workflow["jobs"]
    assert "bash .ci/run" in _runs(jobs["check"])
    matrix = jobs["tests"]["strategy"]["matrix"]
    pythons = set(matrix["python"]) | {entry["python"] for entry in matrix["include"]}
    assert {"3.11", "3.12", "3.13", "3.14"} <= pythons
    systems = set(matrix["os"]) | {entry["os"] for entry in matrix["include"]}
    assert {"ubuntu-latest", "macos-latest", "windows-latest"} <= systems
    assert "python -m pytest -q" in _runs(jobs["tests"])
    dist = _runs(jobs["dist"])
    for command in (
        "python -m build",
        "twine check --strict dist/*",
        'jev-select" --version',
        'import jev_select"',
    ):
        assert command in dist, command


def test_the_self_test_runs_the_checkout_three_ways() -> None:
    workflow = _load("self-test.yml")
    assert "pull_request" in workflow["on"]
    jobs = workflow["jobs"]
    local = {
        job_id: [step for step in _steps(job) if step.get("uses") == "./"]
        for job_id, job in jobs.items()
    }
    assert {job_id for job_id, steps in local.items() if steps} == {
        "bypass",
        "force-all",
        "invalid-input",
    }
    assert local["force-all"][0]["with"]["force-all"] == c.BOOL_TRUE
    assert "api-key" not in local["bypass"][0]["with"]
    # continue-on-error on the failing step only, and its outcome asserted afterwards.
    tolerant = [
        (job_id, step.get("id"))
        for job_id, job in jobs.items()
        for step in _steps(job)
        if "continue-on-error" in step
    ]
    assert tolerant == [("invalid-input", "select")]
    assert all("continue-on-error" not in job for job in jobs.values())
    assert "steps.select.outcome" in str(_steps(jobs["invalid-input"])[-1]["env"])
    # The second job reads the first one's outputs through fromJSON.
    consume = str(jobs["consume"])
    assert jobs["consume"]["needs"] == "bypass"
    assert "fromJSON(needs.bypass.outputs.run)" in consume
    assert set(jobs["bypass"]["outputs"]) == set(c.OUTPUTS) - {c.OUTPUT_REPORT_PATH}


def test_the_self_test_expects_the_diagnostic_the_product_prints() -> None:
    jobs = _load("self-test.yml")["jobs"]
    bad_input = next(step for step in _steps(jobs["invalid-input"]) if step.get("uses") == "./")
    [(field, value)] = [(k, v) for k, v in bad_input["with"].items() if k != "tasks"]
    with pytest.raises(InputError) as raised:
        parse_inputs({c.INPUT_TASKS: "unit:\n  description: Runs.\n", field: value})
    assert raised.value.field == field
    expected = input_error_message(field)
    assert f"expected='{expected}'" in _runs(jobs["diagnostic"])


def test_the_release_is_gated_and_publishes_with_trusted_publishing_only() -> None:
    text = (WORKFLOWS / "release.yml").read_text("utf-8")
    assert "secrets." not in text
    workflow = _load("release.yml")
    assert workflow["on"] == {"push": {"tags": ["v*.*.*"]}}
    jobs = workflow["jobs"]
    assert "scripts/release_check.py" in _runs(jobs["check"])
    assert jobs["build"]["needs"] == "check"
    with_oidc = [
        job_id
        for job_id, job in jobs.items()
        if job.get("permissions", {}).get("id-token") == "write"
    ]
    assert with_oidc == ["publish"]
    publish = jobs["publish"]
    assert publish["environment"] == "release"
    uses = [str(step.get("uses", "")).split("@")[0] for step in _steps(publish)]
    assert uses == [
        "actions/download-artifact",
        "actions/attest-build-provenance",
        "pypa/gh-action-pypi-publish",
    ]
    upload = _steps(publish)[-1]
    assert set(upload.get("with", {})) <= {"packages-dir"}
    # Only the build job builds; the others take its artifact.
    builders = [job_id for job_id, job in jobs.items() if "python -m build" in _runs(job)]
    assert builders == ["build"]
    release = _runs(jobs["github-release"])
    assert "gh release create" in release
    assert "--notes-file" in release
    assert "refs/tags/$major" in release


def test_dependabot_watches_actions_examples_and_python() -> None:
    config = yaml.safe_load((ROOT / ".github" / "dependabot.yml").read_text("utf-8"))
    updates = {entry["package-ecosystem"]: entry for entry in config["updates"]}
    assert set(updates) == {"github-actions", "pip"}
    assert updates["github-actions"]["directories"] == ["/", "/examples/*"]
    assert updates["pip"]["directory"] == "/"


def test_the_lock_refresh_regenerates_with_the_script_and_writes_nothing_else() -> None:
    workflow = _load("lock-refresh.yml")
    assert set(workflow["on"]) == {"schedule", "workflow_dispatch"}
    [job] = workflow["jobs"].values()
    assert job["permissions"] == {"contents": "write", "pull-requests": "write"}
    runs = _runs(job)
    assert "scripts/lock.sh --upgrade" in runs
    assert "-- requirements.lock" in runs
    assert "git add" not in runs


def test_the_readme_badge_and_the_contributing_guide_name_real_files() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    badges = re.findall(r"actions/workflows/([A-Za-z0-9_.-]+)/badge\.svg", readme)
    assert badges == ["ci.yml"]
    assert (WORKFLOWS / badges[0]).is_file()
    assert "## Versioning" in readme
    contributing = (ROOT / "CONTRIBUTING.md").read_text("utf-8")
    for path in re.findall(r"`((?:scripts|\.ci|bench|docs)/[A-Za-z0-9_./-]+)`", contributing):
        assert (ROOT / path).exists(), path
    for command in ("scripts/lock.sh", "bash .ci/run", "release_check.py"):
        assert command in contributing, command
