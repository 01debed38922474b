"""Local mode: read-only queries on the user's repository (docs/reference.md, "Local use").

Each query is one ``git`` command run by the isolated runner in the user's repository, under the
sanitised environment; none writes there, and no user or system configuration, hook or attribute
file takes part. A question git cannot answer is None, never an error.

Every query is time-bounded, because git still reads the repository's own configuration file and
refs, and one of those that blocks (an ``include.path`` naming a FIFO) would hang the command for
good. A run passes its :class:`GitTimeBound`, so that after one timeout the rest fail at once;
without one, each query gets a bound of its own.

The object store a session may borrow (git alternates, docs/reference.md, "Fetching and
verification") is found here too, and written in the form git reads back exactly.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence

from ... import contracts as c
from .runner import (
    SMALL_OUTPUT_CAP,
    GitError,
    GitTimeBound,
    is_object_id,
    parse_commit_parents,
    sanitised_environment,
)

__all__ = [
    "alternates_line",
    "default_local_base",
    "is_git_repository",
    "local_file_at",
    "local_first_parent_log",
    "local_has_uncommitted_changes",
    "local_merge_parents",
    "local_object_directory",
    "local_top_level",
    "local_tree_paths",
    "resolve_local_revision",
]


def _local_output(
    repo: str,
    args: Sequence[str],
    environ: Mapping[str, str] | None,
    cap: int,
    bound: GitTimeBound | None,
) -> bytes | None:
    if not os.path.isdir(repo):
        return None
    environment = sanitised_environment(os.environ if environ is None else environ)
    if bound is None:
        bound = GitTimeBound(c.LOCAL_GIT_TIMEOUT_S)
    try:
        return bound.run(args, cwd=repo, environment=environment, cap=cap)
    except GitError:
        return None


def _local_answer(
    repo: str,
    args: Sequence[str],
    environ: Mapping[str, str] | None,
    bound: GitTimeBound | None = None,
) -> bytes | None:
    return _local_output(repo, args, environ, SMALL_OUTPUT_CAP, bound)


def _single_object_id(output: bytes | None) -> str | None:
    if output is None:
        return None
    text = output.decode("ascii", "replace").strip()
    return text if is_object_id(text, lowercase=True) else None


def is_git_repository(
    path: str, environ: Mapping[str, str] | None = None, *, bound: GitTimeBound | None = None
) -> bool:
    """Whether ``path`` is inside a git repository (work tree or bare)."""
    return _local_answer(path, ["rev-parse", "--git-dir"], environ, bound) is not None


def local_top_level(
    repo: str, environ: Mapping[str, str] | None = None, *, bound: GitTimeBound | None = None
) -> str | None:
    """The root of ``repo``'s work tree (``git rev-parse --show-toplevel``); None when bare."""
    output = _local_answer(repo, ["rev-parse", "--show-toplevel"], environ, bound)
    if output is None:
        return None
    text = output.decode("utf-8", "replace").rstrip("\n")
    return text or None


def resolve_local_revision(
    repo: str, rev: str, environ: Mapping[str, str], *, bound: GitTimeBound | None = None
) -> str | None:
    """The commit ``rev`` names in ``repo`` (``git rev-parse --verify <rev>^{commit}``)."""
    if not rev or rev.startswith("-") or any(ord(character) < 0x20 for character in rev):
        return None
    output = _local_answer(
        repo, ["rev-parse", "--verify", "--quiet", rev + "^{commit}"], environ, bound
    )
    return _single_object_id(output)


def _unique_local_merge_base(
    repo: str, first: str, second: str, environ: Mapping[str, str], bound: GitTimeBound | None
) -> str | None:
    output = _local_answer(repo, ["merge-base", "--all", first, second], environ, bound)
    if output is None:
        return None
    bases = output.decode("ascii", "replace").split()
    if len(bases) != 1 or not is_object_id(bases[0], lowercase=True):
        return None
    return bases[0]


def default_local_base(
    repo: str, environ: Mapping[str, str], *, bound: GitTimeBound | None = None
) -> str | None:
    """Unique merge base of ``HEAD`` and ``origin/HEAD``, or of ``HEAD`` and ``main``."""
    head = resolve_local_revision(repo, "HEAD", environ, bound=bound)
    if head is None:
        return None
    upstream = resolve_local_revision(repo, "origin/HEAD", environ, bound=bound)
    if upstream is None:
        upstream = resolve_local_revision(repo, "main", environ, bound=bound)
    if upstream is None:
        return None
    return _unique_local_merge_base(repo, head, upstream, environ, bound)


def _local_path_answer(
    repo: str, args: Sequence[str], environ: Mapping[str, str], bound: GitTimeBound | None
) -> str | None:
    # A path may contain any byte but NUL, even a newline: only git's own final newline goes.
    output = _local_answer(repo, args, environ, bound)
    if output is None or not output.endswith(b"\n") or b"\0" in output:
        return None
    path = os.fsdecode(output[:-1])
    return path if os.path.isabs(path) else None


def local_object_directory(
    repo: str, environ: Mapping[str, str], *, bound: GitTimeBound | None = None
) -> str | None:
    """The object directory a session may borrow from ``repo``, or None when it may not.

    ``repo`` is a work tree (or a directory inside one), a linked worktree or a bare repository;
    the objects live in its common git directory. A shallow repository is not borrowed from: its
    history is cut on purpose. Only ``git rev-parse`` runs in ``repo``, under the sanitised
    environment, as for revisions.
    """
    common = _local_path_answer(
        repo, ["rev-parse", "--path-format=absolute", "--git-common-dir"], environ, bound
    )
    if common is None:
        return None
    shallow = _local_answer(repo, ["rev-parse", "--is-shallow-repository"], environ, bound)
    if shallow != b"false\n":
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
    repo: str,
    sha: str,
    environ: Mapping[str, str] | None = None,
    *,
    bound: GitTimeBound | None = None,
) -> tuple[str, ...] | None:
    """The parents of commit ``sha`` in ``repo``, or None when it cannot be read."""
    if not is_object_id(sha):
        return None
    output = _local_output(repo, ["cat-file", "commit", sha], environ, c.GIT_COMMIT_CAP, bound)
    return parse_commit_parents(output) if output is not None else None


def local_file_at(
    repo: str,
    commit: str,
    path: str,
    cap: int,
    environ: Mapping[str, str] | None = None,
    *,
    bound: GitTimeBound | None = None,
) -> bytes | None:
    """The bytes of ``path`` at ``commit`` in ``repo``; None if missing, unreadable or over cap."""
    if not is_object_id(commit) or not path or "\0" in path:
        return None
    return _local_output(repo, ["cat-file", "blob", f"{commit}:{path}"], environ, cap, bound)


def local_tree_paths(
    repo: str,
    commit: str,
    environ: Mapping[str, str] | None = None,
    *,
    bound: GitTimeBound | None = None,
) -> tuple[str, ...] | None:
    """Every file path of ``commit``'s tree in ``repo`` (UTF-8 paths only), or None."""
    if not is_object_id(commit):
        return None
    output = _local_output(
        repo,
        ["ls-tree", "-r", "-z", "--name-only", "--full-tree", commit],
        environ,
        c.CHECK_TREE_CAP,
        bound,
    )
    if output is None:
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


def local_first_parent_log(
    repo: str,
    head: str,
    *,
    since: str | None,
    limit: int,
    environ: Mapping[str, str] | None = None,
    bound: GitTimeBound | None = None,
) -> list[tuple[str, tuple[str, ...], str]] | None:
    """``(sha, parents, subject)`` of up to ``limit`` commits on the first-parent line of
    ``head``, newest first, optionally only those committed since ``since`` (an ISO date).

    None when the log cannot be read. Subjects are decoded leniently: they are shown, never run.
    """
    if not is_object_id(head) or limit < 1:
        return None
    args = ["log", "--first-parent", f"--max-count={limit}", "--format=%H%x00%P%x00%s%x00"]
    if since is not None:
        args.append(f"--since={since}")
    output = _local_output(repo, [*args, head, "--"], environ, c.HISTORY_LOG_CAP, bound)
    if output is None:
        return None
    fields = output.decode("utf-8", "replace").split("\0")
    entries: list[tuple[str, tuple[str, ...], str]] = []
    for index in range(0, len(fields) - 2, 3):
        sha = fields[index].strip()
        parents = tuple(fields[index + 1].split())
        if not is_object_id(sha, lowercase=True) or not all(
            is_object_id(parent, lowercase=True) for parent in parents
        ):
            return None
        entries.append((sha, parents, fields[index + 2]))
    return entries


def local_has_uncommitted_changes(
    repo: str,
    environ: Mapping[str, str] | None = None,
    *,
    bound: GitTimeBound | None = None,
) -> bool | None:
    """Whether ``repo``'s work tree differs from its ``HEAD``: staged or unstaged changes, or
    untracked files that are not ignored (``git status --porcelain -z``).

    None when git cannot tell: a bare repository, no repository, a status past
    ``LOCAL_STATUS_CAP`` bytes or past the bound. ``GIT_OPTIONAL_LOCKS=0`` of the sanitised
    environment keeps git from refreshing the index, so nothing is written; the file-system
    monitor is switched off, so no program named in the configuration runs.
    """
    output = _local_output(
        repo,
        [
            "-c",
            "core.fsmonitor=false",
            c.GIT_STATUS_COMMAND,
            "--porcelain",
            "-z",
            "--untracked-files=normal",
        ],
        environ,
        c.LOCAL_STATUS_CAP,
        bound,
    )
    if output is None:
        return None
    return output != b""
