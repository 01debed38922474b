"""Change collection: fetch, verify and inventory the change under test (docs/reference.md,
"Fetching and verification", "Collection checks", "Changed paths and diff facts").

:func:`collect_change` drives a :class:`~jev_select.git.GitSession` through the fixed check order
of docs/reference.md, "Collection checks" and turns every git problem into a
:class:`~jev_select.models.Collection` carrying an error code; it raises only on programming errors.
The parsers of git's ``-z`` output are pure functions so the rules they enforce can be tested
without git.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

import attrs

from .. import contracts as c
from ..core.jsonutil import code_unit_key
from ..core.models import ChangeSet, Collection, Commits
from ..errors import CodedError
from .git.runner import GitCommandFailed, GitError, GitOutputTooLarge, is_object_id
from .git.session import GitSession

__all__ = [
    "CollectionError",
    "NumstatRecord",
    "RawRecord",
    "changed_paths",
    "check_blob",
    "collect_change",
    "is_literal_path",
    "parse_numstat",
    "parse_raw",
    "proven_merge_base",
]

_RAW_HEADER = re.compile(
    rb":([0-9]{6}) ([0-9]{6}) ([0-9a-f]{40}|[0-9a-f]{64}) ([0-9a-f]{40}|[0-9a-f]{64}) "
    rb"([A-Z][0-9]*)"
)
_COUNT = re.compile(rb"[0-9]+|-")
_GITLINK_MODE = "160000"
_TWO_PATH_STATUSES = frozenset({"R", "C"})


class CollectionError(CodedError):
    """A collection check failed; ``code`` is one of the collection error codes."""


@attrs.frozen
class RawRecord:
    """One record of ``git diff --raw -z``; ``paths`` has two entries for renames and copies."""

    old_mode: str
    new_mode: str
    old_oid: str
    new_oid: str
    status: str
    paths: tuple[str, ...]


@attrs.frozen
class NumstatRecord:
    """One record of ``git diff --numstat -z``; a count is None when git printed ``-``."""

    added: int | None
    deleted: int | None
    paths: tuple[str, ...]

    @property
    def binary(self) -> bool:
        return self.added is None or self.deleted is None


def _decode_path(raw: bytes) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE) from None


def is_literal_path(path: str) -> bool:
    """Nonempty, no NUL, no leading ``/``, and no empty, ``.`` or ``..`` segment."""
    if not path or "\0" in path or path.startswith("/"):
        return False
    return all(segment not in ("", ".", "..") for segment in path.split("/"))


def _split_fields(output: bytes) -> list[bytes]:
    if not output:
        return []
    if not output.endswith(b"\0"):
        raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE)
    return output[:-1].split(b"\0")


def parse_raw(output: bytes) -> tuple[RawRecord, ...]:
    """Parse ``git diff --raw -z`` output (checks 3 and 4 of docs/reference.md,
    "Collection checks").

    Raises ``CollectionError("unrepresentable-change")`` for a malformed record, a path that is
    not strict UTF-8, or a path that is not literal.
    """
    fields = _split_fields(output)
    raw_paths: list[tuple[bytes, ...]] = []
    headers: list[tuple[str, str, str, str, str]] = []
    position = 0
    while position < len(fields):
        match = _RAW_HEADER.fullmatch(fields[position])
        if match is None:
            raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE)
        old_mode, new_mode, old_oid, new_oid, status = (
            part.decode("ascii") for part in match.groups()
        )
        count = 2 if status[0] in _TWO_PATH_STATUSES else 1
        record_paths = fields[position + 1 : position + 1 + count]
        if len(record_paths) != count:
            raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE)
        headers.append((old_mode, new_mode, old_oid, new_oid, status))
        raw_paths.append(tuple(record_paths))
        position += 1 + count
    # Paths are judged only once every record is well formed, so that a structural problem
    # anywhere (check 3) wins over a path problem (check 4).
    records: list[RawRecord] = []
    for header, paths_bytes in zip(headers, raw_paths, strict=True):
        paths = tuple(_decode_path(raw) for raw in paths_bytes)
        if not all(is_literal_path(path) for path in paths):
            raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE)
        records.append(RawRecord(*header, paths=paths))
    return tuple(records)


def parse_numstat(output: bytes) -> tuple[NumstatRecord, ...]:
    """Parse ``git diff --numstat -z`` output (check 6 of docs/reference.md, "Collection checks").

    Raises ``binary-change`` when a record read before any malformation has ``-`` in a count
    column, and ``unrepresentable-change`` when the output is malformed.
    """
    records: list[NumstatRecord] = []
    binary = False
    try:
        fields = _split_fields(output)
        position = 0
        while position < len(fields):
            counts = fields[position].split(b"\t", 2)
            if len(counts) != 3 or not all(_COUNT.fullmatch(part) for part in counts[:2]):
                raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE)
            added, deleted, path = counts
            if path:
                paths: tuple[bytes, ...] = (path,)
                position += 1
            else:
                # A rename or copy: an empty path field, then the two paths as fields.
                paths = tuple(fields[position + 1 : position + 3])
                if len(paths) != 2 or not all(paths):
                    raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE)
                position += 3
            record = NumstatRecord(
                added=None if added == b"-" else int(added),
                deleted=None if deleted == b"-" else int(deleted),
                paths=tuple(part.decode("utf-8", "surrogateescape") for part in paths),
            )
            binary = binary or record.binary
            records.append(record)
    except CollectionError:
        if binary:
            raise CollectionError(c.REASON_BINARY_CHANGE) from None
        raise
    if binary:
        raise CollectionError(c.REASON_BINARY_CHANGE)
    return tuple(records)


def check_blob(content: bytes, *, cap: int = c.GIT_BLOB_CAP) -> None:
    """Check 7 of docs/reference.md, "Collection checks" for one blob: size, NUL byte, strict UTF-8
    (a BOM is fine)."""
    if len(content) > cap:
        raise CollectionError(c.REASON_DIFF_TOO_LARGE)
    if b"\0" in content:
        raise CollectionError(c.REASON_BINARY_CHANGE)
    try:
        content.decode("utf-8")
    except UnicodeDecodeError:
        raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE) from None


def changed_paths(records: tuple[RawRecord, ...]) -> tuple[str, ...]:
    """Every path of every record, both sides of renames and copies, unique, code-unit order."""
    unique = {path for record in records for path in record.paths}
    return tuple(sorted(unique, key=code_unit_key))


def _blob_ids(records: tuple[RawRecord, ...]) -> Iterator[str]:
    seen: set[str] = set()
    for record in records:
        for mode, oid in ((record.old_mode, record.old_oid), (record.new_mode, record.new_oid)):
            if set(oid) == {"0"} or mode == _GITLINK_MODE or oid in seen:
                continue
            seen.add(oid)
            yield oid


# ---------------------------------------------------------------------------------------------
# Fetching and verification (docs/reference.md, "Fetching and verification")
# ---------------------------------------------------------------------------------------------


def _same_id(first: str, second: str) -> bool:
    return first.lower() == second.lower()


def _complete_history(session: GitSession, base: str, head: str) -> bool:
    """Fetch the rest of the history; True when nothing is shallow any more."""
    session.unshallow([base, head])
    if not session.is_shallow():
        return True
    session.fetch([base, head], depth=c.GIT_FULL_DEPTH)
    return not session.is_shallow()


def _reaches(session: GitSession, base: str, head: str) -> bool:
    """Whether ``base`` is an ancestor of ``head``, deepening the history only as far as needed.

    A queue commit usually sits one or a few commits above its base, so the first depth normally
    answers. Only a no needs the complete history, which a failed fetch cannot give: that is
    ``git-fetch-failed``.
    """
    if session.is_ancestor(base, head):
        return True
    for depth in c.GIT_DEPTH_STEPS:
        # Absolute depths from both tips, as in head mode: a relative ``--deepen`` can leave a
        # shallow tip undeepened. A failed fetch is judged by the checks that follow.
        session.fetch([base, head], depth=depth)
        if session.is_ancestor(base, head):
            return True
        if not session.is_shallow():
            return False
    session.unshallow([base, head])
    if session.is_shallow():
        session.fetch([base, head], depth=c.GIT_FULL_DEPTH)
    if session.is_shallow():
        raise CollectionError(c.REASON_GIT_FETCH_FAILED)
    return session.is_ancestor(base, head)


def _verify_queue_commit(session: GitSession, *, base: str, head: str, tested: str) -> str:
    """Check 1 for a merge-queue commit: present, and built on top of its base.

    There is no parent check: depending on the queue's merge method the commit is a merge, a
    squash or the last of several rebased commits, so only ancestry is required.
    """
    if not _same_id(tested, head):
        raise CollectionError(c.REASON_SHA_INCOHERENT)
    if not (session.fetch([base], depth=1) and session.has_commit(base)):
        raise CollectionError(c.REASON_GIT_FETCH_FAILED)
    if not session.ensure_commit(head):
        raise CollectionError(c.REASON_GIT_FETCH_FAILED)
    if not _reaches(session, base, head):
        raise CollectionError(c.REASON_SHA_INCOHERENT)
    return base


def proven_merge_base(session: GitSession, base: str, head: str) -> str | None:
    """The merge base of ``base`` and ``head`` when the history present proves it unique.

    The history may be shallow. Let S be the commits present, with the listed shallow commits
    (the boundary B) treated as parentless, as git does here, and G the full history. Every
    path of G from a commit x of S either stays in S or leaves it through the parents of a
    boundary commit that S already reaches from x, so

        ancestors_G(x) = ancestors_S(x) + the ancestors_G of every b in B within ancestors_S(x).

    Suppose ``git merge-base --all`` prints exactly one commit M in S and every b of B is an
    ancestor of M in S. M is a common ancestor in G too (edges of S are edges of G). Take any
    common ancestor c in G. If base or head reaches c through a boundary commit b, then c is an
    ancestor of b, and b of M, so c is an ancestor of M. Otherwise both reach c inside S, so c
    is a common ancestor in S and, S being finite, lies below one of S's best common ancestors:
    M again. Every common ancestor of G is thus M or below M, so M is the one best common
    ancestor of G: exactly what ``git merge-base --all`` would print with the whole history.

    Both conditions matter. A boundary commit that is not below M may lead, beyond the cut, to
    a commit that is below M's descendants on one side (so M is not the best) or to a second
    best common ancestor (a criss-cross); a boundary below M cannot, whatever its missing
    parents are, because everything behind it is behind M. When the test fails nothing is
    concluded; the caller deepens or fetches the whole history.
    """
    bases = session.merge_bases(base, head)
    if len(bases) != 1 or not is_object_id(bases[0], lowercase=True):
        return None
    boundary = session.shallow_commits()
    if boundary is None or len(boundary) > c.GIT_BOUNDARY_LIMIT:
        return None
    if not session.all_ancestors_of(boundary, bases[0]):
        return None
    return bases[0]


def _head_mode_diff_base(session: GitSession, base: str, head: str) -> str:
    """The unique merge base of ``base`` and ``head`` (docs/reference.md,
    "Fetching and verification" step 5, amended).

    A borrowed object store holds the complete history (shallow repositories are not borrowed
    from). Otherwise the history is deepened in bounded steps until the merge base is proven
    unique (see :func:`proven_merge_base`), and fetched whole only when no step proves it; the
    cost then follows the distance to the merge base, not the age of the repository.
    """
    if not session.borrowing:
        for depth in (None, *c.GIT_DEPTH_STEPS):
            if depth is not None:
                # Each step asks for the history to that depth from both tips. Git's relative
                # ``--deepen`` can leave a tip that is itself a shallow commit undeepened when
                # its parents' history is partly present; an absolute depth never does. A failed
                # fetch is judged by the checks that follow, like a successful one.
                session.fetch([base, head], depth=depth)
            if not session.is_shallow():
                break
            proven = proven_merge_base(session, base, head)
            if proven is not None:
                return proven
        else:
            if not _complete_history(session, base, head):
                raise CollectionError(c.REASON_GIT_FETCH_FAILED)
    bases = session.merge_bases(base, head)
    if len(bases) != 1 or not is_object_id(bases[0]):
        raise CollectionError(c.REASON_SHA_INCOHERENT)
    return bases[0]


def _borrowed_commits_present(session: GitSession, shas: list[str]) -> bool:
    """Whether the borrowed store has every commit; stops borrowing when it does not."""
    if not session.borrowing:
        return False
    if all(session.has_commit(sha) for sha in shas):
        return True
    if not session.stop_borrowing():
        raise CollectionError(c.REASON_GIT_FETCH_FAILED)
    return False


def _verify_commits(
    session: GitSession, *, base: str, head: str, tested: str, tested_ref: str, queue: bool
) -> str:
    """Run check 1 and return the diff base, or raise ``CollectionError``."""
    if not all(is_object_id(sha) for sha in (base, head, tested)):
        raise CollectionError(c.REASON_SHA_INCOHERENT)
    if queue:
        return _verify_queue_commit(session, base=base, head=head, tested=tested)
    if tested_ref not in c.TESTED_REFS:
        raise CollectionError(c.REASON_SHA_INCOHERENT)
    merge_mode = tested_ref == c.TESTED_REF_MERGE
    if not merge_mode and not _same_id(tested, head):
        raise CollectionError(c.REASON_SHA_INCOHERENT)
    needed = [head, tested] if merge_mode else [head]
    if not _borrowed_commits_present(session, [base, *needed]):
        if not (session.fetch([base], depth=1) and session.has_commit(base)):
            raise CollectionError(c.REASON_GIT_FETCH_FAILED)
        for sha in needed:
            if not session.ensure_commit(sha):
                raise CollectionError(c.REASON_GIT_FETCH_FAILED)
    if merge_mode:
        try:
            parents = session.commit_parents(tested)
        except GitError:
            raise CollectionError(c.REASON_GIT_FETCH_FAILED) from None
        expected = (base.lower(), head.lower())
        if tuple(parent.lower() for parent in parents) != expected:
            raise CollectionError(c.REASON_SHA_INCOHERENT)
        return base
    return _head_mode_diff_base(session, base, head)


# ---------------------------------------------------------------------------------------------
# Inventory and patch (docs/reference.md, "Collection checks", "Changed paths and diff facts")
# ---------------------------------------------------------------------------------------------


def _read_inventory(session: GitSession, diff_base: str, tested: str) -> tuple[bytes, bytes]:
    outputs: list[bytes] = []
    too_large = failed = False
    for read in (session.diff_raw, session.diff_numstat):
        try:
            outputs.append(read(diff_base, tested))
        except GitOutputTooLarge:
            too_large = True
        except GitCommandFailed:
            failed = True
    if too_large:
        raise CollectionError(c.REASON_DIFF_TOO_LARGE)
    if failed:
        raise CollectionError(c.REASON_GIT_READ_FAILED)
    raw, numstat = outputs
    return raw, numstat


def _check_blobs(session: GitSession, records: tuple[RawRecord, ...]) -> None:
    for oid in _blob_ids(records):
        try:
            content = session.blob(oid, c.GIT_BLOB_CAP)
        except GitOutputTooLarge:
            raise CollectionError(c.REASON_DIFF_TOO_LARGE) from None
        except GitCommandFailed:
            raise CollectionError(c.REASON_GIT_READ_FAILED) from None
        check_blob(content)


def _read_patch(session: GitSession, diff_base: str, tested: str, cap: int) -> tuple[bytes, str]:
    try:
        patch = session.patch(diff_base, tested, cap)
    except GitOutputTooLarge:
        raise CollectionError(c.REASON_DIFF_TOO_LARGE) from None
    except GitCommandFailed:
        raise CollectionError(c.REASON_GIT_READ_FAILED) from None
    try:
        return patch, patch.decode("utf-8")
    except UnicodeDecodeError:
        raise CollectionError(c.REASON_UNREPRESENTABLE_CHANGE) from None


def collect_change(
    session: GitSession,
    *,
    base_sha: str,
    head_sha: str,
    tested_sha: str,
    tested_ref: str,
    metadata_sha: str,
    max_diff_bytes: int,
    queue: bool = False,
) -> Collection:
    """Fetch, verify and inventory the change from the diff base to the tested commit.

    ``queue`` marks a merge-queue commit (``tested_sha`` = ``head_sha``, recorded as merge mode):
    the base must be its ancestor instead of its first parent.

    Never raises for git trouble: the result carries either a complete change set or the code of
    the first failing check, with the changed paths when checks 5 to 9 failed (except
    ``git-read-failed``) so that the protected-path rule still applies.

    A session that borrows a local object store is trusted only for answers it could give: when
    a git command fails there (a partial clone lacks blobs on purpose, an alternates chain may be
    broken), the borrowing stops and the change is collected again by fetching.
    """

    def attempt() -> Collection:
        return _collect(
            session,
            base_sha=base_sha,
            head_sha=head_sha,
            tested_sha=tested_sha,
            tested_ref=tested_ref,
            metadata_sha=metadata_sha,
            max_diff_bytes=max_diff_bytes,
            queue=queue,
        )

    result = attempt()
    if (
        session.borrowing
        and result.error in (c.REASON_GIT_FETCH_FAILED, c.REASON_GIT_READ_FAILED)
        and session.stop_borrowing()
    ):
        result = attempt()
    return result


def _collect(
    session: GitSession,
    *,
    base_sha: str,
    head_sha: str,
    tested_sha: str,
    tested_ref: str,
    metadata_sha: str,
    max_diff_bytes: int,
    queue: bool,
) -> Collection:
    merge_mode = tested_ref == c.TESTED_REF_MERGE
    commits = Commits(
        base_sha=base_sha,
        head_sha=head_sha,
        tested_sha=tested_sha,
        metadata_sha=metadata_sha,
        diff_base_sha=base_sha if merge_mode else None,
    )
    try:
        diff_base = _verify_commits(
            session,
            base=base_sha,
            head=head_sha,
            tested=tested_sha,
            tested_ref=tested_ref,
            queue=queue,
        )
    except CollectionError as error:
        return Collection(commits=commits, error=error.code)
    commits = attrs.evolve(commits, diff_base_sha=diff_base)

    try:
        raw_output, numstat_output = _read_inventory(session, diff_base, tested_sha)
        records = parse_raw(raw_output)
    except CollectionError as error:
        return Collection(commits=commits, error=error.code)
    paths = changed_paths(records)

    try:
        if any(_GITLINK_MODE in (record.old_mode, record.new_mode) for record in records):
            raise CollectionError(c.REASON_SUBMODULE_CHANGE)
        parse_numstat(numstat_output)
        _check_blobs(session, records)
        patch, text = _read_patch(session, diff_base, tested_sha, max_diff_bytes)
    except CollectionError as error:
        carried = None if error.code == c.REASON_GIT_READ_FAILED else paths
        return Collection(commits=commits, error=error.code, error_paths=carried)

    change_set = ChangeSet(
        patch=text,
        diff_hash=hashlib.sha256(patch).hexdigest(),
        diff_bytes=len(patch),
        changed_paths=paths,
    )
    return Collection(commits=commits, change_set=change_set)
