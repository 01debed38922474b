"""End-to-end runs of ``jev-select plan`` for authorised pull requests.

A temporary git repository plays the pull request (served to the product as ``--remote``), and a
real HTTPS server on 127.0.0.1 with a throwaway CA plays Jev. Every run is the command's ``main``
in the test process (``run_cli_in_process``), with the environment, working directory and
standard streams of its own that a separate process would have.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    THREE_TASKS_TEMPLATE,
    TOKEN_SENTINEL,
    CliRun,
    GitHubEnv,
    run_cli_in_process,
)
from support.fakejev import FakeJev, RecordedRequest, Reply
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block

DIFF_SENTINEL = "DIFFSENTINEL_5e1f"
DESCRIPTION_SENTINEL = "DESCRIPTIONSENTINEL_93ab"
CONTEXT_SENTINEL = "CONTEXTSENTINEL_c0de"

TASKS = THREE_TASKS_TEMPLATE.format(
    unit=f"Runs the unit tests of the parser package. {DESCRIPTION_SENTINEL}"
)

WORKFLOW = """name: ci
on: pull_request
jobs:
  unit:
    name: Unit tests
    runs-on: ubuntu-latest
    steps:
      - name: Set up
        run: ./scripts/setup.sh
      - run: python -m pytest tests/unit
        working-directory: src
"""


@pytest.fixture(scope="module")
def jev() -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores={"unit": 0.9, "docs": 0.01, "lint": 0.01}) as server:
        yield server


@pytest.fixture
def fresh_jev(jev: FakeJev) -> FakeJev:
    return jev.reset({"unit": 0.9, "docs": 0.01, "lint": 0.01})


class PullRequest:
    def __init__(self, root: Path, changes: Mapping[Any, Any]) -> None:
        self.repo = GitRepo.init(root / "origin")
        self.base = self.repo.commit(
            {
                "src/parser/a.py": "def parse():\n    return 1\n",
                "docs/index.md": "# Docs\n",
                "tests/conftest.py": f"# fixtures {CONTEXT_SENTINEL}\n",
                ".github/workflows/ci.yml": WORKFLOW,
            }
        )
        self.head = self.repo.commit(changes, parents=[self.base], branch="feature")
        self.merge = self.repo.merge(self.base, self.head)
        # A clean checkout of HEAD: a local plan warns about uncommitted work otherwise.
        self.repo.check_out()


def github_env(root: Path, pr: PullRequest, jev: FakeJev, **inputs: str) -> GitHubEnv:
    settings = {
        "tasks": TASKS,
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
        "api-base-url": jev.base_url,
        "timeout-ms": "20000",
    }
    settings.update(inputs)
    env = GitHubEnv(root=root / "runner", inputs=settings, sha=pr.merge, runner=run_cli_in_process)
    env.event = env.pull_request_event(base=pr.base, head=pr.head)
    assert jev.ca_bundle is not None
    env.extra["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
    return env


def run(env: GitHubEnv, pr: PullRequest) -> CliRun:
    return env.run("--remote", str(pr.repo.path))


def check_hygiene(result: CliRun, jev: FakeJev) -> None:
    text = result.without_masks()
    for secret in (API_KEY_SENTINEL, TOKEN_SENTINEL):
        assert secret not in text
    for source in (DIFF_SENTINEL, DESCRIPTION_SENTINEL, CONTEXT_SENTINEL):
        assert source not in text
    for request in jev.requests:
        assert request.header("Authorization") == f"Bearer {API_KEY_SENTINEL}"
        assert TOKEN_SENTINEL not in request.body.decode("utf-8")


CODE_CHANGE = {"src/parser/a.py": f"def parse():\n    return 2  # {DIFF_SENTINEL}\n"}


def test_planned_run_skips_the_task_every_group_scored_low(
    tmp_path: Path, fresh_jev: FakeJev
) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    outputs = result.outputs
    assert outputs["status"] == c.STATUS_PLANNED
    assert outputs["run"] == '{"docs":false,"lint":true,"unit":true}'
    assert outputs["selected"] == '["lint","unit"]'
    assert outputs["matrix"] == '{"include":[{"task":"lint"},{"task":"unit"}]}'
    assert outputs["docs"] == "false"
    assert outputs["unit"] == "true"
    assert outputs["tested-sha"] == pr.merge
    report = result.report
    assert report["tasks"]["docs"] == {
        "proposed_run": False,
        "run": False,
        "reasons": [c.REASON_JEV_BELOW_THRESHOLD],
    }
    assert report["tasks"]["unit"]["reasons"] == [c.REASON_JEV_AT_OR_ABOVE_THRESHOLD]
    assert report["tasks"]["lint"]["reasons"] == [c.REASON_ALWAYS]
    assert report["observation"]["status"] == c.OBSERVATION_COMPLETE
    assert report["observation"]["strategy"] == c.STRATEGY_WHOLE_DIFF
    assert report["changed_path_count"] == 1
    assert report["diff_base_sha"] == pr.base
    assert report["model"] == {
        "requested": c.DEFAULT_MODEL,
        "expected": c.DEFAULT_MODEL,
        "returned": c.DEFAULT_MODEL,
    }
    assert report["usage"] == {"input_tokens": 1200, "output_tokens": 7}
    assert report["durations_ms"]["jev"] is not None
    metadata = report["job_metadata"]["unit"]
    assert metadata["incomplete"] is False
    assert metadata["workflow"] == ".github/workflows/ci.yml"
    assert metadata["job"] == "unit"
    # One request with every task's question; the diff and evidence went to the provider only.
    assert len(fresh_jev.requests) == 1
    body = fresh_jev.requests[0].json
    assert list(body["questions"]) == ["docs", "lint", "unit"]
    assert DIFF_SENTINEL in body["state"]["diff"]
    evidence = body["questions"]["unit"]["instructions"]["task"]
    assert DESCRIPTION_SENTINEL in evidence["description"]
    assert evidence["contextFiles"][0]["path"] == "tests/conftest.py"
    assert CONTEXT_SENTINEL in evidence["contextFiles"][0]["content"]
    assert evidence["jobs"][0]["id"] == "unit"
    assert evidence["jobs"][0]["steps"][1]["working_directory"] == "src"
    summary = result.summary_text
    assert summary is not None
    assert "| `docs` | skip | skip | `jev-below-threshold` |" in summary
    block = read_plan_block(summary, expected_tested_sha=pr.merge)
    assert block is not None
    assert block.selected == ("lint", "unit")
    assert not block.runs("docs")
    check_hygiene(result, fresh_jev)


def test_shadow_mode_runs_everything_and_records_proposals(
    tmp_path: Path, fresh_jev: FakeJev
) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, mode="shadow"), pr)
    assert result.code == 0
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    assert result.outputs["status"] == c.STATUS_PLANNED
    docs = result.report["tasks"]["docs"]
    assert docs == {
        "proposed_run": False,
        "run": True,
        "reasons": [c.REASON_JEV_BELOW_THRESHOLD, c.REASON_SHADOW_MODE],
    }
    assert len(fresh_jev.requests) == 1


def test_score_equal_to_threshold_keeps_the_task(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.scores = {"unit": 0.05, "docs": 0.05, "lint": 0.0}
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    assert result.report["tasks"]["docs"]["reasons"] == [c.REASON_JEV_AT_OR_ABOVE_THRESHOLD]


def test_threshold_zero_never_skips(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.scores = 0.0
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, **{"skip-below": "0"}), pr)
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    assert result.outputs["status"] == c.STATUS_PLANNED


def test_force_paths_match_the_real_changed_paths(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.scores = 0.0
    pr = PullRequest(tmp_path, {"docs/guide.md": "# Guide\n"})
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":false}'
    assert result.report["tasks"]["docs"]["reasons"] == [c.REASON_PATH_MATCH]
    # The step summary names the pattern from the table, not the pull request's path.
    assert result.summary_text is not None
    docs_row = next(row for row in result.summary_text.splitlines() if row.startswith("| `docs`"))
    assert "`docs/**` matched" in docs_row
    assert "guide.md" not in result.summary_text


def test_workflow_edit_bypasses_but_still_observes(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.scores = 0.0
    pr = PullRequest(tmp_path, {".github/workflows/ci.yml": WORKFLOW + "# edited\n"})
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.code == 0
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    for decision in result.report["tasks"].values():
        assert decision["proposed_run"] is None
        assert c.REASON_PROTECTED_PATH in decision["reasons"]
        assert decision["reasons"][-1] == c.REASON_OBSERVATION_ONLY
    assert len(fresh_jev.requests) == 1
    assert result.report["observation"] is not None


def test_provider_error_falls_back_and_keeps_everything(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.script(Reply.status(500))
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.code == 0
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    assert result.report["observation_error"] == c.REASON_JEV_ERROR
    assert c.REASON_JEV_ERROR in result.report["tasks"]["docs"]["reasons"]
    check_hygiene(result, fresh_jev)


def test_wrong_model_is_an_invalid_response(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.script(Reply.ok(model="jev-1.13.1"))
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, **{"api-model": "jev-latest"}), pr)
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.report["model"] == {
        "requested": "jev-latest",
        "expected": c.DEFAULT_MODEL,
        "returned": "jev-1.13.1",
    }
    assert result.report["observation_error"] == c.REASON_INVALID_RESPONSE
    assert fresh_jev.requests[0].json["model"] == "jev-latest"


def test_alias_with_the_canonical_model_is_accepted(tmp_path: Path, fresh_jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, **{"api-model": "jev-latest"}), pr)
    assert result.outputs["status"] == c.STATUS_PLANNED
    assert result.report["model"]["returned"] == c.DEFAULT_MODEL


def test_nothing_is_sent_without_consent(tmp_path: Path, fresh_jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, **{"allow-external-context": "false"}), pr)
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert fresh_jev.requests == []


def test_binary_change_falls_back_without_a_request(tmp_path: Path, fresh_jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, {"assets/logo.png": b"\x89PNG\x00\x01"})
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.report["tasks"]["docs"]["reasons"] == [c.REASON_BINARY_CHANGE]
    assert result.report["changed_path_count"] is None
    assert fresh_jev.requests == []


def test_missing_workflow_metadata_keeps_only_that_task(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.scores = 0.0
    tasks = TASKS.replace(".github/workflows/ci.yml", ".github/workflows/absent.yml")
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, tasks=tasks), pr)
    assert result.outputs["status"] == c.STATUS_PLANNED
    assert result.outputs["run"] == '{"docs":false,"lint":true,"unit":true}'
    assert result.report["tasks"]["unit"]["reasons"] == [c.REASON_METADATA_UNAVAILABLE]
    metadata = result.report["job_metadata"]["unit"]
    assert metadata["incomplete"] is True
    assert metadata["warnings"] == [c.WARN_WORKFLOW_MISSING + ".github/workflows/absent.yml"]


def test_head_mode_diffs_from_the_merge_base(tmp_path: Path, fresh_jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, **{"tested-ref": "head"}), pr)
    assert result.outputs["tested-sha"] == pr.head
    assert result.report["diff_base_sha"] == pr.base
    assert fresh_jev.requests[0].json["state"]["tested_sha"] == pr.head


def local_plan_args(pr: PullRequest, tasks_file: Path, jev: FakeJev) -> list[str]:
    """``jev-select plan`` in local mode over the pull request's base and head."""
    return [
        "plan",
        "--tasks-file",
        str(tasks_file),
        "--repo",
        str(pr.repo.path),
        "--base",
        pr.base,
        "--head",
        pr.head,
        "--api-base-url",
        jev.base_url,
    ]


def test_local_mode_prints_a_plan_and_writes_a_report(tmp_path: Path, fresh_jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    tasks_file = tmp_path / "tasks.yml"
    tasks_file.write_text(TASKS, "utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": str(temp),
        "JEV_API_KEY": API_KEY_SENTINEL,
        "REQUESTS_CA_BUNDLE": fresh_jev.ca_bundle or "",
    }
    completed = run_cli_in_process(
        [*local_plan_args(pr, tasks_file, fresh_jev), "--allow-external-context"],
        env,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""
    lines = completed.stdout.splitlines()
    assert lines[0] == "jev-select: planned (enforce): 2 of 3 tasks selected"
    assert lines[1].split() == ["TASK", "RUN", "PROPOSED", "REASONS", "DETAILS"]
    assert lines[-1].startswith("report: ")
    report = json.loads(Path(lines[-1][len("report: ") :]).read_text("utf-8"))
    assert report["tested_ref"] == "head"
    assert report["metadata_sha"] == pr.base
    assert report["tasks"]["docs"]["run"] is False
    assert API_KEY_SENTINEL not in completed.stdout
    provenance = report["job_metadata"]["unit"]["provenance"]
    assert provenance[0]["locator"]["repository"] == c.LOCAL_REPOSITORY_NAME


def test_local_mode_reads_the_repository_objects_in_place(
    tmp_path: Path, fresh_jev: FakeJev
) -> None:
    # The repository's own configuration would run a program on almost any git command; git
    # itself is logged, so the run can show that it neither fetched nor obeyed that configuration.
    pr = PullRequest(tmp_path, CODE_CHANGE)
    marker = tmp_path / "ran"
    program = tmp_path / "program.sh"
    program.write_text(f"#!/bin/sh\necho ran >> {marker}\n", "utf-8")
    program.chmod(0o755)
    with open(pr.repo.path / ".git" / "config", "a", encoding="utf-8") as config:
        config.write(
            f"[core]\n\thooksPath = {tmp_path}\n\tfsmonitor = {program}\n"
            f"[diff]\n\texternal = {program}\n"
            f'[diff "any"]\n\ttextconv = {program}\n'
        )
    (pr.repo.path / ".git" / "info").mkdir(exist_ok=True)
    (pr.repo.path / ".git" / "info" / "attributes").write_text("* diff=any\n", "utf-8")
    for hook in ("reference-transaction", "post-checkout", "pre-auto-gc"):
        (tmp_path / hook).write_text(program.read_text("utf-8"), "utf-8")
        (tmp_path / hook).chmod(0o755)
    wrapper = tmp_path / "bin"
    wrapper.mkdir()
    log = tmp_path / "git.log"
    (wrapper / "git").write_text(
        f'#!/bin/sh\necho "$*" >> {log}\nexec /usr/bin/git "$@"\n', "utf-8"
    )
    (wrapper / "git").chmod(0o755)
    tasks_file = tmp_path / "tasks.yml"
    tasks_file.write_text(TASKS, "utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    env = {
        "PATH": f"{wrapper}:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "TMPDIR": str(temp),
        "JEV_API_KEY": API_KEY_SENTINEL,
        "REQUESTS_CA_BUNDLE": fresh_jev.ca_bundle or "",
    }
    completed = run_cli_in_process(
        [*local_plan_args(pr, tasks_file, fresh_jev), "--allow-external-context"], env
    )
    assert completed.returncode == 0, completed.stderr
    assert not marker.exists()
    commands = log.read_text("utf-8").splitlines()
    assert any(" diff --patch " in f" {command} " for command in commands)
    assert not any(" fetch " in f" {command} " for command in commands)
    lines = completed.stdout.splitlines()
    report = json.loads(Path(lines[-1][len("report: ") :]).read_text("utf-8"))
    assert report["diff_base_sha"] == pr.base
    assert report["diff_bytes"] > 0
    collection_ms = report["durations_ms"]["collection"]
    assert lines[-2] == f"collection: {int(collection_ms + 0.5)} ms"


def test_local_mode_without_key_is_bypassed_and_sends_nothing(
    tmp_path: Path, fresh_jev: FakeJev
) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    tasks_file = tmp_path / "tasks.yml"
    tasks_file.write_text(TASKS, "utf-8")
    completed = run_cli_in_process(
        local_plan_args(pr, tasks_file, fresh_jev),
        {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path), "TMPDIR": str(tmp_path)},
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stdout.splitlines()[0] == (
        "jev-select: bypassed (enforce): 3 of 3 tasks selected"
    )
    assert fresh_jev.requests == []


@pytest.mark.parametrize(
    ("flag", "value", "field"),
    [
        ("--repo", "not-a-repository", "repo"),
        ("--base", "no-such-revision", "base"),
        ("--head", "no-such-revision", "head"),
        ("--remote", "ftp://example.invalid/x", "remote"),
        ("--tasks-file", "missing.yml", "tasks-file"),
    ],
)
def test_local_mode_input_errors(tmp_path: Path, flag: str, value: str, field: str) -> None:
    from jev_select.errors import input_error_message

    pr = PullRequest(tmp_path, CODE_CHANGE)
    tasks_file = tmp_path / "tasks.yml"
    tasks_file.write_text(TASKS, "utf-8")
    args = {"--tasks-file": str(tasks_file), "--repo": str(pr.repo.path), "--base": pr.base}
    args[flag] = value if flag != "--repo" else str(tmp_path / value)
    argv = ["plan"]
    for key, item in args.items():
        argv += [key, item]
    completed = run_cli_in_process(
        argv, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}, cwd=tmp_path
    )
    assert completed.returncode == 1
    assert completed.stdout == ""
    hint = c.TASKS_CHECK_HINT + "\n" if field == c.FIELD_TASKS_FILE else ""
    assert completed.stderr == input_error_message(field) + "\n" + hint
    assert value not in completed.stderr


def test_nothing_is_sent_without_a_key(tmp_path: Path, fresh_jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, CODE_CHANGE)
    result = run(github_env(tmp_path, pr, fresh_jev, **{"api-key": ""}), pr)
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.report["tasks"]["docs"]["reasons"] == [c.REASON_MISSING_API_KEY]
    assert fresh_jev.requests == []


def _large_change() -> dict[str, str]:
    """Two new files of about 15 KiB in different top directories: two groups."""
    lines = "".join(f"value_{number} = {number}  # {DIFF_SENTINEL}\n" for number in range(400))
    return {"src/parser/big.py": lines, "lib/other/big.py": lines}


def test_multi_group_diff_scores_every_group(tmp_path: Path, fresh_jev: FakeJev) -> None:
    fresh_jev.scores = {"unit": 0.01, "docs": 0.01, "lint": 0.01}
    pr = PullRequest(tmp_path, _large_change())
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.code == 0, result.stdout
    observation = result.report["observation"]
    assert observation["strategy"] == c.STRATEGY_CHUNKED_DIFF
    assert [chunk["status"] for chunk in observation["chunks"]] == [c.GROUP_COMPLETED] * 2
    assert [chunk["paths"] for chunk in observation["chunks"]] == [
        ["lib/other/big.py"],
        ["src/parser/big.py"],
    ]
    assert sorted(str(request.group_index) for request in fresh_jev.requests) == ["0", "1"]
    # Every group scored docs and unit strictly below the threshold: both are skipped.
    assert result.outputs["run"] == '{"docs":false,"lint":true,"unit":false}'
    assert result.report["tasks"]["docs"]["reasons"] == [
        c.REASON_JEV_BELOW_THRESHOLD,
        c.REASON_CHUNKED_OBSERVATION,
    ]
    assert result.report["tasks"]["lint"]["reasons"] == [
        c.REASON_ALWAYS,
        c.REASON_CHUNKED_OBSERVATION,
    ]
    check_hygiene(result, fresh_jev)


def test_multi_group_diff_with_one_group_failing_keeps_everything(
    tmp_path: Path, fresh_jev: FakeJev
) -> None:
    fresh_jev.scores = 0.0

    def fail_second_group(request: RecordedRequest) -> Reply:
        return Reply.status(500) if request.group_index == 1 else Reply.ok()

    fresh_jev.responder = fail_second_group
    pr = PullRequest(tmp_path, _large_change())
    result = run(github_env(tmp_path, pr, fresh_jev), pr)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":true}'
    report = result.report
    assert report["observation_error"] == c.REASON_JEV_ERROR
    assert report["observation"]["status"] == c.OBSERVATION_INCOMPLETE
    statuses = [chunk["status"] for chunk in report["observation"]["chunks"]]
    assert statuses[1] == c.GROUP_FAILED
    assert statuses[0] in (c.GROUP_COMPLETED, c.GROUP_NOT_STARTED)
    assert report["tasks"]["docs"] == {
        "proposed_run": None,
        "run": True,
        "reasons": [c.REASON_JEV_ERROR, c.REASON_CHUNKED_OBSERVATION],
    }
    check_hygiene(result, fresh_jev)
