"""``jev-select rollout`` against a GitHub stand-in: time, requests and memory per observer run.

Serves N observer runs from the test suite's fake GitHub API (HTTPS, a fixed latency per answer,
the artifact zips on a second "storage" host behind the redirect), with one CI run per report
whose jobs are the report's tasks (seeded results: 5% failures, durations of 1 to 20 minutes).
Runs ``jev-select rollout`` as a real process, then ``jev-select calibrate`` on what it left, and
reports wall time, requests per observer run and the peak RSS of each process.

The reports are synthetic shadow reports with stored scores, or, with ``--reports DIR``, the
reports under ``DIR/<id>/report.json`` (for instance what ``jev-select history --out DIR`` wrote
for a real repository).

    python bench/rollout.py [--runs 100] [--latency-ms 30] [--reports DIR]
"""

from __future__ import annotations

import argparse
import io
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

from common import REPOSITORY, ROOT, base_environment, machine, table, write_results

TOKEN = "bench-token-0123456789"
TASKS = ("unit", "integration", "docs", "lint", "e2e", "package")


def synthetic_reports(count: int, rng: random.Random) -> list[dict[str, Any]]:
    from support.calibration import observed_report

    reports = []
    for index in range(count):
        scores = {
            task: round(rng.choice([0.001, 0.01, 0.03, 0.08, 0.2, 0.6, 0.9]), 3) for task in TASKS
        }
        tasks = {
            task: (
                score >= 0.05,
                ["jev-at-or-above-threshold" if score >= 0.05 else "jev-below-threshold"],
            )
            for task, score in scores.items()
        }
        tasks["lint"] = (True, ["always"])
        report = observed_report(tasks, [scores], tested_sha=f"{index + 1:040x}")
        report["head_sha"] = report["tested_sha"]
        report["tested_ref"] = "head"
        reports.append(report)
    return reports


def reports_from(directory: Path, limit: int) -> list[dict[str, Any]]:
    found = []
    for path in sorted(directory.glob("*/report.json"))[:limit]:
        report = json.loads(path.read_text(encoding="utf-8"))
        report["mode"] = "shadow"
        found.append(report)
    return found


def zipped(report: dict[str, Any]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("report.json", json.dumps(report, indent=2) + "\n")
    return buffer.getvalue()


def serve(api: Any, storage: Any, reports: list[dict[str, Any]], rng: random.Random) -> None:
    from support.fakegithub import FakeResponse

    runs = []
    for index, report in enumerate(reports):
        run_id, ci_id, artifact_id = 1000 + index, 5000 + index, 9000 + index
        event = "pull_request"
        head = report["head_sha"]
        runs.append(
            {
                "id": run_id,
                "run_attempt": 1,
                "event": event,
                "head_sha": head,
                "status": "completed",
                "pull_requests": [],
            }
        )
        data = zipped(report)
        api.route(
            f"/repos/{REPOSITORY}/actions/runs/{run_id}/artifacts?per_page=100",
            FakeResponse.json(
                {
                    "total_count": 1,
                    "artifacts": [
                        {
                            "id": artifact_id,
                            "name": f"jev-plan-report-{run_id}-1",
                            "size_in_bytes": len(data),
                            "expired": False,
                        }
                    ],
                }
            ),
        )
        api.route(
            f"/repos/{REPOSITORY}/actions/artifacts/{artifact_id}/zip",
            FakeResponse.redirect(f"{storage.url}/blob/{artifact_id}"),
        )
        storage.route(f"/blob/{artifact_id}", FakeResponse(200, data))
        pulls = [{"base": {"sha": report["base_sha"]}, "head": {"sha": head}}]
        ci = {
            "id": ci_id,
            "run_attempt": 1,
            "event": event,
            "head_sha": head,
            "status": "completed",
            "pull_requests": pulls,
        }
        api.route(
            f"/repos/{REPOSITORY}/actions/workflows/ci.yml/runs?"
            + urlencode({"per_page": 100, "head_sha": head, "event": event}),
            FakeResponse.json({"total_count": 1, "workflow_runs": [ci]}),
        )
        jobs = []
        for task in report["tasks"]:
            minutes = rng.randint(1, 20)
            jobs.append(
                {
                    "name": task,
                    "conclusion": "failure" if rng.random() < 0.05 else "success",
                    "started_at": "2026-11-20T10:00:00Z",
                    "completed_at": f"2026-11-20T10:{minutes:02d}:00Z",
                }
            )
        api.route(
            f"/repos/{REPOSITORY}/actions/runs/{ci_id}/attempts/1/jobs?per_page=100&page=1",
            FakeResponse.json({"total_count": len(jobs), "jobs": jobs}),
        )
    listing = f"/repos/{REPOSITORY}/actions/workflows/jev-shadow.yml/runs?"
    first = listing + urlencode({"per_page": 100, "status": "completed", "created": ">=2026-01-01"})
    pages = [runs[start : start + 100] for start in range(0, len(runs), 100)] or [[]]
    for number, page in enumerate(pages, start=1):
        path = first if number == 1 else f"{listing}page={number}"
        headers = {}
        if number < len(pages):
            headers["Link"] = f'<{api.url}{listing}page={number + 1}>; rel="next"'
        body = json.dumps({"total_count": len(runs), "workflow_runs": page}).encode()
        api.route(path, FakeResponse(200, body, headers))


def child_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=100)
    parser.add_argument("--latency-ms", type=float, default=30.0)
    parser.add_argument("--reports", type=Path)
    parser.add_argument("--seed", type=int, default=17)
    arguments = parser.parse_args()
    from support.fakegithub import FakeGitHub

    rng = random.Random(arguments.seed)
    reports = (
        reports_from(arguments.reports, arguments.runs)
        if arguments.reports
        else synthetic_reports(arguments.runs, rng)
    )
    with (
        tempfile.TemporaryDirectory(prefix="bench-rollout-") as scratch,
        FakeGitHub(tls=True) as api,
        FakeGitHub(tls=True) as storage,
    ):
        work = Path(scratch)
        bundle = work / "ca.pem"
        assert api.ca_bundle is not None
        assert storage.ca_bundle is not None
        bundle.write_text(Path(api.ca_bundle).read_text() + Path(storage.ca_bundle).read_text())
        serve(api, storage, reports, rng)
        api.latency = storage.latency = arguments.latency_ms / 1000
        env = base_environment(work / "home")
        env.update(
            {"GITHUB_API_URL": api.url, "GITHUB_TOKEN": TOKEN, "REQUESTS_CA_BUNDLE": str(bundle)}
        )
        out = work / "measurements"
        command = [
            sys.executable,
            "-m",
            "jev_select",
            "rollout",
            "--repository",
            REPOSITORY,
            "--observer-workflow",
            "jev-shadow.yml",
            "--ci-workflow",
            "ci.yml",
            "--since",
            "2026-01-01",
            "--out",
            str(out),
            "--max-runs",
            str(len(reports)),
        ]
        started = time.perf_counter()
        rollout = subprocess.run(command, env=env, cwd=ROOT, capture_output=True, text=True)
        rollout_s = time.perf_counter() - started
        rollout_rss = child_rss_mib()
        if rollout.returncode != 0:
            sys.stderr.write(rollout.stdout + rollout.stderr)
            return 1
        started = time.perf_counter()
        calibrate = subprocess.run(
            [sys.executable, "-m", "jev_select", "calibrate", str(out)],
            env=env,
            cwd=ROOT,
            capture_output=True,
            text=True,
        )
        calibrate_s = time.perf_counter() - started
        requests = len(api.requests) + len(storage.requests)
        row = {
            "observer_runs": len(reports),
            "latency_ms": arguments.latency_ms,
            "rollout_s": round(rollout_s, 2),
            "requests": requests,
            "requests_per_run": round(requests / max(len(reports), 1), 2),
            "ideal_s": round(requests * arguments.latency_ms / 1000, 2),
            "rollout_peak_rss_mib": round(rollout_rss, 1),
            "calibrate_s": round(calibrate_s, 2),
            "summary": rollout.stdout.splitlines()[-1],
        }
    headers = list(row)[:-1]
    print(table(headers, [[row[name] for name in headers]]))
    print(row["summary"])
    print(calibrate.stdout)
    write_results("rollout", {"machine": machine(), "rows": [row], "calibrate": calibrate.stdout})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
