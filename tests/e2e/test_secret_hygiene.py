"""Secret and source-text hygiene across every kind of run, as real processes.

Sentinel strings are planted in the API key, the GitHub token, a task description, a context file,
the diff, the pull-request title, provider error bodies and invalid input values. For every
scenario (planned, shadow, each bypass, fallbacks, each hard-failure class we can provoke, local
mode) the test reads everything the run left behind: stdout, stderr, ``GITHUB_OUTPUT``, the step
summary, the report and every other file under the runner directory, and asserts that:

- no secret appears anywhere except on the ``::add-mask::`` lines, which come first;
- no source text (description, context file, diff, PR title) and no provider or input text
  appears anywhere at all;
- at the fake Jev, source text travels only in request bodies, the key only in its
  ``Authorization`` header, and the token never.

The scenarios run a few at a time in a module fixture; each gets its own API path prefix at the
shared fake Jev so its requests can be told apart.
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Callable, Iterator
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
    GitHubEnv,
    parse_output_file,
    run_cli,
)
from support.fakegithub import FakeGitHub, FakeResponse
from support.fakejev import FakeJev, RecordedRequest, Reply
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.errors import failure_message, input_error_message

# Under xdist one worker runs the module: its module fixture runs every scenario at once.
pytestmark = pytest.mark.xdist_group("secret-hygiene")

DESCRIPTION_SENTINEL = "DESCRIPTIONSENTINEL_a41f"
CONTEXT_SENTINEL = "CONTEXTSENTINEL_77be"
DIFF_SENTINEL = "DIFFSENTINEL_0c93"
TITLE_SENTINEL = "TITLESENTINEL_5d20"
PROVIDER_SENTINEL = "PROVIDERSENTINEL_e6c1"
INPUT_SENTINEL = "INPUTSENTINEL_2b7d"
TOKEN_BASE64 = base64.b64encode(f"x-access-token:{TOKEN_SENTINEL}".encode()).decode()

SECRETS = (API_KEY_SENTINEL, TOKEN_SENTINEL, TOKEN_BASE64)
SOURCE_TEXT = (DESCRIPTION_SENTINEL, CONTEXT_SENTINEL, DIFF_SENTINEL)
NEVER_ANYWHERE = (TITLE_SENTINEL, PROVIDER_SENTINEL, INPUT_SENTINEL)

TASKS = THREE_TASKS_TEMPLATE.format(unit=f"Runs the unit tests. {DESCRIPTION_SENTINEL}")
WORKFLOW = UNIT_WORKFLOW

REPOSITORY = "octo-org/octo-repo"
WORKERS = 4


@dataclass(frozen=True)
class PullRequest:
    remote: str
    base: str
    head: str
    merge: str


@dataclass
class World:
    jev: FakeJev
    github: FakeGitHub
    ca_bundle: str
    prs: dict[str, PullRequest]
    root: Path


def _build_prs(root: Path) -> dict[str, PullRequest]:
    repo = GitRepo.init(root / "origin")
    base = repo.commit(
        {
            "src/a.py": "value = 1\n",
            "docs/index.md": "# Docs\n",
            "tests/conftest.py": f"# fixtures {CONTEXT_SENTINEL}\n",
            ".github/workflows/ci.yml": WORKFLOW,
        }
    )
    prs: dict[str, PullRequest] = {}
    changes: dict[str, dict[str | bytes, Any]] = {
        "code": {"src/a.py": f"value = 2  # {DIFF_SENTINEL}\n"},
        "workflow": {".github/workflows/ci.yml": WORKFLOW + f"# {DIFF_SENTINEL}\n"},
        "binary": {"src/a.py": f"# {DIFF_SENTINEL}\n", "logo.png": b"\x89PNG\x00"},
    }
    for name, change in changes.items():
        head = repo.commit(change, parents=[base], branch=name)
        prs[name] = PullRequest(repo.url, base, head, repo.merge(base, head))
    # A clean checkout of HEAD: a local plan warns about uncommitted work otherwise.
    repo.check_out()
    return prs


# ---------------------------------------------------------------------------------------------
# Scenarios
# ---------------------------------------------------------------------------------------------


@dataclass
class Setup:
    """What a scenario changes in the runner environment before the process starts."""

    root: Path
    env: dict[str, str]
    args: list[str]
    world: World
    github: GitHubEnv


Edit = Callable[[Setup], None]


@dataclass(frozen=True)
class Scenario:
    id: str
    exit_code: int = 0
    status: str | None = c.STATUS_PLANNED
    message: str | None = None  # the diagnostic of a failed run
    sends: bool = True  # whether the fake Jev must receive the source text
    pr: str = "code"
    inputs: dict[str, str] = field(default_factory=dict)
    edit: Edit | None = None
    reply: Reply | None = None
    local: bool = False
    hint: bool = False  # an error of the task table adds the fixed pointer to `jev-select check`


def _set_env(**values: str) -> Edit:
    def edit(setup: Setup) -> None:
        setup.env.update(values)

    return edit


def _fork_event(setup: Setup) -> None:
    pr = setup.world.prs["code"]
    event = setup.github.pull_request_event(base=pr.base, head=pr.head, fork=True)
    event["pull_request"]["title"] = TITLE_SENTINEL
    Path(setup.env["GITHUB_EVENT_PATH"]).write_text(json.dumps(event), "utf-8")


def _push_event(setup: Setup) -> None:
    setup.env["GITHUB_EVENT_NAME"] = "push"


def _garbage_event(setup: Setup) -> None:
    Path(setup.env["GITHUB_EVENT_PATH"]).write_text(f"{{{TITLE_SENTINEL}", "utf-8")


def _output_directory(setup: Setup) -> None:
    directory = setup.root / "output-dir"
    directory.mkdir()
    setup.env["GITHUB_OUTPUT"] = str(directory)


def _runner_temp_file(setup: Setup) -> None:
    blocker = setup.root / "not-a-directory"
    blocker.write_text("", "utf-8")
    setup.env["RUNNER_TEMP"] = str(blocker)


def _local_flag(setup: Setup) -> None:
    setup.args += ["--base", INPUT_SENTINEL]


def _manual(number: str) -> Edit:
    def edit(setup: Setup) -> None:
        setup.env["GITHUB_EVENT_NAME"] = "workflow_dispatch"
        setup.env["INPUT_PULL_REQUEST"] = number
        setup.env["GITHUB_API_URL"] = setup.world.github.url
        setup.env["GITHUB_SHA"] = setup.world.prs["code"].base  # the trusted workflow revision
        Path(setup.env["GITHUB_EVENT_PATH"]).write_text("{}", "utf-8")

    return edit


def _bad_remote(setup: Setup) -> None:
    remote = f"ftp://{TOKEN_SENTINEL}@example.invalid/{INPUT_SENTINEL}"
    setup.args[setup.args.index("--remote") + 1] = remote


def _missing_remote(setup: Setup) -> None:
    setup.args[setup.args.index("--remote") + 1] = (setup.root / "gone").as_uri()


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("planned"),
    Scenario("shadow", inputs={"mode": "shadow"}),
    Scenario("manual-planned", edit=_manual("7")),
    Scenario(
        "bypassed-no-consent",
        status=c.STATUS_BYPASSED,
        sends=False,
        inputs={"allow-external-context": "false"},
    ),
    Scenario(
        "bypassed-force-all", status=c.STATUS_BYPASSED, sends=False, inputs={"force-all": "true"}
    ),
    Scenario("bypassed-fork", status=c.STATUS_BYPASSED, sends=False, edit=_fork_event),
    Scenario("bypassed-push", status=c.STATUS_BYPASSED, sends=False, edit=_push_event),
    Scenario("bypassed-protected-path", status=c.STATUS_BYPASSED, pr="workflow"),
    Scenario(
        "fallback-provider-error",
        status=c.STATUS_FALLBACK,
        reply=Reply.status(500, body=json.dumps({"error": PROVIDER_SENTINEL}).encode()),
    ),
    Scenario(
        "fallback-invalid-response",
        status=c.STATUS_FALLBACK,
        reply=Reply.raw(
            json.dumps({"model": c.DEFAULT_MODEL, "error": PROVIDER_SENTINEL}).encode()
        ),
    ),
    Scenario(
        "fallback-timeout",
        status=c.STATUS_FALLBACK,
        inputs={"timeout-ms": "800"},
        reply=Reply.drip(),
    ),
    Scenario("fallback-fetch", status=c.STATUS_FALLBACK, sends=False, edit=_missing_remote),
    Scenario("fallback-binary", status=c.STATUS_FALLBACK, sends=False, pr="binary"),
    Scenario(
        "input-error-mode",
        exit_code=1,
        status=None,
        message=input_error_message(c.INPUT_MODE),
        sends=False,
        inputs={"mode": INPUT_SENTINEL},
    ),
    Scenario(
        "input-error-tasks",
        exit_code=1,
        status=None,
        message=input_error_message(c.INPUT_TASKS),
        sends=False,
        hint=True,
        inputs={
            "tasks": f"unit:\n  description: {DESCRIPTION_SENTINEL}\n  bogus: {INPUT_SENTINEL}\n"
        },
    ),
    Scenario(
        "input-error-url",
        exit_code=1,
        status=None,
        message=input_error_message(c.INPUT_API_BASE_URL),
        sends=False,
        inputs={"api-base-url": f"https://{API_KEY_SENTINEL}@api.example/{INPUT_SENTINEL}"},
    ),
    Scenario(
        "input-error-key",
        exit_code=1,
        status=None,
        message=input_error_message(c.INPUT_API_KEY),
        sends=False,
        inputs={"api-key": f"{API_KEY_SENTINEL} {INPUT_SENTINEL}"},
    ),
    Scenario(
        "input-error-remote",
        exit_code=1,
        status=None,
        message=input_error_message(c.FIELD_REMOTE),
        sends=False,
        edit=_bad_remote,
    ),
    Scenario(
        "invalid-invocation",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_INVALID_INVOCATION),
        sends=False,
        edit=_local_flag,
    ),
    Scenario(
        "invalid-environment",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_INVALID_ENVIRONMENT),
        sends=False,
        edit=_set_env(GITHUB_REPOSITORY=f"{INPUT_SENTINEL}/a/b"),
    ),
    Scenario(
        "invalid-event",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_INVALID_EVENT),
        sends=False,
        edit=_garbage_event,
    ),
    Scenario(
        "invalid-manual-request",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_INVALID_MANUAL_REQUEST),
        sends=False,
        edit=_manual(INPUT_SENTINEL),
    ),
    Scenario(
        "pull-request-unavailable",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_PULL_REQUEST_UNAVAILABLE),
        sends=False,
        edit=_manual("8"),
    ),
    Scenario(
        "merge-unavailable",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_MERGE_UNAVAILABLE),
        sends=False,
        edit=_manual("9"),
    ),
    Scenario(
        "report-unwritable",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_REPORT_UNWRITABLE),
        sends=False,
        edit=_runner_temp_file,
    ),
    Scenario(
        "output-unwritable",
        exit_code=1,
        status=None,
        message=failure_message(c.FAILURE_OUTPUT_UNWRITABLE),
        edit=_output_directory,
    ),
    Scenario("local-planned", local=True),
    Scenario(
        "local-fallback",
        local=True,
        status=c.STATUS_FALLBACK,
        reply=Reply.status(503, body=PROVIDER_SENTINEL.encode()),
    ),
    Scenario(
        "local-input-error",
        local=True,
        exit_code=1,
        status=None,
        message=input_error_message(c.INPUT_TASKS),
        sends=False,
        hint=True,
        inputs={"tasks": f"unit: [{DESCRIPTION_SENTINEL}, {INPUT_SENTINEL}]\n"},
    ),
)
SCENARIOS_BY_ID = {scenario.id: scenario for scenario in SCENARIOS}


# ---------------------------------------------------------------------------------------------
# Running
# ---------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    code: int
    stdout: str
    stderr: str
    files: dict[str, str]  # every file the run left under its root, by relative path
    requests: list[RecordedRequest]
    outputs_text: str


def _pull(pr: PullRequest, state: str = "open") -> dict[str, Any]:
    side = {"id": 42, "full_name": REPOSITORY}
    return {
        "number": 7,
        "state": state,
        "title": TITLE_SENTINEL,
        "body": TITLE_SENTINEL,
        "merge_commit_sha": pr.merge,
        "base": {"sha": pr.base, "repo": side},
        "head": {"sha": pr.head, "repo": side},
    }


def _inputs(scenario: Scenario, world: World) -> dict[str, str]:
    return {
        "tasks": TASKS,
        "api-key": API_KEY_SENTINEL,
        "github-token": TOKEN_SENTINEL,
        "allow-external-context": "true",
        "api-base-url": f"{world.jev.base_url}/{scenario.id}",
        "timeout-ms": "20000",
        **scenario.inputs,
    }


def _collect_files(root: Path, skip: set[Path]) -> dict[str, str]:
    files: dict[str, str] = {}
    for path in root.rglob("*"):
        if path.is_file() and path not in skip:
            files[str(path.relative_to(root))] = path.read_bytes().decode("utf-8", "replace")
    return files


def _run_github(scenario: Scenario, world: World, root: Path) -> tuple[Any, set[Path]]:
    pr = world.prs[scenario.pr]
    github = GitHubEnv(root=root, inputs=_inputs(scenario, world), sha=pr.merge)
    event = github.pull_request_event(base=pr.base, head=pr.head)
    event["pull_request"]["title"] = TITLE_SENTINEL
    github.event = event
    env = github.environ()
    env["REQUESTS_CA_BUNDLE"] = world.ca_bundle
    setup = Setup(root, env, ["plan", "--remote", pr.remote], world, github)
    if scenario.edit is not None:
        scenario.edit(setup)
    completed = run_cli(setup.args, env, cwd=root)
    return completed, {Path(env["GITHUB_EVENT_PATH"])}


def _run_local(scenario: Scenario, world: World, root: Path) -> tuple[Any, set[Path]]:
    pr = world.prs[scenario.pr]
    inputs = _inputs(scenario, world)
    root.mkdir(parents=True)
    tasks_file = root / "tasks.yml"
    tasks_file.write_text(inputs["tasks"], "utf-8")
    temp = root / "tmp"
    temp.mkdir()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(root),
        "TMPDIR": str(temp),
        c.LOCAL_API_KEY_ENV: API_KEY_SENTINEL,
        c.LOCAL_GITHUB_TOKEN_ENV: TOKEN_SENTINEL,
        "REQUESTS_CA_BUNDLE": world.ca_bundle,
    }
    args = [
        "plan",
        "--tasks-file",
        str(tasks_file),
        "--repo",
        str(Path(pr.remote.removeprefix("file://"))),
        "--base",
        pr.base,
        "--head",
        pr.head,
        "--api-base-url",
        inputs["api-base-url"],
        "--allow-external-context",
    ]
    return run_cli(args, env, cwd=root), {tasks_file}


def _run(scenario: Scenario, world: World) -> Outcome:
    root = world.root / "runs" / scenario.id
    runner = _run_local if scenario.local else _run_github
    completed, inputs_written = runner(scenario, world, root)
    prefix = f"/{scenario.id}/"
    output_path = root / "output.txt"
    return Outcome(
        code=completed.returncode,
        stdout=completed.stdout,
        stderr=completed.stderr,
        files=_collect_files(root, inputs_written),
        requests=[r for r in world.jev.requests if r.path.startswith(prefix)],
        outputs_text=output_path.read_text("utf-8") if output_path.is_file() else "",
    )


def _selected(request: pytest.FixtureRequest) -> list[Scenario]:
    wanted: list[Scenario] = []
    for item in request.session.items:
        callspec = getattr(item, "callspec", None)
        if callspec is None or getattr(item, "module", None) is not request.module:
            continue
        scenario = callspec.params.get("scenario")
        if isinstance(scenario, Scenario) and scenario not in wanted:
            wanted.append(scenario)
    return wanted


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    root = tmp_path_factory.mktemp("hygiene")
    prs = _build_prs(root)

    def respond(request: RecordedRequest) -> Reply:
        scenario = SCENARIOS_BY_ID.get(request.path.split("/")[1])
        if scenario is not None and scenario.reply is not None:
            return scenario.reply
        return Reply.ok()

    scores = {"unit": 0.9, "docs": 0.01, "lint": 0.01}
    with (
        FakeJev(tls=True, scores=scores, responder=respond) as jev,
        FakeGitHub(tls=True) as github,
    ):
        github.add_pull(REPOSITORY, 7, _pull(prs["code"]))
        github.route(
            f"/repos/{REPOSITORY}/pulls/8",
            FakeResponse(500, json.dumps({"message": PROVIDER_SENTINEL}).encode()),
        )
        github.add_pull(REPOSITORY, 9, _pull(prs["code"], state="closed"))
        assert jev.ca_bundle is not None
        assert github.ca_bundle is not None
        bundle = root / "ca-bundle.pem"
        bundle.write_text(
            Path(jev.ca_bundle).read_text("ascii") + Path(github.ca_bundle).read_text("ascii"),
            "ascii",
        )
        yield World(jev, github, str(bundle), prs, root)


@pytest.fixture(scope="module")
def outcomes(world: World, request: pytest.FixtureRequest) -> dict[str, Outcome]:
    scenarios = _selected(request)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {s.id: pool.submit(_run, s, world) for s in scenarios}
        return {scenario_id: future.result() for scenario_id, future in futures.items()}


# ---------------------------------------------------------------------------------------------
# Checks
# ---------------------------------------------------------------------------------------------


def _texts(outcome: Outcome) -> dict[str, str]:
    """Every text the run produced, with the mask lines taken out of stdout."""
    stdout = "\n".join(
        line for line in outcome.stdout.split("\n") if not line.startswith("::add-mask::")
    )
    return {"stdout": stdout, "stderr": outcome.stderr, **outcome.files}


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_nothing_secret_or_sourced_leaks(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[scenario.id]
    assert outcome.code == scenario.exit_code, outcome.stdout + outcome.stderr
    for where, text in _texts(outcome).items():
        for sentinel in (*SECRETS, *SOURCE_TEXT, *NEVER_ANYWHERE):
            assert sentinel not in text, f"{sentinel} leaked into {where}"


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_diagnostics_and_publication(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    outcome = outcomes[scenario.id]
    lines = outcome.stdout.splitlines()
    if scenario.local:
        assert not any(line.startswith("::") for line in lines)
        if scenario.message is not None:
            assert outcome.stdout == ""
            hint = c.TASKS_CHECK_HINT + "\n" if scenario.hint else ""
            assert outcome.stderr == scenario.message + "\n" + hint
        else:
            assert outcome.stderr == ""
            assert lines[0].startswith(f"jev-select: {scenario.status} ")
        return
    assert outcome.stderr == ""
    # The masks come first, for every form of both secrets, even when validation fails.
    masks = [line for line in lines if line.startswith("::add-mask::")]
    assert lines[: len(masks)] == masks
    key = scenario.inputs.get("api-key", API_KEY_SENTINEL)
    for secret in (key, TOKEN_SENTINEL, TOKEN_BASE64):
        assert f"::add-mask::{secret}" in masks
    if scenario.message is not None:
        notices = ["::notice::" + c.TASKS_CHECK_HINT] if scenario.hint else []
        assert lines[len(masks) :] == ["::error::" + scenario.message, *notices]
        assert outcome.outputs_text == ""
        assert not any("jev-select-report-" in name for name in outcome.files)
    else:
        outputs = parse_output_file(outcome.outputs_text)
        assert outputs[c.OUTPUT_STATUS] == scenario.status
    assert not any(c.GIT_TEMP_PREFIX in name for name in outcome.files)


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.id for s in SCENARIOS])
def test_what_reaches_the_provider(scenario: Scenario, outcomes: dict[str, Outcome]) -> None:
    requests = outcomes[scenario.id].requests
    if not scenario.sends:
        assert requests == []
        return
    assert requests, "the scenario sends its evidence"
    for request in requests:
        body = request.body.decode("utf-8")
        # The key only as the Bearer credential, the token never, nothing else identifying.
        assert request.header("Authorization") == f"Bearer {API_KEY_SENTINEL}"
        other_headers = [
            value for name, value in request.headers if name.lower() != "authorization"
        ]
        for text in (body, request.path, *other_headers):
            for secret in SECRETS:
                assert secret not in text
        assert TOKEN_SENTINEL not in request.header("Authorization")  # type: ignore[operator]
        for source in SOURCE_TEXT:
            assert source not in request.path
            assert all(source not in value for value in other_headers)
        assert TITLE_SENTINEL not in body, "pull-request prose is not evidence"
    bodies = "".join(request.body.decode("utf-8") for request in requests)
    for source in SOURCE_TEXT:
        assert source in bodies, f"{source} is part of the evidence"


def test_the_token_reaches_only_the_github_api(world: World, outcomes: dict[str, Outcome]) -> None:
    for request in world.jev.requests:
        assert TOKEN_SENTINEL not in request.body.decode("utf-8")
        assert all(TOKEN_SENTINEL not in value for _, value in request.headers)
    manual = [lookup for lookup in world.github.requests if "/pulls/7" in lookup.path]
    if "manual-planned" in outcomes:
        assert manual, "the manual lookup happened"
        assert manual[0].headers.get("authorization") == f"Bearer {TOKEN_SENTINEL}"
    for lookup in world.github.requests:
        assert API_KEY_SENTINEL not in lookup.path
        assert all(API_KEY_SENTINEL not in value for value in lookup.headers.values())
