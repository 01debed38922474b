"""Recorded GitHub answers for a real repository's merged changes, built from its own workflow.

``bench/ceiling_replay.py`` replays ``jev-select history --repository`` on a clone of a public
repository without the network. This module builds what GitHub would have answered for each
merged change: the pull request (its number from the subject, a head of its own, merged into
the change's commit), one CI run of the workflow on that head, and the run's jobs, under the
names GitHub lists them with. The names come from the workflow file at the change's commit:
each job's ``name:`` with ``${{ matrix.* }}`` filled in, a matrix job without one listed as
``<id> (<values>)``, a local reusable workflow's jobs as ``<caller> / <called>``.

Durations and conclusions are drawn from a generator seeded per job ID, so a job keeps its
typical length from change to change. A job whose ``if:`` holds only on pushes, tags or the
default branch, or only after a failure, is listed as skipped, as GitHub lists it on a pull
request. Only the shape of the CI is the repository's own (which jobs, how many matrix legs,
what needs what); the timings are not.
"""

from __future__ import annotations

import hashlib
import itertools
import random
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import yaml

MATRIX_REFERENCE = re.compile(r"\$\{\{\s*matrix\.([A-Za-z0-9_.-]+)\s*(?:\|\|\s*'([^']*)'\s*)?\}\}")
EXPRESSION = re.compile(r"\$\{\{.*?\}\}")
# Conditions that hold only outside a pull request: such a job is skipped on one.
PUSH_ONLY = re.compile(
    r"refs/tags|refs/heads/|github\.event_name\s*==\s*'(push|schedule|release|workflow_dispatch)'"
)
SUBJECT_NUMBER = re.compile(r"\(#([0-9]+)\)\s*$|^Merge pull request #([0-9]+) ")


@dataclass(frozen=True)
class ListedJob:
    """One job record as the jobs listing would carry it."""

    job_id: str
    name: str
    skipped: bool


def _matrix_rows(strategy: object) -> list[dict[str, Any]] | None:
    """The matrix legs of ``strategy``, or None when the matrix is computed at run time."""
    if not isinstance(strategy, dict) or "matrix" not in strategy:
        return [{}]
    matrix = strategy["matrix"]
    if not isinstance(matrix, dict):
        return None
    axes = {key: value for key, value in matrix.items() if key not in ("include", "exclude")}
    if any(not isinstance(value, list) for value in axes.values()):
        return None
    rows = [dict(zip(axes, values, strict=True)) for values in itertools.product(*axes.values())]
    for excluded in matrix.get("exclude") or []:
        if isinstance(excluded, dict):
            rows = [row for row in rows if any(row.get(k) != v for k, v in excluded.items())]
    for included in matrix.get("include") or []:
        if not isinstance(included, dict):
            continue
        original = {k: v for k, v in included.items() if k in axes}
        extended = False
        if len(original) < len(axes) or not axes:
            for row in rows:
                if row and all(row.get(k) == v for k, v in original.items()):
                    row.update({k: v for k, v in included.items() if k not in axes})
                    extended = True
        if not extended and not any(
            all(row.get(k) == v for k, v in included.items()) for row in rows
        ):
            rows.append(dict(included))
    return [row for row in rows if row] or [{}]


def _value(row: Mapping[str, Any], dotted: str) -> object:
    value: object = row
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _text(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return ", ".join(_text(item) for item in value.values())
    return "" if value is None else str(value)


def _render(template: str, row: Mapping[str, Any]) -> str:
    def fill(match: re.Match[str]) -> str:
        value = _value(row, match.group(1))
        if value in (None, "") and match.group(2) is not None:
            return match.group(2)
        return _text(value)

    return MATRIX_REFERENCE.sub(fill, template)


def _leg_names(job_id: str, body: Mapping[str, Any]) -> list[str]:
    template = body.get("name")
    rows = _matrix_rows(body.get("strategy"))
    if rows is None:
        # A computed matrix: one record under the name as written.
        return [str(template) if isinstance(template, str) else job_id]
    names = []
    for row in rows:
        if isinstance(template, str):
            name = _render(template, row)
            if row and "matrix." not in template:
                name = f"{name} ({', '.join(_text(value) for value in row.values())})"
        elif row:
            name = f"{job_id} ({', '.join(_text(value) for value in row.values())})"
        else:
            name = job_id
        names.append(name)
    return names


def listed_jobs(
    workflow_text: str, read_local: Any = None
) -> tuple[list[ListedJob], dict[str, list[str]]]:
    """The jobs a pull-request run of the workflow lists, and each job ID's ``needs``.

    ``read_local(path)`` returns the text of a local reusable workflow, or None.
    """
    document = yaml.safe_load(workflow_text)
    jobs = document.get("jobs") if isinstance(document, dict) else None
    listed: list[ListedJob] = []
    needs: dict[str, list[str]] = {}
    skipped_ids: set[str] = set()
    if not isinstance(jobs, dict):
        return listed, needs
    for job_id, body in jobs.items():
        if not isinstance(body, dict):
            continue
        wanted = body.get("needs") or []
        needs[str(job_id)] = [wanted] if isinstance(wanted, str) else [str(n) for n in wanted]
        condition = str(body.get("if", ""))
        # Skipped on a pull request: a push-only condition, or a job it needs was skipped
        # (unless the condition runs it whatever became of its needs).
        only_on_failure = "failure()" in condition and "!failure()" not in condition
        skipped = (
            only_on_failure
            or PUSH_ONLY.search(condition) is not None
            or (
                any(dep in skipped_ids for dep in needs[str(job_id)])
                and "always()" not in condition
                and "cancelled()" not in condition
            )
        )
        if skipped:
            skipped_ids.add(str(job_id))
        uses = body.get("uses")
        callers = _leg_names(str(job_id), body)
        if isinstance(uses, str) and uses.startswith("./") and read_local is not None:
            called_text = read_local(uses[2:].split("@")[0])
            called, _ = listed_jobs(called_text, None) if called_text else ([], {})
            for caller in callers:
                for inner in called or [ListedJob(str(job_id), "", False)]:
                    name = f"{caller} / {inner.name}" if inner.name else caller
                    listed.append(ListedJob(str(job_id), name, skipped or inner.skipped))
            continue
        if skipped:
            # A job skipped by its condition is listed once, its matrix never expanded.
            template = body.get("name")
            listed.append(ListedJob(str(job_id), str(template) if template else str(job_id), True))
            continue
        listed.extend(ListedJob(str(job_id), name, False) for name in callers)
    return listed, needs


def pull_request_number(subject: str) -> int | None:
    match = SUBJECT_NUMBER.search(subject)
    if match is None:
        return None
    return int(match.group(1) or match.group(2))


def fake_sha(*parts: object) -> str:
    # A commit-shaped name for a head that only exists in the recorded answers, not a digest.
    return hashlib.sha1("/".join(map(str, parts)).encode()).hexdigest()  # noqa: S324


def _stamp(seconds: int) -> str:
    day, rest = divmod(seconds, 86_400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    return f"2026-11-{1 + day % 28:02d}T{hours:02d}:{minutes:02d}:{secs:02d}Z"


def job_records(
    listed: Sequence[ListedJob],
    needs: Mapping[str, Sequence[str]],
    seed: str,
    change_index: int,
    *,
    failure_rate: float = 0.03,
) -> list[dict[str, Any]]:
    """Job records with start and end times that respect ``needs``: a job starts when the last
    job it needs has ended."""
    typical: dict[str, float] = {}
    ends: dict[str, int] = {}
    records = []
    start_of_run = change_index * 7200
    order = _topological(list(dict.fromkeys(job.job_id for job in listed)), needs)
    by_id: dict[str, list[ListedJob]] = {}
    for job in listed:
        by_id.setdefault(job.job_id, []).append(job)
    for job_id in order:
        base = random.Random(f"{seed}/{job_id}")
        typical[job_id] = base.choice([0.4, 1.5, 3, 6, 9, 14, 22])
        begin = max(
            (ends.get(dep, start_of_run) for dep in needs.get(job_id, ())), default=start_of_run
        )
        latest = begin
        for leg in by_id.get(job_id, []):
            rng = random.Random(f"{seed}/{job_id}/{leg.name}/{change_index}")
            if leg.skipped:
                records.append(
                    {
                        "name": leg.name,
                        "status": "completed",
                        "conclusion": "skipped",
                        "started_at": _stamp(begin),
                        "completed_at": _stamp(begin),
                    }
                )
                continue
            seconds = max(5, round(typical[job_id] * 60 * rng.uniform(0.7, 1.4)))
            queued = rng.randint(3, 40)
            end = begin + queued + seconds
            latest = max(latest, end)
            records.append(
                {
                    "name": leg.name,
                    "status": "completed",
                    "conclusion": "failure" if rng.random() < failure_rate else "success",
                    "started_at": _stamp(begin + queued),
                    "completed_at": _stamp(end),
                }
            )
        ends[job_id] = latest
    return records


def _topological(ids: Sequence[str], needs: Mapping[str, Sequence[str]]) -> list[str]:
    placed: list[str] = []
    seen: set[str] = set()

    def visit(job_id: str, path: frozenset[str]) -> None:
        if job_id in seen or job_id in path:
            return
        for dep in needs.get(job_id, ()):
            if dep in ids:
                visit(dep, path | {job_id})
        seen.add(job_id)
        placed.append(job_id)

    for job_id in ids:
        visit(job_id, frozenset())
    return placed


def numbered(pairs: Iterable[tuple[str, str]]) -> list[tuple[str, int]]:
    """(sha, number) of each (sha, subject) that names a pull request."""
    found = []
    for sha, subject in pairs:
        number = pull_request_number(subject)
        if number is not None:
            found.append((sha, number))
    return found
