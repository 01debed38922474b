"""Input ``tasks-file``: the task table read from the repository at the base commit."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest
from support.cliutil import API_KEY_SENTINEL, TOKEN_SENTINEL, CliRun, GitHubEnv
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.core.inputs import normalise_tasks_file, parse_inputs
from jev_select.errors import InputError, input_error_message

BASE_TABLE = """unit:
  description: Runs the unit tests.
docs:
  description: Builds the documentation.
  force_paths: [docs/**]
"""
# What a pull request would like the table to say: it must never be read.
HEAD_TABLE = """unit:
  description: Runs the unit tests.
  force_paths: ["**"]
sneaky:
  description: Added by the pull request.
"""


@pytest.fixture(scope="module")
def jev() -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores={"unit": 0.01, "docs": 0.01, "sneaky": 0.9}) as server:
        yield server


class PullRequest:
    def __init__(self, root: Path, changes: Mapping[str | bytes, str | None]) -> None:
        self.repo = GitRepo.init(root / "origin")
        self.base = self.repo.commit(
            {"src/a.py": "print(1)\n", "ci/tasks.yml": BASE_TABLE, "docs/index.md": "# D\n"}
        )
        self.head = self.repo.commit(changes, parents=[self.base], branch="feature")
        self.merge = self.repo.merge(self.base, self.head)


def _run(root: Path, pr: PullRequest, jev: FakeJev, **inputs: str) -> CliRun:
    settings = {
        "tasks-file": "ci/tasks.yml",
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
        "api-base-url": jev.base_url,
        "timeout-ms": "20000",
    }
    settings.update(inputs)
    env = GitHubEnv(root=root / "runner", inputs=settings, sha=pr.merge)
    env.event = env.pull_request_event(base=pr.base, head=pr.head)
    assert jev.ca_bundle is not None
    env.extra["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
    return env.run("--remote", str(pr.repo.path))


def test_the_table_comes_from_the_base_commit(tmp_path: Path, jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, {"src/a.py": "print(2)\n", "ci/other.yml": HEAD_TABLE})
    result = _run(tmp_path, pr, jev)
    assert result.code == 0, result.stdout
    assert set(result.report["tasks"]) == {"docs", "unit"}
    assert result.outputs[c.OUTPUT_STATUS] == c.STATUS_PLANNED


def test_a_pull_request_that_edits_the_table_is_bypassed(tmp_path: Path, jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, {"src/a.py": "print(2)\n", "ci/tasks.yml": HEAD_TABLE})
    result = _run(tmp_path, pr, jev)
    assert result.code == 0, result.stdout
    # The base table decides the task IDs; the edit only makes every task run.
    assert set(result.report["tasks"]) == {"docs", "unit"}
    assert result.outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED
    for decision in result.report["tasks"].values():
        assert c.REASON_PROTECTED_PATH in decision["reasons"]
        assert decision["run"] is True


def test_a_missing_file_is_the_input_error_of_tasks_file(tmp_path: Path, jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, {"src/a.py": "print(2)\n"})
    result = _run(tmp_path, pr, jev, **{"tasks-file": "ci/absent.yml"})
    assert result.code == 1
    assert result.stdout.splitlines()[-2:] == [
        "::error::" + input_error_message(c.INPUT_TASKS_FILE),
        "::notice::" + c.TASKS_CHECK_HINT,
    ]
    assert result.outputs_text == ""
    assert result.report_paths() == []


def test_bad_content_is_the_input_error_of_tasks(tmp_path: Path, jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, {"src/a.py": "print(2)\n"})
    pr.base = pr.repo.commit({"ci/tasks.yml": "unit:\n  descripton: x\n"}, parents=[pr.base])
    pr.head = pr.repo.commit({"src/a.py": "print(3)\n"}, parents=[pr.base], branch="feature2")
    pr.merge = pr.repo.merge(pr.base, pr.head)
    result = _run(tmp_path, pr, jev)
    assert result.code == 1
    assert "::error::" + input_error_message(c.INPUT_TASKS) in result.stdout.splitlines()


def test_non_pull_request_events_read_at_github_sha(tmp_path: Path, jev: FakeJev) -> None:
    pr = PullRequest(tmp_path, {"src/a.py": "print(2)\n"})
    settings = {"tasks-file": "./ci/tasks.yml", "api-key": API_KEY_SENTINEL}
    env = GitHubEnv(root=tmp_path / "runner", inputs=settings, sha=pr.base, event_name="push")
    env.event = {}
    result = env.run("--remote", str(pr.repo.path))
    assert result.code == 0, result.stdout
    assert set(result.report["tasks"]) == {"docs", "unit"}
    assert result.outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED


# ---------------------------------------------------------------------------------------------
# Validation, before any git command
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path"),
    [
        ("ci/tasks.yml", "ci/tasks.yml"),
        ("./ci/tasks.yml", "ci/tasks.yml"),
        ("tasks.yml", "tasks.yml"),
        ("/etc/passwd", None),
        ("../tasks.yml", None),
        ("ci/../tasks.yml", None),
        ("ci//tasks.yml", None),
        ("ci\\tasks.yml", None),
        ("./", None),
        ("ci/", None),
    ],
)
def test_tasks_file_paths(text: str, path: str | None) -> None:
    assert normalise_tasks_file(text) == path


def test_tasks_and_tasks_file_exclude_each_other() -> None:
    with pytest.raises(InputError) as caught:
        parse_inputs({c.INPUT_TASKS: "{}", c.INPUT_TASKS_FILE: "ci/tasks.yml"})
    assert caught.value.field == c.INPUT_TASKS_FILE


def test_a_bad_path_is_the_input_error_of_tasks_file() -> None:
    with pytest.raises(InputError) as caught:
        parse_inputs({c.INPUT_TASKS_FILE: "../tasks.yml"})
    assert caught.value.field == c.INPUT_TASKS_FILE


def test_neither_is_the_input_error_of_tasks() -> None:
    with pytest.raises(InputError) as caught:
        parse_inputs({c.INPUT_TASKS: "  ", c.INPUT_TASKS_FILE: ""})
    assert caught.value.field == c.INPUT_TASKS


def test_an_earlier_field_still_wins() -> None:
    with pytest.raises(InputError) as caught:
        parse_inputs({c.INPUT_MODE: "x", c.INPUT_TASKS_FILE: "../x"})
    assert caught.value.field == c.INPUT_MODE


def test_the_path_is_kept_and_the_table_waits_for_the_read() -> None:
    inputs = parse_inputs({c.INPUT_TASKS_FILE: "./ci/tasks.yml"})
    assert inputs.tasks_file == "ci/tasks.yml"
    assert len(inputs.tasks) == 0
    assert parse_inputs({c.INPUT_TASKS: "{}"}).tasks_file is None


def test_decide_treats_the_table_file_as_a_protected_path() -> None:
    from jev_select.core.models import ChangeFacts, Evaluation
    from jev_select.core.policy import decide
    from jev_select.core.tasks import parse_tasks

    table = parse_tasks("unit: {description: d}")
    change = ChangeFacts(changed_paths=("ci/tasks.yml",))
    evaluation = Evaluation(decisions={"unit": False})
    edited = decide(
        table,
        mode=c.MODE_ENFORCE,
        bypass=None,
        change=change,
        evaluation=evaluation,
        protected_paths=("ci/tasks.yml",),
    )
    assert edited.status == c.STATUS_BYPASSED
    assert c.REASON_PROTECTED_PATH in edited.decisions["unit"].reasons
    other = decide(table, mode=c.MODE_ENFORCE, bypass=None, change=change, evaluation=evaluation)
    assert other.status == c.STATUS_PLANNED
