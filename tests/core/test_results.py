"""Results files from the GitHub REST API: job mapping, conversion, pagination and failures."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.fakegithub import FakeGitHub, FakeResponse
from support.reports import make_report
from support.strategies import SHAS, TASK_IDS

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.convert import DocumentError, structure
from jev_select.core.jsonutil import pretty_json, strict_loads
from jev_select.core.results import (
    JobOutcome,
    Results,
    ResultsFailure,
    TaskResult,
    build_results,
    job_outcome,
    parse_job_map,
    parse_results,
    results_json,
    task_for_job,
    validate_results,
)
from jev_select.core.shadow import shadow_analysis
from jev_select.edges.github.api import api_root_from_environment
from jev_select.version import USER_AGENT

ROOT = Path(__file__).resolve().parents[2]
SCHEMA = strict_loads((ROOT / "jev_select" / "schemas" / c.RESULTS_SCHEMA_FILE).read_text())
REPOSITORY = "octo-org/octo-repo"
TOKEN = "ghs_resultsTOKEN0123456789"
TESTED = "c" * 40
REPORT = make_report({"unit": False, "lint": True, "docs": False, "e2e": False})
JOBS_PATH = f"/repos/{REPOSITORY}/actions/runs/42/attempts/1/jobs"


def job(
    name: str,
    conclusion: str | None = "success",
    started: str | None = "2026-01-01T10:00:00Z",
    completed: str | None = "2026-01-01T10:00:01.5Z",
) -> dict[str, Any]:
    return {
        "id": abs(hash(name)) % 10_000,
        "name": name,
        "status": "completed" if conclusion else "in_progress",
        "conclusion": conclusion,
        "started_at": started,
        "completed_at": completed,
        "head_sha": "b" * 40,
    }


def outcome(name: str, result: str = "success", duration: int = 0) -> JobOutcome:
    return JobOutcome(name=name, result=result, duration_ms=duration)


# ---------------------------------------------------------------------------------------------
# Pure mapping and conversion
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("conclusion", "expected"),
    [
        ("success", "success"),
        ("failure", "failure"),
        ("cancelled", "cancelled"),
        ("skipped", "skipped"),
        ("neutral", "failure"),
        ("timed_out", "failure"),
        ("action_required", "failure"),
        ("stale", "failure"),
        (None, "failure"),
        (7, "failure"),
    ],
)
def test_conclusions_convert_conservatively(conclusion: Any, expected: str) -> None:
    converted = job_outcome(job("unit", conclusion))
    assert converted is not None
    assert converted.result == expected


@pytest.mark.parametrize(
    ("started", "completed", "duration"),
    [
        ("2026-01-01T10:00:00Z", "2026-01-01T10:00:01.5Z", 1500),
        ("2026-01-01T10:00:00Z", "2026-01-01T11:00:00+00:00", 3_600_000),
        ("2026-01-01T10:00:00+02:00", "2026-01-01T08:00:02Z", 2000),
        ("2026-01-01T10:00:05Z", "2026-01-01T10:00:00Z", 0),
        (None, "2026-01-01T10:00:00Z", 0),
        ("2026-01-01T10:00:00Z", None, 0),
        ("yesterday", "2026-01-01T10:00:00Z", 0),
        ("2026-01-01T10:00:00", "2026-01-01T10:00:01", 0),
    ],
)
def test_durations(started: Any, completed: Any, duration: int) -> None:
    converted = job_outcome(job("unit", "success", started, completed))
    assert converted is not None
    assert converted.duration_ms == duration


def test_a_job_without_a_name_is_ignored() -> None:
    assert job_outcome({"conclusion": "success"}) is None
    assert job_outcome({"name": "", "conclusion": "success"}) is None


@pytest.mark.parametrize(
    ("name", "task"),
    [
        ("unit", "unit"),
        ("unit (3.11)", "unit"),
        ("unit (3.11, ubuntu-latest)", "unit"),
        ("Unit", None),
        ("unit(3.11)", None),
        ("unit / test", None),
        ("caller / unit", None),
        ("plan", None),
    ],
)
def test_naming_rule(name: str, task: str | None) -> None:
    assert task_for_job(name, ["unit", "lint"]) == task


def test_a_map_replaces_the_naming_rule() -> None:
    job_map = {"Unit tests (3.11)": "unit", "Build docs": "docs", "x": "gone"}
    ids = ["unit", "docs"]
    assert task_for_job("Unit tests (3.11)", ids, job_map) == "unit"
    assert task_for_job("Build docs", ids, job_map) == "docs"
    assert task_for_job("unit", ids, job_map) is None  # only the map counts
    assert task_for_job("x", ids, job_map) is None  # the mapped task is not in the report


def test_build_results_worst_result_and_summed_duration() -> None:
    jobs = [
        outcome("unit (3.10)", "success", 100),
        outcome("unit (3.11)", "skipped", 50),
        outcome("unit (3.12)", "success", 25),
        outcome("lint", "success", 7),
        outcome("e2e (a)", "cancelled", 1),
        outcome("e2e (b)", "failure", 2),
        outcome("plan", "success", 3),
    ]
    results = results_json(build_results(REPORT, jobs))
    assert results == {
        "tested_sha": TESTED,
        "tasks": {
            "docs": {"result": "skipped", "duration_ms": 0},
            "e2e": {"result": "failure", "duration_ms": 3},
            "lint": {"result": "success", "duration_ms": 7},
            "unit": {"result": "skipped", "duration_ms": 175},
        },
    }
    assert validate_results(results)
    jsonschema.Draft202012Validator(SCHEMA).validate(results)


def test_severity_order() -> None:
    def worst(*results: str) -> str:
        jobs = [outcome(f"unit ({index})", value) for index, value in enumerate(results)]
        return build_results(REPORT, jobs).tasks["unit"].result

    assert worst("success", "success") == "success"
    assert worst("success", "skipped") == "skipped"
    assert worst("skipped", "cancelled") == "cancelled"
    assert worst("cancelled", "failure", "success") == "failure"


@pytest.mark.parametrize(
    "value",
    [None, [], {}, {"job": 5}, {"job": "not a task id!"}, {"": "unit"}, "unit"],
)
def test_malformed_maps(value: Any) -> None:
    with pytest.raises(ResultsFailure) as caught:
        parse_job_map(value)
    assert caught.value.code == "invalid-job-map"


@pytest.mark.parametrize(
    ("environ", "root"),
    [
        ({}, "https://api.github.com"),
        ({"GITHUB_SERVER_URL": "https://github.com"}, "https://api.github.com"),
        ({"GITHUB_SERVER_URL": "https://ghe.example.com"}, "https://ghe.example.com/api/v3"),
        ({"GITHUB_API_URL": "https://ghe.example.com/api/v3/"}, "https://ghe.example.com/api/v3"),
        # One rule for every GitHub call (docs/reference.md, "Manual pull-request mode"): plain http
        # is refused, loopback too.
        ({"GITHUB_API_URL": "http://127.0.0.1:8080"}, None),
        ({"GITHUB_API_URL": "http://api.example.com"}, None),
        ({"GITHUB_API_URL": "https://user:pw@api.example.com"}, None),
        ({"GITHUB_API_URL": "https://api.example.com/?x=1"}, None),
        ({"GITHUB_API_URL": "https://api.example.com/#x"}, None),
        ({"GITHUB_API_URL": "ftp://api.example.com"}, None),
        ({"GITHUB_API_URL": "https://api.example.com/a b"}, None),
        ({"GITHUB_SERVER_URL": "http://ghe.example.com"}, None),
    ],
)
def test_api_root(environ: Mapping[str, str], root: str | None) -> None:
    assert api_root_from_environment(environ) == root


# ---------------------------------------------------------------------------------------------
# The command against a local API
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def fake() -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as server:
        yield server


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, fake: FakeGitHub) -> pytest.MonkeyPatch:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("GITHUB_SERVER_URL", raising=False)
    monkeypatch.setenv("GITHUB_REPOSITORY", REPOSITORY)
    monkeypatch.setenv("GITHUB_API_URL", fake.url)
    assert fake.ca_bundle is not None
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", fake.ca_bundle)
    monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
    return monkeypatch


def page(jobs: list[dict[str, Any]], total: int) -> FakeResponse:
    return FakeResponse.json({"total_count": total, "jobs": jobs})


def page_path(number: int, path: str = JOBS_PATH) -> str:
    return f"{path}?per_page=100&page={number}"


def run_results(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], *extra: str, report: Any = REPORT
) -> tuple[int, str, str, Path]:
    report_path = tmp_path / "report.json"
    report_path.write_text(json.dumps(report), encoding="utf-8")
    output = tmp_path / "results.json"
    code = main(
        ["results", "--run-id", "42", "--report", str(report_path), "--output", str(output), *extra]
    )
    captured = capsys.readouterr()
    return code, captured.out, captured.err, output


def test_pagination_matrix_jobs_and_missing_jobs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    first = [job(f"unit ({index})") for index in range(99)] + [job("lint", "failure")]
    second = [job("unit (last)", "cancelled"), job("e2e", "neutral"), job("plan")]
    fake.route(page_path(1), page(first, 103))
    fake.route(page_path(2), page(second, 103))
    code, out, err, output = run_results(tmp_path, capsys)
    assert (code, out, err) == (0, "", "")
    assert fake.paths() == [page_path(1), page_path(2)]
    written = output.read_text(encoding="utf-8")
    assert written.endswith("}\n")
    results = strict_loads(written)
    assert list(results) == ["tested_sha", "tasks"]
    assert results["tested_sha"] == TESTED
    assert list(results["tasks"]) == ["docs", "e2e", "lint", "unit"]
    assert results["tasks"]["unit"] == {"result": "cancelled", "duration_ms": 100 * 1500}
    assert results["tasks"]["lint"] == {"result": "failure", "duration_ms": 1500}
    assert results["tasks"]["e2e"] == {"result": "failure", "duration_ms": 1500}
    assert results["tasks"]["docs"] == {"result": "skipped", "duration_ms": 0}
    jsonschema.Draft202012Validator(SCHEMA).validate(results)
    for request in fake.requests:
        assert request.headers["accept"] == "application/vnd.github+json"
        assert request.headers["user-agent"] == USER_AGENT
        assert request.headers["authorization"] == f"Bearer {TOKEN}"
    # The file is a valid second input of the analyzer.
    shadow = make_report({"unit": False, "lint": True, "docs": False, "e2e": False})
    assert shadow_analysis(shadow, results).failures_would_miss["unknown"] == ("e2e",)


def test_attempt_map_and_token_variable(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    env.delenv("GITHUB_TOKEN")
    env.setenv("OTHER_TOKEN", TOKEN)
    path = f"/repos/{REPOSITORY}/actions/runs/42/attempts/3/jobs"
    fake.route(page_path(1, path), page([job("Unit tests"), job("unit", "failure")], 2))
    job_map = tmp_path / "map.json"
    job_map.write_text(json.dumps({"Unit tests": "unit"}), encoding="utf-8")
    code, out, err, output = run_results(
        tmp_path, capsys, "--attempt", "3", "--map", str(job_map), "--token-env", "OTHER_TOKEN"
    )
    assert (code, out, err) == (0, "", "")
    results = strict_loads(output.read_text(encoding="utf-8"))
    assert results["tasks"]["unit"] == {"result": "success", "duration_ms": 1500}
    assert fake.requests[0].headers["authorization"] == f"Bearer {TOKEN}"


def test_no_token_sends_no_credentials(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    env.delenv("GITHUB_TOKEN")
    fake.route(page_path(1), page([], 0))
    code, _, err, output = run_results(tmp_path, capsys)
    assert (code, err) == (0, "")
    assert "authorization" not in fake.requests[0].headers
    assert set(strict_loads(output.read_text())["tasks"]) == {"docs", "e2e", "lint", "unit"}


def failure(code: str) -> str:
    return f"jev-select: results not built ({code}).\n"


def test_not_found(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    code, out, err, output = run_results(tmp_path, capsys)
    assert (code, out, err) == (1, "", failure("jobs-unavailable"))
    assert not output.exists()
    assert "Not Found" not in err


def test_redirect_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    fake.route(page_path(1), FakeResponse.redirect(fake.url + "/elsewhere"))
    fake.route("/elsewhere", page([job("unit")], 1))
    code, out, err, output = run_results(tmp_path, capsys)
    assert (code, out, err) == (1, "", failure("jobs-unavailable"))
    assert fake.paths() == [page_path(1)]
    assert not output.exists()


@pytest.mark.parametrize(
    "response",
    [
        FakeResponse(200, b"not json"),
        FakeResponse.json({"jobs": []}),
        FakeResponse.json({"total_count": 1, "jobs": "x"}),
        FakeResponse.json({"total_count": 1, "jobs": [5]}),
        FakeResponse.json([]),
        FakeResponse.oversized(2 * 1_048_576 + 10),
        FakeResponse.json({"message": "boom"}, status=500),
    ],
    ids=["non-json", "no-total", "jobs-not-list", "job-not-object", "array", "oversized", "500"],
)
def test_unusable_answers(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake: FakeGitHub,
    env: Any,
    response: FakeResponse,
) -> None:
    fake.route(page_path(1), response)
    code, out, err, output = run_results(tmp_path, capsys)
    assert (code, out) == (1, "")
    # The fake server may log a broken pipe to stderr when the client gives up on an oversized
    # body; the product's own contribution is exactly the one line.
    ours = [line for line in err.splitlines(keepends=True) if line.startswith("jev-select")]
    assert ours == [failure("jobs-unavailable")]
    assert not output.exists()


def test_fewer_jobs_than_announced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    fake.route(page_path(1), page([job("unit")] * 100, 150))
    fake.route(page_path(2), page([], 150))
    code, _, err, _ = run_results(tmp_path, capsys)
    assert (code, err) == (1, failure("jobs-unavailable"))


def test_invalid_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    fake.route(page_path(1), page([], 0))
    code, _, err, output = run_results(tmp_path, capsys, report={"version": 5})
    assert (code, err) == (1, failure("invalid-report"))
    assert fake.requests == []
    assert not output.exists()


def test_invalid_map_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    job_map = tmp_path / "map.json"
    job_map.write_text('{"a": "unit", "a": "lint"}', encoding="utf-8")
    code, _, err, _ = run_results(tmp_path, capsys, "--map", str(job_map))
    assert (code, err) == (1, failure("invalid-job-map"))
    code, _, err, _ = run_results(tmp_path, capsys, "--map", str(tmp_path / "absent.json"))
    assert (code, err) == (1, failure("invalid-job-map"))
    assert fake.requests == []


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("GITHUB_REPOSITORY", ""),
        ("GITHUB_REPOSITORY", "no-slash"),
        ("GITHUB_API_URL", "http://api.example.com"),
    ],
)
def test_invalid_settings(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fake: FakeGitHub,
    env: Any,
    name: str,
    value: str,
) -> None:
    env.setenv(name, value)
    code, _, err, _ = run_results(tmp_path, capsys)
    assert (code, err) == (1, failure("invalid-settings"))
    assert fake.requests == []


def test_unwritable_output(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    fake.route(page_path(1), page([], 0))
    report_path = tmp_path / "report.json"
    report_path.write_text(json.dumps(REPORT), encoding="utf-8")
    target = tmp_path / "missing-dir" / "results.json"
    code = main(
        ["results", "--run-id", "42", "--report", str(report_path), "--output", str(target)]
    )
    assert code == 1
    assert capsys.readouterr().err == failure("results-unwritable")


@pytest.mark.parametrize(
    "args",
    [
        ["results", "--report", "r", "--output", "o"],
        ["results", "--run-id", "0", "--report", "r", "--output", "o"],
        ["results", "--run-id", "-1", "--report", "r", "--output", "o"],
        ["results", "--run-id", "x", "--report", "r", "--output", "o"],
        ["results", "--run-id", "1", "--attempt", "0", "--report", "r", "--output", "o"],
        ["results", "--run-id", "1", "--output", "o"],
        ["results", "--run-id", "1", "--report", "r"],
    ],
)
def test_bad_usage(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, args: list[str]
) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    assert main(args) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("usage: jev-select results ")
    assert "\njev-select results: error: " in captured.err


def test_github_mode_failure_goes_to_stdout(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fake: FakeGitHub, env: Any
) -> None:
    env.setenv("GITHUB_ACTIONS", "true")
    code, out, err, _ = run_results(tmp_path, capsys)
    assert (code, err) == (1, "")
    assert out == "::error::" + failure("jobs-unavailable")


# ---------------------------------------------------------------------------------------------
# The typed file and the converter, against the schema
# ---------------------------------------------------------------------------------------------

VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)
DURATIONS = st.integers(0, 10**12) | st.floats(0, 1e12, allow_nan=False, allow_infinity=False)
TASK_RESULTS = st.builds(
    TaskResult,
    result=st.sampled_from(c.TASK_RESULTS),
    duration_ms=DURATIONS,
    classification=st.none() | st.sampled_from(c.FAILURE_CLASSIFICATIONS),
)
RESULTS = st.builds(
    Results,
    tested_sha=SHAS,
    tasks=st.dictionaries(TASK_IDS, TASK_RESULTS, max_size=6),
    relevant_tasks=st.none() | st.lists(TASK_IDS, unique=True, max_size=4),
)


@settings(max_examples=200, deadline=None)
@given(RESULTS)
def test_a_results_file_round_trips_byte_for_byte(results: Results) -> None:
    text = pretty_json(results_json(results)) + "\n"
    assert VALIDATOR.is_valid(results_json(results))
    parsed = parse_results(strict_loads(text))
    assert parsed == results
    assert pretty_json(results_json(parsed)) + "\n" == text


def test_optional_keys_are_absent_when_none_and_in_place_when_set() -> None:
    bare = Results(tested_sha=TESTED, tasks={"unit": TaskResult("success", 5)})
    assert results_json(bare) == {
        "tested_sha": TESTED,
        "tasks": {"unit": {"result": "success", "duration_ms": 5}},
    }
    labelled = Results(
        tested_sha=TESTED,
        tasks={"unit": TaskResult("failure", 5, "flaky")},
        relevant_tasks=["unit"],
    )
    value = results_json(labelled)
    assert list(value) == ["tested_sha", "tasks", "relevant_tasks"]
    assert value["tasks"] == {
        "unit": {"result": "failure", "duration_ms": 5, "classification": "flaky"}
    }
    assert value["relevant_tasks"] == ["unit"]


def test_a_built_file_is_what_the_command_writes(tmp_path: Path) -> None:
    # The bytes of a results file of today: key order, integers as integers.
    text = (
        '{\n  "tested_sha": "' + TESTED + '",\n  "tasks": {\n    "docs": {\n      "result": '
        '"skipped",\n      "duration_ms": 0\n    },\n    "e2e": {\n      "result": "skipped",\n'
        '      "duration_ms": 0\n    },\n    "lint": {\n      "result": "success",\n'
        '      "duration_ms": 7\n    },\n    "unit": {\n      "result": "skipped",\n'
        '      "duration_ms": 0\n    }\n  }\n}\n'
    )
    built = build_results(REPORT, [outcome("lint", "success", 7)])
    assert pretty_json(results_json(built)) + "\n" == text
    assert parse_results(strict_loads(text)) == built


GOOD_RESULTS: dict[str, Any] = {
    "tested_sha": TESTED,
    "tasks": {"unit": {"result": "failure", "duration_ms": 1.5, "classification": "regression"}},
    "relevant_tasks": ["unit"],
}


def _changed(path: tuple[str, ...], value: object) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(json.dumps(GOOD_RESULTS))
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return document


@pytest.mark.parametrize(
    ("path", "value"),
    [
        pytest.param(("unknown",), 1, id="unknown-key"),
        pytest.param(("tasks", "unit", "unknown"), 1, id="unknown-task-key"),
        pytest.param(("tested_sha",), 1, id="sha-number"),
        pytest.param(("tested_sha",), None, id="sha-null"),
        pytest.param(("tasks",), [], id="tasks-array"),
        pytest.param(("tasks", "unit"), "failure", id="task-string"),
        pytest.param(("tasks", "unit", "result"), 1, id="result-number"),
        pytest.param(("tasks", "unit", "duration_ms"), "1", id="duration-string"),
        pytest.param(("tasks", "unit", "duration_ms"), True, id="duration-boolean"),
        pytest.param(("tasks", "unit", "duration_ms"), None, id="duration-null"),
        pytest.param(("tasks", "unit", "classification"), None, id="classification-null"),
        pytest.param(("tasks", "unit", "classification"), 3, id="classification-number"),
        pytest.param(("relevant_tasks",), None, id="labels-null"),
        pytest.param(("relevant_tasks",), "unit", id="labels-string"),
        pytest.param(("relevant_tasks",), [1], id="labels-number"),
    ],
)
def test_the_converter_refuses_what_the_schema_refuses(
    path: tuple[str, ...], value: object
) -> None:
    document = _changed(path, value)
    assert not VALIDATOR.is_valid(document)
    with pytest.raises(DocumentError):
        structure(document, Results)
    assert parse_results(document) is None


@pytest.mark.parametrize("key", ["tested_sha", "tasks"])
def test_a_missing_key_is_refused_by_both(key: str) -> None:
    document = _changed((key,), None)
    del document[key]
    assert not VALIDATOR.is_valid(document)
    with pytest.raises(DocumentError):
        structure(document, Results)


def test_the_good_document_is_accepted_by_both() -> None:
    assert VALIDATOR.is_valid(GOOD_RESULTS)
    parsed = structure(GOOD_RESULTS, Results)
    assert parsed.tasks["unit"].classification == "regression"
    assert results_json(parsed) == GOOD_RESULTS
