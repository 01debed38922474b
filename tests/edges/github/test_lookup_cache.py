"""The lookup cache of local runs (edges.github.cache): where it is, what it keeps, its bounds."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path

import pytest
from support.fakegithub import FakeGitHub

from jev_select import contracts as c
from jev_select.core.evidence.files import ActionFile
from jev_select.edges.github.api import GitHubApi
from jev_select.edges.github.cache import LookupCache, cache_directory, local_lookup_cache
from jev_select.edges.github.lookups import ACTION, WORKFLOW, MetadataLookups

ROOT = "https://api.github.com"
SHA = "0c45773b623bea8c8e75f6c82b208c3cf94ea4f9"
RESOLVED = "1" * 40
FILE = ActionFile(
    text="name: Cache\nruns:\n  using: node20\n", file_path="action.yml", resolved_sha=RESOLVED
)


def entries(directory: Path) -> list[Path]:
    return sorted(path for path in directory.iterdir() if not path.name.startswith("."))


def entry_name(kind: str, owner: str, repo: str, path: str, ref: str, root: str = ROOT) -> str:
    """The documented file name: the SHA-256 of the key as compact JSON."""
    key = json.dumps([root, kind, owner, repo, ref.lower(), path], separators=(",", ":"))
    return hashlib.sha256(key.encode()).hexdigest()


# ---- where ------------------------------------------------------------------------------------


def test_xdg_cache_home_wins_when_absolute(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    xdg = str(tmp_path / "xdg")
    expected = os.path.join(xdg, "jev-select", "github-lookups")
    for platform in ("linux", "darwin", "win32"):
        environ = {"HOME": home, "XDG_CACHE_HOME": xdg, "LOCALAPPDATA": home}
        assert cache_directory(environ, platform=platform) == expected
    # A relative one is not a cache home: the platform default applies.
    relative = {"HOME": home, "XDG_CACHE_HOME": "cache"}
    assert cache_directory(relative, platform="linux") == os.path.join(
        home, ".cache", "jev-select", "github-lookups"
    )


def test_the_platform_defaults(tmp_path: Path) -> None:
    home = str(tmp_path / "home")
    local = str(tmp_path / "local")
    assert cache_directory({"HOME": home}, platform="linux") == os.path.join(
        home, ".cache", "jev-select", "github-lookups"
    )
    assert cache_directory({"HOME": home}, platform="freebsd14") == os.path.join(
        home, ".cache", "jev-select", "github-lookups"
    )
    assert cache_directory({"HOME": home}, platform="darwin") == os.path.join(
        home, "Library", "Caches", "jev-select", "github-lookups"
    )
    assert cache_directory({"LOCALAPPDATA": local, "HOME": home}, platform="win32") == (
        os.path.join(local, "jev-select", "github-lookups")
    )


def test_no_cache_home_no_cache(tmp_path: Path) -> None:
    assert cache_directory({}, platform="linux") is None
    assert cache_directory({"HOME": "relative"}, platform="linux") is None
    assert cache_directory({"HOME": str(tmp_path)}, platform="win32") is None
    assert local_lookup_cache({}, ROOT) is None


def test_github_mode_has_no_cache(tmp_path: Path) -> None:
    environ = {"XDG_CACHE_HOME": str(tmp_path), "GITHUB_ACTIONS": "true"}
    assert local_lookup_cache(environ, ROOT) is None
    cache = local_lookup_cache({**environ, "GITHUB_ACTIONS": "false"}, ROOT)
    assert cache is not None
    assert cache.directory == os.path.join(str(tmp_path), "jev-select", "github-lookups")


# ---- what -------------------------------------------------------------------------------------


def test_a_commit_reference_is_kept_and_read_back(tmp_path: Path) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT)
    assert cache.get(ACTION, "actions", "cache", "", SHA) is None
    cache.put(ACTION, "actions", "cache", "", SHA, FILE)
    assert cache.get(ACTION, "actions", "cache", "", SHA) == FILE
    assert cache.get(ACTION, "actions", "cache", "", SHA.upper()) == FILE
    # Every part of the key counts.
    assert cache.get(WORKFLOW, "actions", "cache", "", SHA) is None
    assert cache.get(ACTION, "actions", "cache", "restore", SHA) is None
    assert cache.get(ACTION, "actions", "other", "", SHA) is None
    assert cache.get(ACTION, "actions", "cache", "", "2" * 40) is None
    assert (
        LookupCache(str(tmp_path / "c"), "https://ghes.example/api/v3").get(
            ACTION, "actions", "cache", "", SHA
        )
        is None
    )
    # The file is named by the hash of its key.
    (entry,) = entries(tmp_path / "c")
    assert entry.name == entry_name(ACTION, "actions", "cache", "", SHA)
    header, _, text = entry.read_bytes().partition(b"\n")
    assert json.loads(header)["version"] == c.LOOKUP_CACHE_VERSION
    assert text.decode() == FILE.text


@pytest.mark.posix
def test_the_cache_is_private(tmp_path: Path) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT)
    cache.put(ACTION, "actions", "cache", "", SHA, FILE)
    assert stat.S_IMODE((tmp_path / "c").stat().st_mode) == 0o700
    (entry,) = entries(tmp_path / "c")
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600


@pytest.mark.parametrize("ref", ["v4", "main", SHA[:12], "refs/tags/v1", "g" * 40])
def test_tags_and_branches_are_never_kept(tmp_path: Path, ref: str) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT)
    cache.put(ACTION, "actions", "cache", "", ref, FILE)
    assert cache.get(ACTION, "actions", "cache", "", ref) is None
    assert not (tmp_path / "c").exists()


def corrupt_variants(data: bytes) -> dict[str, bytes]:
    header, _, body = data.partition(b"\n")
    fields = json.loads(header)

    def with_header(**changes: object) -> bytes:
        return json.dumps({**fields, **changes}).encode() + b"\n" + body

    return {
        "garbage": b"\x00\xffnot an entry",
        "empty": b"",
        "no-newline": header,
        "truncated": data[:-3],
        "longer": data + b"x",
        "same-size-other-text": header + b"\n" + body[:-1] + b"!",
        "other-version": with_header(version=c.LOOKUP_CACHE_VERSION + 1),
        "other-format": with_header(format="something-else"),
        "other-key": with_header(key=[ROOT, ACTION, "evil", "cache", SHA, ""]),
        "bad-sha": with_header(resolved_sha="v1"),
        "extra-field": with_header(extra=1),
        "size-text": with_header(size=str(len(body))),
        "not-utf8-header": b"\xff" + data,
        "not-utf8-text": with_header(
            size=2, sha256=hashlib.sha256(b"\xc3\x28").hexdigest()
        ).partition(b"\n")[0]
        + b"\n\xc3\x28",
    }


def test_an_entry_that_is_not_sound_is_ignored_and_replaced(tmp_path: Path) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT)
    cache.put(ACTION, "actions", "cache", "", SHA, FILE)
    (entry,) = entries(tmp_path / "c")
    good = entry.read_bytes()
    for name, data in corrupt_variants(good).items():
        entry.write_bytes(data)
        assert cache.get(ACTION, "actions", "cache", "", SHA) is None, name
    cache.put(ACTION, "actions", "cache", "", SHA, FILE)
    assert entry.read_bytes() == good
    assert cache.get(ACTION, "actions", "cache", "", SHA) == FILE


def test_an_entry_that_cannot_be_read_is_ignored(tmp_path: Path) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT)
    cache.put(ACTION, "actions", "cache", "", SHA, FILE)
    (entry,) = entries(tmp_path / "c")
    entry.unlink()
    entry.mkdir()  # a directory where the file was
    assert cache.get(ACTION, "actions", "cache", "", SHA) is None


def test_the_entry_cap(tmp_path: Path) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT, entry_cap=64)
    big = ActionFile(text="x" * 65, file_path="action.yml", resolved_sha=RESOLVED)
    cache.put(ACTION, "actions", "big", "", SHA, big)
    assert not (tmp_path / "c").exists()
    fits = ActionFile(text="x" * 64, file_path="action.yml", resolved_sha=RESOLVED)
    cache.put(ACTION, "actions", "fits", "", SHA, fits)
    assert cache.get(ACTION, "actions", "fits", "", SHA) == fits
    # An entry written with a larger cap is over this one's and is not read.
    LookupCache(str(tmp_path / "c"), ROOT).put(ACTION, "actions", "big", "", SHA, big)
    assert cache.get(ACTION, "actions", "big", "", SHA) is None
    assert c.LOOKUP_CACHE_ENTRY_CAP == c.METADATA_FILE_CAP


def test_the_total_cap_removes_the_least_recently_used(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    probe = LookupCache(str(directory), ROOT)
    probe.put(ACTION, "o", "probe", "", SHA, FILE)
    (first,) = entries(directory)
    size = first.stat().st_size
    first.unlink()
    # Room for three entries of this size.
    cache = LookupCache(str(directory), ROOT, total_cap=3 * size + size // 2)
    names = ["a", "b", "c", "d", "e"]
    for index, name in enumerate(names):
        cache.put(ACTION, "o", name, "", SHA, FILE)
        # Distinct ages, oldest first, whatever the file system's time resolution.
        for aged_index, aged in enumerate(names[: index + 1]):
            path = directory / entry_name(ACTION, "o", aged, "", SHA)
            if path.exists() and aged_index < index:
                os.utime(path, (1_000_000 + aged_index, 1_000_000 + aged_index))
        if name == "c":
            assert cache.get(ACTION, "o", "a", "", SHA) == FILE  # "a" is used again
    kept = {name for name in names if cache.get(ACTION, "o", name, "", SHA) is not None}
    assert len(kept) == 3
    assert "e" in kept  # the entry just written is never the one to go
    assert sum(path.stat().st_size for path in entries(directory)) <= 3 * size + size // 2
    assert c.LOOKUP_CACHE_TOTAL_CAP == 64 * 1_048_576


def test_stale_staging_files_are_removed(tmp_path: Path) -> None:
    directory = tmp_path / "c"
    directory.mkdir()
    stale, fresh = directory / ".staging-0123", directory / ".staging-4567"
    stale.write_text("x")
    fresh.write_text("x")
    os.utime(stale, (1_000_000, 1_000_000))
    LookupCache(str(directory), ROOT).put(ACTION, "o", "r", "", SHA, FILE)
    assert not stale.exists()
    assert fresh.exists()


def test_an_unwritable_cache_is_silent(tmp_path: Path) -> None:
    blocked = tmp_path / "file"
    blocked.write_text("not a directory")
    for directory in (blocked, blocked / "below"):
        cache = LookupCache(str(directory), ROOT)
        cache.put(ACTION, "o", "r", "", SHA, FILE)
        assert cache.get(ACTION, "o", "r", "", SHA) is None
    assert blocked.read_text() == "not a directory"


# ---- in the metadata phase ----------------------------------------------------------------------


def test_a_cached_lookup_needs_no_client(tmp_path: Path) -> None:
    cache = LookupCache(str(tmp_path / "c"), ROOT)
    cache.put(ACTION, "actions", "cache", "", SHA, FILE)
    made: list[object] = []

    def factory() -> None:
        made.append(1)

    lookups = MetadataLookups(api_factory=factory, cache=cache)
    assert lookups.fetch_action("actions", "cache", "", SHA) == FILE
    assert lookups.run_pending() is False
    assert made == []


def test_fetched_commit_lookups_are_kept_and_tags_are_not(tmp_path: Path) -> None:
    with FakeGitHub() as github:
        github.add_action("acme/pinned", SHA, {"action.yml": "name: Pinned\n"})
        github.add_action("acme/tagged", "v1", {"action.yml": "name: Tagged\n"})
        github.add_action("acme/ci", SHA, {".github/workflows/b.yml": "on: workflow_call\n"})
        for _ in range(2):
            cache = LookupCache(str(tmp_path / "c"), github.url)
            lookups = MetadataLookups(GitHubApi(github.url, ""), cache=cache)
            lookups.fetch_action("acme", "pinned", "", SHA)
            lookups.fetch_action("acme", "tagged", "", "v1")
            lookups.fetch_action("acme", "absent", "", SHA)
            lookups.fetch_workflow("acme", "ci", ".github/workflows/b.yml", SHA)
            lookups.run_pending()
            assert isinstance(lookups.fetch_action("acme", "pinned", "", SHA), ActionFile)
            assert isinstance(lookups.fetch_action("acme", "tagged", "", "v1"), ActionFile)
            assert lookups.fetch_action("acme", "absent", "", SHA) == "missing"
            found = lookups.fetch_workflow("acme", "ci", ".github/workflows/b.yml", SHA)
            assert isinstance(found, ActionFile)
        paths = github.paths()
    assert paths.count(f"/repos/acme/pinned/commits/{SHA}") == 1
    assert paths.count(f"/repos/acme/ci/commits/{SHA}") == 1
    assert paths.count("/repos/acme/tagged/commits/v1") == 2
    # "Not found" is asked again: a token set later may see a private repository.
    assert paths.count(f"/repos/acme/absent/commits/{SHA}") == 2
    assert len(entries(tmp_path / "c")) == 2
