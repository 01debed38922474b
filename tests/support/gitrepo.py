"""Build real git repositories for tests, entirely through plumbing.

Commits are written with a private index file, ``git update-index --index-info`` and
``git commit-tree``, so tests can create any history they need: arbitrary (even non-UTF-8) paths,
binary blobs, executable bits, symlinks, gitlinks (submodules), octopus merges and merges whose
parents are deliberately in the wrong order. The work tree is never touched.

Usage::

    repo = GitRepo.init(tmp_path / "origin")
    base = repo.commit({"src/a.py": "print(1)\\n"})
    head = repo.commit({"src/a.py": "print(2)\\n", "old.txt": None}, parents=[base])
    merge = repo.merge(base, head)
    repo.url  # file:// URL usable as a remote

Every git process here runs isolated from the developer's configuration.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

__all__ = [
    "ZERO_OID",
    "Entry",
    "GitRepo",
    "Gitlink",
    "Symlink",
    "executable",
    "git_env",
]

ZERO_OID = "0" * 40
_FIXED_DATE = 1_700_000_000


def git_env(home: Path | None = None) -> dict[str, str]:
    """A git environment that ignores user and system configuration."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("GIT_")}
    env.update(
        {
            "GIT_CONFIG_NOSYSTEM": "1",
            "GIT_CONFIG_GLOBAL": "/dev/null",
            "GIT_CONFIG_SYSTEM": "/dev/null",
            "GIT_TERMINAL_PROMPT": "0",
            "GIT_AUTHOR_NAME": "Test Author",
            "GIT_AUTHOR_EMAIL": "author@example.invalid",
            "GIT_COMMITTER_NAME": "Test Committer",
            "GIT_COMMITTER_EMAIL": "committer@example.invalid",
            "LC_ALL": "C",
            "LANG": "C",
            "TZ": "UTC",
        }
    )
    if home is not None:
        env["HOME"] = str(home)
    return env


@dataclass(frozen=True)
class Entry:
    """A tree entry with an explicit mode (``100644``, ``100755``, ``120000``)."""

    content: bytes | str
    mode: str = "100644"


@dataclass(frozen=True)
class Gitlink:
    """A submodule entry (mode ``160000``) pointing at ``commit``; no object is written."""

    commit: str


def executable(content: bytes | str) -> Entry:
    return Entry(content, "100755")


def Symlink(target: str) -> Entry:
    return Entry(target, "120000")


Change = bytes | str | Entry | Gitlink | None
"""A path's new state: file content, an entry, a gitlink, or ``None`` to delete the path."""


def _as_bytes(value: bytes | str) -> bytes:
    return value if isinstance(value, bytes) else value.encode("utf-8")


class GitRepo:
    """A repository on disk plus helpers that write commits without a work tree."""

    def __init__(self, path: Path, *, home: Path | None = None) -> None:
        self.path = Path(path)
        self.env = git_env(home)
        self._clock = _FIXED_DATE
        self._index = self.path / ".jev-test-index"

    @classmethod
    def init(cls, path: Path, *, bare: bool = False, branch: str = "main") -> GitRepo:
        path = Path(path)
        path.mkdir(parents=True, exist_ok=True)
        args = ["git", "init", "--quiet", "-b", branch]
        if bare:
            args.append("--bare")
        subprocess.run([*args, str(path)], check=True, env=git_env(), capture_output=True)
        repo = cls(path)
        if not bare:
            repo._index = path / ".git" / "jev-test-index"
        else:
            repo._index = path / "jev-test-index"
        return repo

    def check_out(self) -> None:
        """Make the work tree and the default index those of ``HEAD``, as a fresh checkout is
        (commits are written without a work tree, which then reads as deleting every file)."""
        self.git("reset", "--hard", "--quiet")

    @property
    def url(self) -> str:
        """``file://`` URL of the repository."""
        return self.path.resolve().as_uri()

    # ---- raw access -------------------------------------------------------------------------

    def git(
        self,
        *args: str | bytes,
        input: bytes | None = None,
        env: Mapping[str, str] | None = None,
    ) -> bytes:
        """Run git in the repository and return stdout; raise on failure."""
        result = subprocess.run(
            ["git", "-C", str(self.path), *args],
            input=input,
            env=dict(env) if env is not None else self.env,
            capture_output=True,
            check=False,
        )
        if result.returncode != 0:
            detail = result.stderr.decode(errors="replace")
            raise RuntimeError(f"git {args!r} failed ({result.returncode}): {detail}")
        return result.stdout

    def text(self, *args: str) -> str:
        return self.git(*args).decode("utf-8").strip()

    def _next_dates(self) -> dict[str, str]:
        self._clock += 60
        stamp = f"{self._clock} +0000"
        return {**self.env, "GIT_AUTHOR_DATE": stamp, "GIT_COMMITTER_DATE": stamp}

    # ---- objects and refs -------------------------------------------------------------------

    def blob(self, content: bytes | str) -> str:
        return self.git("hash-object", "-w", "--stdin", input=_as_bytes(content)).decode().strip()

    def tip(self, branch: str = "main") -> str | None:
        result = subprocess.run(
            [
                "git",
                "-C",
                str(self.path),
                "rev-parse",
                "--verify",
                "--quiet",
                f"refs/heads/{branch}",
            ],
            env=self.env,
            capture_output=True,
            check=False,
        )
        return result.stdout.decode().strip() if result.returncode == 0 else None

    def set_ref(self, ref: str, sha: str) -> None:
        self.git("update-ref", ref, sha)

    def set_symbolic_ref(self, ref: str, target: str) -> None:
        self.git("symbolic-ref", ref, target)

    def tree_of(self, commit: str) -> str:
        return self.text("rev-parse", f"{commit}^{{tree}}")

    def parents_of(self, commit: str) -> list[str]:
        return self.text("rev-list", "--parents", "-n", "1", commit).split()[1:]

    def show(self, commit: str, path: str | bytes) -> bytes:
        spec = _as_bytes(commit) + b":" + _as_bytes(path)
        return self.git("cat-file", "blob", spec)

    # ---- writing commits --------------------------------------------------------------------

    def commit_tree(self, tree: str, parents: Sequence[str], message: str = "commit") -> str:
        """A commit with exactly ``tree`` and ``parents`` (any order, any count)."""
        args: list[str] = ["commit-tree", tree]
        for parent in parents:
            args += ["-p", parent]
        args += ["-m", message]
        result = subprocess.run(
            ["git", "-C", str(self.path), *args],
            env=self._next_dates(),
            capture_output=True,
            check=True,
        )
        return result.stdout.decode().strip()

    def build_tree(self, changes: Mapping[str | bytes, Change], *, start: str | None) -> str:
        """Tree of ``start`` (a commit, or empty when None) with ``changes`` applied."""
        env = {**self.env, "GIT_INDEX_FILE": str(self._index)}
        self._index.unlink(missing_ok=True)
        if start is None:
            self.git("read-tree", "--empty", env=env)
        else:
            self.git("read-tree", start, env=env)
        records: list[bytes] = []
        for raw_path, change in changes.items():
            path = _as_bytes(raw_path)
            if change is None:
                records.append(b"0 " + ZERO_OID.encode() + b"\t" + path)
            elif isinstance(change, Gitlink):
                records.append(b"160000 " + change.commit.encode() + b"\t" + path)
            elif isinstance(change, Entry):
                oid = self.blob(change.content)
                records.append(change.mode.encode() + b" " + oid.encode() + b"\t" + path)
            else:
                oid = self.blob(change)
                records.append(b"100644 " + oid.encode() + b"\t" + path)
        if records:
            self.git(
                "update-index", "-z", "--index-info", input=b"\0".join(records) + b"\0", env=env
            )
        tree = self.git("write-tree", env=env).decode().strip()
        self._index.unlink(missing_ok=True)
        return tree

    def commit(
        self,
        changes: Mapping[str | bytes, Change] | None = None,
        *,
        parents: Sequence[str] | None = None,
        message: str = "change",
        branch: str | None = "main",
    ) -> str:
        """Commit ``changes`` on top of the first parent's tree.

        ``parents`` defaults to the tip of ``branch`` (none for the first commit). The branch is
        moved to the new commit unless ``branch`` is None.
        """
        if parents is None:
            tip = self.tip(branch) if branch is not None else None
            parents = [tip] if tip is not None else []
        tree = self.build_tree(changes or {}, start=parents[0] if parents else None)
        sha = self.commit_tree(tree, parents, message)
        if branch is not None:
            self.set_ref(f"refs/heads/{branch}", sha)
        return sha

    def rename(
        self, old: str | bytes, new: str | bytes, *, parents: Sequence[str] | None = None
    ) -> str:
        """Move ``old`` to ``new`` unchanged (git detects the rename)."""
        start = parents[0] if parents else self.tip()
        assert start is not None
        content = self.show(start, old)
        return self.commit({old: None, new: content}, parents=parents, message="rename")

    def merge(
        self,
        first: str,
        second: str,
        *,
        parents: Sequence[str] | None = None,
        changes: Mapping[str | bytes, Change] | None = None,
        message: str = "merge",
        branch: str | None = None,
    ) -> str:
        """A merge commit of ``first`` and ``second`` (clean three-way merge of their trees).

        ``parents`` overrides the recorded parents (e.g. swapped, or three for an octopus) while
        keeping the merged tree; ``changes`` are applied on top of the merged tree.
        """
        merged = self.git("merge-tree", "--write-tree", first, second).decode().split()[0]
        if changes:
            holder = self.commit_tree(merged, [], "merged tree")
            merged = self.build_tree(changes, start=holder)
        sha = self.commit_tree(merged, list(parents or [first, second]), message)
        if branch is not None:
            self.set_ref(f"refs/heads/{branch}", sha)
        return sha

    def linear_history(
        self, parent: str | None, count: int, *, path: str = "history.txt", branch: str = "main"
    ) -> str:
        """``count`` commits on top of ``parent``, each appending a line to ``path``; fast."""
        stream: list[bytes] = []
        content = b""
        if parent is not None:
            try:
                content = self.show(parent, path)
            except RuntimeError:
                content = b""
        for number in range(count):
            content += f"line {number}\n".encode()
            self._clock += 60
            message = f"history {number}\n".encode()
            stream.append(f"commit refs/heads/{branch}\n".encode())
            stream.append(f"mark :{number + 1}\n".encode())
            stamp = f"{self._clock} +0000"
            stream.append(f"author Test Author <author@example.invalid> {stamp}\n".encode())
            stream.append(
                f"committer Test Committer <committer@example.invalid> {stamp}\n".encode()
            )
            stream.append(f"data {len(message)}\n".encode() + message)
            if number == 0 and parent is not None:
                stream.append(f"from {parent}\n".encode())
            elif number > 0:
                stream.append(f"from :{number}\n".encode())
            stream.append(f"M 100644 inline {path}\n".encode())
            stream.append(f"data {len(content)}\n".encode() + content + b"\n")
        self.git("fast-import", "--quiet", "--force", input=b"".join(stream))
        tip = self.tip(branch)
        assert tip is not None
        return tip

    def add_submodule_commit(self, sub: GitRepo) -> str:
        """A commit in ``sub`` to point a gitlink at (the submodule need not be fetchable)."""
        return sub.commit({"README": "submodule\n"})
