"""The git runner: one isolated subprocess per command (docs/reference.md, "Change collection",
"Local use").

Every git process runs from an argument list (never a shell) with stdin closed, stderr drained and
discarded, and stdout read up to a per-command byte cap; a process that writes past its cap, or
that outlives its time bound, is killed with its process group. The environment is the caller's
minus every ``GIT_*`` variable, plus settings that switch off user and system configuration,
hooks, attributes, external diff drivers, pagers, prompts and redirects. Nothing git prints is
ever shown or put into an exception.

The temporary repository of a collection is :mod:`.session` (``GitSession``); the read-only queries
on the user's repository in local mode are :mod:`.local`.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from typing import IO, TYPE_CHECKING, BinaryIO

from ...core.credentials import basic_credential, usable_token
from ...core.object_ids import is_object_id  # re-exported: the git modules check names with it
from ...errors import JevSelectError
from .. import cancellation

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "SMALL_OUTPUT_CAP",
    "GitCommandFailed",
    "GitError",
    "GitOutputTooLarge",
    "GitTimeBound",
    "GitTimedOut",
    "credential_header",
    "is_http_remote",
    "is_object_id",
    "parse_commit_parents",
    "run_git",
    "sanitised_environment",
    "terminate_children",
]

# Small answers (SHAs, booleans) never need more than this.
SMALL_OUTPUT_CAP = 1_048_576
_READ_CHUNK = 65536


class GitError(JevSelectError):
    """A git command did not give a usable answer. Carries no git output."""


class GitCommandFailed(GitError):
    """The command could not start or exited with a non-zero status."""


class GitOutputTooLarge(GitError):
    """Standard output passed the command's cap; the process was killed."""


class GitTimedOut(GitCommandFailed):
    """The command outlived its time bound; its process group was killed.

    A failed command to every caller that does not ask: whatever handles a git failure handles
    this one too.
    """


# ---------------------------------------------------------------------------------------------
# Environment and credentials (docs/reference.md, "Temporary repository and git environment",
# "Remote and credentials")
# ---------------------------------------------------------------------------------------------

_FIXED_VARIABLES: Mapping[str, str] = {
    "GIT_CONFIG_NOSYSTEM": "1",
    "GIT_CONFIG_NOGLOBAL": "1",
    "GIT_CONFIG_SYSTEM": "/dev/null",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_ATTR_NOSYSTEM": "1",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
    "LC_ALL": "C",
    "LANG": "C",
    "TZ": "UTC",
}

_FIXED_CONFIG: tuple[tuple[str, str], ...] = (
    ("core.attributesFile", "/dev/null"),
    ("core.hooksPath", "/dev/null"),
    ("init.templateDir", "/dev/null"),
    ("diff.external", ""),
    ("http.followRedirects", "false"),
)


# Besides GIT_*: curl, under git's HTTPS transport, appends every TLS session's secrets to the
# file SSLKEYLOGFILE names, and the fetch carries the token.
_WITHHELD_FROM_GIT = frozenset({"SSLKEYLOGFILE"})


def _kept_from_git(name: str) -> bool:
    return name.startswith("GIT_") or name.upper() in _WITHHELD_FROM_GIT


def sanitised_environment(
    base: Mapping[str, str], *, extra_header: str | None = None
) -> dict[str, str]:
    """``base`` without any ``GIT_*`` variable or ``SSLKEYLOGFILE``, plus the fixed isolation
    settings.

    ``extra_header`` is a complete HTTP header line (``Name: value``) configured as
    ``http.extraheader``; pass it only for http(s) remotes (see :func:`credential_header`).
    """
    environment = {key: value for key, value in base.items() if not _kept_from_git(key)}
    environment.update(_FIXED_VARIABLES)
    settings = list(_FIXED_CONFIG)
    if extra_header is not None:
        settings.append(("http.extraheader", extra_header))
    environment["GIT_CONFIG_COUNT"] = str(len(settings))
    for index, (key, value) in enumerate(settings):
        environment[f"GIT_CONFIG_KEY_{index}"] = key
        environment[f"GIT_CONFIG_VALUE_{index}"] = value
    return environment


def is_http_remote(remote: str) -> bool:
    return remote.lower().startswith(("http://", "https://"))


def credential_header(remote: str, token: str) -> str | None:
    """The ``Authorization`` header for ``remote``, or None when nothing may be sent.

    Only http(s) remotes get it, and only for a non-blank token of printable ASCII.
    """
    if not is_http_remote(remote) or not usable_token(token):
        return None
    return f"Authorization: Basic {basic_credential(token)}"


# ---------------------------------------------------------------------------------------------
# The runner
# ---------------------------------------------------------------------------------------------


def _inherited_git_variables(environment: Mapping[str, str]) -> list[str]:
    # GitPython lays the given environment over a copy of os.environ, so a GIT_* variable of this
    # process would reach git although the sanitised environment dropped it; ``env -u`` removes
    # such names (only names travel on the command line, never values).
    return sorted(name for name in os.environ if _kept_from_git(name) and name not in environment)


_gitpython_modules: tuple[ModuleType, ModuleType] | None = None
_gitpython_lock = threading.Lock()


def _gitpython() -> tuple[ModuleType, ModuleType]:
    """GitPython's ``git.cmd`` and ``git.exc``, imported on first use.

    Runs that never reach git (every bypass) must not pay for importing it. GitPython runs
    ``git version`` when it is first imported, with this process's environment: there
    ``GIT_PYTHON_GIT_EXECUTABLE`` would choose the program it runs and ``GIT_TRACE*`` where git
    writes its traces. So every ``GIT_*`` variable is set aside for the import and put back
    afterwards. By default GitPython also raises with its own text when there is no git; a runner
    without git must fail the fetch like any other git error instead, so the lookup is kept quiet.
    """
    global _gitpython_modules
    # Worker threads may run git at once: one of them imports, the others wait for it, so no
    # thread sets aside what another one has just put in place.
    with _gitpython_lock:
        if _gitpython_modules is None:
            set_aside = {name: value for name, value in os.environ.items() if _kept_from_git(name)}
            for name in set_aside:
                os.environ.pop(name, None)
            os.environ["GIT_PYTHON_REFRESH"] = "quiet"
            try:
                import git.cmd
                import git.exc
            finally:
                os.environ.pop("GIT_PYTHON_REFRESH", None)
                os.environ.update(set_aside)
            _gitpython_modules = (git.cmd, git.exc)
        return _gitpython_modules


# Every git process runs in a session of its own, so that one kill of its process group also
# reaches the helpers it starts (git-remote-https, upload-pack). The flip side: a signal sent to
# our own process group never reaches them, and nothing stops them when this process ends. The
# live ones are kept here so that a cancellation stops them all, whichever thread started them.
_live_lock = threading.Lock()
_live: set[subprocess.Popen[bytes]] = set()


def terminate_children() -> None:
    """Kill the process group of every git process still running."""
    with _live_lock:
        processes = list(_live)
    for process in processes:
        if process.poll() is None:
            _kill(process)


cancellation.add_cleanup(terminate_children)


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        if os.name == "posix":
            os.killpg(process.pid, 9)
        else:  # pragma: no cover - POSIX runners only in tests
            process.kill()
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _discard(stream: BinaryIO | None) -> None:
    if stream is None:
        return
    try:
        while stream.read(_READ_CHUNK):
            pass
    except (OSError, ValueError):
        pass


class _Output:
    """Standard output read up to EOF or just past the cap."""

    def __init__(self, descriptor: int, cap: int) -> None:
        self._descriptor = descriptor
        self._cap = cap
        self.data = bytearray()
        self.too_large = False
        self.failed = False

    def read(self) -> None:
        try:
            while True:
                chunk = os.read(self._descriptor, _READ_CHUNK)
                if not chunk:
                    return
                self.data += chunk
                if len(self.data) > self._cap:
                    self.too_large = True
                    return
        except (OSError, ValueError):
            self.failed = True  # output cut short is no answer, whatever git's status


def _reap(
    process: subprocess.Popen[bytes], readers: Sequence[tuple[threading.Thread, IO[bytes] | None]]
) -> None:
    """Kill ``process`` if it still runs, wait for it and close its pipes."""
    if process.poll() is None:
        _kill(process)
    process.wait()
    with _live_lock:
        _live.discard(process)
    busy: list[IO[bytes] | None] = []
    for thread, stream in readers:
        thread.join(timeout=5)
        if thread.is_alive():
            busy.append(stream)
    for stream in (process.stdout, process.stderr):
        # A pipe still held by a process outside the group keeps its reader waiting: closing it
        # would hand the descriptor number to the next file opened while that reader still reads
        # it, so it is left open instead.
        if stream is not None and not any(stream is held for held in busy):
            with contextlib.suppress(OSError):
                stream.close()


def _left(deadline: float | None) -> float | None:
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def run_git(
    args: Sequence[str],
    *,
    cwd: str,
    environment: Mapping[str, str],
    cap: int,
    timeout: float | None = None,
) -> bytes:
    """Run ``git <args>`` in ``cwd`` and return at most ``cap`` bytes of standard output.

    Raises :class:`GitOutputTooLarge` (process killed) past the cap,
    :class:`GitTimedOut` (process group killed) when it is still running ``timeout`` seconds
    after the start, and :class:`GitCommandFailed` when git cannot start or exits non-zero.
    ``None`` is no time bound.
    """
    if timeout is not None and timeout <= 0:
        raise GitTimedOut()
    deadline = None if timeout is None else time.monotonic() + timeout
    prefix: list[str] = []
    inherited = _inherited_git_variables(environment)
    if inherited:
        env_program = shutil.which("env", path=environment.get("PATH"))
        if env_program is None:
            raise GitCommandFailed()
        prefix = [env_program]
        for name in inherited:
            prefix += ["-u", name]
    command = [*prefix, "git", *args]
    git_cmd, git_exc = _gitpython()
    process: subprocess.Popen[bytes] | None = None
    readers: list[tuple[threading.Thread, IO[bytes] | None]] = []
    output: _Output | None = None
    timed_out = False
    status = 0
    try:
        # A cancellation arriving while git starts is held until the process is on record, so the
        # clean-up below always knows what to kill.
        with cancellation.deferred():
            if cancellation.cancelled_by() is not None:
                raise GitCommandFailed()  # a worker thread must not start git after a cancel
            try:
                handle = git_cmd.Git(cwd).execute(
                    command,
                    as_process=True,
                    env=dict(environment),
                    start_new_session=os.name == "posix",
                )
            except (git_exc.GitError, OSError, ValueError) as error:
                raise GitCommandFailed() from error
            process = handle.proc
            if process is not None:
                with _live_lock:
                    _live.add(process)
        if process is None or process.stdout is None:
            raise GitCommandFailed()
        drain = threading.Thread(target=_discard, args=(process.stderr,), daemon=True)
        drain.start()
        readers.append((drain, process.stderr))
        output = _Output(process.stdout.fileno(), cap)
        if deadline is None:
            output.read()
        else:
            # git blocked on its input (an include.path naming a FIFO, a ref that is one) writes
            # nothing and never exits: only a reader beside this thread lets the wait end. This
            # thread alone kills and reaps, so a kill never reaches a process id reused after the
            # reap.
            reader = threading.Thread(target=output.read, daemon=True)
            reader.start()
            readers.append((reader, process.stdout))
            reader.join(_left(deadline))
            timed_out = reader.is_alive()
        if timed_out or output.too_large:
            _kill(process)
        else:
            try:
                status = process.wait(_left(deadline))
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(process)
    finally:
        if process is not None:
            with cancellation.deferred():
                _reap(process, readers)
    if timed_out:
        raise GitTimedOut()
    if output is not None and output.too_large:
        raise GitOutputTooLarge()
    if status != 0 or output is None or output.failed:
        raise GitCommandFailed()
    return bytes(output.data)


class GitTimeBound:
    """The time bound of every git command of one local run (docs/reference.md, "Local use").

    Each command may run ``seconds``. Once one has timed out, every later one fails at once
    without starting: git that blocked on the user's repository (a configuration include naming a
    FIFO) blocks again on the next command, and the run must end within one bound, not one per
    command. One instance serves every thread of the run.
    """

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self._expired = threading.Event()

    @property
    def expired(self) -> bool:
        """Whether a command of the run has timed out."""
        return self._expired.is_set()

    def run(
        self, args: Sequence[str], *, cwd: str, environment: Mapping[str, str], cap: int
    ) -> bytes:
        """:func:`run_git` bounded by ``seconds``; raises :class:`GitTimedOut` once expired."""
        if self._expired.is_set():
            raise GitTimedOut()
        try:
            return run_git(args, cwd=cwd, environment=environment, cap=cap, timeout=self.seconds)
        except GitTimedOut:
            self._expired.set()
            raise


def parse_commit_parents(commit_object: bytes) -> tuple[str, ...]:
    """The ``parent`` lines of a raw commit object's header, in order."""
    header, _, _ = commit_object.partition(b"\n\n")
    parents: list[str] = []
    for line in header.split(b"\n"):
        if line.startswith(b"parent "):
            parents.append(line[len(b"parent ") :].decode("ascii", "replace").strip())
    return tuple(parents)
