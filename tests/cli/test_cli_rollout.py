"""``jev-select rollout`` end to end against a local GitHub API and a separate storage host."""

from __future__ import annotations

import datetime
import io
import json
import zipfile
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest
from support.fakegithub import FakeGitHub, FakeResponse
from support.reports import make_report

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.jsonutil import strict_loads

TOKEN = "ghs_ROLLOUTTOKENSENTINEL77"
REPOSITORY = "octo-org/octo-repo"
SINCE = "2026-11-01"
OBSERVER_RUNS = f"/repos/{REPOSITORY}/actions/workflows/jev-shadow.yml/runs?" + urlencode(
    {"per_page": 100, "status": "completed", "created": f">={SINCE}"}
)
BASE = "a" * 40


def sha(number: int) -> str:
    return f"{number:040x}"


def zipped(data: bytes, name: str = "report.json") -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(name, data)
    return buffer.getvalue()


def report_bytes(
    *, head: str, tested: str | None = None, mode: str = "shadow", base: str = BASE
) -> bytes:
    """A shadow report over unit, lint and docs; head mode unless ``tested`` differs."""
    report = make_report(
        {"unit": False, "lint": True, "docs": False}, mode=mode, tested_sha=tested or head
    )
    report.update(head_sha=head, base_sha=base, diff_base_sha=base)
    report["tested_ref"] = "head" if tested is None else "merge"
    return (json.dumps(report, indent=2) + "\n").encode()


def job(name: str, conclusion: str = "success", seconds: int = 90) -> dict[str, Any]:
    return {
        "name": name,
        "conclusion": conclusion,
        "started_at": "2026-11-20T10:00:00Z",
        "completed_at": f"2026-11-20T10:{seconds // 60:02d}:{seconds % 60:02d}Z",
    }


class Scenario:
    """The observer's runs, their artifacts, the CI runs and their jobs, served by the fakes."""

    def __init__(self, api: FakeGitHub, storage: FakeGitHub) -> None:
        self.api = api
        self.storage = storage
        self.runs: list[dict[str, Any]] = []
        self._next_artifact = 500

    def observer_run(
        self,
        run_id: int,
        head: str,
        *,
        artifact: bytes | None = None,
        expired: bool = False,
        attempt: int = 1,
        event: str = "pull_request",
    ) -> None:
        self.runs.append(
            {
                "id": run_id,
                "run_attempt": attempt,
                "event": event,
                "head_sha": head,
                "status": "completed",
                "pull_requests": [],
            }
        )
        artifacts: list[dict[str, Any]] = [
            {"id": 1, "name": "coverage-report", "size_in_bytes": 10, "expired": False}
        ]
        if artifact is not None:
            self._next_artifact += 1
            artifact_id = self._next_artifact
            artifacts.append(
                {
                    "id": artifact_id,
                    "name": f"jev-plan-report-{run_id}-{attempt}",
                    "size_in_bytes": len(artifact),
                    "expired": expired,
                }
            )
            location = f"{self.storage.url.replace('127.0.0.1', 'localhost')}/blob/{artifact_id}"
            self.api.route(
                f"/repos/{REPOSITORY}/actions/artifacts/{artifact_id}/zip",
                FakeResponse.redirect(location),
            )
            self.storage.route(f"/blob/{artifact_id}", FakeResponse(200, artifact))
        self.api.route(
            f"/repos/{REPOSITORY}/actions/runs/{run_id}/artifacts?per_page=100",
            FakeResponse.json({"total_count": len(artifacts), "artifacts": artifacts}),
        )

    def ci_runs(
        self, head: str, runs: Sequence[Mapping[str, Any]], event: str = "pull_request"
    ) -> None:
        path = f"/repos/{REPOSITORY}/actions/workflows/ci.yml/runs?" + urlencode(
            {"per_page": 100, "head_sha": head, "event": event}
        )
        records = [
            {
                "run_attempt": 1,
                "event": event,
                "head_sha": head,
                "status": "completed",
                "pull_requests": [],
                **run,
            }
            for run in runs
        ]
        self.api.route(
            path, FakeResponse.json({"total_count": len(records), "workflow_runs": records})
        )

    def jobs(self, ci_run: int, jobs: list[dict[str, Any]]) -> None:
        self.api.route(
            f"/repos/{REPOSITORY}/actions/runs/{ci_run}/attempts/1/jobs?per_page=100&page=1",
            FakeResponse.json({"total_count": len(jobs), "jobs": jobs}),
        )

    def publish_runs(self) -> None:
        """The observer listing, newest first, in two pages joined by a Link header."""
        newest_first = sorted(self.runs, key=lambda run: -run["id"])
        half = len(newest_first) // 2
        second = f"/repos/{REPOSITORY}/actions/workflows/jev-shadow.yml/runs?page=2&per_page=100"
        first_page = FakeResponse.json(
            {"total_count": len(self.runs), "workflow_runs": newest_first[:half]}
        )
        self.api.route(
            OBSERVER_RUNS,
            FakeResponse(200, first_page.body, {"Link": f'<{self.api.url}{second}>; rel="next"'}),
        )
        self.api.route(
            second,
            FakeResponse.json(
                {"total_count": len(self.runs), "workflow_runs": newest_first[half:]}
            ),
        )


@pytest.fixture
def scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Scenario]:
    with FakeGitHub(tls=True) as api, FakeGitHub(tls=True) as storage:
        assert api.ca_bundle is not None
        assert storage.ca_bundle is not None
        bundle = tmp_path / "ca.pem"
        bundle.write_text(
            Path(api.ca_bundle).read_text() + Path(storage.ca_bundle).read_text(), encoding="ascii"
        )
        for name in ("GITHUB_ACTIONS", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(bundle))
        monkeypatch.setenv("GITHUB_API_URL", api.url)
        monkeypatch.setenv("GITHUB_TOKEN", TOKEN)
        yield Scenario(api, storage)


def rollout(
    capsys: pytest.CaptureFixture[str], out: Path, *extra: str, since: str | None = SINCE
) -> tuple[int, str, str]:
    arguments = [
        "rollout",
        "--repository",
        REPOSITORY,
        "--observer-workflow",
        ".github/workflows/jev-shadow.yml",
        "--ci-workflow",
        "ci.yml",
        "--out",
        str(out),
        *(["--since", since] if since else []),
        *extra,
    ]
    code = main(arguments)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


H_HEAD, H_MERGE, H_LONELY, H_MOVED = sha(1), sha(2), sha(3), sha(4)
M_MERGE, M_MOVED = sha(12), sha(14)


def full_scenario(scenario: Scenario, out: Path) -> dict[int, bytes]:
    """One observer run for each outcome; returns the reports that should be collected."""
    head_report = report_bytes(head=H_HEAD)
    merge_report = report_bytes(head=H_MERGE, tested=M_MERGE)
    scenario.observer_run(101, H_HEAD, artifact=zipped(head_report))
    scenario.ci_runs(H_HEAD, [{"id": 901}, {"id": 950, "event": "push"}])
    scenario.jobs(901, [job("unit (3.11)"), job("unit (3.12)", seconds=30), job("lint", "failure")])
    scenario.observer_run(102, H_MERGE, artifact=zipped(merge_report))
    pull = {"base": {"sha": BASE}, "head": {"sha": H_MERGE}}
    scenario.ci_runs(H_MERGE, [{"id": 902, "pull_requests": [pull]}])
    scenario.jobs(902, [job("unit"), job("docs", seconds=45)])
    scenario.observer_run(103, sha(5))  # no report artifact
    scenario.observer_run(104, sha(6), artifact=zipped(report_bytes(head=sha(6))), expired=True)
    bomb = zipped(b" " * (c.ROLLOUT_REPORT_MAX_BYTES + 1))
    scenario.observer_run(105, sha(7), artifact=bomb)
    scenario.observer_run(106, sha(8), artifact=zipped(report_bytes(head=sha(8), mode="enforce")))
    scenario.observer_run(107, sha(9), artifact=zipped(b'{"version": 5}'))
    scenario.observer_run(108, H_LONELY, artifact=zipped(report_bytes(head=H_LONELY)))
    scenario.ci_runs(H_LONELY, [])
    scenario.observer_run(109, H_MOVED, artifact=zipped(report_bytes(head=H_MOVED, tested=M_MOVED)))
    moved = {"base": {"sha": sha(99)}, "head": {"sha": H_MOVED}}
    scenario.ci_runs(H_MOVED, [{"id": 909, "pull_requests": [moved]}])
    scenario.observer_run(111, sha(11), artifact=zipped(report_bytes(head=sha(99))))
    scenario.observer_run(110, sha(10), artifact=zipped(report_bytes(head=sha(10))))
    (out / "110").mkdir(parents=True)
    (out / "110" / "results.json").write_text('{"labelled": true}\n', encoding="utf-8")
    scenario.publish_runs()
    return {101: head_report, 102: merge_report}


def test_collects_every_run_and_counts_what_it_could_not(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rollout"
    expected = full_scenario(scenario, out)
    code, stdout, stderr = rollout(capsys, out)
    assert (code, stderr) == (0, "")
    lines = stdout.splitlines()
    assert lines[-1] == (
        "jev-select: rollout: 2 collected, 2 unmatched, 2 missing, 4 rejected, 1 already collected."
    )
    rows = {int(line.split()[0]): line.split()[1:] for line in lines[1:-1]}
    assert rows == {
        101: ["collected", "-", "901", H_HEAD[:12]],
        102: ["collected", "-", "902", M_MERGE[:12]],
        103: ["missing", "no-artifact", "-", "-"],
        104: ["missing", "artifact-expired", "-", "-"],
        105: ["rejected", "artifact-too-large", "-", "-"],
        106: ["rejected", "report-not-shadow", "-", sha(8)[:12]],
        107: ["rejected", "report-invalid", "-", "-"],
        108: ["unmatched", "no-ci-run", "-", H_LONELY[:12]],
        109: ["unmatched", "no-ci-run", "-", M_MOVED[:12]],
        110: ["existing", "-", "-", "-"],
        111: ["rejected", "report-not-this-run", "-", sha(99)[:12]],
    }
    # Measurements: the report as uploaded, and results from the matched run's first attempt.
    assert sorted(path.name for path in out.iterdir()) == ["101", "102", "110"]
    for run_id, report in expected.items():
        assert sorted(path.name for path in (out / str(run_id)).iterdir()) == [
            "report.json",
            "results.json",
        ]
        assert (out / str(run_id) / "report.json").read_bytes() == report
    head_results = strict_loads((out / "101" / "results.json").read_bytes())
    # Every job of the attempt, for the ceiling; rollout reads no workflow file, so no job IDs.
    assert head_results.pop("ci") == {
        "version": 1,
        "workflow": "ci.yml",
        "run_id": 901,
        "run_attempt": 1,
        "jobs": [
            {
                "name": "unit (3.11)",
                "job": None,
                "tasks": ["unit"],
                "result": "success",
                "duration_ms": 90_000,
            },
            {
                "name": "unit (3.12)",
                "job": None,
                "tasks": ["unit"],
                "result": "success",
                "duration_ms": 30_000,
            },
            {
                "name": "lint",
                "job": None,
                "tasks": ["lint"],
                "result": "failure",
                "duration_ms": 90_000,
            },
        ],
        "needs": {},
    }
    assert head_results == {
        "tested_sha": H_HEAD,
        "tasks": {
            "docs": {"result": "skipped", "duration_ms": 0},
            "lint": {"result": "failure", "duration_ms": 90_000},
            "unit": {"result": "success", "duration_ms": 120_000},
        },
    }
    merge_results = strict_loads((out / "102" / "results.json").read_bytes())
    assert merge_results["tested_sha"] == M_MERGE
    assert merge_results["tasks"]["docs"] == {"result": "success", "duration_ms": 45_000}
    # The labelled directory was left alone and nothing was asked about its run.
    assert (out / "110" / "results.json").read_text(encoding="utf-8") == '{"labelled": true}\n'
    assert not any("/runs/110/" in path for path in scenario.api.paths())
    # The token went to the API only, never to storage.
    assert all(r.headers.get("authorization") == f"Bearer {TOKEN}" for r in scenario.api.requests)
    assert scenario.storage.requests
    assert all("authorization" not in r.headers for r in scenario.storage.requests)
    # The bomb's body was refused while it inflated: the blob was fetched, nothing was written.
    assert TOKEN not in stdout + stderr

    # What rollout leaves is what calibrate reads.
    code = main(["calibrate", str(out), "--format", "json", "--thresholds", "0.05"])
    view = json.loads(capsys.readouterr().out)
    assert code == 0
    assert view["thresholds"][0]["changes"] == 2


def test_json_output_and_a_second_collection_keeps_the_first(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "rollout"
    full_scenario(scenario, out)
    code, stdout, _ = rollout(capsys, out, "--format", "json")
    assert code == 0
    view = json.loads(stdout)
    assert view["summary"] == {
        "collected": 2,
        "unmatched": 2,
        "missing": 2,
        "rejected": 4,
        "existing": 1,
    }
    assert [run["observer_run"] for run in view["runs"]] == list(range(101, 112))
    assert view["runs"][0] == {
        "observer_run": 101,
        "outcome": "collected",
        "detail": None,
        "ci_run": 901,
        "tested_sha": H_HEAD,
    }
    labelled = out / "101" / "results.json"
    labelled.write_text(
        labelled.read_text(encoding="utf-8").replace("}\n}", '},\n"relevant_tasks": ["unit"]}'),
        encoding="utf-8",
    )
    before = labelled.read_bytes()
    code, stdout, _ = rollout(capsys, out, "--format", "json")
    assert code == 0
    assert json.loads(stdout)["summary"]["existing"] == 3
    assert labelled.read_bytes() == before


def test_several_ci_runs_for_one_commit_or_a_pending_one_are_unmatched(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario.observer_run(201, sha(21), artifact=zipped(report_bytes(head=sha(21))))
    scenario.ci_runs(sha(21), [{"id": 921}, {"id": 922}])
    scenario.observer_run(202, sha(22), artifact=zipped(report_bytes(head=sha(22))))
    scenario.ci_runs(sha(22), [{"id": 923, "status": "in_progress"}])
    scenario.publish_runs()
    code, stdout, _ = rollout(capsys, tmp_path / "out", "--format", "json")
    assert code == 0
    details = {run["observer_run"]: run["detail"] for run in json.loads(stdout)["runs"]}
    assert details == {201: "ci-run-ambiguous", 202: "ci-run-pending"}
    assert list((tmp_path / "out").iterdir()) == []


def test_the_default_window_is_the_last_fourteen_days(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    today = datetime.datetime.now(datetime.UTC).date()
    since = (today - datetime.timedelta(days=14)).isoformat()
    path = f"/repos/{REPOSITORY}/actions/workflows/jev-shadow.yml/runs?" + urlencode(
        {"per_page": 100, "status": "completed", "created": f">={since}"}
    )
    scenario.api.route(path, FakeResponse.json({"total_count": 0, "workflow_runs": []}))
    code, stdout, _ = rollout(capsys, tmp_path / "out", since=None)
    assert code == 0, stdout
    assert scenario.api.paths() == [path]
    assert stdout.splitlines()[-1].startswith("jev-select: rollout: 0 collected")


def test_a_rate_limit_is_waited_out_within_the_bound(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario.publish_runs()
    scenario.api.queue(OBSERVER_RUNS, FakeResponse(429, b"{}", {"Retry-After": "1"}))
    code, _stdout, stderr = rollout(capsys, tmp_path / "out")
    assert code == 0
    assert stderr == "jev-select: GitHub rate limit; waiting 1 s.\n"
    assert scenario.api.paths()[:2] == [OBSERVER_RUNS, OBSERVER_RUNS]


def test_a_rate_limit_beyond_the_bound_stops_with_a_code(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario.publish_runs()
    reset = str(int(datetime.datetime.now(datetime.UTC).timestamp()) + 3600)
    scenario.api.queue(
        OBSERVER_RUNS,
        FakeResponse(403, b"{}", {"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": reset}),
    )
    code, stdout, stderr = rollout(capsys, tmp_path / "out", "--max-wait", "60")
    assert (code, stdout) == (1, "")
    assert stderr == "jev-select: rollout failed (rate-limited).\n"


@pytest.mark.parametrize(
    ("setup", "code_name"),
    [
        ("runs-500", "github-unavailable"),
        ("observer-404", "workflow-not-found"),
        ("ci-404", "workflow-not-found"),
        ("runs-malformed", "invalid-answer"),
        ("jobs-500", "github-unavailable"),
        ("plain-http", "invalid-settings"),
        ("bad-map", "invalid-job-map"),
        ("out-is-file", "out-unwritable"),
    ],
)
def test_failures_print_one_fixed_line(
    scenario: Scenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    setup: str,
    code_name: str,
) -> None:
    out = tmp_path / "out"
    extra: list[str] = []
    scenario.observer_run(301, sha(31), artifact=zipped(report_bytes(head=sha(31))))
    scenario.ci_runs(sha(31), [{"id": 931}])
    scenario.jobs(931, [job("unit")])
    scenario.publish_runs()
    if setup == "runs-500":
        scenario.api.script(OBSERVER_RUNS, FakeResponse(500, TOKEN.encode()))
    elif setup == "observer-404":
        scenario.api.script(OBSERVER_RUNS, FakeResponse.not_found())
    elif setup == "ci-404":
        path = f"/repos/{REPOSITORY}/actions/workflows/ci.yml/runs?" + urlencode(
            {"per_page": 100, "head_sha": sha(31), "event": "pull_request"}
        )
        scenario.api.script(path, FakeResponse.not_found())
    elif setup == "runs-malformed":
        scenario.api.script(OBSERVER_RUNS, FakeResponse.json({"workflow_runs": [{"id": "x"}]}))
    elif setup == "jobs-500":
        scenario.api.script(
            f"/repos/{REPOSITORY}/actions/runs/931/attempts/1/jobs?per_page=100&page=1",
            FakeResponse(500, b"{}"),
        )
    elif setup == "plain-http":
        monkeypatch.setenv("GITHUB_API_URL", "http://127.0.0.1:9")
    elif setup == "bad-map":
        job_map = tmp_path / "map.json"
        job_map.write_text('{"Unit tests": "not a task id!"}', encoding="utf-8")
        extra = ["--map", str(job_map)]
    elif setup == "out-is-file":
        out.write_text("x", encoding="utf-8")
    code, stdout, stderr = rollout(capsys, out, *extra)
    assert (code, stdout) == (1, "")
    assert stderr == f"jev-select: rollout failed ({code_name}).\n"
    assert TOKEN not in stderr
    # Nothing half-written: no measurement directory for the run that was under way.
    if out.is_dir():
        assert list(out.iterdir()) == []


def test_a_job_map_is_the_only_mapping_rule(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario.observer_run(401, sha(41), artifact=zipped(report_bytes(head=sha(41))))
    scenario.ci_runs(sha(41), [{"id": 941}])
    scenario.jobs(941, [job("Unit tests"), job("unit", "failure")])
    scenario.publish_runs()
    job_map = tmp_path / "map.json"
    job_map.write_text('{"Unit tests": "unit"}', encoding="utf-8")
    code, _, _ = rollout(capsys, tmp_path / "out", "--map", str(job_map))
    assert code == 0
    results = strict_loads((tmp_path / "out" / "401" / "results.json").read_bytes())
    assert results["tasks"]["unit"] == {"result": "success", "duration_ms": 90_000}


def test_the_storage_host_failing_leaves_the_run_for_next_time(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    scenario.observer_run(501, sha(51), artifact=zipped(report_bytes(head=sha(51))))
    scenario.publish_runs()
    scenario.storage.script("/blob/501", FakeResponse(503, b""))
    code, stdout, _ = rollout(capsys, tmp_path / "out", "--format", "json")
    assert code == 0
    assert json.loads(stdout)["runs"][0]["detail"] == "artifact-unavailable"
    assert list((tmp_path / "out").iterdir()) == []


@pytest.mark.parametrize(
    "change",
    [
        ["--repository", "not-a-repository"],
        ["--observer-workflow", "shadow"],
        ["--ci-workflow", "../ci.yml"],
        ["--since", "2026-13-01"],
        ["--since", "yesterday"],
        ["--max-runs", "0"],
        ["--max-runs", "5001"],
        ["--max-wait", "-1"],
        ["--max-wait", "3601"],
        ["--format", "yaml"],
    ],
)
def test_bad_arguments_are_usage_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], change: list[str]
) -> None:
    arguments = {
        "--repository": REPOSITORY,
        "--observer-workflow": "jev-shadow.yml",
        "--ci-workflow": "ci.yml",
        "--out": str(tmp_path / "out"),
    }
    arguments[change[0]] = change[1]
    code = main(["rollout", *[part for pair in arguments.items() for part in pair]])
    captured = capsys.readouterr()
    assert code == c.USAGE_EXIT_CODE
    assert captured.out == ""
    assert "error:" in captured.err
    assert not (tmp_path / "out").exists()


def test_inside_actions_the_json_stays_one_document_and_failures_are_workflow_commands(
    scenario: Scenario,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    scenario.observer_run(601, sha(61), artifact=zipped(report_bytes(head=sha(61))))
    scenario.ci_runs(sha(61), [{"id": 961}])
    scenario.jobs(961, [job("unit")])
    scenario.publish_runs()
    scenario.api.queue(OBSERVER_RUNS, FakeResponse(429, b"{}", {"Retry-After": "1"}))
    code, stdout, stderr = rollout(capsys, tmp_path / "out", "--format", "json")
    assert code == 0
    assert json.loads(stdout)["summary"]["collected"] == 1
    assert stderr == "jev-select: GitHub rate limit; waiting 1 s.\n"
    scenario.api.script(OBSERVER_RUNS, FakeResponse(502, b""))
    code, stdout, stderr = rollout(capsys, tmp_path / "other", "--format", "json")
    assert (code, stderr) == (1, "")
    assert stdout == "::error::jev-select: rollout failed (github-unavailable).\n"


def test_a_run_listed_on_two_pages_is_collected_once(
    scenario: Scenario, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for run_id in (701, 702):
        head = sha(run_id)
        scenario.observer_run(run_id, head, artifact=zipped(report_bytes(head=head)))
        scenario.ci_runs(head, [{"id": run_id + 1000}])
        scenario.jobs(run_id + 1000, [job("unit")])
    # A new run pushed 702 onto the second page after the first was read.
    scenario.runs.append(dict(scenario.runs[1]))
    scenario.publish_runs()
    code, stdout, _ = rollout(capsys, tmp_path / "out", "--format", "json")
    assert code == 0
    view = json.loads(stdout)
    assert [run["observer_run"] for run in view["runs"]] == [701, 702]
    assert view["summary"]["collected"] == 2
    assert view["summary"]["existing"] == 0
