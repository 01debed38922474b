"""The git runner: one isolated subprocess per command (docs/reference.md, "Change collection",
"Local use").

Every git process runs from an argument list (never a shell) with stdin closed, stderr drained and
discarded, and stdout read up to a per-command byte cap; a process that writes past its cap is
killed. The environment is the caller's minus every ``GIT_*`` variable, plus settings that switch
off user and system configuration, hooks, attributes, external diff drivers, pagers, prompts and
redirects. Nothing git prints is ever shown or put into an exception.

The temporary repository of a collection is :mod:`.git` (``GitSession``); the read-only queries
on the user's repository in local mode are :mod:`.git_local`.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import threading
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, BinaryIO

from ..core.credentials import basic_credential, usable_token
from . import cancellation

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "LOWER_OBJECT_ID",
    "SMALL_OUTPUT_CAP",
    "GitCommandFailed",
    "GitError",
    "GitOutputTooLarge",
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
_OBJECT_ID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
# How git itself writes an object name.
LOWER_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


class GitError(Exception):
    """A git command did not give a usable answer. Carries no git output."""


class GitCommandFailed(GitError):
    """The command could not start or exited with a non-zero status."""


class GitOutputTooLarge(GitError):
    """Standard output passed the command's cap; the process was killed."""


def is_object_id(text: str) -> bool:
    """Whether ``text`` is a full object name: 40 or 64 hex digits."""
    return _OBJECT_ID.fullmatch(text) is not None


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


def sanitised_environment(
    base: Mapping[str, str], *, extra_header: str | None = None
) -> dict[str, str]:
    """``base`` without any ``GIT_*`` variable, plus the fixed isolation settings.

    ``extra_header`` is a complete HTTP header line (``Name: value``) configured as
    ``http.extraheader``; pass it only for http(s) remotes (see :func:`credential_header`).
    """
    environment = {key: value for key, value in base.items() if not key.startswith("GIT_")}
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
    return sorted(
        name for name in os.environ if name.startswith("GIT_") and name not in environment
    )


_gitpython_modules: tuple[ModuleType, ModuleType] | None = None


def _gitpython() -> tuple[ModuleType, ModuleType]:
    """GitPython's ``git.cmd`` and ``git.exc``, imported on first use.

    Runs that never reach git (every bypass) must not pay for importing it. GitPython looks for
    git when it is first imported and, by default, raises with its own text when there is none; a
    runner without git must fail the fetch like any other git error instead, so the lookup is kept
    quiet for the import and the caller's setting is restored afterwards.
    """
    global _gitpython_modules
    if _gitpython_modules is None:
        caller_refresh = os.environ.get("GIT_PYTHON_REFRESH")
        os.environ["GIT_PYTHON_REFRESH"] = "quiet"
        try:
            import git.cmd
            import git.exc
        finally:
            if caller_refresh is None:
                del os.environ["GIT_PYTHON_REFRESH"]
            else:
                os.environ["GIT_PYTHON_REFRESH"] = caller_refresh
        _gitpython_modules = (git.cmd, git.exc)
    return _gitpython_modules


# Every git process runs in a session of its own, so that one kill of its process group also
# reaches the helpers it starts (git-remote-https, upload-pack). The flip side: a signal sent to
# our own process group never reaches them, and nothing stops them when this process ends. The
# live ones are kept here so that a cancellation stops them all, whichever thread started them.
_live_lock = threading.Lock()
_live: set[subprocess.Popen[Any]] = set()


def terminate_children() -> None:
    """Kill the process group of every git process still running."""
    with _live_lock:
        processes = list(_live)
    for process in processes:
        if process.poll() is None:
            _kill(process)


cancellation.add_cleanup(terminate_children)


def _kill(process: subprocess.Popen[Any]) -> None:
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


def _reap(process: subprocess.Popen[Any], drain: threading.Thread | None) -> None:
    """Kill ``process`` if it still runs, wait for it and close its pipes."""
    if process.poll() is None:
        _kill(process)
    process.wait()
    with _live_lock:
        _live.discard(process)
    if drain is not None:
        drain.join(timeout=5)
    for stream in (process.stdout, process.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def run_git(args: Sequence[str], *, cwd: str, environment: Mapping[str, str], cap: int) -> bytes:
    """Run ``git <args>`` in ``cwd`` and return at most ``cap`` bytes of standard output.

    Raises :class:`GitOutputTooLarge` (process killed) past the cap and
    :class:`GitCommandFailed` when git cannot start or exits non-zero.
    """
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
    process: subprocess.Popen[Any] | None = None
    drain: threading.Thread | None = None
    output = bytearray()
    too_large = False
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
        descriptor = process.stdout.fileno()
        while True:
            chunk = os.read(descriptor, _READ_CHUNK)
            if not chunk:
                break
            output += chunk
            if len(output) > cap:
                too_large = True
                _kill(process)
                break
        status = process.wait()
    finally:
        if process is not None:
            with cancellation.deferred():
                _reap(process, drain)
    if too_large:
        raise GitOutputTooLarge()
    if status != 0:
        raise GitCommandFailed()
    return bytes(output)


def parse_commit_parents(commit_object: bytes) -> tuple[str, ...]:
    """The ``parent`` lines of a raw commit object's header, in order."""
    header, _, _ = commit_object.partition(b"\n\n")
    parents: list[str] = []
    for line in header.split(b"\n"):
        if line.startswith(b"parent "):
            parents.append(line[len(b"parent ") :].decode("ascii", "replace").strip())
    return tuple(parents)
