"""End-to-end runs of ``jev-select plan`` on ``merge_group`` events (the ``merge-group`` input).

A temporary repository plays the queue the way GitHub builds it: the target branch, a pull request
branch, and a queue commit on a ``gh-readonly-queue/main/pr-<n>-<head>`` branch whose parent chain
reaches the queue's base. The payload carries what GitHub's ``merge_group`` webhook carries. A real
HTTPS server on 127.0.0.1 plays Jev. Every run is the command's ``main`` in the test process
(``run_cli_in_process``).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    PARSER_SCORES,
    PARSER_TASKS,
    TOKEN_SENTINEL,
    UNIT_WORKFLOW,
    CliRun,
    GitHubEnv,
    run_cli_in_process,
)
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block
from jev_select.errors import failure_message, input_error_message

DIFF_SENTINEL = "QUEUEDIFF_4d2a"

TASKS = PARSER_TASKS
ALL_TRUE = '{"docs":true,"lint":true,"unit":true}'
CODE_CHANGE = {"src/parser/a.py": f"def parse():\n    return 2  # {DIFF_SENTINEL}\n"}


@pytest.fixture(scope="module")
def jev_server() -> Iterator[FakeJev]:
    with FakeJev(tls=True) as server:
        yield server


@pytest.fixture
def jev(jev_server: FakeJev) -> FakeJev:
    return jev_server.reset(dict(PARSER_SCORES))


class Queue:
    """``main`` at ``base``, pull request #7 at ``pr_head``, and its queue commit ``commit``.

    ``method`` is the queue's merge method: ``merge`` writes a merge commit with the parents
    ``[base, pr_head]``, ``squash`` one commit on top of ``base``.
    """

    def __init__(
        self, root: Path, changes: Mapping[Any, Any], *, method: str = "merge", number: int = 7
    ) -> None:
        self.repo = GitRepo.init(root / "origin")
        self.base = self.repo.commit(
            {
                "src/parser/a.py": "def parse():\n    return 1\n",
                "docs/index.md": "# Docs\n",
                ".github/workflows/ci.yml": UNIT_WORKFLOW,
            }
        )
        self.number = number
        self.pr_head = self.repo.commit(changes, parents=[self.base], branch=f"pr-{number}")
        if method == "merge":
            self.commit = self.repo.merge(self.base, self.pr_head)
        else:
            tree = self.repo.tree_of(self.pr_head)
            self.commit = self.repo.commit_tree(tree, [self.base], "squashed")
        self.head_ref = f"refs/heads/gh-readonly-queue/main/pr-{number}-{self.pr_head}"
        self.repo.set_ref(self.head_ref, self.commit)

    def event(self, *, base: str | None = None, head: str | None = None) -> dict[str, Any]:
        """A ``merge_group`` payload with the fields GitHub sends (``checks_requested``)."""
        head_sha = head or self.commit
        return {
            "action": "checks_requested",
            "merge_group": {
                "head_sha": head_sha,
                "head_ref": self.head_ref,
                "base_sha": base or self.base,
                "base_ref": "refs/heads/main",
                "head_commit": {
                    "id": head_sha,
                    "tree_id": self.repo.tree_of(self.commit),
                    "message": f"Merge pull request #{self.number}",
                    "timestamp": "2026-11-30T12:00:00Z",
                    "author": {"name": "Test Author", "email": "author@example.invalid"},
                    "committer": {"name": "GitHub", "email": "noreply@github.com"},
                },
            },
            "repository": {"id": 42, "full_name": "octo-org/octo-repo"},
        }


def queue_env(
    root: Path,
    queue: Queue,
    jev: FakeJev,
    *,
    event: dict[str, Any] | None = None,
    inputs: Mapping[str, str] | None = None,
) -> GitHubEnv:
    settings = {
        "tasks": TASKS,
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
        "api-base-url": jev.base_url,
        "timeout-ms": "20000",
        "merge-group": c.MERGE_GROUP_SELECT,
    }
    settings.update(inputs or {})
    env = GitHubEnv(
        root=root / "runner",
        event_name="merge_group",
        event=event if event is not None else queue.event(),
        inputs=settings,
        sha=queue.commit,
        runner=run_cli_in_process,
    )
    assert jev.ca_bundle is not None
    env.extra["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
    return env


def run(env: GitHubEnv, queue: Queue) -> CliRun:
    return env.run("--remote", str(queue.repo.path))


def assert_published_nothing(result: CliRun) -> None:
    assert result.outputs_text == ""
    assert result.summary_text is None
    assert result.report_paths() == []


def assert_secrets_kept(result: CliRun) -> None:
    text = result.without_masks()
    assert API_KEY_SENTINEL not in text
    assert TOKEN_SENTINEL not in text
    assert DIFF_SENTINEL not in text


# ---------------------------------------------------------------------------------------------
# The default: run-all
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", "run-all", " run-all\n"])
def test_default_run_all_bypasses_the_queue(
    tmp_path: Path, jev: FakeJev, value: str | None
) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    env = queue_env(tmp_path, queue, jev)
    if value is None:
        del env.inputs["merge-group"]
    else:
        env.inputs["merge-group"] = value
    result = run(env, queue)
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.outputs["run"] == ALL_TRUE
    assert result.outputs["tested-sha"] == queue.commit
    report = result.report
    # As for any non-PR event: every commit is GITHUB_SHA and nothing is collected.
    assert report["base_sha"] == report["head_sha"] == report["tested_sha"] == queue.commit
    assert report["metadata_sha"] == queue.commit
    assert report["diff_hash"] is None
    for decision in report["tasks"].values():
        assert c.REASON_NON_PULL_REQUEST in decision["reasons"]
    assert jev.requests == []


def test_select_on_other_events_changes_nothing(tmp_path: Path, jev: FakeJev) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    env = queue_env(tmp_path, queue, jev, event={"ref": "refs/heads/main"})
    env.event_name = "push"
    result = run(env, queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.report["tasks"]["unit"]["reasons"] == [c.REASON_NON_PULL_REQUEST]
    assert jev.requests == []


# ---------------------------------------------------------------------------------------------
# select: planned on the queue commit
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("tested_ref", ["merge", "head"])
@pytest.mark.parametrize("method", ["merge", "squash"])
def test_select_plans_the_queue_commit_against_its_base(
    tmp_path: Path, jev: FakeJev, method: str, tested_ref: str
) -> None:
    queue = Queue(tmp_path, CODE_CHANGE, method=method)
    result = run(queue_env(tmp_path, queue, jev, inputs={"tested-ref": tested_ref}), queue)
    assert result.code == 0, result.stdout
    assert result.stderr == ""
    outputs = result.outputs
    assert outputs["status"] == c.STATUS_PLANNED
    assert outputs["run"] == '{"docs":false,"lint":true,"unit":true}'
    assert outputs["selected"] == '["lint","unit"]'
    assert outputs["docs"] == "false"
    assert outputs["tested-sha"] == queue.commit
    report = result.report
    # The queue commit is recorded in merge mode whatever tested-ref says.
    assert report["tested_ref"] == c.TESTED_REF_MERGE
    assert report["base_sha"] == queue.base
    assert report["head_sha"] == queue.commit
    assert report["tested_sha"] == queue.commit
    assert report["diff_base_sha"] == queue.base
    assert report["metadata_sha"] == queue.base
    assert report["changed_path_count"] == 1
    assert report["tasks"]["docs"]["reasons"] == [c.REASON_JEV_BELOW_THRESHOLD]
    assert report["job_metadata"]["unit"]["incomplete"] is False
    # One request: the state names the queue's commits, the diff is base -> queue commit.
    assert len(jev.requests) == 1
    body = jev.requests[0].json
    assert body["state"]["base_sha"] == queue.base
    assert body["state"]["head_sha"] == queue.commit
    assert body["state"]["tested_sha"] == queue.commit
    assert DIFF_SENTINEL in body["state"]["diff"]
    assert "diff --git a/src/parser/a.py b/src/parser/a.py" in body["state"]["diff"]
    assert list(body["questions"]) == ["docs", "lint", "unit"]
    assert body["questions"]["unit"]["instructions"]["task"]["jobs"][0]["id"] == "unit"
    summary = result.summary_text
    assert summary is not None
    assert summary.startswith("### jev-select: planned, enforce mode\n")
    block = read_plan_block(summary, expected_tested_sha=queue.commit)
    assert block is not None
    assert block.base_sha == queue.base
    assert block.head_sha == queue.commit
    assert block.selected == ("lint", "unit")
    assert_secrets_kept(result)


def test_stacked_entry_is_compared_with_the_entry_ahead(tmp_path: Path, jev: FakeJev) -> None:
    # Entry #8 queued behind #7: GitHub builds it on #7's queue commit, which is its base_sha.
    first = Queue(tmp_path, CODE_CHANGE)
    repo = first.repo
    second_head = repo.commit({"docs/guide.md": "# Guide\n"}, parents=[first.base], branch="pr-8")
    second = repo.merge(first.commit, second_head)
    repo.set_ref(f"refs/heads/gh-readonly-queue/main/pr-8-{second_head}", second)
    event = first.event(base=first.commit, head=second)
    env = queue_env(tmp_path, first, jev, event=event)
    env.sha = second
    result = run(env, first)
    assert result.code == 0, result.stdout
    report = result.report
    assert report["base_sha"] == first.commit
    assert report["tested_sha"] == second
    # Only the entry's own change: the docs guide, not #7's parser change.
    assert report["changed_path_count"] == 1
    assert report["tasks"]["docs"]["reasons"] == [c.REASON_PATH_MATCH]
    assert DIFF_SENTINEL not in jev.requests[0].json["state"]["diff"]


def test_rebased_queue_commit_far_above_its_base(tmp_path: Path, jev: FakeJev) -> None:
    # A rebase-merge queue lays the pull request's commits on top of the base one by one: the
    # queue commit is the last of them, 40 commits above the base, and has a single parent.
    queue = Queue(tmp_path, CODE_CHANGE)
    tip = queue.repo.linear_history(queue.base, 40, path="src/parser/history.txt", branch="rb")
    queue.commit = tip
    queue.repo.set_ref(queue.head_ref, tip)
    result = run(queue_env(tmp_path, queue, jev), queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_PLANNED
    report = result.report
    assert report["tested_sha"] == tip
    assert report["diff_base_sha"] == queue.base
    assert report["changed_path_count"] == 1
    assert len(jev.requests) == 1


# ---------------------------------------------------------------------------------------------
# select: the rules of a pull request apply to the queue diff
# ---------------------------------------------------------------------------------------------


def test_force_paths_match_the_queue_diff(tmp_path: Path, jev: FakeJev) -> None:
    jev.scores = 0.0
    queue = Queue(tmp_path, {"docs/guide.md": "# Guide\n"})
    result = run(queue_env(tmp_path, queue, jev), queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_PLANNED
    assert result.outputs["run"] == '{"docs":true,"lint":true,"unit":false}'
    report = result.report
    assert report["tasks"]["docs"]["reasons"] == [c.REASON_PATH_MATCH]
    assert report["tasks"]["unit"]["reasons"] == [c.REASON_JEV_BELOW_THRESHOLD]


def test_workflow_edit_in_the_queue_diff_is_protected(tmp_path: Path, jev: FakeJev) -> None:
    jev.scores = 0.0
    queue = Queue(tmp_path, {".github/workflows/ci.yml": UNIT_WORKFLOW + "# edited\n"})
    result = run(queue_env(tmp_path, queue, jev), queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.outputs["run"] == ALL_TRUE
    for decision in result.report["tasks"].values():
        assert decision["proposed_run"] is None
        assert c.REASON_PROTECTED_PATH in decision["reasons"]
        assert decision["reasons"][-1] == c.REASON_OBSERVATION_ONLY
    # Observed, never applied.
    assert len(jev.requests) == 1
    assert result.report["observation"] is not None


@pytest.mark.parametrize(
    ("inputs", "reason"),
    [
        ({"api-key": ""}, c.REASON_MISSING_API_KEY),
        ({"allow-external-context": "false"}, c.REASON_EXTERNAL_CONTEXT_DISABLED),
        ({"force-all": "true"}, c.REASON_FORCE_ALL),
    ],
)
def test_key_consent_and_force_all_bypasses_apply(
    tmp_path: Path, jev: FakeJev, inputs: dict[str, str], reason: str
) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    result = run(queue_env(tmp_path, queue, jev, inputs=inputs), queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.outputs["run"] == ALL_TRUE
    report = result.report
    assert report["tasks"]["unit"]["reasons"] == [reason]
    # The queue's commits are known even though nothing was collected.
    assert report["base_sha"] == queue.base
    assert report["tested_sha"] == queue.commit
    assert report["diff_base_sha"] == queue.base
    assert jev.requests == []


# ---------------------------------------------------------------------------------------------
# select: incoherent or unusable events
# ---------------------------------------------------------------------------------------------


def test_base_that_is_not_an_ancestor_keeps_every_task(tmp_path: Path, jev: FakeJev) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    # A commit beside the queue commit's history: present in the repository, never below it.
    elsewhere = queue.repo.commit({"docs/index.md": "# Other\n"}, parents=[queue.base], branch=None)
    queue.repo.set_ref("refs/heads/elsewhere", elsewhere)
    env = queue_env(tmp_path, queue, jev, event=queue.event(base=elsewhere))
    result = run(env, queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.outputs["run"] == ALL_TRUE
    report = result.report
    assert report["base_sha"] == elsewhere
    for decision in report["tasks"].values():
        assert c.REASON_SHA_INCOHERENT in decision["reasons"]
    assert report["diff_hash"] is None
    assert jev.requests == []


def test_base_on_an_unrelated_history_keeps_every_task(tmp_path: Path, jev: FakeJev) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    orphan = queue.repo.linear_history(None, 40, branch="orphan")
    result = run(queue_env(tmp_path, queue, jev, event=queue.event(base=orphan)), queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.report["tasks"]["unit"]["reasons"] == [c.REASON_SHA_INCOHERENT]
    assert jev.requests == []


def test_base_missing_from_the_remote_is_a_fetch_failure(tmp_path: Path, jev: FakeJev) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    result = run(queue_env(tmp_path, queue, jev, event=queue.event(base="f" * 40)), queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_FALLBACK
    assert result.report["tasks"]["unit"]["reasons"] == [c.REASON_GIT_FETCH_FAILED]
    assert jev.requests == []


def test_head_sha_other_than_github_sha_is_an_invalid_event(tmp_path: Path, jev: FakeJev) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    # The payload names the pull request head, the runner the queue commit.
    env = queue_env(tmp_path, queue, jev, event=queue.event(head=queue.pr_head))
    result = run(env, queue)
    assert result.code == 1
    assert result.stderr == ""
    assert result.stdout.endswith(f"::error::{failure_message(c.FAILURE_INVALID_EVENT)}\n")
    assert queue.pr_head not in result.stdout
    assert_published_nothing(result)
    assert jev.requests == []


MALFORMED_PAYLOADS: dict[str, Any] = {
    "missing": lambda q: None,
    "not an object": lambda q: "gh-readonly-queue",
    "empty": lambda q: {},
    "no base": lambda q: {"head_sha": q.commit},
    "null base": lambda q: {"head_sha": q.commit, "base_sha": None},
    "uppercase base": lambda q: {"head_sha": q.commit, "base_sha": q.base.upper()},
    "short base": lambda q: {"head_sha": q.commit, "base_sha": q.base[:39]},
    "uppercase head": lambda q: {"head_sha": q.commit.upper(), "base_sha": q.base},
    "numeric head": lambda q: {"head_sha": 7, "base_sha": q.base},
}


@pytest.mark.parametrize("case", list(MALFORMED_PAYLOADS))
def test_malformed_merge_group_payload_is_an_invalid_event(
    tmp_path: Path, jev: FakeJev, case: str
) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    event: dict[str, Any] = {"action": "checks_requested"}
    merge_group = MALFORMED_PAYLOADS[case](queue)
    if merge_group is not None:
        event["merge_group"] = merge_group
    result = run(queue_env(tmp_path, queue, jev, event=event), queue)
    assert result.code == 1
    assert result.stdout.endswith(f"::error::{failure_message(c.FAILURE_INVALID_EVENT)}\n")
    assert_published_nothing(result)


@pytest.mark.parametrize("value", ["Select", "selected", "true", "run_all", "all"])
def test_invalid_merge_group_value_is_an_input_error(
    tmp_path: Path, jev: FakeJev, value: str
) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    # Checked before the event is read: the unusable payload here never gets a say.
    env = queue_env(
        tmp_path, queue, jev, event={"merge_group": "broken"}, inputs={"merge-group": value}
    )
    result = run(env, queue)
    assert result.code == 1
    assert result.stderr == ""
    message = input_error_message(c.INPUT_MERGE_GROUP)
    assert message == (
        'jev-select: invalid input "merge-group"; expected "run-all" or "select"; '
        "no plan published."
    )
    assert result.stdout.endswith(f"::error::{message}\n")
    assert value not in result.stdout.replace(message, "")
    assert_published_nothing(result)
    assert jev.requests == []


def test_merge_group_is_validated_after_tested_ref(tmp_path: Path, jev: FakeJev) -> None:
    queue = Queue(tmp_path, CODE_CHANGE)
    env = queue_env(tmp_path, queue, jev, inputs={"merge-group": "bogus", "tested-ref": "HEAD"})
    result = run(env, queue)
    assert result.code == 1
    assert result.stdout.endswith(f"::error::{input_error_message(c.INPUT_TESTED_REF)}\n")
    env = queue_env(tmp_path, queue, jev, inputs={"merge-group": "bogus", "skip-below": ".5"})
    result = run(env, queue)
    assert result.stdout.endswith(f"::error::{input_error_message(c.INPUT_MERGE_GROUP)}\n")


# ---------------------------------------------------------------------------------------------
# select with tasks-file: the table comes from the queue's base
# ---------------------------------------------------------------------------------------------

TABLE_PATH = ".github/jev-tasks.yml"


def tasks_file_queue(root: Path, changes: Mapping[Any, Any]) -> Queue:
    queue = Queue(root, {})
    repo = queue.repo
    # The table lives in the repository at the base; the queued change is built on top of it.
    queue.base = repo.commit({TABLE_PATH: TASKS}, parents=[queue.base], branch="main")
    queue.pr_head = repo.commit(changes, parents=[queue.base], branch="pr-7")
    queue.commit = repo.merge(queue.base, queue.pr_head)
    repo.set_ref(queue.head_ref, queue.commit)
    return queue


def test_tasks_file_is_read_at_the_queue_base(tmp_path: Path, jev: FakeJev) -> None:
    queue = tasks_file_queue(tmp_path, CODE_CHANGE)
    env = queue_env(tmp_path, queue, jev, inputs={"tasks": "", "tasks-file": TABLE_PATH})
    result = run(env, queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_PLANNED
    assert result.outputs["run"] == '{"docs":false,"lint":true,"unit":true}'
    assert len(jev.requests) == 1


def test_tasks_file_edited_in_the_queue_is_protected(tmp_path: Path, jev: FakeJev) -> None:
    jev.scores = 0.0
    edited = TASKS.replace("Lints every source file.", "Lints nothing at all.")
    queue = tasks_file_queue(tmp_path, {TABLE_PATH: edited})
    env = queue_env(tmp_path, queue, jev, inputs={"tasks": "", "tasks-file": TABLE_PATH})
    result = run(env, queue)
    assert result.code == 0, result.stdout
    assert result.outputs["status"] == c.STATUS_BYPASSED
    assert result.outputs["run"] == ALL_TRUE
    for decision in result.report["tasks"].values():
        assert c.REASON_PROTECTED_PATH in decision["reasons"]
