"""The isolated session: a throw-away bare repository for change collection (docs/reference.md,
"Change collection").

Every git command of a session goes through the isolated runner (:mod:`.runner`). The
repository is removed on every path. In local mode it may borrow the object store of the user's
repository (git alternates) instead of fetching; it then reads objects only, never the user's
configuration, hooks or attributes. A local run bounds every command of its session in time
(``bound``): objects read through alternates, or a fetch from the user's repository, still touch
files of that repository that may block.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Mapping, Sequence
from types import TracebackType

from ... import contracts as c
from ...core.credentials import usable_token
from ...errors import PlanningFailure
from .. import cancellation
from .local import alternates_line, local_object_directory
from .runner import (
    SMALL_OUTPUT_CAP,
    GitCommandFailed,
    GitError,
    GitTimeBound,
    credential_header,
    is_http_remote,
    is_object_id,
    parse_commit_parents,
    run_git,
    sanitised_environment,
    terminate_children,
)

__all__ = ["GitSession"]


def _is_blank(text: str) -> bool:
    return text.strip(c.WHITESPACE) == ""


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
        bound: GitTimeBound | None = None,
    ) -> None:
        self.remote = remote
        # None (GitHub mode): no time bound; the job's own timeout is the limit there.
        self._bound = bound
        self._temp_root = temp_root
        self._environ = environ
        self._borrow_from = borrow_from
        header = credential_header(remote, token)
        # A token that may not be sent must not silently turn into an anonymous fetch.
        self._fetch_refused = (
            is_http_remote(remote) and not _is_blank(token) and not usable_token(token)
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
                self._run(["init", "--bare", "--quiet", git_dir], SMALL_OUTPUT_CAP)
            except GitError:
                return self
            self.git_dir = git_dir
            self.ready = True
            if self._borrow_from is not None:
                objects = local_object_directory(
                    self._borrow_from, self._environ, bound=self._bound
                )
                if objects is not None:
                    self.borrowing = self._write_alternates(objects)
        except BaseException:
            self._abandon()
            raise
        return self

    # ---- borrowing (docs/reference.md, "Fetching and verification", local mode)
    # -------------------------------------------------------

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

    def _run(self, args: Sequence[str], cap: int) -> bytes:
        if self.directory is None:
            raise GitCommandFailed()
        if self._bound is not None:
            return self._bound.run(args, cwd=self.directory, environment=self._environment, cap=cap)
        return run_git(args, cwd=self.directory, environment=self._environment, cap=cap)

    def _git(self, args: Sequence[str], cap: int) -> bytes:
        if not self.ready or self.git_dir is None or self.directory is None:
            raise GitCommandFailed()
        return self._run(["--git-dir=" + self.git_dir, *args], cap)

    def _succeeds(self, args: Sequence[str]) -> bool:
        try:
            self._git(args, SMALL_OUTPUT_CAP)
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

    def unshallow(self, shas: Sequence[str]) -> bool:
        """Ask for the complete history of ``shas``."""
        return self._fetch("--unshallow", shas)

    def is_shallow(self) -> bool:
        """Whether the repository is still shallow (an unanswered question counts as yes)."""
        try:
            answer = self._git(["rev-parse", "--is-shallow-repository"], SMALL_OUTPUT_CAP)
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
        if not all(is_object_id(line, lowercase=True) for line in lines):
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
                ["rev-list", "--max-count=1", *commits, "--not", descendant], SMALL_OUTPUT_CAP
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
            output = self._git(["merge-base", "--all", first, second], SMALL_OUTPUT_CAP)
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

    def list_paths_at(self, commit: str) -> tuple[str, ...] | None:
        """Every file path of ``commit``'s tree (UTF-8 paths only); None when it cannot be
        listed within ``CHECK_TREE_CAP``."""
        if not is_object_id(commit):
            return None
        try:
            output = self._git(
                ["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit], c.CHECK_TREE_CAP
            )
        except GitError:
            return None
        paths: list[str] = []
        for raw in output.split(b"\0"):
            if raw:
                try:
                    paths.append(raw.decode("utf-8"))
                except UnicodeDecodeError:
                    continue
        return tuple(paths)

    def read_file_at(self, commit: str, path: str, cap: int) -> bytes | None:
        """The bytes of ``path`` at ``commit``; None when missing, unreadable or over ``cap``."""
        if not is_object_id(commit) or not path or "\0" in path:
            return None
        try:
            return self._git(["cat-file", "blob", f"{commit}:{path}"], cap)
        except GitError:
            return None
