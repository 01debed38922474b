"""Change collection against real temporary repositories served as file:// remotes."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import pytest
from support.gitrepo import Gitlink, GitRepo, executable

from jev_select import contracts as c
from jev_select.core.models import Collection
from jev_select.edges.collect import (
    CollectionError,
    changed_paths,
    check_blob,
    collect_change,
    is_literal_path,
    parse_numstat,
    parse_raw,
)
from jev_select.edges.git.session import GitSession
from jev_select.errors import PlanningFailure

TOKEN = "tok-SENTINEL-4f1c9a"
OID_A = "a" * 40
OID_B = "b" * 40


def git_diff(repo: GitRepo, base: str, tested: str) -> bytes:
    return repo.git(
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
    )


def collect(
    tmp_path: Path,
    remote: str,
    *,
    base: str,
    head: str,
    tested: str | None = None,
    tested_ref: str = c.TESTED_REF_MERGE,
    max_diff_bytes: int = 65536,
    environ: Mapping[str, str] | None = None,
    token: str = TOKEN,
    metadata: str | None = None,
    queue: bool = False,
) -> Collection:
    temp_root = tmp_path / "temp"
    temp_root.mkdir(exist_ok=True)
    with GitSession(
        remote,
        token=token,
        temp_root=str(temp_root),
        environ=os.environ if environ is None else environ,
    ) as session:
        result = collect_change(
            session,
            base_sha=base,
            head_sha=head,
            tested_sha=tested if tested is not None else head,
            tested_ref=tested_ref,
            metadata_sha=metadata or base,
            max_diff_bytes=max_diff_bytes,
            queue=queue,
        )
    # The temporary repository is gone on every path, successful or not.
    assert list(temp_root.iterdir()) == []
    return result


@pytest.fixture
def origin(tmp_path: Path) -> GitRepo:
    return GitRepo.init(tmp_path / "origin")


@pytest.fixture
def pr(origin: GitRepo) -> tuple[str, str, str]:
    """(base, head, merge) of an ordinary pull request."""
    base = origin.commit(
        {"src/app.py": "print('one')\n", "README.md": "# demo\n", "docs/guide.md": "guide\n"}
    )
    head = origin.commit(
        {"src/app.py": "print('two')\n", "src/new.py": "x = 1\n"}, parents=[base], branch="feature"
    )
    merge = origin.merge(base, head)
    return base, head, merge


# ---- successful collection -----------------------------------------------------------------


def test_merge_pull_request(tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]) -> None:
    base, head, merge = pr
    result = collect(tmp_path, origin.url, base=base, head=head, tested=merge)
    assert result.error is None
    assert result.error_paths is None
    assert result.commits.diff_base_sha == base
    assert (result.commits.base_sha, result.commits.head_sha) == (base, head)
    assert result.commits.tested_sha == merge
    change = result.change_set
    assert change is not None
    expected = git_diff(origin, base, merge)
    assert change.patch.encode("utf-8") == expected
    assert change.diff_hash == hashlib.sha256(expected).hexdigest()
    assert change.diff_bytes == len(expected)
    assert change.changed_paths == ("src/app.py", "src/new.py")
    assert change.changed_path_count == 2
    assert "+print('two')" in change.patch


def test_empty_change_is_valid(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({}, parents=[base], message="empty", branch="feature")
    merge = origin.merge(base, head)
    result = collect(tmp_path, origin.url, base=base, head=head, tested=merge)
    assert result.change_set is not None
    assert result.change_set.patch == ""
    assert result.change_set.diff_bytes == 0
    assert result.change_set.diff_hash == hashlib.sha256(b"").hexdigest()
    assert result.change_set.changed_paths == ()


def test_head_mode_with_long_history_deepens(tmp_path: Path, origin: GitRepo) -> None:
    fork_point = origin.commit({"shared.txt": "shared\n", "lib/core.py": "core = 1\n"})
    # The base branch moved on after the fork, and the head branch is 300 commits long, so
    # neither depth-1 fetch nor the first deepening can reach the merge base.
    base = origin.linear_history(fork_point, 40, path="base-only.txt", branch="main")
    head = origin.linear_history(fork_point, 300, path="feature.txt", branch="feature")
    result = collect(
        tmp_path, origin.url, base=base, head=head, tested=head, tested_ref=c.TESTED_REF_HEAD
    )
    assert result.error is None, result.error
    assert result.commits.diff_base_sha == fork_point
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("feature.txt",)
    assert result.change_set.patch.encode() == git_diff(origin, fork_point, head)


# ---- merge-queue commits ------------------------------------------------------------------


@pytest.mark.parametrize(
    "shape", ["merge", "swapped merge", "octopus", "squash", "rebased", "same commit"]
)
def test_queue_commit_needs_only_its_base_as_ancestor(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str], shape: str
) -> None:
    # No parent check: whatever the merge method made, the base being below it is enough.
    base, head, _ = pr
    other = origin.commit({"lib/other.py": "y = 2\n"}, parents=[base], branch="other")
    queue = {
        "merge": lambda: origin.merge(base, head),
        "swapped merge": lambda: origin.merge(base, head, parents=[head, base]),
        "octopus": lambda: origin.merge(base, head, parents=[base, head, other]),
        "squash": lambda: origin.commit_tree(origin.tree_of(head), [base]),
        "rebased": lambda: origin.linear_history(head, 3, path="src/more.txt", branch="rebased"),
        "same commit": lambda: base,
    }[shape]()
    result = collect(tmp_path, origin.url, base=base, head=queue, queue=True)
    assert result.error is None, result.error
    assert result.commits.diff_base_sha == base
    assert result.commits.tested_sha == result.commits.head_sha == queue
    assert result.change_set is not None
    assert result.change_set.patch.encode("utf-8") == git_diff(origin, base, queue)


@pytest.mark.parametrize("distance", [31, 300])
def test_queue_commit_far_above_its_base_is_reached_by_deeper_fetches(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str], distance: int
) -> None:
    # A queue of many entries: the commit sits far above the base, beyond the first depth.
    base, _, _ = pr
    queue = origin.linear_history(base, distance, path="src/queued.txt", branch="queue")
    result = collect(tmp_path, origin.url, base=base, head=queue, queue=True)
    assert result.error is None, result.error
    assert result.commits.diff_base_sha == base


def test_a_queue_base_beside_a_long_history_is_judged_on_the_whole_history(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    # No depth reaches the base, so only the complete history can say no.
    base, _, _ = pr
    beside = origin.linear_history(base, 40, path="src/beside.txt", branch="beside")
    queue = origin.linear_history(base, 2100, path="src/queued.txt", branch="queue")
    result = collect(tmp_path, origin.url, base=beside, head=queue, queue=True)
    assert result.error == c.REASON_SHA_INCOHERENT


def test_queue_commit_must_be_the_head(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, merge = pr
    result = collect(tmp_path, origin.url, base=base, head=head, tested=merge, queue=True)
    assert result.error == c.REASON_SHA_INCOHERENT


@pytest.mark.parametrize("relation", ["above", "beside"])
def test_queue_base_that_is_not_below_the_commit_is_incoherent(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str], relation: str
) -> None:
    base, head, merge = pr
    # "above": the base descends from the queue commit (related, but the wrong way round);
    # "beside": a sibling of the queue commit on another branch.
    other = origin.commit({"lib/other.py": "y = 2\n"}, parents=[base], branch="other")
    queue_base = merge if relation == "above" else other
    result = collect(tmp_path, origin.url, base=queue_base, head=head, queue=True)
    assert result.error == c.REASON_SHA_INCOHERENT
    assert result.change_set is None


def test_queue_commit_missing_from_the_remote_fails_fetch(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, _, _ = pr
    result = collect(tmp_path, origin.url, base=base, head="9" * 40, queue=True)
    assert result.error == c.REASON_GIT_FETCH_FAILED


def test_head_mode_requires_tested_equal_to_head(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, merge = pr
    result = collect(
        tmp_path, origin.url, base=base, head=head, tested=merge, tested_ref=c.TESTED_REF_HEAD
    )
    assert result.error == c.REASON_SHA_INCOHERENT
    assert result.error_paths is None
    assert result.change_set is None
    assert result.commits.diff_base_sha is None


def test_head_mode_identity_is_case_insensitive(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, _ = pr
    result = collect(
        tmp_path,
        origin.url,
        base=base,
        head=head,
        tested=head.upper(),
        tested_ref=c.TESTED_REF_HEAD,
    )
    assert result.error is None
    assert result.commits.diff_base_sha == base


def test_criss_cross_history_has_no_unique_merge_base(tmp_path: Path, origin: GitRepo) -> None:
    root = origin.commit({"a.txt": "a\n", "b.txt": "b\n"})
    left = origin.commit({"a.txt": "left\n"}, parents=[root], branch="left")
    right = origin.commit({"b.txt": "right\n"}, parents=[root], branch="right")
    base = origin.merge(left, right, message="merge right into left", branch="main")
    head = origin.merge(right, left, message="merge left into right", branch="feature")
    head = origin.commit({"c.txt": "c\n"}, parents=[head], branch="feature")
    assert sorted(origin.text("merge-base", "--all", base, head).split()) == sorted([left, right])
    result = collect(
        tmp_path, origin.url, base=base, head=head, tested=head, tested_ref=c.TESTED_REF_HEAD
    )
    assert result.error == c.REASON_SHA_INCOHERENT
    assert result.error_paths is None
    assert result.commits.diff_base_sha is None


def test_unrelated_histories_are_incoherent(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({"b.txt": "b\n"}, parents=[], branch="orphan")
    result = collect(
        tmp_path, origin.url, base=base, head=head, tested=head, tested_ref=c.TESTED_REF_HEAD
    )
    assert result.error == c.REASON_SHA_INCOHERENT


# ---- merge-parent verification --------------------------------------------------------------


def test_swapped_parents_are_incoherent(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, _ = pr
    swapped = origin.merge(base, head, parents=[head, base], message="swapped")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=swapped)
    assert result.error == c.REASON_SHA_INCOHERENT
    assert result.error_paths is None
    assert result.commits.diff_base_sha == base


def test_octopus_merge_is_incoherent(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, _ = pr
    other = origin.commit({"other.txt": "o\n"}, parents=[base], branch="other")
    octopus = origin.merge(base, head, parents=[base, head, other], message="octopus")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=octopus)
    assert result.error == c.REASON_SHA_INCOHERENT


def test_single_parent_tested_commit_is_incoherent(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, _ = pr
    result = collect(tmp_path, origin.url, base=base, head=head, tested=head)
    assert result.error == c.REASON_SHA_INCOHERENT


def test_base_moved_after_merge_commit(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    old_base, head, merge = pr
    new_base = origin.commit({"README.md": "# moved\n"}, parents=[old_base], branch="main")
    # The event names the new base while the merge ref still records the old one.
    result = collect(tmp_path, origin.url, base=new_base, head=head, tested=merge)
    assert result.error == c.REASON_SHA_INCOHERENT
    assert result.error_paths is None


def test_parent_comparison_ignores_case(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, merge = pr
    result = collect(tmp_path, origin.url, base=base.upper(), head=head.upper(), tested=merge)
    assert result.error is None


@pytest.mark.parametrize(
    "bad",
    ["abc", "g" * 40, "a" * 39, "a" * 41, "a" * 63, " " + "a" * 40, "a" * 40 + "\n"],
)
def test_malformed_sha_is_incoherent_without_fetching(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str], bad: str
) -> None:
    base, head, merge = pr
    for first, second, third in ((bad, head, merge), (base, bad, merge), (base, head, bad)):
        # A remote that cannot be fetched from proves the syntax check comes first.
        result = collect(
            tmp_path, (tmp_path / "missing").as_uri(), base=first, head=second, tested=third
        )
        assert result.error == c.REASON_SHA_INCOHERENT


def test_unknown_tested_ref_is_incoherent(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, merge = pr
    result = collect(tmp_path, origin.url, base=base, head=head, tested=merge, tested_ref="tip")
    assert result.error == c.REASON_SHA_INCOHERENT


# ---- fetch failures -------------------------------------------------------------------------


def test_missing_base_fails_fetch(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    _, head, merge = pr
    result = collect(tmp_path, origin.url, base="1" * 40, head=head, tested=merge)
    assert result.error == c.REASON_GIT_FETCH_FAILED
    assert result.error_paths is None
    assert result.change_set is None


def test_missing_head_and_tested_fail_fetch(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base, head, merge = pr
    missing = "2" * 40
    assert (
        collect(tmp_path, origin.url, base=base, head=missing, tested=merge).error
        == c.REASON_GIT_FETCH_FAILED
    )
    assert (
        collect(tmp_path, origin.url, base=base, head=head, tested=missing).error
        == c.REASON_GIT_FETCH_FAILED
    )
    assert (
        collect(
            tmp_path,
            origin.url,
            base=base,
            head=missing,
            tested=missing,
            tested_ref=c.TESTED_REF_HEAD,
        ).error
        == c.REASON_GIT_FETCH_FAILED
    )


def test_bad_remote_fails_fetch(tmp_path: Path, pr: tuple[str, str, str]) -> None:
    base, head, merge = pr
    not_a_repo = tmp_path / "plain"
    not_a_repo.mkdir()
    for remote in ((tmp_path / "absent").as_uri(), not_a_repo.as_uri()):
        result = collect(tmp_path, remote, base=base, head=head, tested=merge)
        assert result.error == c.REASON_GIT_FETCH_FAILED


def test_unusable_temp_root_fails_fetch(tmp_path: Path, pr: tuple[str, str, str]) -> None:
    base, head, merge = pr
    origin = GitRepo(tmp_path / "origin")
    with GitSession(
        origin.url, token="", temp_root=str(tmp_path / "no-such-dir"), environ=os.environ
    ) as session:
        assert not session.ready
        result = collect_change(
            session,
            base_sha=base,
            head_sha=head,
            tested_sha=merge,
            tested_ref=c.TESTED_REF_MERGE,
            metadata_sha=base,
            max_diff_bytes=1000,
        )
    assert result.error == c.REASON_GIT_FETCH_FAILED


# ---- inventory ------------------------------------------------------------------------------


def test_rename_lists_both_sides(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"old/name.py": "".join(f"line {n}\n" for n in range(20))})
    head = origin.rename("old/name.py", "new/name.py", parents=[base])
    merge = origin.merge(base, head)
    result = collect(tmp_path, origin.url, base=base, head=head, tested=merge)
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("new/name.py", "old/name.py")
    assert "rename from old/name.py" in result.change_set.patch


def test_delete_is_listed_and_its_blob_checked(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"keep.txt": "k\n", "gone.txt": "bye\n"})
    head = origin.commit({"gone.txt": None}, parents=[base], branch="feature")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("gone.txt",)
    assert "deleted file mode 100644" in result.change_set.patch


def test_deleting_a_binary_file_is_binary(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"keep.txt": "k\n", "blob.bin": b"\x00\x01\x02"})
    head = origin.commit({"blob.bin": None}, parents=[base], branch="feature")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_BINARY_CHANGE
    assert result.error_paths == ("blob.bin",)


def test_mode_only_change(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"run.sh": "echo hi\n"})
    head = origin.commit({"run.sh": executable("echo hi\n")}, parents=[base], branch="feature")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("run.sh",)
    assert "old mode 100644\nnew mode 100755" in result.change_set.patch


def test_binary_new_file(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit(
        {"img.png": b"\x89PNG\x00\x00", "a.txt": "b\n"}, parents=[base], branch="f"
    )
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_BINARY_CHANGE
    assert result.error_paths == ("a.txt", "img.png")
    assert result.change_set is None


def test_binary_old_side_of_modified_file(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"data.txt": b"text\x00with nul\n"})
    head = origin.commit({"data.txt": "clean text now\n"}, parents=[base], branch="f")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_BINARY_CHANGE
    assert result.error_paths == ("data.txt",)


def test_pure_rename_of_binary_file_is_binary(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.bin": b"\x00" * 64})
    head = origin.rename("a.bin", "b.bin", parents=[base])
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_BINARY_CHANGE
    assert result.error_paths == ("a.bin", "b.bin")


def test_attributes_in_the_tree_are_ignored(tmp_path: Path, origin: GitRepo) -> None:
    # Were attributes honoured, "-diff" would turn the change into a binary one.
    base = origin.commit({".gitattributes": "* -diff\n", "notes.txt": "one\n"})
    head = origin.commit({"notes.txt": "two\n"}, parents=[base], branch="f")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.change_set is not None
    assert "+two" in result.change_set.patch


def test_submodule_change(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({"vendor/lib": Gitlink("3" * 40), "a.txt": "b\n"}, parents=[base])
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_SUBMODULE_CHANGE
    assert result.error_paths == ("a.txt", "vendor/lib")


def test_non_utf8_path_is_unrepresentable_without_paths(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({b"caf\xe9.txt": "latin-1 name\n"}, parents=[base], branch="f")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_UNREPRESENTABLE_CHANGE
    assert result.error_paths is None


def test_utf8_path_and_bom_are_kept(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({"café.md": "\ufeffbom text\n"}, parents=[base], branch="f")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("café.md",)
    assert "+\ufeffbom text" in result.change_set.patch


def test_non_utf8_blob_is_unrepresentable_with_paths(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({"latin.txt": b"caf\xe9\n"}, parents=[base], branch="f")
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_UNREPRESENTABLE_CHANGE
    assert result.error_paths == ("latin.txt",)


def test_patch_size_cap_allows_equality(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({"a.txt": "a\n"})
    head = origin.commit({"a.txt": "b\n" * 50}, parents=[base], branch="f")
    merge = origin.merge(base, head)
    size = len(git_diff(origin, base, merge))
    exact = collect(tmp_path, origin.url, base=base, head=head, tested=merge, max_diff_bytes=size)
    assert exact.change_set is not None
    assert exact.change_set.diff_bytes == size
    over = collect(
        tmp_path, origin.url, base=base, head=head, tested=merge, max_diff_bytes=size - 1
    )
    assert over.error == c.REASON_DIFF_TOO_LARGE
    assert over.error_paths == ("a.txt",)
    assert over.change_set is None


def test_workflow_edit_next_to_binary_carries_paths(tmp_path: Path, origin: GitRepo) -> None:
    base = origin.commit({".github/workflows/ci.yml": "on: push\n", "logo.bin": "text\n"})
    head = origin.commit(
        {".github/workflows/ci.yml": "on: [push]\n", "logo.bin": b"\x00\xff"},
        parents=[base],
        branch="f",
    )
    result = collect(tmp_path, origin.url, base=base, head=head, tested=origin.merge(base, head))
    assert result.error == c.REASON_BINARY_CHANGE
    assert result.known_paths == (".github/workflows/ci.yml", "logo.bin")
    assert any(path.startswith(c.PROTECTED_PATH_PREFIX) for path in result.known_paths or ())


# ---- isolation ------------------------------------------------------------------------------


def _hostile_home(tmp_path: Path, marker: Path) -> Path:
    home = tmp_path / "home"
    (home / ".config" / "git").mkdir(parents=True)
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\nexit 0\n")
    script.chmod(0o755)
    config = (
        "[diff]\n"
        f"\texternal = {script}\n"
        "[core]\n"
        f"\tpager = {script}\n"
        f"\tfsmonitor = {script}\n"
        f"\thooksPath = {tmp_path}\n"
        "[alias]\n"
        f"\tdiff = !{script}\n"
        f"\tfetch = !{script}\n"
        '[diff "evil"]\n'
        f"\tcommand = {script}\n"
        f"\ttextconv = {script}\n"
        "[http]\n"
        "\textraheader = X-Leak: yes\n"
    )
    (home / ".gitconfig").write_text(config)
    (home / ".config" / "git" / "config").write_text(config)
    (home / ".config" / "git" / "attributes").write_text("* diff=evil\n")
    return script


@pytest.mark.posix
def test_hostile_configuration_and_environment_are_ignored(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, head, merge = pr
    clean = collect(tmp_path, origin.url, base=base, head=head, tested=merge)
    marker = tmp_path / "marker"
    script = _hostile_home(tmp_path, marker)
    hostile = {
        "HOME": str(tmp_path / "home"),
        "XDG_CONFIG_HOME": str(tmp_path / "home" / ".config"),
        "GIT_EXTERNAL_DIFF": str(script),
        "GIT_DIR": str(tmp_path / "nowhere"),
        "GIT_WORK_TREE": str(tmp_path),
        "GIT_PAGER": str(script),
        "GIT_CONFIG_PARAMETERS": f"'diff.external'='{script}'",
        "GIT_CONFIG_COUNT": "1",
        "GIT_CONFIG_KEY_0": "diff.external",
        "GIT_CONFIG_VALUE_0": str(script),
        "GIT_SSH_COMMAND": str(script),
        "GIT_ASKPASS": str(script),
    }
    # Present both in the environment handed over and in this process's own environment,
    # which the subprocess layer would otherwise inherit.
    for name, value in hostile.items():
        monkeypatch.setenv(name, value)
    result = collect(tmp_path, origin.url, base=base, head=head, tested=merge)
    assert not marker.exists()
    assert result == clean
    head_mode = collect(
        tmp_path,
        origin.url,
        base=base,
        head=head,
        tested=head,
        tested_ref=c.TESTED_REF_HEAD,
        environ={**os.environ, **hostile},
    )
    assert not marker.exists()
    assert head_mode.change_set is not None
    assert clean.change_set is not None
    assert head_mode.change_set.patch == clean.change_set.patch


def test_nothing_is_printed_and_token_stays_out(
    tmp_path: Path,
    origin: GitRepo,
    pr: tuple[str, str, str],
    capfd: pytest.CaptureFixture[str],
) -> None:
    base, head, merge = pr
    collect(tmp_path, origin.url, base=base, head=head, tested=merge)
    collect(tmp_path, origin.url, base="1" * 40, head=head, tested=merge)
    collect(tmp_path, (tmp_path / "absent").as_uri(), base=base, head=head, tested=merge)
    captured = capfd.readouterr()
    assert captured.out == ""
    assert captured.err == ""
    assert TOKEN not in captured.out + captured.err


def test_temporary_directory_removed_when_collection_fails(
    tmp_path: Path, origin: GitRepo, pr: tuple[str, str, str]
) -> None:
    base = pr[0]
    temp_root = tmp_path / "temp"
    temp_root.mkdir()
    seen: list[Path] = []

    def fail_inside_session() -> None:
        with GitSession(
            origin.url, token="", temp_root=str(temp_root), environ=os.environ
        ) as session:
            assert session.directory is not None
            seen.append(Path(session.directory))
            assert (Path(session.directory) / "repo.git").is_dir()
            assert session.fetch([base])
            raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fail_inside_session()
    assert seen[0].name.startswith(c.GIT_TEMP_PREFIX)
    assert not seen[0].exists()
    assert list(temp_root.iterdir()) == []


def test_removal_failure_is_internal_error(
    tmp_path: Path, origin: GitRepo, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_rmtree = shutil.rmtree

    def failing_rmtree(path: str, **kwargs: object) -> None:
        real_rmtree(path)
        Path(path).mkdir()  # something left behind

    monkeypatch.setattr("jev_select.edges.git.session.shutil.rmtree", failing_rmtree)
    temp_root = tmp_path / "temp"
    temp_root.mkdir()
    session = GitSession(origin.url, token="", temp_root=str(temp_root), environ=os.environ)
    session.__enter__()
    with pytest.raises(PlanningFailure) as caught:
        session.__exit__(None, None, None)
    assert caught.value.code == c.FAILURE_INTERNAL_ERROR


# ---- parsers --------------------------------------------------------------------------------


def _raw(status: str, *paths: bytes, old: str = "100644", new: str = "100644") -> bytes:
    header = f":{old} {new} {OID_A} {OID_B} {status}".encode()
    return b"\0".join([header, *paths]) + b"\0"


def test_parse_raw_records() -> None:
    output = _raw("M", b"a.txt") + _raw("R087", b"old.py", b"new.py") + _raw("D", b"z")
    records = parse_raw(output)
    assert [record.status for record in records] == ["M", "R087", "D"]
    assert records[1].paths == ("old.py", "new.py")
    assert changed_paths(records) == ("a.txt", "new.py", "old.py", "z")
    assert parse_raw(b"") == ()


def test_changed_paths_use_code_unit_order() -> None:
    records = parse_raw(
        _raw("M", "\U0001f600.txt".encode())
        + _raw("M", "\uff5e.txt".encode())
        + _raw("M", b"B")
        + _raw("M", b"a")
        + _raw("M", b"a")
    )
    # U+FF5E sorts after the surrogate pair of U+1F600 in UTF-16, unlike in code points.
    assert changed_paths(records) == ("B", "a", "\U0001f600.txt", "\uff5e.txt")


@pytest.mark.parametrize(
    "output",
    [
        _raw("M", b"a.txt")[:-1],  # not NUL-terminated
        b":100644 100644 " + OID_A.encode() + b" " + OID_B.encode() + b" m\0a\0",
        b":10064 100644 " + OID_A.encode() + b" " + OID_B.encode() + b" M\0a\0",
        b":100644 100644 " + OID_A[:39].encode() + b" " + OID_B.encode() + b" M\0a\0",
        _raw("R100", b"only-one"),
        b"garbage\0",
        _raw("M", b"/abs"),
        _raw("M", b"a//b"),
        _raw("M", b"a/./b"),
        _raw("M", b"../up"),
        _raw("M", b"dir/"),
        _raw("M", b""),
        _raw("M", b"\xff\xfe"),
        _raw("M", b"\xed\xa0\x80"),  # an encoded surrogate is not strict UTF-8
    ],
)
def test_parse_raw_rejects(output: bytes) -> None:
    with pytest.raises(CollectionError) as caught:
        parse_raw(output)
    assert caught.value.code == c.REASON_UNREPRESENTABLE_CHANGE


def test_literal_paths() -> None:
    assert is_literal_path("\ufeffbom.txt")
    assert is_literal_path(".github/workflows/ci.yml")
    assert is_literal_path("a/..b/c.")
    for bad in ("", "/a", "a//b", "./a", "a/..", "a/", "a\0b"):
        assert not is_literal_path(bad)


def test_parse_numstat() -> None:
    records = parse_numstat(b"1\t2\ta.txt\x000\t0\t\x00old\x00new\x00")
    assert [(r.added, r.deleted, r.paths) for r in records] == [
        (1, 2, ("a.txt",)),
        (0, 0, ("old", "new")),
    ]
    assert parse_numstat(b"") == ()


@pytest.mark.parametrize(
    ("output", "code"),
    [
        (b"-\t-\tbin\x00", c.REASON_BINARY_CHANGE),
        (b"1\t1\ta\x00-\t-\t\x00x\x00y\x00", c.REASON_BINARY_CHANGE),
        (b"-\t-\tbin\x00junk\x00", c.REASON_BINARY_CHANGE),
        (b"1\t1\ta", c.REASON_UNREPRESENTABLE_CHANGE),
        (b"1\tx\ta\x00", c.REASON_UNREPRESENTABLE_CHANGE),
        (b"1\t1\t\x00only\x00", c.REASON_UNREPRESENTABLE_CHANGE),
        (b"junk\x00-\t-\tbin\x00", c.REASON_UNREPRESENTABLE_CHANGE),
    ],
)
def test_parse_numstat_failures(output: bytes, code: str) -> None:
    with pytest.raises(CollectionError) as caught:
        parse_numstat(output)
    assert caught.value.code == code


@pytest.mark.parametrize(
    ("content", "code"),
    [
        (b"fine\n", None),
        (b"\xef\xbb\xbfbom\n", None),
        (b"", None),
        (b"a\x00b", c.REASON_BINARY_CHANGE),
        (b"\xff\x00", c.REASON_BINARY_CHANGE),
        (b"caf\xe9", c.REASON_UNREPRESENTABLE_CHANGE),
        (b"x" * 11, c.REASON_DIFF_TOO_LARGE),
        (b"x" * 10, None),
    ],
)
def test_check_blob(content: bytes, code: str | None) -> None:
    if code is None:
        check_blob(content, cap=10)
        return
    with pytest.raises(CollectionError) as caught:
        check_blob(content, cap=10)
    assert caught.value.code == code
