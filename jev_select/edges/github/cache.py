"""The lookup cache of local runs: metadata of commit-pinned references, kept between runs.

Edge module (docs/reference.md, "Lookup failures and the local cache"). An action, composite
action or reusable workflow of another repository named at a 40-hex commit is the same file for
good, so local runs (``plan``, ``check``, ``history``) keep what they fetched for it and a later
run sends no request for it. Tags and branches move and are never kept; nor is "not found",
because GitHub answers 404 for a private repository the token cannot see, and a token set
later must see it. GitHub mode never builds a cache.

Layout: ``<cache home>/jev-select/github-lookups/<sha256 of the key>``, where the key is the API
root, the kind of lookup, the repository, the commit and the path, and the cache home is
``$XDG_CACHE_HOME`` when it is set and absolute, else ``~/.cache`` (Linux and other systems),
``~/Library/Caches`` (macOS) or ``%LOCALAPPDATA%`` (Windows). The directory is private (0700),
each entry a private file (0600) written whole (``edges.files.write_atomically``).

An entry is a versioned envelope: one line of JSON (format, version, the key itself, the file's
path and commit, the text's size and SHA-256), then the text as UTF-8. An entry that cannot be
read, is over the caps, is not exactly such an envelope for the key asked, or whose text does
not match its size and hash is ignored (and replaced once fetched again). The text is at most
the metadata file cap; all entries together at most ``LOOKUP_CACHE_TOTAL_CAP`` bytes, the least
recently used removed first. Every failure of the cache is silent: it only ever saves requests.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import sys
import time
from collections.abc import Mapping

from ... import contracts as c
from ...core.evidence.files import ActionFile
from ...core.jsonutil import JsonError, strict_loads
from ...core.object_ids import is_object_id
from ..files import read_capped, write_atomically

__all__ = ["LookupCache", "cache_directory", "local_lookup_cache"]

_ENTRY_NAME = re.compile(r"[0-9a-f]{64}")
_STAGING_PREFIX = ".staging-"
# A staging file this old was left by a run that died while writing it.
_STALE_STAGING_S = 3600.0
_DIRECTORY_MODE = 0o700
_DARWIN = "darwin"
_WINDOWS = "win32"
_FIELD_FORMAT = "format"
_FIELD_VERSION = "version"
_FIELD_KEY = "key"
_FIELD_FILE_PATH = "file_path"
_FIELD_RESOLVED_SHA = "resolved_sha"
_FIELD_SIZE = "size"
_FIELD_SHA256 = "sha256"
_HEADER_FIELDS = (
    _FIELD_FORMAT,
    _FIELD_VERSION,
    _FIELD_KEY,
    _FIELD_FILE_PATH,
    _FIELD_RESOLVED_SHA,
    _FIELD_SIZE,
    _FIELD_SHA256,
)


def cache_directory(environ: Mapping[str, str], *, platform: str = sys.platform) -> str | None:
    """The lookup cache's directory for ``environ`` (the command's environment), or None when
    there is no cache home to put it in (no absolute ``HOME``, or ``LOCALAPPDATA`` on Windows).

    Only the variables decide: a command run without ``HOME`` writes no cache rather than guess
    a home directory from the system's user database.
    """
    xdg = environ.get(c.XDG_CACHE_HOME_ENV, "")
    if xdg and os.path.isabs(xdg):
        home = xdg
    elif platform == _WINDOWS:
        home = environ.get(c.LOCALAPPDATA_ENV, "")
    else:
        user = environ.get(c.HOME_ENV, "")
        if not user or not os.path.isabs(user):
            return None
        parts = ("Library", "Caches") if platform == _DARWIN else (".cache",)
        home = os.path.join(user, *parts)
    if not home or not os.path.isabs(home):
        return None
    return os.path.join(home, c.PRODUCT_NAME, c.LOOKUP_CACHE_DIRECTORY)


def local_lookup_cache(environ: Mapping[str, str], api_root: str) -> LookupCache | None:
    """The cache of a local run's lookups at ``api_root``; None in GitHub mode
    (``GITHUB_ACTIONS=true``), which never reads or writes it, or without a cache home."""
    if environ.get(c.GITHUB_ACTIONS_ENV) == c.BOOL_TRUE:
        return None
    directory = cache_directory(environ)
    return LookupCache(directory, api_root) if directory is not None else None


def _is_commit(ref: str) -> bool:
    return is_object_id(ref, sha1_only=True)


class LookupCache:
    """Lookups at commit references under ``directory``, for one API root."""

    def __init__(
        self,
        directory: str,
        api_root: str,
        *,
        total_cap: int = c.LOOKUP_CACHE_TOTAL_CAP,
        entry_cap: int = c.LOOKUP_CACHE_ENTRY_CAP,
    ) -> None:
        self.directory = directory
        self._root = api_root
        self._total_cap = total_cap
        self._entry_cap = entry_cap
        # Bytes of all entries as last counted plus what this instance wrote since; None until
        # the first write counts them.
        self._total: int | None = None

    def __repr__(self) -> str:
        return f"LookupCache({self.directory!r})"

    def _key(self, kind: str, owner: str, repo: str, path: str, ref: str) -> list[str]:
        return [self._root, kind, owner, repo, ref.lower(), path]

    def _path(self, key: list[str]) -> str:
        digest = hashlib.sha256(json.dumps(key, separators=(",", ":")).encode("utf-8"))
        return os.path.join(self.directory, digest.hexdigest())

    def get(self, kind: str, owner: str, repo: str, path: str, ref: str) -> ActionFile | None:
        """The kept answer for the lookup, or None (not a commit reference, not kept, or an
        entry that is not sound)."""
        if not _is_commit(ref):
            return None
        key = self._key(kind, owner, repo, path, ref)
        location = self._path(key)
        try:
            data = read_capped(location, c.LOOKUP_CACHE_HEADER_CAP + 1 + self._entry_cap)
        except OSError:
            return None
        found = self._decode(data, key)
        if found is not None:
            # Last use decides which entries go first when the cache is full.
            with contextlib.suppress(OSError):
                os.utime(location)
        return found

    def _decode(self, data: bytes, key: list[str]) -> ActionFile | None:
        line, newline, body = data.partition(b"\n")
        if not newline or len(line) > c.LOOKUP_CACHE_HEADER_CAP:
            return None
        try:
            header = strict_loads(line.decode("utf-8"))
        except (UnicodeDecodeError, JsonError):
            return None
        if not isinstance(header, dict) or sorted(header) != sorted(_HEADER_FIELDS):
            return None
        size, file_path, sha = (
            header[_FIELD_SIZE],
            header[_FIELD_FILE_PATH],
            header[_FIELD_RESOLVED_SHA],
        )
        if (
            header[_FIELD_FORMAT] != c.LOOKUP_CACHE_FORMAT
            or header[_FIELD_VERSION] != c.LOOKUP_CACHE_VERSION
            or header[_FIELD_KEY] != key
            or type(size) is not int
            or not 0 <= size <= self._entry_cap
            or len(body) != size
            or header[_FIELD_SHA256] != hashlib.sha256(body).hexdigest()
            or not isinstance(file_path, str)
            or not isinstance(sha, str)
            or not _is_commit(sha)
        ):
            return None
        try:
            text = body.decode("utf-8", "strict")
        except UnicodeDecodeError:
            return None
        return ActionFile(text=text, file_path=file_path, resolved_sha=sha)

    def put(self, kind: str, owner: str, repo: str, path: str, ref: str, found: ActionFile) -> None:
        """Keep ``found`` for the lookup when ``ref`` is a commit and the text fits the cap."""
        if not _is_commit(ref):
            return
        try:
            body = found.text.encode("utf-8")
        except UnicodeEncodeError:
            return
        if len(body) > self._entry_cap:
            return
        key = self._key(kind, owner, repo, path, ref)
        header = json.dumps(
            {
                _FIELD_FORMAT: c.LOOKUP_CACHE_FORMAT,
                _FIELD_VERSION: c.LOOKUP_CACHE_VERSION,
                _FIELD_KEY: key,
                _FIELD_FILE_PATH: found.file_path,
                _FIELD_RESOLVED_SHA: found.resolved_sha,
                _FIELD_SIZE: len(body),
                _FIELD_SHA256: hashlib.sha256(body).hexdigest(),
            },
            ensure_ascii=True,
            separators=(",", ":"),
        )
        if len(header) > c.LOOKUP_CACHE_HEADER_CAP:
            return
        location = self._path(key)
        try:
            os.makedirs(self.directory, mode=_DIRECTORY_MODE, exist_ok=True)
            write_atomically(location, header + "\n" + found.text, prefix=_STAGING_PREFIX)
        except (OSError, UnicodeError):
            return
        written = len(header) + 1 + len(body)
        if self._total is not None:
            self._total += written
        if self._total is None or self._total > self._total_cap:
            self._evict(keep=location)

    def _evict(self, *, keep: str) -> None:
        """Count every entry and remove the least recently used until the total fits the cap
        (the entry just written goes last); stale staging files go too."""
        entries: list[tuple[int, str, int]] = []
        now = time.time()
        try:
            with os.scandir(self.directory) as listing:
                for item in listing:
                    try:
                        if _ENTRY_NAME.fullmatch(item.name) and item.is_file(follow_symlinks=False):
                            status = item.stat(follow_symlinks=False)
                            entries.append((status.st_mtime_ns, item.path, status.st_size))
                        elif item.name.startswith(_STAGING_PREFIX):
                            status = item.stat(follow_symlinks=False)
                            if now - status.st_mtime > _STALE_STAGING_S:
                                os.unlink(item.path)
                    except OSError:
                        continue
        except OSError:
            return
        total = sum(size for _, _, size in entries)
        entries.sort(key=lambda entry: (entry[1] == keep, entry[0], entry[1]))
        for _, location, size in entries:
            if total <= self._total_cap:
                break
            with contextlib.suppress(OSError):
                os.unlink(location)
                total -= size
        self._total = total
