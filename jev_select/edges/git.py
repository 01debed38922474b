"""The git edge: one isolated subprocess runner plus small named queries (spec §6, §15).

Every git process runs from an argument list (never a shell) with stdin closed, stderr drained and
discarded, and stdout read up to a per-command byte cap; a process that writes past its cap is
killed. The environment is the caller's minus every ``GIT_*`` variable, plus settings that switch
off user and system configuration, hooks, attributes, external diff drivers, pagers, prompts and
redirects. Nothing git prints is ever shown or put into an exception.

Change collection happens in a throw-away bare repository (:class:`GitSession`) that is removed on
every path. In local mode that repository may borrow the object store of the user's repository
(git alternates) instead of fetching; it then reads objects only, never the user's configuration,
hooks or attributes. The local-mode helpers at the bottom query the user's repository read-only.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import TYPE_CHECKING, Any, BinaryIO

from .. import contracts as c
from ..core.credentials import basic_credential, usable_token
from ..errors import PlanningFailure
from . import cancellation

if TYPE_CHECKING:
    from types import ModuleType

__all__ = [
    "GitCommandFailed",
    "GitError",
    "GitOutputTooLarge",
    "GitSession",
    "credential_header",
    "default_local_base",
    "is_git_repository",
    "is_object_id",
    "local_file_at",
    "local_merge_parents",
    "local_object_directory",
    "local_tree_paths",
    "parse_commit_parents",
    "resolve_local_revision",
    "sanitised_environment",
]

# Small answers (SHAs, booleans) never need more than this.
_SMALL_OUTPUT_CAP = 1_048_576
_READ_CHUNK = 65536
_OBJECT_ID = re.compile(r"[0-9a-fA-F]{40}|[0-9a-fA-F]{64}")
_LOWER_OBJECT_ID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")


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
# Environment and credentials (spec §6.1, §6.2)
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


def _is_http_remote(remote: str) -> bool:
    return remote.lower().startswith(("http://", "https://"))


def _is_blank(text: str) -> bool:
    return text.strip(c.WHITESPACE) == ""


def credential_header(remote: str, token: str) -> str | None:
    """The ``Authorization`` header for ``remote``, or None when nothing may be sent.

    Only http(s) remotes get it, and only for a non-blank token of printable ASCII.
    """
    if not _is_http_remote(remote) or not usable_token(token):
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


# ---------------------------------------------------------------------------------------------
# The isolated session (spec §6.1 to §6.4)
# ---------------------------------------------------------------------------------------------


class GitSession:
    """A temporary bare repository plus the remote it fetches from.

    Use as a context manager. Creating the repository never raises: if it fails, every query
    fails like a git command would, so collection reports ``git-fetch-failed``. Leaving the
    context removes the whole temporary directory; a removal failure raises
    ``PlanningFailure("internal-error")``.
    """

    def __init__(
        self,
        remote: str,
        *,
        token: str,
        temp_root: str,
        environ: Mapping[str, str],
        borrow_from: str | None = None,
    ) -> None:
        self.remote = remote
        self._temp_root = temp_root
        self._environ = environ
        self._borrow_from = borrow_from
        header = credential_header(remote, token)
        # A token that may not be sent must not silently turn into an anonymous fetch.
        self._fetch_refused = (
            _is_http_remote(remote) and not _is_blank(token) and not usable_token(token)
        )
        self._environment = sanitised_environment(environ, extra_header=header)
        self.directory: str | None = None
        self.git_dir: str | None = None
        self.ready = False
        # True while the repository reads its objects from a local repository (alternates).
        self.borrowing = False

    def __enter__(self) -> GitSession:
        # ``__exit__`` does not run when ``__enter__`` raises: a cancellation arriving here removes
        # the directory itself. It is put on record before a cancellation can strike.
        try:
            with cancellation.deferred():
                try:
                    self.directory = tempfile.mkdtemp(prefix=c.GIT_TEMP_PREFIX, dir=self._temp_root)
                except OSError:
                    return self
            git_dir = os.path.join(self.directory, "repo.git")
            try:
                run_git(
                    ["init", "--bare", "--quiet", git_dir],
                    cwd=self.directory,
                    environment=self._environment,
                    cap=_SMALL_OUTPUT_CAP,
                )
            except GitError:
                return self
            self.git_dir = git_dir
            self.ready = True
            if self._borrow_from is not None:
                objects = local_object_directory(self._borrow_from, self._environ)
                if objects is not None:
                    self.borrowing = self._write_alternates(objects)
        except BaseException:
            self._abandon()
            raise
        return self

    # ---- borrowing (spec §6.3, local mode) -------------------------------------------------------

    def _alternates_path(self) -> str | None:
        if self.git_dir is None:
            return None
        return os.path.join(self.git_dir, "objects", "info", "alternates")

    def _write_alternates(self, objects: str) -> bool:
        path = self._alternates_path()
        if path is None:
            return False
        try:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "wb") as handle:
                handle.write(alternates_line(objects))
        except OSError:
            return False
        return True

    def stop_borrowing(self) -> bool:
        """Forget the borrowed object store so that commits are fetched from the remote instead.

        Nothing was written while borrowing (no fetch runs then), so the repository is as empty
        as a new one afterwards. False when the alternates file could not be removed.
        """
        if not self.borrowing:
            return True
        path = self._alternates_path()
        try:
            if path is not None:
                os.unlink(path)
        except OSError:
            return False
        self.borrowing = False
        return True

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if isinstance(exc, cancellation.Cancelled):
            self._abandon()
        else:
            self.close()

    def _abandon(self) -> None:
        """Clean up on the way out of an interrupted session; the interruption stays the error.

        A git process started by another thread may still write into the directory, so every
        git process is stopped first. A directory that cannot be removed is not reported over
        the interruption already on its way.
        """
        terminate_children()
        with contextlib.suppress(PlanningFailure):
            self.close()

    def close(self) -> None:
        """Remove the temporary directory; raise ``PlanningFailure`` when that fails."""
        # Half a removal is the one outcome worse than none: a cancellation waits for it.
        with cancellation.deferred():
            directory, self.directory = self.directory, None
            self.ready = False
            if directory is None:
                return
            failures: list[bool] = []

            def note_failure(*_: object) -> None:
                failures.append(True)

            if sys.version_info >= (3, 12):
                shutil.rmtree(directory, onexc=note_failure)
            else:
                shutil.rmtree(directory, onerror=note_failure)
            if failures or os.path.lexists(directory):
                raise PlanningFailure(c.FAILURE_INTERNAL_ERROR)

    # ---- running ----------------------------------------------------------------------------

    def _git(self, args: Sequence[str], cap: int) -> bytes:
        if not self.ready or self.git_dir is None or self.directory is None:
            raise GitCommandFailed()
        return run_git(
            ["--git-dir=" + self.git_dir, *args],
            cwd=self.directory,
            environment=self._environment,
            cap=cap,
        )

    def _succeeds(self, args: Sequence[str]) -> bool:
        try:
            self._git(args, _SMALL_OUTPUT_CAP)
        except GitError:
            return False
        return True

    @staticmethod
    def _require_ids(*object_ids: str) -> None:
        if not all(is_object_id(object_id) for object_id in object_ids):
            raise GitCommandFailed()

    # ---- fetching ---------------------------------------------------------------------------

    def _fetch(self, depth_option: str, object_ids: Sequence[str]) -> bool:
        # A fetch into a repository that borrows objects could make it shallow on top of a
        # complete store; callers stop borrowing before they fetch.
        if self.borrowing or self._fetch_refused:
            return False
        if not all(is_object_id(sha) for sha in object_ids):
            return False
        return self._succeeds(
            [
                "fetch",
                "--no-tags",
                "--no-write-fetch-head",
                "--force",
                depth_option,
                self.remote,
                *object_ids,
            ]
        )

    def fetch(self, shas: Sequence[str], *, depth: int = 1) -> bool:
        """Fetch commits at ``depth``; True when git reported success."""
        return self._fetch(f"--depth={depth}", shas)

    def deepen(self, count: int, shas: Sequence[str]) -> bool:
        """Deepen the shallow history of ``shas`` by ``count`` commits."""
        return self._fetch(f"--deepen={count}", shas)

    def unshallow(self, shas: Sequence[str]) -> bool:
        """Ask for the complete history of ``shas``."""
        return self._fetch("--unshallow", shas)

    def is_shallow(self) -> bool:
        """Whether the repository is still shallow (an unanswered question counts as yes)."""
        try:
            answer = self._git(["rev-parse", "--is-shallow-repository"], _SMALL_OUTPUT_CAP)
        except GitError:
            return True
        return answer.strip() != b"false"

    def shallow_commits(self) -> tuple[str, ...] | None:
        """The commits git treats as having no parents here (the shallow boundary).

        Read from the temporary repository's own ``shallow`` file; empty when there is none,
        None when it cannot be read or holds anything but object names.
        """
        if not self.ready or self.git_dir is None:
            return None
        try:
            with open(os.path.join(self.git_dir, "shallow"), "rb") as handle:
                content = handle.read(c.GIT_SHALLOW_FILE_CAP + 1)
        except FileNotFoundError:
            return ()
        except OSError:
            return None
        if len(content) > c.GIT_SHALLOW_FILE_CAP:
            return None
        lines = content.decode("ascii", "replace").split("\n")
        if lines and lines[-1] == "":
            lines.pop()
        if not all(_LOWER_OBJECT_ID.fullmatch(line) for line in lines):
            return None
        return tuple(lines)

    def all_ancestors_of(self, commits: Sequence[str], descendant: str) -> bool:
        """Whether every commit of ``commits`` is ``descendant`` or one of its ancestors.

        Ancestry is that of the history present here (shallow commits have no parents). One
        ``git rev-list`` lists what ``commits`` reach and ``descendant`` does not; nothing may.
        """
        self._require_ids(descendant, *commits)
        if not commits:
            return True
        try:
            output = self._git(
                ["rev-list", "--max-count=1", *commits, "--not", descendant], _SMALL_OUTPUT_CAP
            )
        except GitError:
            return False
        return output.strip() == b""

    def has_commit(self, sha: str) -> bool:
        """Whether ``sha`` names a commit present in the repository."""
        if not is_object_id(sha):
            return False
        return self._succeeds(["cat-file", "-e", sha + "^{commit}"])

    def ensure_commit(self, sha: str) -> bool:
        """Make ``sha`` present, fetching it at depth 1 when absent."""
        if self.has_commit(sha):
            return True
        return self.fetch([sha], depth=1) and self.has_commit(sha)

    # ---- reading ----------------------------------------------------------------------------

    def commit_parents(self, sha: str) -> tuple[str, ...]:
        """The parents recorded in commit ``sha``, in order."""
        self._require_ids(sha)
        return parse_commit_parents(self._git(["cat-file", "commit", sha], c.GIT_COMMIT_CAP))

    def merge_bases(self, first: str, second: str) -> tuple[str, ...]:
        """Every merge base of two commits (``git merge-base --all``); empty when none."""
        self._require_ids(first, second)
        try:
            output = self._git(["merge-base", "--all", first, second], _SMALL_OUTPUT_CAP)
        except GitCommandFailed:
            return ()
        return tuple(line for line in output.decode("ascii", "replace").split() if line)

    def is_ancestor(self, ancestor: str, descendant: str) -> bool:
        """Whether ``ancestor`` is reachable from ``descendant`` in the history fetched so far.

        A yes is final; in a shallow repository a no may only mean the history is cut short.
        """
        self._require_ids(ancestor, descendant)
        return self._succeeds(["merge-base", "--is-ancestor", ancestor, descendant])

    def diff_raw(self, base: str, tested: str) -> bytes:
        """``git diff --raw -z`` between two commits (cap 4 MiB), unparsed."""
        self._require_ids(base, tested)
        return self._git(
            [
                "diff",
                "--raw",
                "-z",
                "--full-index",
                "--no-abbrev",
                "-M",
                "--no-ext-diff",
                "--no-textconv",
                base,
                tested,
                "--",
            ],
            c.GIT_INVENTORY_CAP,
        )

    def diff_numstat(self, base: str, tested: str) -> bytes:
        """``git diff --numstat -z`` between two commits (cap 4 MiB), unparsed."""
        self._require_ids(base, tested)
        return self._git(
            [
                "diff",
                "--numstat",
                "-z",
                "-M",
                "--no-ext-diff",
                "--no-textconv",
                base,
                tested,
                "--",
            ],
            c.GIT_INVENTORY_CAP,
        )

    def blob(self, oid: str, cap: int = c.GIT_BLOB_CAP) -> bytes:
        """The content of blob ``oid``; raises :class:`GitOutputTooLarge` past ``cap``."""
        self._require_ids(oid)
        return self._git(["cat-file", "blob", oid], cap)

    def patch(self, base: str, tested: str, cap: int) -> bytes:
        """The unified patch between two commits, exactly as git writes it (cap inclusive)."""
        self._require_ids(base, tested)
        return self._git(
            [
                "diff",
                "--patch",
                "--full-index",
                "-M",
                "--no-ext-diff",
                "--no-textconv",
                "--no-color",
                base,
                tested,
                "--",
            ],
            cap,
        )

    def read_file_at(self, commit: str, path: str, cap: int) -> bytes | None:
        """The bytes of ``path`` at ``commit``; None when missing, unreadable or over ``cap``."""
        if not is_object_id(commit) or not path or "\0" in path:
            return None
        try:
            return self._git(["cat-file", "blob", f"{commit}:{path}"], cap)
        except GitError:
            return None


# ---------------------------------------------------------------------------------------------
# Local mode (spec §15)
# ---------------------------------------------------------------------------------------------


def _local_answer(
    repo: str, args: Sequence[str], environ: Mapping[str, str] | None
) -> bytes | None:
    environment = sanitised_environment(os.environ if environ is None else environ)
    if not os.path.isdir(repo):
        return None
    try:
        return run_git(args, cwd=repo, environment=environment, cap=_SMALL_OUTPUT_CAP)
    except GitError:
        return None


def _single_object_id(output: bytes | None) -> str | None:
    if output is None:
        return None
    text = output.decode("ascii", "replace").strip()
    return text if _LOWER_OBJECT_ID.fullmatch(text) else None


def is_git_repository(path: str, environ: Mapping[str, str] | None = None) -> bool:
    """Whether ``path`` is inside a git repository (work tree or bare)."""
    return _local_answer(path, ["rev-parse", "--git-dir"], environ) is not None


def resolve_local_revision(repo: str, rev: str, environ: Mapping[str, str]) -> str | None:
    """The commit ``rev`` names in ``repo`` (``git rev-parse --verify <rev>^{commit}``)."""
    if not rev or rev.startswith("-") or any(ord(character) < 0x20 for character in rev):
        return None
    output = _local_answer(repo, ["rev-parse", "--verify", "--quiet", rev + "^{commit}"], environ)
    return _single_object_id(output)


def _unique_local_merge_base(
    repo: str, first: str, second: str, environ: Mapping[str, str]
) -> str | None:
    output = _local_answer(repo, ["merge-base", "--all", first, second], environ)
    if output is None:
        return None
    bases = output.decode("ascii", "replace").split()
    if len(bases) != 1 or _LOWER_OBJECT_ID.fullmatch(bases[0]) is None:
        return None
    return bases[0]


def default_local_base(repo: str, environ: Mapping[str, str]) -> str | None:
    """Unique merge base of ``HEAD`` and ``origin/HEAD``, or of ``HEAD`` and ``main``."""
    head = resolve_local_revision(repo, "HEAD", environ)
    if head is None:
        return None
    upstream = resolve_local_revision(repo, "origin/HEAD", environ)
    if upstream is None:
        upstream = resolve_local_revision(repo, "main", environ)
    if upstream is None:
        return None
    return _unique_local_merge_base(repo, head, upstream, environ)


def _local_path_answer(repo: str, args: Sequence[str], environ: Mapping[str, str]) -> str | None:
    # A path may contain any byte but NUL, even a newline: only git's own final newline goes.
    output = _local_answer(repo, args, environ)
    if output is None or not output.endswith(b"\n") or b"\0" in output:
        return None
    path = os.fsdecode(output[:-1])
    return path if os.path.isabs(path) else None


def local_object_directory(repo: str, environ: Mapping[str, str]) -> str | None:
    """The object directory a session may borrow from ``repo``, or None when it may not.

    ``repo`` is a work tree (or a directory inside one), a linked worktree or a bare repository;
    the objects live in its common git directory. A shallow repository is not borrowed from: its
    history is cut on purpose. Only ``git rev-parse`` runs in ``repo``, under the sanitised
    environment, as for revisions.
    """
    common = _local_path_answer(
        repo, ["rev-parse", "--path-format=absolute", "--git-common-dir"], environ
    )
    if common is None:
        return None
    if _local_answer(repo, ["rev-parse", "--is-shallow-repository"], environ) != b"false\n":
        return None
    objects = os.path.join(common, "objects")
    if not os.path.isdir(objects):
        return None
    return objects


def alternates_line(objects: str) -> bytes:
    """One line of an ``objects/info/alternates`` file naming ``objects``.

    Always written C-quoted, which git reads since 2.11, so that a path starting with ``#`` or a
    quote, or holding a newline or a backslash, still names exactly that directory.
    """
    quoted = bytearray(b'"')
    for byte in os.fsencode(objects):
        if byte in (0x22, 0x5C):
            quoted += b"\\" + bytes([byte])
        elif byte < 0x20 or byte == 0x7F:
            quoted += b"\\%03o" % byte
        else:
            quoted.append(byte)
    return bytes(quoted) + b'"\n'


def local_merge_parents(
    repo: str, sha: str, environ: Mapping[str, str] | None = None
) -> tuple[str, ...] | None:
    """The parents of commit ``sha`` in ``repo``, or None when it cannot be read."""
    if not is_object_id(sha):
        return None
    environment = sanitised_environment(os.environ if environ is None else environ)
    if not os.path.isdir(repo):
        return None
    try:
        output = run_git(
            ["cat-file", "commit", sha], cwd=repo, environment=environment, cap=c.GIT_COMMIT_CAP
        )
    except GitError:
        return None
    return parse_commit_parents(output)


def local_file_at(
    repo: str, commit: str, path: str, cap: int, environ: Mapping[str, str] | None = None
) -> bytes | None:
    """The bytes of ``path`` at ``commit`` in ``repo``; None if missing, unreadable or over cap."""
    if not is_object_id(commit) or not path or "\0" in path or not os.path.isdir(repo):
        return None
    environment = sanitised_environment(os.environ if environ is None else environ)
    try:
        return run_git(
            ["cat-file", "blob", f"{commit}:{path}"], cwd=repo, environment=environment, cap=cap
        )
    except GitError:
        return None


def local_tree_paths(
    repo: str, commit: str, environ: Mapping[str, str] | None = None
) -> tuple[str, ...] | None:
    """Every file path of ``commit``'s tree in ``repo`` (UTF-8 paths only), or None."""
    if not is_object_id(commit) or not os.path.isdir(repo):
        return None
    environment = sanitised_environment(os.environ if environ is None else environ)
    try:
        output = run_git(
            ["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit],
            cwd=repo,
            environment=environment,
            cap=c.CHECK_TREE_CAP,
        )
    except GitError:
        return None
    paths: list[str] = []
    for raw in output.split(b"\0"):
        if not raw:
            continue
        try:
            paths.append(raw.decode("utf-8"))
        except UnicodeDecodeError:
            continue
    return tuple(paths)
