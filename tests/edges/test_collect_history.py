"""History for change collection: borrowed local object stores and the merge-base proof.

Local mode reads the objects of the user's repository through git alternates instead of fetching
them; head mode deepens a shallow history only until the merge base is proven unique. Both must
give exactly the answers a complete fetch gives.
"""

from __future__ import annotations

import os
import random
import subprocess
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import pytest
from support.gitrepo import GitRepo, git_env

from jev_select import contracts as c
from jev_select.core.models import Collection
from jev_select.edges.collect import collect_change, proven_merge_base
from jev_select.edges.git.local import alternates_line, local_object_directory
from jev_select.edges.git.session import GitSession


@contextmanager
def session_for(
    tmp_path: Path,
    remote: str,
    *,
    borrow_from: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> Iterator[GitSession]:
    temp_root = tmp_path / "temp"
    temp_root.mkdir(exist_ok=True)
    with GitSession(
        remote,
        token="",
        temp_root=str(temp_root),
        environ=os.environ if environ is None else environ,
        borrow_from=None if borrow_from is None else str(borrow_from),
    ) as session:
        yield session
    assert list(temp_root.iterdir()) == []


def run_collect(
    session: GitSession, base: str, head: str, *, tested: str | None = None
) -> Collection:
    return collect_change(
        session,
        base_sha=base,
        head_sha=head,
        tested_sha=head if tested is None else tested,
        tested_ref=c.TESTED_REF_HEAD if tested is None else c.TESTED_REF_MERGE,
        metadata_sha=base,
        max_diff_bytes=1 << 20,
    )


def fetched_objects(session: GitSession) -> list[str]:
    """Files git wrote into the temporary object store (fetched packs or loose objects)."""
    assert session.git_dir is not None
    objects = Path(session.git_dir) / "objects"
    return sorted(
        str(path.relative_to(objects))
        for path in objects.rglob("*")
        if path.is_file() and path.parent.name != "info"
    )


def collect_by_fetching(tmp_path: Path, origin: GitRepo, base: str, head: str) -> Collection:
    with session_for(tmp_path, origin.url) as session:
        return run_collect(session, base, head)


@pytest.fixture
def origin(tmp_path: Path) -> GitRepo:
    return GitRepo.init(tmp_path / "origin")


def pull_request(origin: GitRepo) -> tuple[str, str, str]:
    """(base, head, merge): main moved on after the branch point."""
    root = origin.commit({"src/app.py": "print('one')\n", "README.md": "# demo\n"})
    base = origin.commit({"README.md": "# demo, moved on\n"}, parents=[root])
    head = origin.commit(
        {"src/app.py": "print('two')\n", "src/new.py": "x = 1\n"}, parents=[root], branch="pr"
    )
    return base, head, origin.merge(base, head)


# ---- borrowing the local object store ------------------------------------------------------


def test_local_repository_is_borrowed_not_fetched(tmp_path: Path, origin: GitRepo) -> None:
    base, head, merge = pull_request(origin)
    expected = collect_by_fetching(tmp_path, origin, base, head)
    assert expected.change_set is not None
    with session_for(tmp_path, origin.url, borrow_from=origin.path) as session:
        assert session.borrowing
        assert session.git_dir is not None
        alternates = Path(session.git_dir) / "objects" / "info" / "alternates"
        assert alternates.read_bytes() == alternates_line(str(origin.path / ".git" / "objects"))
        assert run_collect(session, base, head) == expected
        merged = run_collect(session, base, head, tested=merge)
        assert merged.error is None
        assert merged.commits.diff_base_sha == base
        assert session.borrowing
        assert fetched_objects(session) == []
        assert not (Path(session.git_dir) / "shallow").exists()


def test_borrowed_verification_stays_strict(tmp_path: Path, origin: GitRepo) -> None:
    base, head, merge = pull_request(origin)
    swapped = origin.merge(base, head, parents=[head, base])
    left = origin.commit({"l.txt": "l\n"}, parents=[base], branch="left")
    right = origin.commit({"r.txt": "r\n"}, parents=[base], branch="right")
    cross_a = origin.merge(left, right, branch="a")
    cross_b = origin.merge(right, left, branch="b")
    with session_for(tmp_path, origin.url, borrow_from=origin.path) as session:
        assert run_collect(session, base, head, tested=swapped).error == c.REASON_SHA_INCOHERENT
        assert run_collect(session, head, base, tested=merge).error == c.REASON_SHA_INCOHERENT
        assert run_collect(session, cross_a, cross_b).error == c.REASON_SHA_INCOHERENT
        unrelated = origin.commit({"x": "x\n"}, parents=[], branch="orphan")
        assert run_collect(session, base, unrelated).error == c.REASON_SHA_INCOHERENT
        assert session.borrowing
        assert fetched_objects(session) == []


def _hostile_repository(tmp_path: Path, origin: GitRepo, marker: Path) -> None:
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 0\n")
    script.chmod(0o755)
    hooks = tmp_path / "evil-hooks"
    hooks.mkdir()
    for directory in (hooks, origin.path / ".git" / "hooks"):
        directory.mkdir(exist_ok=True)
        for name in (
            "pre-commit",
            "post-checkout",
            "post-merge",
            "reference-transaction",
            "post-index-change",
            "pre-auto-gc",
            "fsmonitor-watchman",
        ):
            (directory / name).write_text(script.read_text())
            (directory / name).chmod(0o755)
    config = (
        "[core]\n"
        f"\thooksPath = {hooks}\n"
        f"\tfsmonitor = {script}\n"
        f"\tpager = {script}\n"
        f"\tattributesFile = {tmp_path / 'evil-attributes'}\n"
        "[diff]\n"
        f"\texternal = {script}\n"
        '[diff "evil"]\n'
        f"\ttextconv = {script}\n"
        f"\tcommand = {script}\n"
        '[filter "evil"]\n'
        f"\tclean = {script}\n"
        f"\tsmudge = {script}\n"
        f"\tprocess = {script}\n"
        "[alias]\n"
        f"\tdiff = !{script}\n"
        f"\tcat-file = !{script}\n"
        "[gc]\n"
        "\tauto = 1\n"
        "[uploadpack]\n"
        f"\tpackObjectsHook = {script}\n"
    )
    with open(origin.path / ".git" / "config", "a", encoding="utf-8") as handle:
        handle.write(config)
    (tmp_path / "evil-attributes").write_text("* diff=evil filter=evil\n")
    (origin.path / ".git" / "info").mkdir(exist_ok=True)
    (origin.path / ".git" / "info" / "attributes").write_text("* diff=evil filter=evil\n")


def test_borrowing_reads_no_configuration_hooks_or_attributes_of_the_repository(
    tmp_path: Path, origin: GitRepo
) -> None:
    root = origin.commit({".gitattributes": "* diff=evil filter=evil\n", "a.txt": "a\n"})
    base = origin.commit({"b.txt": "b\n"}, parents=[root])
    head = origin.commit({"a.txt": "changed\n", "c.txt": "c\n"}, parents=[root], branch="pr")
    merge = origin.merge(base, head)
    clean_head = collect_by_fetching(tmp_path, origin, base, head)
    assert clean_head.change_set is not None
    marker = tmp_path / "marker"
    _hostile_repository(tmp_path, origin, marker)
    # The configuration is live: git run normally in the repository obeys it.
    subprocess.run(
        ["git", "-C", str(origin.path), "diff", root, head],
        env=git_env(),
        capture_output=True,
        check=False,
    )
    assert marker.exists()
    marker.unlink()
    with session_for(tmp_path, origin.url, borrow_from=origin.path) as session:
        assert session.borrowing
        assert run_collect(session, base, head) == clean_head
        assert run_collect(session, base, head, tested=merge).error is None
        assert session.read_file_at(base, "a.txt", 100) == b"a\n"
        assert fetched_objects(session) == []
    assert not marker.exists()


def test_bare_repository_is_borrowed(tmp_path: Path) -> None:
    bare = GitRepo.init(tmp_path / "bare.git", bare=True)
    base, head, _ = pull_request(bare)
    assert local_object_directory(str(bare.path), os.environ) == str(bare.path / "objects")
    with session_for(tmp_path, bare.url, borrow_from=bare.path) as session:
        assert session.borrowing
        result = run_collect(session, base, head)
        assert fetched_objects(session) == []
    assert result == collect_by_fetching(tmp_path, bare, base, head)


def test_worktree_and_subdirectory_borrow_the_common_object_store(
    tmp_path: Path, origin: GitRepo
) -> None:
    base, head, _ = pull_request(origin)
    linked = tmp_path / "linked"
    origin.git("worktree", "add", "--quiet", "--detach", str(linked), head)
    assert (linked / ".git").is_file()
    subdirectory = linked / "src"
    expected_objects = str(origin.path / ".git" / "objects")
    for place in (linked, subdirectory):
        assert local_object_directory(str(place), os.environ) == expected_objects
        with session_for(tmp_path, origin.url, borrow_from=place) as session:
            assert session.borrowing
            result = run_collect(session, base, head)
            assert fetched_objects(session) == []
        assert result.change_set is not None
        assert result.change_set.changed_paths == ("src/app.py", "src/new.py")


def test_repository_that_itself_borrows_is_followed(tmp_path: Path, origin: GitRepo) -> None:
    base, _, _ = pull_request(origin)
    shared = tmp_path / "shared"
    subprocess.run(
        ["git", "clone", "--quiet", "--shared", "--no-checkout", str(origin.path), str(shared)],
        env=git_env(),
        check=True,
        capture_output=True,
    )
    # A relative alternates path is resolved against the object directory that names it.
    alternates = shared / ".git" / "objects" / "info" / "alternates"
    alternates.write_text(
        os.path.relpath(origin.path / ".git" / "objects", shared / ".git" / "objects") + "\n"
    )
    clone = GitRepo(shared)
    head = clone.commit({"only-in-clone.txt": "new\n"}, parents=[base], branch="work")
    assert not (origin.path / ".git" / "objects" / head[:2] / head[2:]).exists()
    with session_for(tmp_path, (tmp_path / "absent").as_uri(), borrow_from=shared) as session:
        assert session.borrowing
        result = run_collect(session, base, head)
    assert result.error is None
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("only-in-clone.txt",)


def test_shallow_repository_is_fetched_from_instead(tmp_path: Path, origin: GitRepo) -> None:
    root = origin.commit({"a.txt": "a\n"})
    tail = origin.linear_history(root, 60, path="tail.txt")
    base = origin.commit({"b.txt": "b\n"}, parents=[tail])
    head = origin.commit({"c.txt": "c\n"}, parents=[tail], branch="pr")
    shallow = tmp_path / "shallow"
    subprocess.run(
        ["git", "clone", "--quiet", "--depth=5", "--no-single-branch", origin.url, str(shallow)],
        env=git_env(),
        check=True,
        capture_output=True,
    )
    assert local_object_directory(str(shallow), os.environ) is None
    with session_for(tmp_path, shallow.as_uri(), borrow_from=shallow) as session:
        assert not session.borrowing
        result = run_collect(session, base, head)
    # The boundary of the shallow clone lies below the merge base: proven without it.
    assert result.error is None
    assert result.commits.diff_base_sha == tail


def test_missing_commit_stops_borrowing_and_fetches(tmp_path: Path, origin: GitRepo) -> None:
    base, head, _ = pull_request(origin)
    other = GitRepo.init(tmp_path / "other")
    other.commit({"unrelated.txt": "u\n"})
    with session_for(tmp_path, origin.url, borrow_from=other.path) as session:
        assert session.borrowing
        result = run_collect(session, base, head)
        assert not session.borrowing
        assert fetched_objects(session) != []
    assert result == collect_by_fetching(tmp_path, origin, base, head)


def test_partial_clone_falls_back_to_fetching(tmp_path: Path, origin: GitRepo) -> None:
    base, head, _ = pull_request(origin)
    origin.git("config", "uploadpack.allowFilter", "true")
    partial = tmp_path / "partial"
    subprocess.run(
        ["git", "clone", "--quiet", "--bare", "--filter=blob:none", origin.url, str(partial)],
        env=git_env(),
        check=True,
        capture_output=True,
    )
    # The blobs stay on the server; borrowing finds the commits but cannot read the change.
    with session_for(tmp_path, origin.url, borrow_from=partial) as session:
        assert session.borrowing
        result = run_collect(session, base, head)
        assert not session.borrowing
    assert result == collect_by_fetching(tmp_path, origin, base, head)


@pytest.mark.parametrize(
    "name",
    [
        "with space",
        '"quoted"',
        "#hash",
        "back\\slash",
        "new\nline",
        "tab\tand\x01control",
        "caf\u00e9 \u6f22",
        "colon:semi;",
    ],
)
def test_odd_repository_paths_are_borrowed(tmp_path: Path, name: str) -> None:
    repo = GitRepo.init(tmp_path / name / "repo")
    base, head, _ = pull_request(repo)
    with session_for(tmp_path, repo.url, borrow_from=repo.path) as session:
        assert session.borrowing
        result = run_collect(session, base, head)
        assert fetched_objects(session) == []
    assert result.error is None
    assert result.change_set is not None
    assert result.change_set.changed_paths == ("src/app.py", "src/new.py")


def test_alternates_line_quotes_every_special_byte() -> None:
    assert alternates_line("/a b/objects") == b'"/a b/objects"\n'
    assert alternates_line('/q"\\/#\n\t') == b'"/q\\"\\\\/#\\012\\011"\n'


def test_no_repository_no_borrowing(tmp_path: Path, origin: GitRepo) -> None:
    base, head, _ = pull_request(origin)
    plain = tmp_path / "plain"
    plain.mkdir()
    assert local_object_directory(str(plain), os.environ) is None
    assert local_object_directory(str(tmp_path / "absent"), os.environ) is None
    with session_for(tmp_path, origin.url, borrow_from=plain) as session:
        assert not session.borrowing
        assert run_collect(session, base, head).error is None


# ---- proving the merge base unique in a shallow history -------------------------------------


def full_merge_bases(origin: GitRepo, first: str, second: str) -> list[str]:
    try:
        return sorted(origin.text("merge-base", "--all", first, second).split())
    except RuntimeError:
        return []


@contextmanager
def shallow_session_state(
    tmp_path: Path, origin: GitRepo, base: str, head: str, *, base_depth: int, head_depth: int
) -> Iterator[tuple[GitSession, str | None]]:
    """Sessions holding ``base`` and ``head`` at the given depths, with the proof's answer."""
    with session_for(tmp_path, origin.url) as session:
        assert session.fetch([base], depth=base_depth)
        assert session.fetch([head], depth=head_depth)
        yield session, proven_merge_base(session, base, head)


def test_boundary_below_the_merge_base_proves_it(tmp_path: Path, origin: GitRepo) -> None:
    root = origin.commit({"a.txt": "a\n"})
    fork = origin.linear_history(root, 50, path="old.txt")
    base = origin.linear_history(fork, 3, path="main.txt")
    head = origin.linear_history(fork, 5, path="pr.txt", branch="pr")
    with shallow_session_state(tmp_path, origin, base, head, base_depth=8, head_depth=10) as (
        session,
        proven,
    ):
        boundary = session.shallow_commits()
        assert boundary, "the history is cut"
        # The boundary commits have parents, all missing here; they lie behind the fork point.
        assert all(origin.parents_of(commit) for commit in boundary)
        assert proven == fork
    assert full_merge_bases(origin, base, head) == [fork]


@pytest.mark.parametrize("side", ["base", "head"])
def test_boundary_not_below_the_candidate_is_no_proof(
    tmp_path: Path, origin: GitRepo, side: str
) -> None:
    # One side merged an old branch whose history is cut above its own fork point.
    root = origin.commit({"a.txt": "a\n"})
    old_branch = origin.linear_history(root, 30, path="old.txt", branch="old")
    fork = origin.linear_history(root, 5, path="main.txt")
    other = origin.linear_history(fork, 2, path="other.txt", branch="other")
    merged = origin.merge(other, old_branch)
    tip = origin.commit({"tip.txt": "t\n"}, parents=[merged])
    base, head = (tip, other) if side == "base" else (other, tip)
    depths = {"base_depth": 4, "head_depth": 4}
    with shallow_session_state(tmp_path, origin, base, head, **depths) as (session, proven):
        assert session.merge_bases(base, head) == (other,)
        assert proven is None
    assert full_merge_bases(origin, base, head) == [other]
    with session_for(tmp_path, origin.url) as session:
        result = run_collect(session, base, head)
    assert result.commits.diff_base_sha == other


def test_first_candidate_is_wrong(tmp_path: Path, origin: GitRepo) -> None:
    # The head reaches the true merge base only through a long branch; a short side branch
    # reaches an older commit first, which alone looks like the merge base in a shallow history.
    older = origin.linear_history(None, 300, path="old.txt")
    fork = origin.linear_history(older, 3, path="main.txt")
    base = origin.linear_history(fork, 2, path="base.txt")
    long_side = origin.linear_history(fork, 60, path="long.txt", branch="long")
    short_side = origin.commit({"short.txt": "s\n"}, parents=[older], branch="short")
    head = origin.merge(long_side, short_side)
    assert full_merge_bases(origin, base, head) == [fork]
    with shallow_session_state(tmp_path, origin, base, head, base_depth=10, head_depth=10) as (
        session,
        proven,
    ):
        assert session.merge_bases(base, head) == (older,)
        assert proven is None
    with session_for(tmp_path, origin.url) as session:
        result = run_collect(session, base, head)
        assert session.is_shallow(), "proven before the whole history was fetched"
    assert result.error is None
    assert result.commits.diff_base_sha == fork


def test_criss_cross_is_never_proven(tmp_path: Path, origin: GitRepo) -> None:
    root = origin.linear_history(None, 40, path="old.txt")
    left = origin.commit({"l.txt": "l\n"}, parents=[root], branch="left")
    right = origin.commit({"r.txt": "r\n"}, parents=[root], branch="right")
    base = origin.merge(left, right, branch="main")
    head = origin.commit({"h.txt": "h\n"}, parents=[origin.merge(right, left)], branch="pr")
    assert full_merge_bases(origin, base, head) == sorted([left, right])
    for depth in (1, 2, 3, 10):
        with shallow_session_state(
            tmp_path, origin, base, head, base_depth=depth, head_depth=depth
        ) as (session, proven):
            assert proven is None
    with session_for(tmp_path, origin.url) as session:
        assert run_collect(session, base, head).error == c.REASON_SHA_INCOHERENT


def test_criss_cross_hidden_beyond_the_boundary(tmp_path: Path, origin: GitRepo) -> None:
    # The criss-cross lies deep in history; near the tips a single candidate appears, below
    # which the boundary on one side is not.
    root = origin.commit({"a.txt": "a\n"})
    left = origin.commit({"l.txt": "l\n"}, parents=[root], branch="left")
    right = origin.commit({"r.txt": "r\n"}, parents=[root], branch="right")
    left_tip = origin.linear_history(origin.merge(left, right), 40, path="l2.txt", branch="lt")
    right_tip = origin.linear_history(origin.merge(right, left), 40, path="r2.txt", branch="rt")
    shared = origin.commit({"s.txt": "s\n"}, parents=[left])
    base = origin.merge(left_tip, shared)
    head = origin.merge(right_tip, shared)
    assert len(full_merge_bases(origin, base, head)) == 2
    with shallow_session_state(tmp_path, origin, base, head, base_depth=5, head_depth=5) as (
        session,
        proven,
    ):
        assert session.merge_bases(base, head) == (shared,)
        assert proven is None
    with session_for(tmp_path, origin.url) as session:
        assert run_collect(session, base, head).error == c.REASON_SHA_INCOHERENT


def test_long_history_is_not_fetched_whole(tmp_path: Path, origin: GitRepo) -> None:
    fork = origin.linear_history(None, 3000, path="old.txt")
    base = origin.linear_history(fork, 20, path="main.txt")
    head = origin.linear_history(fork, 4, path="pr.txt", branch="pr")
    with session_for(tmp_path, origin.url) as session:
        result = run_collect(session, base, head)
        assert session.is_shallow()
        boundary = session.shallow_commits()
        assert boundary
        # The first step (depth 32 from both tips) proved it: nothing deeper was fetched.
        below_fork = [3000 - int(origin.text("rev-list", "--count", commit)) for commit in boundary]
        assert 0 < max(below_fork) < 32
    assert result.error is None
    assert result.commits.diff_base_sha == fork


def _random_history(origin: GitRepo, rng: random.Random, size: int) -> list[str]:
    """``size`` commits; each has one or two earlier parents, preferring recent ones."""
    commits: list[str] = []
    for number in range(size):
        if not commits:
            parents: list[str] = []
        else:
            count = 2 if len(commits) > 2 and rng.random() < 0.3 else 1
            picks = {min(len(commits) - 1, int(rng.expovariate(0.15))) for _ in range(count)}
            parents = [commits[len(commits) - 1 - pick] for pick in sorted(picks)]
        commits.append(origin.commit({f"f{number % 5}.txt": f"{number}\n"}, parents=parents))
    return commits


def test_proof_is_sound_on_random_histories(tmp_path: Path, origin: GitRepo) -> None:
    rng = random.Random(7)
    commits = _random_history(origin, rng, 40)
    proven_count = wrong_candidates_rejected = 0
    for _ in range(8):
        base, head = rng.sample(commits[15:], 2)
        truth = full_merge_bases(origin, base, head)
        with session_for(tmp_path, origin.url) as session:
            # Uneven depths put the boundary nearer one tip than the other.
            assert session.fetch([base], depth=rng.randint(1, 5))
            assert session.fetch([head], depth=rng.randint(1, 5))
            depth = 1
            while session.is_shallow() and depth < len(commits):
                proven = proven_merge_base(session, base, head)
                candidates = list(session.merge_bases(base, head))
                if proven is not None:
                    proven_count += 1
                    assert [proven] == truth, "a proven merge base is the only one"
                elif len(candidates) == 1 and candidates != truth:
                    wrong_candidates_rejected += 1
                depth += rng.randint(2, 4)
                assert session.fetch([base, head], depth=depth)
    assert proven_count > 0
    assert wrong_candidates_rejected > 0
