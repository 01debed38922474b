"""``app.pipeline.preview_change``: the keyed run's own policy, applied before anything is sent.

For each change a keyed run keeps whole, the preview's plan gives the very forced reason the
keyed run's report records; the patch over ``max-diff-bytes`` is measured on request.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import attrs
import pytest
from support.fakejev import low_scores_answer
from support.gitrepo import Gitlink, GitRepo
from support.runs import pull_request_context

from jev_select import contracts as c
from jev_select.app.pipeline import RunContext, preview_change, run_plan_pipeline
from jev_select.core.inputs import parse_inputs
from jev_select.core.models import Inputs
from jev_select.core.preview import PatchSize, kept_whole_reason
from jev_select.core.tasks import parse_tasks

TASKS = """\
docs:
  description: Builds the documentation site.
  force_paths: ["docs/**"]
unit:
  description: Runs the unit tests of the application.
"""
TASKS_FILE = "ci/jev-tasks.yml"
LARGE = "".join(f"value_{number} = {number}\n" for number in range(400))


def answering(
    endpoint: str, api_key: str, body: bytes, *, deadline: float, clock: Callable[[], float]
) -> bytes:
    return low_scores_answer(body)


def keyed_inputs(**extra: str) -> Inputs:
    # tasks-file as in GitHub mode: the table read from the repository, here given directly.
    inputs = parse_inputs(
        {
            c.INPUT_TASKS_FILE: TASKS_FILE,
            c.INPUT_API_KEY: "pipeline-key",
            c.INPUT_ALLOW_EXTERNAL_CONTEXT: "true",
            c.INPUT_TESTED_REF: c.TESTED_REF_HEAD,
            **extra,
        }
    )
    return attrs.evolve(inputs, tasks=parse_tasks(TASKS))


CHANGES: dict[str, dict[str | bytes, Any]] = {
    "workflow": {".github/workflows/ci.yml": "name: CI\n# edited\n"},
    "tasks-file": {TASKS_FILE: TASKS + "# edited\n"},
    "binary": {"logo.png": b"\x89PNG\x00"},
    "large": {"src/large.py": LARGE},
    "submodule": {"vendor/lib": Gitlink("2" * 40)},
    "plain": {"src/app.py": "print(2)\n"},
}
EXPECTED = {
    "workflow": c.REASON_PROTECTED_PATH,
    "tasks-file": c.REASON_PROTECTED_PATH,
    "binary": c.REASON_BINARY_CHANGE,
    "large": c.REASON_DIFF_TOO_LARGE,
    "submodule": c.REASON_SUBMODULE_CHANGE,
    "plain": None,
}


@pytest.fixture(scope="module")
def origin(tmp_path_factory: pytest.TempPathFactory) -> tuple[GitRepo, str, dict[str, str]]:
    repo = GitRepo.init(tmp_path_factory.mktemp("preview") / "origin")
    base = repo.commit(
        {
            "src/app.py": "print(1)\n",
            ".github/workflows/ci.yml": "name: CI\n",
            TASKS_FILE: TASKS,
        }
    )
    heads = {
        kind: repo.commit(change, parents=[base], branch=None) for kind, change in CHANGES.items()
    }
    return repo, base, heads


def context(tmp_path: Path, repo: GitRepo, base: str, head: str, **extra: Any) -> RunContext:
    return pull_request_context(tmp_path, repo, base, head, answering, **extra)


def _forced(reasons: tuple[str, ...]) -> str | None:
    found = [reason for reason in reasons if reason in c.KEYED_RUN_REASONS]
    return found[0] if found else None


@pytest.mark.parametrize("kind", sorted(CHANGES))
def test_the_preview_gives_the_keyed_runs_forced_reason(
    tmp_path: Path, origin: tuple[GitRepo, str, dict[str, str]], kind: str
) -> None:
    repo, base, heads = origin
    inputs = keyed_inputs(**{c.INPUT_MAX_DIFF_BYTES: "2000"})
    preview = preview_change(inputs, context(tmp_path, repo, base, heads[kind]))
    keyed = run_plan_pipeline(
        inputs, context(tmp_path, repo, base, heads[kind]), validated_at=time.monotonic()
    )
    assert kept_whole_reason(preview.plan) == EXPECTED[kind]
    for task_id, entry in keyed.report.tasks.items():
        assert _forced(entry.reasons) == EXPECTED[kind], task_id
    if EXPECTED[kind] == c.REASON_PROTECTED_PATH:
        assert preview.protected_path == next(iter(CHANGES[kind]))
        # A keyed run still asks Jev under a protected path, and records the answers only.
        assert keyed.report.observation is not None
        assert preview.requests == len(keyed.report.observation.chunks) == 1
        assert c.REASON_OBSERVATION_ONLY in keyed.report.tasks["unit"].reasons
    else:
        assert preview.protected_path is None


def test_a_patch_over_the_limit_is_measured_on_request(
    tmp_path: Path, origin: tuple[GitRepo, str, dict[str, str]]
) -> None:
    repo, base, heads = origin
    inputs = keyed_inputs(**{c.INPUT_MAX_DIFF_BYTES: "2000"})
    size = len(
        repo.git(
            "diff", "--patch", "--full-index", "-M", "--no-ext-diff", "--no-textconv",
            "--no-color", base, heads["large"], "--",
        )
    )  # fmt: skip
    measured = preview_change(
        inputs, context(tmp_path, repo, base, heads["large"], measure_patch=True)
    )
    assert measured.facts.patch == PatchSize(limit_bytes=2000, patch_bytes=size)
    unmeasured = preview_change(inputs, context(tmp_path, repo, base, heads["large"]))
    assert unmeasured.facts.patch is None
    keyed = run_plan_pipeline(
        inputs,
        context(tmp_path, repo, base, heads["large"], measure_patch=True),
        validated_at=time.monotonic(),
    )
    assert keyed.patch == PatchSize(limit_bytes=2000, patch_bytes=size)
    # Within the limit there is nothing to measure.
    within = preview_change(
        keyed_inputs(), context(tmp_path, repo, base, heads["large"], measure_patch=True)
    )
    assert within.facts.patch is None
    assert kept_whole_reason(within.plan) is None
