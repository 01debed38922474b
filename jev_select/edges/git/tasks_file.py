"""The ``tasks-file`` input: the task table read from the repository at the base commit.

Edge module (docs/reference.md, "Inputs"). The table is read through the same isolated, verified
git fetch as the change itself, from the commit the pull request is judged against (its base,
the merge-group base, or ``GITHUB_SHA`` for other events), never from the head: a pull request
cannot rewrite the table it is judged by. This is the one git read before the bypass decision,
because every output needs the task IDs.
"""

from __future__ import annotations

from collections.abc import Mapping

from ... import contracts as c
from .runner import GitError
from .session import GitSession

__all__ = ["read_tasks_file"]


def read_tasks_file(
    *,
    remote: str,
    token: str,
    temp_root: str,
    environ: Mapping[str, str],
    commit: str,
    path: str,
) -> str | None:
    """The UTF-8 text of ``path`` at ``commit``; None when it cannot be fetched, is missing,
    over the task-table size limit or not UTF-8 (all the input error of ``tasks-file``)."""
    try:
        with GitSession(remote, token=token, temp_root=temp_root, environ=environ) as session:
            if not session.fetch([commit], depth=1):
                return None
            data = session.read_file_at(commit, path, c.MAX_TASKS_TEXT_BYTES + 1)
    except GitError:
        return None
    if data is None or len(data) > c.MAX_TASKS_TEXT_BYTES:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None
