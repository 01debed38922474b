"""Cancellation: real SIGINT and SIGTERM sent to ``jev-select plan`` at several points of a run.

A runner cancels a job by signalling the step's processes (SIGINT first, SIGTERM later). Each test
starts the product as a real process, waits until it is provably inside one phase (a git fetch
stalled by a silent HTTP server, a Jev request held by the stand-in, an output or summary file
that is a FIFO nobody reads), sends the signal and checks what is left: the exit code 128 + signal,
one fixed line, an empty stderr, no git process, no temporary repository, and either nothing
published or a complete publication.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from support.cliutil import API_KEY_SENTINEL, TOKEN_SENTINEL, GitHubEnv, parse_output_file
from support.fakejev import FakeJev, Reply
from support.gitrepo import GitRepo

from jev_select import contracts as c
from jev_select.edges import cancellation

pytestmark = pytest.mark.skipif(os.name != "posix", reason="POSIX signals and FIFOs")

SIGNALS = [
    pytest.param(signal.SIGINT, id="SIGINT"),
    pytest.param(signal.SIGTERM, id="SIGTERM"),
]
TASKS = """
unit:
  description: Runs the unit tests of the parser package.
docs:
  description: Builds the documentation site.
"""
MARKER_VARIABLE = "JEV_SELECT_TEST_CANCEL_MARKER"
WAIT_SECONDS = 60.0


def _default_sigint() -> None:
    # Whoever started the tests may run them with SIGINT ignored (a background job), and an
    # ignored SIGINT stays ignored in the product by design.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@pytest.fixture(autouse=True)
def _python_sigint_handler() -> Iterator[None]:
    # The same holds for the test process itself: the in-process tests signal it, and need the
    # handler a Python process starts with when nobody ignored SIGINT before it.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _popen(command: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        command,
        env=env,
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=_default_sigint,
    )


def start(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.Popen[str]:
    return _popen([sys.executable, "-m", "jev_select", *args], env, cwd)


def start_harness(
    script: str, script_args: list[str], env: dict[str, str], cwd: Path
) -> subprocess.Popen[str]:
    """``python -c script`` with ``script_args``, then ``plan`` for the command it runs."""
    return _popen([sys.executable, "-c", script, *script_args, "plan"], env, cwd)


def wait_until(condition: Callable[[], bool], process: subprocess.Popen[str], what: str) -> None:
    deadline = time.monotonic() + WAIT_SECONDS
    while not condition():
        if process.poll() is not None:
            out, err = process.communicate()
            pytest.fail(f"the run ended before {what}: {process.returncode} {out!r} {err!r}")
        if time.monotonic() > deadline:
            process.kill()
            process.communicate()
            pytest.fail(f"timed out waiting for {what}")
        time.sleep(0.02)


def finish(process: subprocess.Popen[str]) -> tuple[int, str, str]:
    try:
        out, err = process.communicate(timeout=WAIT_SECONDS)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"the run did not end after the signal: {out!r} {err!r}")
    return process.returncode, out, err


def without_masks(text: str) -> list[str]:
    return [line for line in text.splitlines() if not line.startswith("::add-mask::")]


def processes_with(marker: str) -> list[int]:
    """PIDs of processes whose environment holds ``marker`` (Linux ``/proc``; empty elsewhere)."""
    found = []
    needle = f"{MARKER_VARIABLE}={marker}".encode()
    for entry in Path("/proc").glob("[0-9]*"):
        with contextlib.suppress(OSError):
            if needle in (entry / "environ").read_bytes().split(b"\0"):
                found.append(int(entry.name))
    return found


@pytest.fixture
def marker() -> Iterator[str]:
    """A value only this test's processes carry in their environment; strays are killed after."""
    value = uuid.uuid4().hex
    yield value
    for pid in processes_with(value):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def leftovers(temp_root: Path) -> list[str]:
    return sorted(path.name for path in temp_root.glob("jev-select-*"))


class StallingGitServer:
    """An HTTP server on 127.0.0.1 that reads a request and never answers: a hung git fetch.

    ``connected`` is set once a request arrived; ``peer_closed`` once that client went away.
    """

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.connected = threading.Event()
        self.peer_closed = threading.Event()
        self._stop = threading.Event()
        self._connections: list[socket.socket] = []
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}/octo-org/octo-repo.git"

    def _accept(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stop.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                continue
            self._connections.append(connection)
            threading.Thread(target=self._hold, args=(connection,), daemon=True).start()

    def _hold(self, connection: socket.socket) -> None:
        connection.settimeout(0.1)
        while not self._stop.is_set():
            try:
                data = connection.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                data = b""
            if not data:
                self.peer_closed.set()
                return
            self.connected.set()

    def close(self) -> None:
        self._stop.set()
        for connection in self._connections:
            with contextlib.suppress(OSError):
                connection.close()
        self._listener.close()


@pytest.fixture
def stalling_git() -> Iterator[StallingGitServer]:
    server = StallingGitServer()
    yield server
    server.close()


def check_fetch_cancelled(
    process: subprocess.Popen[str],
    sent: signal.Signals,
    server: StallingGitServer,
    marker: str,
    temp_root: Path,
) -> tuple[str, str]:
    wait_until(server.connected.is_set, process, "git fetch reached the server")
    if sys.platform == "linux":
        git_processes = [pid for pid in processes_with(marker) if pid != process.pid]
        assert git_processes, "git runs with the test's marker in its environment"
    process.send_signal(sent)
    code, out, err = finish(process)
    assert code == 128 + sent
    # The git helper holding the connection is gone with the run, not left in its own session.
    assert server.peer_closed.wait(10), "the git fetch still holds its connection"
    assert processes_with(marker) == []
    assert leftovers(temp_root) == []
    return out, err


@pytest.mark.parametrize("sent", SIGNALS)
def test_cancel_during_git_fetch_github_mode(
    tmp_path: Path, sent: signal.Signals, stalling_git: StallingGitServer, marker: str
) -> None:
    env = GitHubEnv(
        root=tmp_path / "runner",
        inputs={
            "tasks": TASKS,
            "api-key": API_KEY_SENTINEL,
            "github-token": TOKEN_SENTINEL,
            "allow-external-context": "true",
        },
    )
    environ = env.environ()
    environ[MARKER_VARIABLE] = marker
    process = start(["plan", "--remote", stalling_git.url], environ, env.root)
    out, err = check_fetch_cancelled(
        process, sent, stalling_git, marker, Path(environ["RUNNER_TEMP"])
    )
    assert err == ""
    assert without_masks(out) == [f"::error::{c.CANCELLED_MESSAGE}"]
    assert not Path(environ["GITHUB_OUTPUT"]).exists()
    assert not Path(environ["GITHUB_STEP_SUMMARY"]).exists()


@pytest.mark.parametrize("sent", SIGNALS)
def test_cancel_during_git_fetch_local_mode(
    tmp_path: Path, sent: signal.Signals, stalling_git: StallingGitServer, marker: str
) -> None:
    repo = GitRepo.init(tmp_path / "work")
    base = repo.commit({"src/a.py": "x = 1\n"})
    head = repo.commit({"src/a.py": "x = 2\n"}, parents=[base])
    # A clean checkout of HEAD: a local plan warns about uncommitted work otherwise.
    repo.check_out()
    tasks_file = tmp_path / "tasks.yml"
    tasks_file.write_text(TASKS, "utf-8")
    temp = tmp_path / "tmp"
    temp.mkdir()
    environ = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(tmp_path),
        "TMPDIR": str(temp),
        "JEV_API_KEY": API_KEY_SENTINEL,
        MARKER_VARIABLE: marker,
    }
    args = ["plan", "--tasks-file", str(tasks_file), "--repo", str(repo.path)]
    args += ["--base", base, "--head", head, "--remote", stalling_git.url]
    process = start([*args, "--allow-external-context"], environ, tmp_path)
    out, err = check_fetch_cancelled(process, sent, stalling_git, marker, temp)
    assert out == ""
    assert err == c.CANCELLED_MESSAGE + "\n"


@pytest.fixture(scope="module")
def holding_jev() -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores=0.9) as server:
        yield server


@pytest.mark.parametrize("sent", SIGNALS)
def test_cancel_during_the_jev_phase(
    tmp_path: Path, sent: signal.Signals, holding_jev: FakeJev
) -> None:
    origin = GitRepo.init(tmp_path / "origin")
    base = origin.commit({"src/a.py": "x = 1\n"})
    head = origin.commit({"src/a.py": "x = 2\n"}, parents=[base], branch="feature")
    merge = origin.merge(base, head)
    before = len(holding_jev.requests)
    holding_jev.script(Reply.slow(WAIT_SECONDS))  # held until the server stops
    env = GitHubEnv(
        root=tmp_path / "runner",
        inputs={
            "tasks": TASKS,
            "api-key": API_KEY_SENTINEL,
            "allow-external-context": "true",
            "api-base-url": holding_jev.base_url,
            "timeout-ms": "120000",
        },
        sha=merge,
    )
    env.event = env.pull_request_event(base=base, head=head)
    environ = env.environ()
    environ["REQUESTS_CA_BUNDLE"] = holding_jev.ca_bundle or ""
    process = start(["plan", "--remote", str(origin.path)], environ, env.root)
    wait_until(lambda: len(holding_jev.requests) > before, process, "a Jev request arrived")
    started = time.monotonic()
    process.send_signal(sent)
    code, out, err = finish(process)
    # The request still in flight in a worker thread does not keep the process alive.
    assert time.monotonic() - started < 10
    assert code == 128 + sent
    assert err == ""
    assert without_masks(out) == [f"::error::{c.CANCELLED_MESSAGE}"]
    assert not Path(environ["GITHUB_OUTPUT"]).exists()
    assert not Path(environ["GITHUB_STEP_SUMMARY"]).exists()
    assert leftovers(Path(environ["RUNNER_TEMP"])) == []


def bypass_env(root: Path) -> GitHubEnv:
    """A push event: a bypass that goes straight from the inputs to publication."""
    return GitHubEnv(root=root, event_name="push", event={}, inputs={"tasks": TASKS})


@pytest.mark.parametrize("sent", SIGNALS)
def test_cancel_before_the_outputs_are_written_publishes_nothing(
    tmp_path: Path, sent: signal.Signals
) -> None:
    env = bypass_env(tmp_path / "runner")
    environ = env.environ()
    output = Path(environ["GITHUB_OUTPUT"])
    os.mkfifo(output)  # opening it for writing blocks until a reader comes: it never does
    temp_root = Path(environ["RUNNER_TEMP"])
    process = start(["plan"], environ, env.root)
    wait_until(lambda: bool(leftovers(temp_root)), process, "the report was written")
    process.send_signal(sent)
    code, out, err = finish(process)
    assert code == 128 + sent
    assert err == ""
    assert without_masks(out) == [f"::error::{c.CANCELLED_MESSAGE}"]
    assert leftovers(temp_root) == []  # the report went with the plan that never was
    reader = os.open(output, os.O_RDONLY | os.O_NONBLOCK)
    try:
        assert os.read(reader, 65536) == b""
    finally:
        os.close(reader)
    assert not Path(environ["GITHUB_STEP_SUMMARY"]).exists()


@pytest.mark.parametrize("sent", SIGNALS)
def test_cancel_after_the_outputs_were_written_keeps_the_whole_plan(
    tmp_path: Path, sent: signal.Signals
) -> None:
    env = bypass_env(tmp_path / "runner")
    environ = env.environ()
    output = Path(environ["GITHUB_OUTPUT"])
    summary = Path(environ["GITHUB_STEP_SUMMARY"])
    os.mkfifo(summary)  # the run stops at the summary, after the outputs
    process = start(["plan"], environ, env.root)
    wait_until(lambda: output.exists() and output.stat().st_size > 0, process, "the outputs")
    process.send_signal(sent)
    code, out, err = finish(process)
    assert code == 128 + sent
    assert err == ""
    assert without_masks(out) == [f"::error::{c.CANCELLED_AFTER_PUBLICATION_MESSAGE}"]
    outputs = parse_output_file(output.read_text("utf-8"))
    assert outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED
    assert outputs[c.OUTPUT_RUN] == '{"docs":true,"unit":true}'
    report = json.loads(Path(outputs[c.OUTPUT_REPORT_PATH]).read_text("utf-8"))
    assert report["status"] == c.STATUS_BYPASSED


# ---------------------------------------------------------------------------------------------
# While the command's modules load
# ---------------------------------------------------------------------------------------------

# Starts the command the way ``python -m jev_select`` does, or through the console-script entry
# point pyproject.toml declares, and holds the import of ``jev_select.cli`` until signalled: the
# window before ``main`` installs its own handlers.
LOADING = """
import importlib, os, runpy, sys, time, tomllib
from importlib.abc import MetaPathFinder
marker, how, pyproject = sys.argv.pop(1), sys.argv.pop(1), sys.argv.pop(1)

class HoldTheCommand(MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "jev_select.cli":
            open(marker, "w").close()
            time.sleep(60)
        return None

sys.meta_path.insert(0, HoldTheCommand())
if how == "module":
    runpy.run_module("jev_select", run_name="__main__", alter_sys=True)
else:
    with open(pyproject, "rb") as handle:
        target = tomllib.load(handle)["project"]["scripts"]["jev-select"]
    module, _, function = target.partition(":")
    sys.exit(getattr(importlib.import_module(module), function)())
"""


@pytest.mark.parametrize("how", ["module", "entry-point"])
@pytest.mark.parametrize("sent", SIGNALS)
def test_cancel_while_the_command_loads(tmp_path: Path, sent: signal.Signals, how: str) -> None:
    env = bypass_env(tmp_path / "runner")
    environ = env.environ()
    marker = tmp_path / "loading"
    pyproject = next(
        folder / "pyproject.toml"
        for folder in Path(__file__).resolve().parents
        if (folder / "pyproject.toml").is_file()
    )
    process = start_harness(LOADING, [str(marker), how, str(pyproject)], environ, env.root)
    wait_until(marker.exists, process, "the command started loading")
    process.send_signal(sent)
    code, out, err = finish(process)
    assert code == 128 + sent
    assert err == ""
    assert out == f"::error::{c.CANCELLED_MESSAGE}\n"
    assert not Path(environ["GITHUB_OUTPUT"]).exists()
    assert leftovers(Path(environ["RUNNER_TEMP"])) == []


# ---------------------------------------------------------------------------------------------
# After the command has returned
# ---------------------------------------------------------------------------------------------

# Runs the command as ``python -m jev_select`` does, but holds the process once ``main`` has
# returned: the window between the end of the command and the end of the process.
AFTER_THE_COMMAND = """
import runpy, sys, time
marker = sys.argv.pop(1)
import jev_select.cli as cli
command = cli.main

def main_then_linger(argv=None):
    code = command(argv)
    open(marker, "w").close()
    time.sleep(60)
    return code

cli.main = main_then_linger
runpy.run_module("jev_select", run_name="__main__", alter_sys=True)
"""


@pytest.mark.parametrize("published", [True, False], ids=["published", "failed"])
@pytest.mark.parametrize("sent", SIGNALS)
def test_a_signal_after_the_command_returned_ends_with_128_plus_the_signal(
    tmp_path: Path, sent: signal.Signals, published: bool
) -> None:
    env = bypass_env(tmp_path / "runner")
    if not published:
        env.inputs["mode"] = "Enforce"  # an invalid input: nothing is published
    environ = env.environ()
    marker = tmp_path / "returned"
    process = start_harness(AFTER_THE_COMMAND, [str(marker)], environ, env.root)
    wait_until(marker.exists, process, "the command returned")
    process.send_signal(sent)
    code, out, err = finish(process)
    assert code == 128 + sent
    assert err == ""
    lines = without_masks(out)
    output = Path(environ["GITHUB_OUTPUT"])
    if published:
        assert lines[-1] == f"::error::{c.CANCELLED_AFTER_PUBLICATION_MESSAGE}"
        outputs = parse_output_file(output.read_text("utf-8"))
        assert outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED
    else:
        assert lines[-1] == f"::error::{c.CANCELLED_MESSAGE}"
        assert not output.exists() or output.read_text("utf-8") == ""


# ---------------------------------------------------------------------------------------------
# The mechanism, in this process
# ---------------------------------------------------------------------------------------------


def signal_self(sent: signal.Signals, wait: float) -> None:
    """Send ``sent`` to this process and sleep; a raising handler cuts the sleep short."""
    os.kill(os.getpid(), sent)
    time.sleep(wait)


def test_a_signal_raises_cancelled_and_the_handlers_are_restored() -> None:
    before = signal.getsignal(signal.SIGTERM)
    with cancellation.handle_signals(), pytest.raises(cancellation.Cancelled) as caught:
        signal_self(signal.SIGTERM, 5)
    assert caught.value.signum == signal.SIGTERM
    assert caught.value.exit_code == 143
    assert signal.getsignal(signal.SIGTERM) is before


def test_deferred_holds_a_signal_until_the_block_ends() -> None:
    steps: list[str] = []

    def critical_step() -> None:
        with cancellation.deferred():
            signal_self(signal.SIGINT, 0.05)
            steps.append("finished the block")
        steps.append("after the block")

    with cancellation.handle_signals(), pytest.raises(cancellation.Cancelled) as caught:
        critical_step()
    assert steps == ["finished the block"]
    assert caught.value.exit_code == 130


def test_a_held_signal_wins_over_the_error_of_the_block() -> None:
    def failing_step() -> None:
        with cancellation.deferred():
            signal_self(signal.SIGINT, 0.05)
            raise ValueError("the block failed")

    with cancellation.handle_signals(), pytest.raises(cancellation.Cancelled):
        failing_step()


def test_only_the_first_signal_counts() -> None:
    cleaned: list[str] = []

    def interrupted_step() -> None:
        try:
            signal_self(signal.SIGINT, 5)
        finally:
            signal_self(signal.SIGTERM, 0.05)  # the runner's second signal
            cleaned.append("clean-up ran to the end")

    with cancellation.handle_signals(), pytest.raises(cancellation.Cancelled) as caught:
        interrupted_step()
    assert caught.value.signum == signal.SIGINT
    assert cleaned == ["clean-up ran to the end"]


def test_an_ignored_signal_stays_ignored() -> None:
    previous = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        with cancellation.handle_signals():
            signal_self(signal.SIGTERM, 0.05)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_a_worker_thread_inside_deferred_does_not_hold_the_main_thread() -> None:
    entered, release, finished = threading.Event(), threading.Event(), threading.Event()

    def work() -> None:
        with cancellation.deferred():
            entered.set()
            release.wait(10)
        finished.set()

    def cancelled_while_the_worker_waits() -> None:
        worker = threading.Thread(target=work)
        worker.start()
        assert entered.wait(10)
        signal_self(signal.SIGINT, 5)

    try:
        with cancellation.handle_signals(), pytest.raises(cancellation.Cancelled):
            cancelled_while_the_worker_waits()
        assert not finished.is_set()  # the main thread was cancelled while the worker held on
    finally:
        release.set()
    assert finished.wait(10)  # and the worker was never interrupted
