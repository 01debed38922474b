"""``jev-select results --workflow FILE``: the results file carries the ``ci`` block of the run
attempt it was built from."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import jsonschema
import pytest
from support.fakeactions import FakeActions, job
from support.fakegithub import FakeGitHub
from support.reports import make_report

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.jsonutil import strict_loads

TOKEN = "ghs_RESULTSCITOKENSENTINEL"
REPOSITORY = "octo-org/octo-repo"
SCHEMA = json.loads(
    (Path(__file__).resolve().parents[2] / "jev_select/schemas/results.schema.json").read_text()
)


@pytest.fixture
def actions(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeActions]:
    with FakeGitHub(tls=True) as server:
        assert server.ca_bundle is not None
        for name in ("GITHUB_ACTIONS", "GITHUB_SERVER_URL"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        yield FakeActions(server, REPOSITORY)


def results(tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str) -> tuple[int, str]:
    report = tmp_path / "report.json"
    report.write_text(json.dumps(make_report({"unit": False, "lint": True})), "utf-8")
    output = tmp_path / "results.json"
    code = main(
        ["results", "--run-id", "42", "--report", str(report), "--output", str(output), *extra]
    )
    return code, capsys.readouterr().err


def test_with_a_workflow_every_job_of_the_attempt_is_listed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], actions: FakeActions
) -> None:
    actions.jobs(
        42, [job("unit (3.11)", "failure", 61), job("lint"), job("gate", seconds=3)], attempt=2
    )
    code, err = results(
        tmp_path, capsys, "--workflow", ".github/workflows/ci.yml", "--attempt", "2"
    )
    assert (code, err) == (0, "")
    value = strict_loads((tmp_path / "results.json").read_bytes())
    jsonschema.Draft202012Validator(SCHEMA).validate(value)
    assert value["ci"] == {
        "version": c.RESULTS_CI_VERSION,
        "workflow": "ci.yml",
        "run_id": 42,
        "run_attempt": 2,
        "jobs": [
            {
                "name": "unit (3.11)",
                "job": None,
                "tasks": ["unit"],
                "result": "failure",
                "duration_ms": 61_000,
            },
            {
                "name": "lint",
                "job": None,
                "tasks": ["lint"],
                "result": "success",
                "duration_ms": 90_000,
            },
            {"name": "gate", "job": None, "tasks": [], "result": "success", "duration_ms": 3_000},
        ],
        "needs": {},
    }


def test_without_a_workflow_the_file_is_as_before(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], actions: FakeActions
) -> None:
    actions.jobs(42, [job("unit")])
    assert results(tmp_path, capsys) == (0, "")
    assert list(strict_loads((tmp_path / "results.json").read_bytes())) == ["tested_sha", "tasks"]


def test_a_workflow_that_is_no_file_name_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], actions: FakeActions
) -> None:
    code, err = results(tmp_path, capsys, "--workflow", "../x")
    assert code == c.USAGE_EXIT_CODE
    assert "--workflow" in err
    assert actions.fake.requests == []
