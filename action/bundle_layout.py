"""The runtime bundle of a release commit: its pins, its checks and its layout in the environment.

``action/install.py`` loads this file from its own directory (``-I`` puts no directory of scripts
on the path) and uses it when ``dist/bundles.lock`` has a line for the running interpreter and
platform; scripts/bundle.py reads the same names and rules when it builds and verifies. Standard
library only.

A bundle comes in two parts, both pinned by SHA-256 in ``dist/bundles.lock``:

- the **shared part**, ``jev-select-runtime-<cache tag>-any.zip``: every pure-Python package of
  ``requirements.lock`` with its checked-hash bytecode, and the bytecode of ``jev_select``; one
  archive for every platform, since nothing in it depends on one;
- the **platform part**, ``jev-select-runtime-<cache tag>-<platform key>.zip``: only the
  distributions that still need compiled code on that platform (rpds-py), written to disk whole.

The lock's line for this platform decides between the bundle and the index. Once it is there,
both parts must be present, match their digests, say in their manifests that they are the part
they are pinned as, for this interpreter and this ``requirements.lock``, and hold only members
with safe names and plain kinds; anything else stops the install.
"""

from __future__ import annotations

import hashlib
import hmac
import io
import json
import platform
import shutil
import stat
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ACTION_ROOT = Path(__file__).resolve().parent.parent
PACKAGE = "jev_select"
BUNDLE_MANIFEST = "jev-select-bundle.json"
PACKAGE_PYC_PREFIX = "jev-select-package"
SHARED_PLATFORM = "any"
SHARED, PLATFORM = "shared", "platform"
# The files each part becomes in site-packages; jev-select.pth lists them in this order.
PACKAGE_ARCHIVE = "jev-select.zip"
RUNTIME_ARCHIVE = "jev-select-runtime.zip"
NATIVE_ARCHIVE = "jev-select-native.zip"
PATH_FILE = "jev-select.pth"
MAX_BUNDLE_BYTES = 128 * 1024 * 1024
MAX_UNPACKED_BYTES = 512 * 1024 * 1024


class InstallError(Exception):
    """A fixed description of what failed; never carries file contents or remote text."""


def platform_key() -> str:
    """The installer.lock line for the running interpreter: ``<os>-<machine>[-<libc>]``."""
    machine = platform.machine().lower()
    machine = {"amd64": "x86_64", "x64": "x86_64", "arm64": "aarch64"}.get(machine, machine)
    if sys.platform.startswith("linux"):
        if machine == "x86_64":
            libc, _ = platform.libc_ver()
            return "linux-x86_64-gnu" if libc == "glibc" else "linux-x86_64-musl"
        return f"linux-{machine}"
    if sys.platform == "darwin":
        return "darwin-arm64" if machine == "aarch64" else f"darwin-{machine}"
    if sys.platform == "win32":
        return "windows-arm64" if machine == "aarch64" else "windows-amd64"
    raise InstallError(f"no installer is pinned for the platform {sys.platform}")


def bundle_key(cache_tag: str | None = None) -> str:
    """The bundles.lock key of the running interpreter's platform part."""
    return f"{cache_tag or sys.implementation.cache_tag}-{platform_key()}"


def shared_key(cache_tag: str | None = None) -> str:
    """The bundles.lock key of the shared part: ``<cache tag>-any``."""
    return f"{cache_tag or sys.implementation.cache_tag}-{SHARED_PLATFORM}"


def bundle_file_name(key: str) -> str:
    return f"jev-select-runtime-{key}.zip"


def file_digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def parse_bundle_lock(lock: Path) -> tuple[str, dict[str, tuple[str, str]]]:
    """The requirements.lock digest bundles.lock names, and its (file name, digest) per key."""
    requirements: str | None = None
    pins: dict[str, tuple[str, str]] = {}
    for raw in lock.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) == 2 and fields[0] == "requirements" and requirements is None:
            requirements = _digest_field(fields[1])
            continue
        if len(fields) != 3 or fields[0] in pins or fields[1] != bundle_file_name(fields[0]):
            raise InstallError("dist/bundles.lock has a malformed line")
        pins[fields[0]] = (fields[1], _digest_field(fields[2]))
    if requirements is None:
        raise InstallError("dist/bundles.lock names no requirements.lock")
    return requirements, pins


def _digest_field(field: str) -> str:
    digest = field.removeprefix("sha256:")
    if not field.startswith("sha256:") or len(digest) != 64 or digest.strip("0123456789abcdef"):
        raise InstallError("dist/bundles.lock has a malformed digest")
    return digest


def bundle_keys(lock: Path) -> list[str]:
    return sorted(parse_bundle_lock(lock)[1])


def bundle_pin(lock: Path, key: str, requirements: Path) -> tuple[str, str] | None:
    """The (file name, digest) bundles.lock pins for ``key``; None when it pins none.

    A lock built from another requirements.lock stops the install: its bundles hold other
    versions than the ones this checkout locks, and installing from the index instead would hide
    that the release commit is inconsistent.
    """
    locked_requirements, pins = parse_bundle_lock(lock)
    if not hmac.compare_digest(locked_requirements, file_digest(requirements)):
        raise InstallError("dist/bundles.lock was built from another requirements.lock")
    return pins.get(key)


@dataclass(frozen=True)
class Part:
    """One pinned part of the bundle: which it is, the key it must carry, and its pin."""

    kind: str  # SHARED or PLATFORM
    key: str
    name: str
    digest: str


def bundle_parts(lock: Path, requirements: Path) -> tuple[Part, Part] | None:
    """The shared and the platform part pinned for the running interpreter; None when the lock
    has no line for its platform (the index install). A platform line without a shared one is a
    broken release and stops the install."""
    platform_pin = bundle_pin(lock, bundle_key(), requirements)
    if platform_pin is None:
        return None
    shared_pin = bundle_pin(lock, shared_key(), requirements)
    if shared_pin is None:
        raise InstallError("dist/bundles.lock pins no shared part for this interpreter")
    return (
        Part(SHARED, shared_key(), *shared_pin),
        Part(PLATFORM, bundle_key(), *platform_pin),
    )


def read_bundle(path: Path, digest: str) -> bytes:
    """The bundle's bytes, read once and checked: every later step uses these same bytes."""
    try:
        with path.open("rb") as handle:
            data = handle.read(MAX_BUNDLE_BYTES + 1)
    except FileNotFoundError:
        raise InstallError("a bundle that dist/bundles.lock pins is missing") from None
    if len(data) > MAX_BUNDLE_BYTES:
        raise InstallError("the bundle is larger than allowed")
    if not hmac.compare_digest(hashlib.sha256(data).hexdigest(), digest):
        raise InstallError("the bundle does not match dist/bundles.lock")
    return data


def member_parts(info: zipfile.ZipInfo) -> tuple[str, ...] | None:
    """The path parts of an archive member that is a regular file; None for a directory entry.

    Any name that could land outside the target (absolute, a drive, ``..``, a backslash) and any
    member that is not a plain file or directory (a symlink, a device) is refused, so the target
    holds only files this function let through, under names it checked.
    """
    name = info.filename
    kind = stat.S_IFMT(info.external_attr >> 16)
    if kind not in (0, stat.S_IFREG, stat.S_IFDIR):
        raise InstallError("an archive member is not a plain file")
    if "\\" in name or ":" in name or "\0" in name or name.startswith("/"):
        raise InstallError("an archive member has an unsafe name")
    directory = name.endswith("/")
    parts = tuple(name.removesuffix("/").split("/"))
    if any(part in ("", ".", "..") for part in parts):
        raise InstallError("an archive member has an unsafe name")
    if directory or kind == stat.S_IFDIR:
        return None
    return parts


def read_manifest(archive: zipfile.ZipFile) -> Any:
    try:
        return json.loads(archive.read(BUNDLE_MANIFEST))
    except (KeyError, ValueError):
        raise InstallError("the bundle has no readable manifest") from None


def check_manifest(
    archive: zipfile.ZipFile,
    key: str,
    requirements: Path,
    *,
    cache_tag: str | None,
    kind: str | None = None,
) -> dict[str, Any]:
    """The part must say it is ``kind`` for ``key`` and this interpreter, built from this lock.

    ``kind`` None takes the part a key names: ``<cache tag>-any`` is the shared one.
    """
    manifest = read_manifest(archive)
    if kind is None:
        kind = SHARED if key.endswith(f"-{SHARED_PLATFORM}") else PLATFORM
    if not isinstance(manifest, dict) or manifest.get("key") != key:
        raise InstallError("the bundle was built for another interpreter or platform")
    if manifest.get("part") != kind:
        raise InstallError("the bundle was built for another interpreter or platform")
    if cache_tag is not None and manifest.get("cache_tag") != cache_tag:
        raise InstallError("the bundle was built for another interpreter or platform")
    if manifest.get("requirements_sha256") != file_digest(requirements):
        raise InstallError("the bundle was built from another requirements.lock")
    on_disk = manifest.get("on_disk")
    # Only importable package names: a name such as x.pth would be run by every start.
    if not isinstance(on_disk, list) or not all(
        isinstance(name, str) and name.isidentifier() and name != PACKAGE for name in on_disk
    ):
        raise InstallError("the bundle's manifest is malformed")
    return manifest


def _entry(name: str) -> zipfile.ZipInfo:
    info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
    info.external_attr = 0o100644 << 16
    return info


def write_package_archive(path: Path, bundle: zipfile.ZipFile, compiled: dict[str, Any]) -> None:
    """The checkout's jev_select as a ZIP, each module with the bundle's ``.pyc`` beside it.

    A ``.pyc`` is added only next to its source, and it carries the hash of the source it was
    compiled from: when the checkout differs from the release (a fork, a later commit), zipimport
    finds the hashes differ and compiles the checkout's source instead, so the bytecode can never
    run anything but this checkout's code.
    """
    with zipfile.ZipFile(path, "x", compression=zipfile.ZIP_STORED) as archive:
        for source in sorted((ACTION_ROOT / PACKAGE).rglob("*")):
            if not source.is_file() or "__pycache__" in source.parts or source.suffix == ".pyc":
                continue
            name = source.relative_to(ACTION_ROOT).as_posix()
            archive.writestr(_entry(name), source.read_bytes())
            pyc = name.removesuffix(".py") + ".pyc"
            if name.endswith(".py") and pyc in compiled:
                archive.writestr(_entry(pyc), bundle.read(compiled[pyc]))


@dataclass
class Checked:
    """One part, opened and checked: what to write to disk and where it becomes a file."""

    archive: zipfile.ZipFile
    kind: str
    write_out: list[tuple[zipfile.ZipInfo, tuple[str, ...]]]
    compiled: dict[str, zipfile.ZipInfo]
    tops: set[str]


def check_part(archive: zipfile.ZipFile, part: Part, requirements: Path) -> Checked:
    """Every member of a part checked before anything of either part is written."""
    manifest = check_manifest(
        archive, part.key, requirements, cache_tag=sys.implementation.cache_tag, kind=part.kind
    )
    on_disk = set(manifest["on_disk"])
    infos = archive.infolist()
    if sum(info.file_size for info in infos) > MAX_UNPACKED_BYTES:
        raise InstallError("the bundle unpacks to more than allowed")
    if len({info.filename for info in infos}) != len(infos):
        # zipimport reads the last of two same-named members, an extraction the first.
        raise InstallError("the bundle names a member twice")
    checked = Checked(archive, part.kind, [], {}, set())
    for info in infos:
        parts = member_parts(info)
        if parts is None or info.filename == BUNDLE_MANIFEST:
            continue
        if parts[0] == PACKAGE:
            # The package's sources always come from the checkout, never from a bundle.
            raise InstallError("the bundle holds sources of the package itself")
        checked.tops.add(parts[0])
        if parts[0] == PACKAGE_PYC_PREFIX:
            # Only the shared part carries the package's bytecode: one build for every platform.
            if part.kind != SHARED:
                raise InstallError("the bundle's compiled package is malformed")
            if len(parts) < 3 or parts[1] != PACKAGE or not parts[-1].endswith(".pyc"):
                raise InstallError("the bundle's compiled package is malformed")
            checked.compiled["/".join(parts[1:])] = info
        elif parts[0] in on_disk:
            checked.write_out.append((info, parts))
    return checked


def unpack_bundle(data: dict[str, bytes], parts: tuple[Part, Part], site: Path) -> None:
    """Lay both parts out in ``site``, a site-packages directory this install has just created.

    Each part becomes one file that the interpreter imports from (zipimport); only the packages
    its manifest names as needing the disk (extension modules, certifi's CA file) are written
    out as files, which keeps a start from creating a thousand small files. Both parts are
    checked whole before the first file is written, and no top-level name may come from both:
    which copy an import found would then depend on the order of the path.
    """
    with (
        zipfile.ZipFile(io.BytesIO(data[SHARED])) as shared_archive,
        zipfile.ZipFile(io.BytesIO(data[PLATFORM])) as platform_archive,
    ):
        shared, platform_part = (
            check_part(archive, part, ACTION_ROOT / "requirements.lock")
            for archive, part in zip((shared_archive, platform_archive), parts, strict=True)
        )
        if shared.tops & platform_part.tops:
            raise InstallError("the bundle's parts hold the same package")
        made: set[Path] = set()
        for checked in (shared, platform_part):
            for info, member in checked.write_out:
                target = site.joinpath(*member)
                if target.parent not in made:
                    target.parent.mkdir(parents=True, exist_ok=True)
                    made.add(target.parent)
                # "xb": a second member of the same name cannot replace the first.
                with checked.archive.open(info) as source, target.open("xb") as sink:
                    shutil.copyfileobj(source, sink, 1024 * 1024)
        for name, kind in ((RUNTIME_ARCHIVE, SHARED), (NATIVE_ARCHIVE, PLATFORM)):
            with (site / name).open("xb") as sink:
                sink.write(data[kind])
        write_package_archive(site / PACKAGE_ARCHIVE, shared_archive, shared.compiled)
    # Relative lines name files of this directory: the package, then the two parts.
    (site / PATH_FILE).write_text(
        f"{PACKAGE_ARCHIVE}\n{RUNTIME_ARCHIVE}\n{NATIVE_ARCHIVE}\n", encoding="utf-8"
    )
