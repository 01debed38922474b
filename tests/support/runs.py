"""The run context of a local pull-request plan over a temporary repository, for the app tests."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from jev_select import contracts as c
from jev_select.app.pipeline import RunContext
from jev_select.core.models import Commits
from support.gitrepo import GitRepo

__all__ = ["pull_request_context"]


def pull_request_context(
    tmp_path: Path, repo: GitRepo, base: str, head: str, send: Any, **extra: Any
) -> RunContext:
    """A same-repository pull request from ``base`` to ``head`` of ``repo`` (head mode), its
    requests answered by ``send``; ``extra`` sets any other field of the context."""
    temp = tmp_path / "temp"
    temp.mkdir(exist_ok=True)
    fields: dict[str, Any] = {"pull_request": True, **extra}
    return RunContext(
        commits=Commits(base_sha=base, head_sha=head, tested_sha=head, metadata_sha=base),
        fork=False,
        remote=repo.url,
        temp_root=str(temp),
        environ={"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        provenance_repository=c.LOCAL_REPOSITORY_NAME,
        send=send,
        **fields,
    )
