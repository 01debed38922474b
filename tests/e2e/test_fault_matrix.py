"""Fault-injection matrix: every row is one real ``jev-select plan`` process in GitHub mode.

Each row breaks one thing (the provider, the git remote or history, or the runner environment)
and states the exact outcome: exit code, status, per-task reasons, ``observation_error`` and how
many requests the provider saw. Every row is also held to the invariants that make the product
safe to put in front of CI:

- a degraded run (``bypassed``/``fallback``) keeps every task; a planned run skips a task only
  with the single reason ``jev-below-threshold``;
- outputs are complete (every name exactly once) or absent (nothing in ``GITHUB_OUTPUT``);
- a hard failure leaves no report, no summary and no temporary repository behind, and prints
  exactly one fixed diagnostic;
- stderr is always empty and stdout carries only workflow commands and the log line.

All rows share one HTTPS fake Jev (each row gets its own API path prefix, so replies and request
counts never mix) and one set of origin repositories built once per module. The processes run a
few at a time; only the rows selected for the session are run.

``docs/reliability.md`` lists the same table;
``PYTHONPATH=tests python tests/e2e/test_fault_matrix.py`` prints it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from support.cliutil import (
    API_KEY_SENTINEL,
    THREE_TASKS_TEMPLATE,
    TOKEN_SENTINEL,
    UNIT_WORKFLOW,
    CliRun,
    GitHubEnv,
    parse_output_file,
    run_cli,
)
from support.deadlines import LOAD_SLACK_S
from support.fakejev import FakeJev, RecordedRequest, Reply
from support.gitrepo import Gitlink, GitRepo, git_env

from jev_select import contracts as c
from jev_select.errors import failure_message

# The environment faults rely on POSIX permission bits, and two rows on Linux's /dev/full.
# Under xdist one worker runs the whole matrix: the module fixture runs every selected row at
# once, so rows spread over two workers would run it twice.
pytestmark = [pytest.mark.faults, pytest.mark.posix, pytest.mark.xdist_group("fault-matrix")]
LINUX_ONLY_ROWS = frozenset({"output-disk-full", "summary-disk-full"})

TASKS = THREE_TASKS_TEMPLATE.format(unit="Runs the unit tests of the parser package.")
WORKFLOW = UNIT_WORKFLOW

TASK_IDS = ("docs", "lint", "unit")
SCORES = {"unit": 0.9, "docs": 0.01, "lint": 0.01}
SHORT_TIMEOUT_MS = 1500
# The rows with the short timeout face a provider that answers after 30 s or never, so their
# outcome (every task kept, the timeout reasons) proves the deadline held; the evaluation
# phase's duration only has to end before the provider would have, with slack for the several
# processes the matrix runs at once next to other test workers (support/deadlines.py).
DEADLINE_OVERSHOOT_MS = round(LOAD_SLACK_S * 1000)
UNKNOWN_SHA = "0123456789abcdef0123456789abcdef01234567"
WORKERS = 4

# ---------------------------------------------------------------------------------------------
# Expected reasons
# ---------------------------------------------------------------------------------------------

Reasons = Mapping[str, tuple[str, ...]]

PLANNED: Reasons = {
    "docs": (c.REASON_JEV_BELOW_THRESHOLD,),
    "lint": (c.REASON_ALWAYS,),
    "unit": (c.REASON_JEV_AT_OR_ABOVE_THRESHOLD,),
}


def unscored(code: str) -> Reasons:
    """A failed request: candidates carry its code, the mandatory task keeps ``always``."""
    return {"docs": (code,), "lint": (c.REASON_ALWAYS,), "unit": (code,)}


def forced(code: str) -> Reasons:
    """A collection error forces every task, after the deterministic reasons."""
    return {"docs": (code,), "lint": (c.REASON_ALWAYS, code), "unit": (code,)}


# ---------------------------------------------------------------------------------------------
# The origin repositories
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Commits:
    remote: str
    base: str
    head: str
    merge: str


@dataclass
class World:
    jev: FakeJev
    untrusted_ca: str
    scenarios: dict[str, Commits]
    root: Path


def _pull_request(repo: GitRepo, changes: Mapping[Any, Any], name: str) -> Commits:
    base = repo.tip("main")
    assert base is not None
    head = repo.commit(changes, parents=[base], branch=name)
    return Commits(repo.url, base, head, repo.merge(base, head))


def _build_scenarios(root: Path) -> dict[str, Commits]:
    repo = GitRepo.init(root / "origin")
    base = repo.commit(
        {
            "src/parser/a.py": "def parse():\n    return 1\n",
            "docs/index.md": "# Docs\n",
            "tests/conftest.py": "# fixtures\n",
            ".github/workflows/ci.yml": WORKFLOW,
        }
    )
    code_change = {"src/parser/a.py": "def parse():\n    return 2\n"}
    code = _pull_request(repo, code_change, "code")
    scenarios: dict[str, Commits] = {"code": code}

    scenarios["swapped"] = Commits(
        repo.url,
        base,
        code.head,
        repo.merge(base, code.head, parents=[code.head, base], branch="swapped"),
    )
    side = repo.commit({"side.txt": "side\n"}, parents=[base], branch="side")
    scenarios["octopus"] = Commits(
        repo.url,
        base,
        code.head,
        repo.merge(base, code.head, parents=[base, code.head, side], branch="octopus"),
    )
    submodule = GitRepo.init(root / "submodule")
    scenarios["submodule"] = _pull_request(
        repo, {"vendor/lib": Gitlink(repo.add_submodule_commit(submodule))}, "submodule"
    )
    scenarios["non-utf8-path"] = _pull_request(repo, {b"data/caf\xe9.txt": "x\n"}, "latin1")
    scenarios["binary"] = _pull_request(repo, {"assets/logo.png": b"\x89PNG\x00\x01"}, "binary")
    scenarios["workflow-and-binary"] = _pull_request(
        repo,
        {".github/workflows/ci.yml": WORKFLOW + "# edited\n", "assets/logo.png": b"\x00\x01"},
        "workflow-binary",
    )
    large = {"src/parser/a.py": "".join(f"line = {n}\n" for n in range(400))}
    scenarios["large"] = _pull_request(repo, large, "large")
    orphan = repo.commit({"src/parser/a.py": "print(0)\n"}, parents=[], branch="orphan")
    scenarios["unrelated"] = Commits(repo.url, base, orphan, orphan)
    scenarios["missing-base"] = Commits(repo.url, UNKNOWN_SHA, code.head, code.merge)
    scenarios["missing-merge"] = Commits(repo.url, base, code.head, UNKNOWN_SHA)
    scenarios["remote-missing"] = Commits(
        (root / "no-such-remote").as_uri(), base, code.head, code.merge
    )

    # A copy whose blob of the head change is damaged: the fetch cannot pack it.
    damaged = root / "damaged"
    shutil.copytree(repo.path, damaged)
    blob = repo.text("rev-parse", f"{code.head}:src/parser/a.py")
    loose = damaged / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    loose.write_bytes(b"\x78\x9c this is not a zlib stream")
    scenarios["corrupt-object"] = Commits(damaged.as_uri(), base, code.head, code.merge)

    # A remote that is itself shallow, cut above the merge base of the two tips: the head-mode
    # history can never be deepened far enough to prove the merge base unique.
    fork = repo.linear_history(base, 3, branch="deep")
    deep_base = repo.commit({"docs/deep.md": "deep\n"}, parents=[fork], branch="deep")
    deep_head = repo.commit({"src/parser/a.py": "deep\n"}, parents=[fork], branch="deep-head")
    repo.merge(deep_base, deep_head, branch="deep")
    shallow = root / "shallow.git"
    subprocess.run(
        [
            "git",
            "clone",
            "--quiet",
            "--bare",
            "--depth=2",
            "--branch=deep",
            repo.url,
            str(shallow),
        ],
        check=True,
        env=git_env(),
        capture_output=True,
    )
    scenarios["shallow-remote"] = Commits(shallow.as_uri(), deep_base, deep_head, deep_head)
    return scenarios


# ---------------------------------------------------------------------------------------------
# Rows
# ---------------------------------------------------------------------------------------------

EnvEdit = Callable[[Path, dict[str, str], World], None]


@dataclass(frozen=True)
class Row:
    id: str
    kind: str  # provider, git or environment
    fault: str  # what is broken, in words (for docs/reliability.md)
    exit_code: int = 0
    status: str | None = c.STATUS_PLANNED
    reasons: Reasons | None = None
    observation_error: str | None = None
    failure: str | None = None
    requests: int = 1
    reply: Reply | None = None
    scenario: str = "code"
    inputs: Mapping[str, str] = field(default_factory=dict)
    edit: EnvEdit | None = None
    warning: str | None = None
    needs_non_root: bool = False

    @property
    def outcome(self) -> str:
        if self.failure is not None:
            return f"exit 1, `{self.failure}`, nothing published"
        text = f"exit 0, `{self.status}`"
        if self.warning is not None:
            text += ", summary warning"
        return text

    @property
    def reason(self) -> str:
        """The reason a candidate task carries (``docs``: no deterministic rule applies)."""
        if self.failure is not None or self.reasons is None:
            return ""
        return ", ".join(f"`{code}`" for code in self.reasons["docs"])


def provider(
    row_id: str, fault: str, reply: Reply, code: str, **extra: Any
) -> Row:  # a failed request
    return Row(
        row_id,
        "provider",
        fault,
        status=c.STATUS_FALLBACK,
        reasons=unscored(code),
        observation_error=code,
        reply=reply,
        **extra,
    )


def git_fault(row_id: str, fault: str, scenario: str, code: str, **extra: Any) -> Row:
    settings: dict[str, Any] = {
        "status": c.STATUS_FALLBACK,
        "reasons": forced(code),
        "requests": 0,
        "scenario": scenario,
    }
    settings.update(extra)
    return Row(row_id, "git", fault, **settings)


def hard_failure(row_id: str, fault: str, code: str, edit: EnvEdit, **extra: Any) -> Row:
    return Row(
        row_id, "environment", fault, exit_code=1, status=None, failure=code, edit=edit, **extra
    )


def _short(**inputs: str) -> dict[str, str]:
    return {"timeout-ms": str(SHORT_TIMEOUT_MS), **inputs}


def _set(name: str, value: Callable[[Path, World], str]) -> EnvEdit:
    def edit(root: Path, env: dict[str, str], world: World) -> None:
        env[name] = value(root, world)

    return edit


def _directory(name: str) -> Callable[[Path, World], str]:
    def make(root: Path, _world: World) -> str:
        path = root / name
        path.mkdir()
        return str(path)

    return make


def _regular_file(name: str, mode: int | None = None) -> Callable[[Path, World], str]:
    def make(root: Path, _world: World) -> str:
        path = root / name
        path.write_text("", "utf-8")
        if mode is not None:
            path.chmod(mode)
        return str(path)

    return make


def _read_only_directory(root: Path, _world: World) -> str:
    path = root / "read-only-temp"
    path.mkdir()
    path.chmod(0o555)
    return str(path)


def _drop(name: str) -> EnvEdit:
    def edit(_root: Path, env: dict[str, str], _world: World) -> None:
        env.pop(name, None)

    return edit


def _no_runner_temp(root: Path, env: dict[str, str], _world: World) -> None:
    env.pop("RUNNER_TEMP")
    fallback = root / "system-tmp"
    fallback.mkdir()
    env["TMPDIR"] = str(fallback)


def _without_git(root: Path, env: dict[str, str], _world: World) -> None:
    empty = root / "empty-bin"
    empty.mkdir()
    env["PATH"] = str(empty)


def _untrusted_ca(_root: Path, env: dict[str, str], world: World) -> None:
    env["REQUESTS_CA_BUNDLE"] = world.untrusted_ca


def _answers(change: Callable[[dict[str, Any]], None]) -> Callable[[dict[str, Any]], None]:
    def mutate(document: dict[str, Any]) -> None:
        change(document["answers"])

    return mutate


def _replace_answers(document: dict[str, Any]) -> None:
    document["answers"] = [{"type": "noul", "noul": 0.0}]


VALID_HEAD = b'{"model":"jev-1.13.0","usage":{"input_tokens":1,"output_tokens":1},"answers":'
ONE_ANSWER = b'{"type":"noul","noul":0.0}'
ALL_ANSWERS = b"{" + b",".join(b'"%s":%s' % (t.encode(), ONE_ANSWER) for t in TASK_IDS) + b"}"

ROWS: tuple[Row, ...] = (
    # -- the healthy baseline ------------------------------------------------------------------
    Row("baseline", "baseline", "nothing broken", reasons=PLANNED),
    # -- provider faults -----------------------------------------------------------------------
    provider(
        "redirect-301", "301 to another URL", Reply.redirect("https://x.invalid/", 301), "jev-error"
    ),
    provider(
        "redirect-302", "302 to another URL", Reply.redirect("https://x.invalid/", 302), "jev-error"
    ),
    provider(
        "redirect-307", "307 to another URL", Reply.redirect("https://x.invalid/", 307), "jev-error"
    ),
    provider("status-400", "400 Bad Request", Reply.status(400), c.REASON_JEV_ERROR),
    provider("status-401", "401 Unauthorized", Reply.status(401), c.REASON_JEV_ERROR),
    provider("status-403", "403 Forbidden", Reply.status(403), c.REASON_JEV_ERROR),
    provider("status-404", "404 Not Found", Reply.status(404), c.REASON_JEV_ERROR),
    provider(
        "status-429",
        "429 with Retry-After: 1 (no retry: exactly one request)",
        Reply.status(429, {"Retry-After": "1"}),
        c.REASON_JEV_ERROR,
    ),
    provider("status-500", "500 Internal Server Error", Reply.status(500), c.REASON_JEV_ERROR),
    provider("status-502", "502 Bad Gateway", Reply.status(502), c.REASON_JEV_ERROR),
    provider(
        "status-503",
        "503 with Retry-After",
        Reply.status(503, {"Retry-After": "0"}),
        c.REASON_JEV_ERROR,
    ),
    provider(
        "reset-before-headers",
        "TCP reset before the status line",
        Reply.reset_before_headers(),
        c.REASON_JEV_ERROR,
    ),
    provider(
        "reset-after-headers",
        "TCP reset in the middle of the body",
        Reply.reset_after_headers(),
        c.REASON_JEV_ERROR,
    ),
    provider(
        "tls-untrusted",
        "server certificate from a CA the bundle does not trust",
        Reply.ok(),
        c.REASON_JEV_ERROR,
        edit=_untrusted_ca,
        requests=0,  # the handshake fails before any request reaches the handler
    ),
    provider(
        "slow-answer",
        "no byte until after the deadline",
        Reply.slow(30),
        c.REASON_JEV_TIMEOUT,
        inputs=_short(),
    ),
    provider(
        "slow-header-drip",
        "status line and headers one byte at a time, never finished",
        Reply.header_drip(0.05),
        c.REASON_JEV_TIMEOUT,
        inputs=_short(),
    ),
    provider(
        "endless-body",
        "headers, then a body dripping forever",
        Reply.drip(0.05),
        c.REASON_JEV_TIMEOUT,
        inputs=_short(),
    ),
    provider(
        "oversized-declared",
        "body over 1 MiB with Content-Length",
        Reply.oversized(),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "oversized-chunked",
        "body over 1 MiB, chunked without a length",
        Reply.oversized(declare_length=False),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "invalid-utf8",
        "body that is not UTF-8",
        Reply.raw(VALID_HEAD + ALL_ANSWERS[:-1] + b',"x\xff":1}}'),
        c.REASON_JEV_ERROR,
    ),
    provider(
        "nan",
        "NaN as a score",
        Reply.raw(VALID_HEAD + ALL_ANSWERS.replace(b"0.0", b"NaN") + b"}"),
        c.REASON_JEV_ERROR,
    ),
    provider(
        "duplicate-keys",
        "the same answer key twice",
        Reply.raw(VALID_HEAD + b'{"docs":' + ONE_ANSWER + b"," + ALL_ANSWERS[1:] + b"}"),
        c.REASON_JEV_ERROR,
    ),
    provider("empty-body", "200 with an empty body", Reply.raw(b""), c.REASON_JEV_ERROR),
    provider(
        "score-string",
        "score as a string",
        Reply.ok({"docs": "0.01", "lint": 0.01, "unit": 0.9}),  # type: ignore[dict-item]
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "score-boolean",
        "score as a boolean",
        Reply.ok({"docs": False, "lint": 0.01, "unit": 0.9}),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "score-out-of-range",
        "score above 1",
        Reply.ok({"docs": 1.5, "lint": 0.01, "unit": 0.9}),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "extra-answer",
        "an answer for a task that was not asked",
        Reply.mutated(_answers(lambda a: a.update(extra={"type": "noul", "noul": 0.0}))),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "missing-answer",
        "no answer for one asked task",
        Reply.mutated(_answers(lambda a: a.pop("docs"))),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "wrong-model",
        "a different (pattern-valid) model",
        Reply.ok(model="jev-1.13.1"),
        c.REASON_INVALID_RESPONSE,
    ),
    provider("missing-usage", "no usage object", Reply.ok(usage=None), c.REASON_INVALID_RESPONSE),
    provider(
        "negative-usage",
        "negative token count",
        Reply.ok(usage={"input_tokens": -1, "output_tokens": 7}),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "answers-not-object",
        "answers is an array",
        Reply.mutated(_replace_answers),
        c.REASON_INVALID_RESPONSE,
    ),
    provider(
        "body-not-object", "the body is a JSON array", Reply.raw(b"[]"), c.REASON_INVALID_RESPONSE
    ),
    # -- git faults ----------------------------------------------------------------------------
    git_fault(
        "fetch-refused",
        "remote directory missing",
        "remote-missing",
        c.REASON_GIT_FETCH_FAILED,
    ),
    git_fault(
        "base-missing",
        "base SHA absent from the remote",
        "missing-base",
        c.REASON_GIT_FETCH_FAILED,
    ),
    git_fault(
        "merge-missing",
        "merge commit (GITHUB_SHA) absent from the remote",
        "missing-merge",
        c.REASON_GIT_FETCH_FAILED,
    ),
    git_fault(
        "corrupt-object",
        "damaged loose object in the remote",
        "corrupt-object",
        c.REASON_GIT_FETCH_FAILED,
    ),
    git_fault(
        "shallow-remote",
        "head mode against a shallow remote: history cannot deepen",
        "shallow-remote",
        c.REASON_GIT_FETCH_FAILED,
        inputs={"tested-ref": "head"},
    ),
    git_fault(
        "unrelated-histories",
        "head mode, head shares no history with the base (no merge base)",
        "unrelated",
        c.REASON_SHA_INCOHERENT,
        inputs={"tested-ref": "head"},
    ),
    git_fault(
        "temp-not-a-directory",
        "RUNNER_TEMP is a file (no room for the temporary repository or the report)",
        "code",
        c.REASON_GIT_FETCH_FAILED,
        exit_code=1,
        status=None,
        failure=c.FAILURE_REPORT_UNWRITABLE,
        edit=_set("RUNNER_TEMP", _regular_file("runner-temp-file")),
    ),
    git_fault(
        "temp-read-only",
        "RUNNER_TEMP is a read-only directory",
        "code",
        c.REASON_GIT_FETCH_FAILED,
        exit_code=1,
        status=None,
        failure=c.FAILURE_REPORT_UNWRITABLE,
        edit=_set("RUNNER_TEMP", _read_only_directory),
        needs_non_root=True,
    ),
    git_fault(
        "git-missing",
        "no git executable on PATH",
        "code",
        c.REASON_GIT_FETCH_FAILED,
        edit=_without_git,
    ),
    git_fault("swapped-parents", "merge parents [head, base]", "swapped", c.REASON_SHA_INCOHERENT),
    git_fault("octopus", "merge commit with three parents", "octopus", c.REASON_SHA_INCOHERENT),
    git_fault("submodule", "a gitlink (submodule) changed", "submodule", c.REASON_SUBMODULE_CHANGE),
    git_fault(
        "non-utf8-path",
        "a path that is not UTF-8",
        "non-utf8-path",
        c.REASON_UNREPRESENTABLE_CHANGE,
    ),
    git_fault("binary", "a binary blob changed", "binary", c.REASON_BINARY_CHANGE),
    git_fault(
        "diff-too-large",
        "patch larger than max-diff-bytes",
        "large",
        c.REASON_DIFF_TOO_LARGE,
        inputs={"max-diff-bytes": "512"},
    ),
    Row(
        "workflow-edit-with-binary",
        "git",
        "a workflow edit next to a binary blob (collection error carrying paths)",
        status=c.STATUS_BYPASSED,
        reasons={
            "docs": (c.REASON_PROTECTED_PATH,),
            "lint": (c.REASON_ALWAYS, c.REASON_PROTECTED_PATH),
            "unit": (c.REASON_PROTECTED_PATH,),
        },
        requests=0,
        scenario="workflow-and-binary",
    ),
    # -- environment faults --------------------------------------------------------------------
    hard_failure(
        "output-is-directory",
        "GITHUB_OUTPUT names a directory",
        c.FAILURE_OUTPUT_UNWRITABLE,
        _set("GITHUB_OUTPUT", _directory("output-dir")),
    ),
    hard_failure(
        "output-disk-full",
        "GITHUB_OUTPUT is /dev/full (every write fails)",
        c.FAILURE_OUTPUT_UNWRITABLE,
        _set("GITHUB_OUTPUT", lambda _root, _world: "/dev/full"),
    ),
    hard_failure(
        "output-read-only",
        "GITHUB_OUTPUT is a read-only file",
        c.FAILURE_OUTPUT_UNWRITABLE,
        _set("GITHUB_OUTPUT", _regular_file("read-only-output", 0o444)),
        needs_non_root=True,
    ),
    hard_failure(
        "output-unset",
        "GITHUB_OUTPUT unset",
        c.FAILURE_INVALID_ENVIRONMENT,
        _drop("GITHUB_OUTPUT"),
        requests=0,
    ),
    hard_failure(
        "event-missing",
        "GITHUB_EVENT_PATH names no file",
        c.FAILURE_INVALID_EVENT,
        _set("GITHUB_EVENT_PATH", lambda root, _world: str(root / "absent.json")),
        requests=0,
    ),
    hard_failure(
        "temp-missing-directory",
        "RUNNER_TEMP names a directory that does not exist",
        c.FAILURE_REPORT_UNWRITABLE,
        _set("RUNNER_TEMP", lambda root, _world: str(root / "gone")),
        requests=0,
    ),
    Row(
        "summary-is-directory",
        "environment",
        "GITHUB_STEP_SUMMARY names a directory",
        reasons=PLANNED,
        edit=_set("GITHUB_STEP_SUMMARY", _directory("summary-dir")),
        warning=c.SUMMARY_UNAVAILABLE_WARNING,
    ),
    Row(
        "summary-disk-full",
        "environment",
        "GITHUB_STEP_SUMMARY is /dev/full",
        reasons=PLANNED,
        edit=_set("GITHUB_STEP_SUMMARY", lambda _root, _world: "/dev/full"),
        warning=c.SUMMARY_UNAVAILABLE_WARNING,
    ),
    Row(
        "runner-temp-unset",
        "environment",
        "RUNNER_TEMP unset (the report goes to TMPDIR)",
        reasons=PLANNED,
        edit=_no_runner_temp,
    ),
)

ROWS_BY_ID = {row.id: row for row in ROWS}
assert len(ROWS_BY_ID) == len(ROWS), "row ids are unique"

# ---------------------------------------------------------------------------------------------
# Running the rows
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    run: CliRun
    requests: list[RecordedRequest]
    env: dict[str, str]
    temp_root: Path


def _is_root() -> bool:
    return hasattr(os, "geteuid") and os.geteuid() == 0


def _read_regular(path: str | None) -> str | None:
    if path is None or not os.path.isfile(path):
        return None
    return Path(path).read_text("utf-8")


def _run_row(row: Row, world: World) -> Outcome:
    root = world.root / "runs" / row.id
    commits = world.scenarios[row.scenario]
    inputs = {
        "tasks": TASKS,
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
        "api-base-url": f"{world.jev.base_url}/{row.id}",
        "timeout-ms": "20000",
        **row.inputs,
    }
    github = GitHubEnv(root=root, inputs=inputs, sha=commits.merge)
    github.event = github.pull_request_event(base=commits.base, head=commits.head)
    env = github.environ()
    assert world.jev.ca_bundle is not None
    env["REQUESTS_CA_BUNDLE"] = world.jev.ca_bundle
    if row.edit is not None:
        row.edit(root, env, world)
    completed = run_cli(["plan", "--remote", commits.remote], env, cwd=root, timeout=120)
    temp_root = Path(env.get("RUNNER_TEMP") or env["TMPDIR"])
    result = CliRun(
        code=completed.returncode,
        stdout=completed.stdout,
        stderr=completed.stderr,
        outputs_text=_read_regular(env.get("GITHUB_OUTPUT")) or "",
        summary_text=_read_regular(env.get("GITHUB_STEP_SUMMARY")),
        temp_root=temp_root,
    )
    prefix = f"/{row.id}/"
    requests = [request for request in world.jev.requests if request.path.startswith(prefix)]
    return Outcome(result, requests, env, temp_root)


def _selected_rows(request: pytest.FixtureRequest) -> list[Row]:
    wanted: list[Row] = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or getattr(item, "module", None) is not request.module:
            continue
        row = callspec.params.get("row")
        if isinstance(row, Row) and row not in wanted:
            wanted.append(row)
    return [row for row in wanted if not (row.needs_non_root and _is_root())]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    import trustme

    root = tmp_path_factory.mktemp("faults")
    untrusted = root / "untrusted-ca.pem"
    trustme.CA().cert_pem.write_to_path(str(untrusted))

    def respond(request: RecordedRequest) -> Reply:
        row = ROWS_BY_ID.get(request.path.split("/")[1])
        return row.reply if row is not None and row.reply is not None else Reply.ok()

    with FakeJev(tls=True, scores=SCORES, responder=respond) as jev:
        yield World(jev, str(untrusted), _build_scenarios(root), root)


@pytest.fixture(scope="module")
def outcomes(world: World, request: pytest.FixtureRequest) -> dict[str, Outcome]:
    rows = _selected_rows(request)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {row.id: pool.submit(_run_row, row, world) for row in rows}
        return {row_id: future.result() for row_id, future in futures.items()}


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


def _leftovers(temp_root: Path) -> list[str]:
    if not temp_root.is_dir():
        return []
    return sorted(path.name for path in temp_root.iterdir() if path.name.startswith("jev-select-"))


def _check_stdout(row: Row, result: CliRun, message: str | None) -> None:
    lines = result.stdout.splitlines()
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert lines[: len(masks)] == masks, "masks come before anything else"
    rest = lines[len(masks) :]
    if message is not None:
        assert rest == ["::error::" + message]
        return
    expected_warnings = ["::warning::" + row.warning] if row.warning is not None else []
    assert rest[:-1] == expected_warnings
    assert rest[-1].startswith("jev-select: ")


def _check_hard_failure(row: Row, outcome: Outcome) -> None:
    result = outcome.run
    assert row.failure is not None
    _check_stdout(row, result, failure_message(row.failure))
    assert result.outputs_text == "", "nothing published"
    output = outcome.env.get("GITHUB_OUTPUT")
    if output is not None and os.path.isdir(output):
        assert list(Path(output).iterdir()) == []
    assert result.summary_text is None, "no summary on a hard failure"
    assert _leftovers(outcome.temp_root) == [], "no report or repository left behind"


def _check_published(row: Row, outcome: Outcome) -> None:
    result = outcome.run
    _check_stdout(row, result, None)
    outputs = parse_output_file(result.outputs_text)  # each name exactly once
    assert list(outputs) == [*c.OUTPUTS, *TASK_IDS], "complete, in the documented order"
    assert outputs[c.OUTPUT_STATUS] == row.status
    report = result.report
    assert outputs[c.OUTPUT_REPORT_PATH] == str(result.report_paths()[0])
    assert Path(outputs[c.OUTPUT_REPORT_PATH]).is_relative_to(outcome.temp_root)
    assert _leftovers(outcome.temp_root) == [Path(outputs[c.OUTPUT_REPORT_PATH]).parent.name]
    assert report["status"] == row.status
    assert report["observation_error"] == row.observation_error
    reasons = {task_id: tuple(report["tasks"][task_id]["reasons"]) for task_id in TASK_IDS}
    assert reasons == row.reasons
    run_map = {task_id: report["tasks"][task_id]["run"] for task_id in TASK_IDS}
    assert outputs[c.OUTPUT_RUN] == (
        "{" + ",".join(f'"{t}":{str(run_map[t]).lower()}' for t in TASK_IDS) + "}"
    )
    for task_id in TASK_IDS:
        assert outputs[task_id] == str(run_map[task_id]).lower()
    selected = [task_id for task_id in TASK_IDS if run_map[task_id]]
    assert outputs[c.OUTPUT_SELECTED] == "[" + ",".join(f'"{t}"' for t in selected) + "]"
    assert outputs[c.OUTPUT_HAS_TASKS] == str(bool(selected)).lower()
    assert outputs[c.OUTPUT_TESTED_SHA] == report["tested_sha"]
    # Safety: only a complete, strictly-below-threshold verdict may skip a task.
    if row.status != c.STATUS_PLANNED:
        assert all(run_map.values()), "a degraded run keeps every task"
    for task_id, runs in run_map.items():
        if not runs:
            assert reasons[task_id] == (c.REASON_JEV_BELOW_THRESHOLD,)
    if row.warning is None:
        assert result.summary_text is not None
        assert f"jev-select: {row.status}" in result.summary_text


@pytest.mark.parametrize(
    "row",
    [
        pytest.param(row, marks=[pytest.mark.linux] if row.id in LINUX_ONLY_ROWS else [])
        for row in ROWS
    ],
    ids=[row.id for row in ROWS],
)
def test_fault(row: Row, outcomes: dict[str, Outcome]) -> None:
    if row.needs_non_root and _is_root():
        pytest.skip("permission bits do not stop root; the /dev/full rows cover failing writes")
    outcome = outcomes[row.id]
    result = outcome.run
    assert result.code == row.exit_code, result.stdout
    assert result.stderr == ""
    assert len(outcome.requests) == row.requests, "one attempt per request, never a retry"
    if row.exit_code == 0:
        _check_published(row, outcome)
    else:
        _check_hard_failure(row, outcome)
    if row.inputs.get("timeout-ms") == str(SHORT_TIMEOUT_MS) and row.exit_code == 0:
        jev_ms = result.report["durations_ms"]["jev"]
        assert SHORT_TIMEOUT_MS - 50 <= jev_ms <= SHORT_TIMEOUT_MS + DEADLINE_OVERSHOOT_MS
    for text in (result.without_masks(), *(r.body.decode("utf-8") for r in outcome.requests)):
        assert TOKEN_SENTINEL not in text
    assert API_KEY_SENTINEL not in result.without_masks()


def test_matrix_covers_the_brief() -> None:
    kinds = [row.kind for row in ROWS]
    assert kinds.count("provider") >= 20
    assert kinds.count("git") >= 10
    assert kinds.count("environment") >= 5


def test_reliability_doc_lists_this_matrix() -> None:
    document = Path(__file__).resolve().parents[2] / "docs" / "reliability.md"
    assert matrix_markdown() in document.read_text("utf-8"), (
        "regenerate the table: PYTHONPATH=tests python tests/e2e/test_fault_matrix.py"
    )


def matrix_markdown() -> str:
    """The table of docs/reliability.md."""
    lines = [
        "| Kind | Row | Fault | Outcome | Candidate reason | `observation_error` | Requests |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in ROWS:
        error = f"`{row.observation_error}`" if row.observation_error else ""
        lines.append(
            f"| {row.kind} | `{row.id}` | {row.fault} | {row.outcome} | {row.reason} | {error} "
            f"| {row.requests} |"
        )
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(matrix_markdown())
