"""``jev-select history --repository`` replayed on a clone of a real repository, offline.

For the newest merged changes of a local clone (``(#N)`` squash merges and merge commits), this
serves from the test suite's fake GitHub API (HTTPS, a throwaway CA) what GitHub would answer
for each: the pull request, one CI run of ``--ci-workflow`` on its head, and the run's jobs under
the names GitHub lists them (``ci_answers.py`` builds them from the workflow file at the change's
commit: matrix legs, reusable workflows, ``needs``; durations and a 3% failure rate seeded per job
ID). Each action the workflow uses is served as a plain node action, so that the plan's metadata
lookups find what they would on GitHub. A seeded few changes are left unmeasurable on purpose: a
run still in progress, a re-run, a cancelled run, a pull request that cannot be found.

It then runs, as real processes, ``jev-select history`` without a key (the ceiling), a second
time over the same ``--out`` (requests sent for changes already measured), and ``jev-select
calibrate`` on the directory, with ``--plot``. Only the shape of the CI is the repository's own;
the timings are drawn, so the figures show what the ceiling reads like, not this project's
real minutes.

    python bench/ceiling_replay.py --repo /tmp/real/pydantic --repository pydantic/pydantic \
        --tasks-file /tmp/real/tables/pydantic.yml [--ci-workflow ci.yml] [--last 40] \
        [--out DIR] [--plot PNG]
"""

from __future__ import annotations

import argparse
import random
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from ci_answers import fake_sha, job_records, listed_jobs, pull_request_number
from common import ROOT, base_environment, table, write_results

TOKEN = "replay-token-0123456789"
USES = re.compile(r"^\s*-?\s*uses:\s*['\"]?([^'\"\s#]+)", re.MULTILINE)
NODE_ACTION = "name: stand-in\nruns:\n  using: node24\n  main: dist/index.js\n"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], check=True, capture_output=True, text=True
    ).stdout


def file_at(repo: Path, sha: str, path: str) -> str | None:
    result = subprocess.run(
        ["git", "-C", str(repo), "show", f"{sha}:{path}"], capture_output=True, text=True
    )
    return result.stdout if result.returncode == 0 else None


def changes(repo: Path, last: int) -> list[tuple[str, str, int]]:
    """(sha, second parent or None, number) of the newest merged changes, newest first."""
    found = []
    for line in git(
        repo, "log", "--first-parent", "--format=%H %P%x09%s", "-n", str(last * 3)
    ).splitlines():
        shas, _, subject = line.partition("\t")
        sha, *parents = shas.split()
        number = pull_request_number(subject)
        if number is None:
            continue
        found.append((sha, parents[1] if len(parents) > 1 else "", number))
        if len(found) == last:
            break
    return found


def external_actions(texts: list[str]) -> set[str]:
    used = set()
    for text in texts:
        for reference in USES.findall(text):
            if not reference.startswith(("./", "docker://")) and "@" in reference:
                used.add(reference)
    return used


def serve(
    fake: Any, repository: str, repo: Path, workflow: str, picked: list[tuple[str, str, int]]
) -> dict[str, int]:
    from support.fakeactions import FakeActions, run

    actions = FakeActions(fake, repository, workflow)
    rng = random.Random(repository)
    planted = {"in-progress": 0, "re-run": 0, "cancelled": 0, "not-found": 0}
    texts = []
    for index, (sha, second_parent, number) in enumerate(picked):
        text = file_at(repo, sha, f".github/workflows/{workflow}")
        if text is None:
            continue
        texts.append(text)
        for reusable in re.findall(r"uses:\s*\./(\.github/workflows/[^\s@]+)", text):
            called = file_at(repo, sha, reusable)
            if called:
                texts.append(called)
        head = second_parent or fake_sha("head", sha)
        draw = rng.random()
        if draw < 0.02:
            planted["not-found"] += 1
            actions.commit_pulls(sha, [])
            continue
        actions.pull(number, head=head, merge_commit=sha)
        run_id = 100_000 + index
        listed, needs = listed_jobs(text, lambda path, sha=sha: file_at(repo, sha, path))
        records = job_records(listed, needs, repository, index)
        if draw < 0.06:
            planted["in-progress"] += 1
            actions.runs(head, [run(run_id, head, status="in_progress")])
        elif draw < 0.09:
            planted["re-run"] += 1
            actions.runs(head, [run(run_id, head, attempt=2)])
            actions.jobs(run_id, records, attempt=2)
        elif draw < 0.11:
            planted["cancelled"] += 1
            actions.runs(head, [run(run_id, head, conclusion="cancelled")])
        else:
            actions.runs(head, [run(run_id, head)])
            actions.jobs(run_id, records)
    for reference in external_actions(texts):
        owner_repo, _, ref = reference.partition("@")
        parts = owner_repo.split("/")
        name = "/".join(parts[:2])
        sub = "/".join(parts[2:])
        path = f"{sub}/action.yml" if sub else "action.yml"
        fake.add_action(name, ref, {path: NODE_ACTION})
    return planted


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repo", type=Path, required=True)
    parser.add_argument("--repository", required=True, metavar="OWNER/NAME")
    parser.add_argument("--tasks-file", type=Path, required=True)
    parser.add_argument("--ci-workflow", default="ci.yml")
    parser.add_argument("--last", type=int, default=40)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()
    from support.fakegithub import FakeGitHub

    out = args.out or Path(tempfile.mkdtemp(prefix="jev-ceiling-replay-"))
    picked = changes(args.repo, args.last)
    with FakeGitHub(tls=True) as fake:
        planted = serve(fake, args.repository, args.repo, args.ci_workflow, picked)
        environ = base_environment(out.parent / f".{out.name}-home")
        environ.update(
            GITHUB_API_URL=fake.url,
            GITHUB_TOKEN=TOKEN,
            REQUESTS_CA_BUNDLE=str(fake.ca_bundle),
        )
        environ["PYTHONPATH"] = str(ROOT)
        command = [
            sys.executable,
            "-m",
            "jev_select",
            "history",
            "--tasks-file",
            str(args.tasks_file.resolve()),
            "--repo",
            str(args.repo),
            "--last",
            str(len(picked)),
            "--repository",
            args.repository,
            "--ci-workflow",
            args.ci_workflow,
            "--out",
            str(out),
        ]
        figures: dict[str, Any] = {"changes": len(picked), "planted": planted}
        for label in ("first", "second"):
            before = len(fake.requests)
            started = time.perf_counter()
            result = subprocess.run(
                command, env=environ, cwd=args.repo, capture_output=True, text=True
            )
            figures[f"{label}_s"] = round(time.perf_counter() - started, 2)
            figures[f"{label}_requests"] = len(fake.requests) - before
            if result.returncode != 0:
                sys.stderr.write(result.stderr)
                return 1
            if label == "first":
                print(result.stdout)
        calibrate = [sys.executable, "-m", "jev_select", "calibrate", str(out)]
        if args.plot is not None:
            calibrate += ["--plot", str(args.plot)]
        shown = subprocess.run(calibrate, env=environ, capture_output=True, text=True)
        print(shown.stdout)
        if shown.returncode != 0:
            sys.stderr.write(shown.stderr)
    print(table(("figure", "value"), [(key, str(value)) for key, value in figures.items()]))
    print(f"measurements: {out}")
    write_results("ceiling_replay", {"repository": args.repository, **figures})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
