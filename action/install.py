"""Install jev-select into a private virtual environment for the action's plan step.

action.yml runs this file as ``python -I action/install.py`` from ``RUNNER_TEMP``, with the
interpreter of its own setup-python step. It uses the standard library only, and nothing of the
job's workspace, its current directory or the environment's Python, pip or uv settings:

1. uv, the installer, comes from the wheel pinned for this platform in ``installer.lock``; the
   wheel's SHA-256 is checked before anything of it is used, and only its ``uv`` program is kept.
2. A fresh virtual environment at ``$RUNNER_TEMP/jev-select-venv`` (the standard ``venv`` module,
   in this process; no pip inside it). Whatever was there is removed first if it is a plain
   directory; a symlink or any other kind of file stops the install untouched.
3. uv installs ``requirements.lock`` into it: exact pins, every file checked against the lock's
   hashes, wheels only, no configuration file, no cache.
4. The ``jev_select`` package is copied from the action's own checkout, with the distribution's
   metadata, so nothing is built.

A release commit also carries ``dist/``: one bundle per interpreter and platform, the locked wheels
already unpacked and compiled (scripts/bundle.py), pinned by SHA-256 in ``dist/bundles.lock``. When
that lock has a line for the running interpreter, steps 1 and 3 are replaced: the bundle's digest
is checked against the lock, its manifest against the interpreter, the platform and
``requirements.lock``, and every member's name and kind are checked so that none can land outside
the environment. The bundle then becomes one file of site-packages that the interpreter imports
from, only the packages that need the disk are written out, and step 4 puts the checkout's
``jev_select`` beside it as a ZIP with the bundle's bytecode. Any mismatch stops the install; only
a lock without a line for this interpreter (or no ``dist/`` at all) leads to uv and the index.

Packages come from https://pypi.org/simple, or, when ``JEV_SELECT_WHEELHOUSE`` names a directory,
from the wheels in that directory and nowhere else (runners without access to the index). Either
way the hashes decide what is installed; the source only decides where the bytes come from.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import io
import json
import os
import platform
import shutil
import stat
import subprocess
import sys
import sysconfig
import tomllib
import venv
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

ACTION_ROOT = Path(__file__).resolve().parent.parent
REQUIREMENTS_LOCK = ACTION_ROOT / "requirements.lock"
INSTALLER_LOCK = ACTION_ROOT / "action" / "installer.lock"
PACKAGE = "jev_select"
INDEX_URL = "https://pypi.org/simple"
WHEELHOUSE_VARIABLE = "JEV_SELECT_WHEELHOUSE"
VENV_NAME = "jev-select-venv"
UV_DIR_NAME = "jev-select-uv"
MAX_INSTALLER_BYTES = 64 * 1024 * 1024
BUNDLE_LOCK = ACTION_ROOT / "dist" / "bundles.lock"
BUNDLE_MANIFEST = "jev-select-bundle.json"
PACKAGE_PYC_PREFIX = "jev-select-package"
RUNTIME_ARCHIVE = "jev-select-runtime.zip"
PACKAGE_ARCHIVE = "jev-select.zip"
PATH_FILE = "jev-select.pth"
MAX_BUNDLE_BYTES = 128 * 1024 * 1024
MAX_UNPACKED_BYTES = 512 * 1024 * 1024
DOWNLOAD_TIMEOUT_S = 60.0
_REPARSE_POINT = getattr(stat, "FILE_ATTRIBUTE_REPARSE_POINT", 0x400)
# Variables that configure an interpreter, pip or uv, or make a TLS client write its session
# secrets. A pull request can reach the job's environment through earlier steps, so none of them
# reaches the installer (action.yml clears the same ones before this interpreter starts; the
# list and its reasons are in docs/security.md, "The job's environment").
SCRUBBED_PREFIXES = (
    "PYTHON",
    "PIP_",
    "UV_",
    "VIRTUAL_ENV",
    "CONDA_",
    "__PYVENV",
    "SSLKEYLOGFILE",
    "GIT_",
)


class InstallError(Exception):
    """A fixed description of what failed; never carries file contents or remote text."""


def fresh_directory(path: Path, what: str) -> None:
    """Make ``path`` an empty directory of our own, refusing anything planted there.

    Earlier steps of the job can write to ``RUNNER_TEMP``. A symlink there would make a clear
    step (venv's own, or a naive one) empty whatever it points at, so anything but a plain
    directory is refused and left untouched. A plain directory is removed with ``rmtree``,
    which never follows the links inside it, and created anew.
    """
    try:
        found = path.lstat()
    except FileNotFoundError:
        found = None
    if found is not None:
        # A Windows junction is a directory to stat, and a reparse point to its attributes.
        reparse = getattr(found, "st_file_attributes", 0) & _REPARSE_POINT
        if not stat.S_ISDIR(found.st_mode) or reparse:
            raise InstallError(f"{what} exists and is not a plain directory; it was left as it is")
        shutil.rmtree(path)
    path.mkdir()


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


def installer_pin(lock: Path, key: str) -> tuple[str, str, str]:
    """The (wheel file name, sha256 digest, URL) of installer.lock for a platform key."""
    for raw in lock.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        fields = line.split()
        if len(fields) != 4 or not fields[2].startswith("sha256:"):
            raise InstallError("installer.lock has a malformed line")
        if fields[0] == key:
            return fields[1], fields[2].removeprefix("sha256:"), fields[3]
    raise InstallError(f"installer.lock pins no installer for {key}")


def download(url: str) -> bytes:
    if not url.startswith("https://"):
        raise InstallError("installer.lock names a URL that is not HTTPS")
    # Imported here: its 20 to 35 ms (ssl, http, email) are a tenth of a bundled install, which
    # never downloads.
    import urllib.request

    class _NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None  # a pinned URL answers itself or fails

    opener = urllib.request.build_opener(_NoRedirect)
    with opener.open(url, timeout=DOWNLOAD_TIMEOUT_S) as response:
        data: bytes = response.read(MAX_INSTALLER_BYTES + 1)
    if len(data) > MAX_INSTALLER_BYTES:
        raise InstallError("the installer wheel is larger than allowed")
    return data


def fetch_installer(temp: Path, wheelhouse: Path | None) -> Path:
    """Verify the pinned uv wheel and extract its program; return the program's path."""
    name, digest, url = installer_pin(INSTALLER_LOCK, platform_key())
    data = (wheelhouse / name).read_bytes() if wheelhouse is not None else download(url)
    if not hmac.compare_digest(hashlib.sha256(data).hexdigest(), digest):
        raise InstallError("the installer wheel does not match installer.lock")
    program = "uv.exe" if sys.platform == "win32" else "uv"
    version = name.split("-")[1]
    target = temp / UV_DIR_NAME
    fresh_directory(target, f"$RUNNER_TEMP/{UV_DIR_NAME}")
    destination = target / program
    # One known member, written to a fixed path: no name from the archive becomes a path.
    with (
        zipfile.ZipFile(io.BytesIO(data)) as wheel,
        wheel.open(f"uv-{version}.data/scripts/{program}") as source,
        destination.open("wb") as sink,
    ):
        shutil.copyfileobj(source, sink)
    destination.chmod(destination.stat().st_mode | stat.S_IXUSR)
    return destination


def scrubbed_environment(environ: Mapping[str, str]) -> dict[str, str]:
    return {
        name: value
        for name, value in environ.items()
        if not name.upper().startswith(SCRUBBED_PREFIXES)
    }


def venv_python(environment: Path) -> Path:
    if sys.platform == "win32":
        return environment / "Scripts" / "python.exe"
    return environment / "bin" / "python"


def uv_install_command(
    uv: Path, python: Path, wheelhouse: Path | None, *, compile_bytecode: bool = False
) -> list[str]:
    source = (
        ["--no-index", "--find-links", str(wheelhouse)]
        if wheelhouse is not None
        else ["--index-url", INDEX_URL]
    )
    return [
        str(uv),
        "pip",
        "install",
        "--quiet",
        "--no-config",
        "--no-cache",
        "--python",
        str(python),
        "--require-hashes",
        "--only-binary",
        ":all:",
        *source,
        *(["--compile-bytecode"] if compile_bytecode else []),
        "-r",
        str(REQUIREMENTS_LOCK),
    ]


def project_metadata() -> tuple[str, str]:
    """The distribution name and version the action's pyproject.toml declares."""
    with (ACTION_ROOT / "pyproject.toml").open("rb") as handle:
        project = tomllib.load(handle)["project"]
    return str(project["name"]), str(project["version"])


def site_packages(environment: Path) -> Path:
    return Path(
        sysconfig.get_path(
            "purelib", scheme="venv", vars={"base": str(environment), "platbase": str(environment)}
        )
    )


def copy_package(environment: Path) -> None:
    """Put jev_select from the action's checkout into the environment, with its metadata."""
    site = site_packages(environment)
    shutil.copytree(
        ACTION_ROOT / PACKAGE,
        site / PACKAGE,
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    write_metadata(site)


def write_metadata(site: Path) -> None:
    name, version = project_metadata()
    dist_info = site / f"{name.replace('-', '_')}-{version}.dist-info"
    dist_info.mkdir()
    (dist_info / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n", encoding="utf-8"
    )
    (dist_info / "INSTALLER").write_text("jev-select action\n", encoding="utf-8")
    (dist_info / "entry_points.txt").write_text(
        "[console_scripts]\njev-select = jev_select.__main__:run\n", encoding="utf-8"
    )


# ------------------------------------------------------------------------------------------
# The bundle of a release commit (scripts/bundle.py builds it).
# ------------------------------------------------------------------------------------------


def bundle_key() -> str:
    """The bundles.lock key of the running interpreter: ``<cache tag>-<platform key>``."""
    return f"{sys.implementation.cache_tag}-{platform_key()}"


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
    archive: zipfile.ZipFile, key: str, requirements: Path, *, cache_tag: str | None
) -> dict[str, Any]:
    """The bundle must say it is for ``key`` and this interpreter, built from this lock."""
    manifest = read_manifest(archive)
    if not isinstance(manifest, dict) or manifest.get("key") != key:
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


def unpack_bundle(data: bytes, key: str, site: Path) -> None:
    """Lay the bundle out in ``site``, a site-packages directory this install has just created.

    The bundle itself becomes one file that the interpreter imports from (zipimport); only the
    packages its manifest names as needing the disk (extension modules, certifi's CA file) are
    written out as files, which keeps a start from creating a thousand small files. Every
    member's name is checked, written out or not.
    """
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        manifest = check_manifest(
            archive, key, REQUIREMENTS_LOCK, cache_tag=sys.implementation.cache_tag
        )
        on_disk = set(manifest["on_disk"])
        infos = archive.infolist()
        if sum(info.file_size for info in infos) > MAX_UNPACKED_BYTES:
            raise InstallError("the bundle unpacks to more than allowed")
        if len({info.filename for info in infos}) != len(infos):
            # zipimport reads the last of two same-named members, an extraction the first.
            raise InstallError("the bundle names a member twice")
        compiled: dict[str, zipfile.ZipInfo] = {}
        made: set[Path] = set()
        for info in infos:
            parts = member_parts(info)
            if parts is None:
                continue
            if parts[0] == PACKAGE:
                # The package's sources always come from the checkout, never from a bundle.
                raise InstallError("the bundle holds sources of the package itself")
            if parts[0] == PACKAGE_PYC_PREFIX:
                if len(parts) < 3 or parts[1] != PACKAGE or not parts[-1].endswith(".pyc"):
                    raise InstallError("the bundle's compiled package is malformed")
                compiled["/".join(parts[1:])] = info
                continue
            if parts[0] not in on_disk:
                continue
            target = site.joinpath(*parts)
            if target.parent not in made:
                target.parent.mkdir(parents=True, exist_ok=True)
                made.add(target.parent)
            # "xb": a second member of the same name cannot replace the first.
            with archive.open(info) as source, target.open("xb") as sink:
                shutil.copyfileobj(source, sink, 1024 * 1024)
        with (site / RUNTIME_ARCHIVE).open("xb") as sink:
            sink.write(data)
        write_package_archive(site / PACKAGE_ARCHIVE, archive, compiled)
    # Relative lines name files of this directory; the package comes first, then the runtime.
    (site / PATH_FILE).write_text(f"{PACKAGE_ARCHIVE}\n{RUNTIME_ARCHIVE}\n", encoding="utf-8")


def new_environment(temp: Path) -> Path:
    environment = temp / VENV_NAME
    fresh_directory(environment, f"$RUNNER_TEMP/{VENV_NAME}")
    venv.EnvBuilder(clear=False, with_pip=False, symlinks=sys.platform != "win32").create(
        environment
    )
    return environment


def install(
    temp: Path,
    environ: Mapping[str, str],
    *,
    compile_bytecode: bool = False,
) -> Path:
    """Build the private environment under ``temp``; return its interpreter."""
    wheelhouse_text = environ.get(WHEELHOUSE_VARIABLE, "")
    wheelhouse = Path(wheelhouse_text) if wheelhouse_text else None
    if wheelhouse is not None and not (wheelhouse.is_absolute() and wheelhouse.is_dir()):
        raise InstallError(f"{WHEELHOUSE_VARIABLE} is not an absolute path of a directory")
    if os.pathsep in str(temp):
        # venv refuses such a location: the environment's PATH entry would split in two.
        raise InstallError(f"RUNNER_TEMP contains {os.pathsep!r}; no environment can be made there")
    key = bundle_key()
    pin = bundle_pin(BUNDLE_LOCK, key, REQUIREMENTS_LOCK) if BUNDLE_LOCK.is_file() else None
    if pin is not None:
        data = read_bundle(BUNDLE_LOCK.parent / pin[0], pin[1])
        environment = new_environment(temp)
        site = site_packages(environment)
        unpack_bundle(data, key, site)
        write_metadata(site)
        return venv_python(environment)
    uv = fetch_installer(temp, wheelhouse)
    environment = new_environment(temp)
    python = venv_python(environment)
    result = subprocess.run(
        uv_install_command(uv, python, wheelhouse, compile_bytecode=compile_bytecode),
        env=scrubbed_environment(environ),
        cwd=temp,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    if result.returncode != 0:
        raise InstallError("uv could not install requirements.lock")
    copy_package(environment)
    return python


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Install jev-select for the action.")
    parser.add_argument("--compile-bytecode", action="store_true")
    args = parser.parse_args(argv)
    runner_temp = os.environ.get("RUNNER_TEMP", "")
    try:
        if not runner_temp or not Path(runner_temp).is_absolute():
            raise InstallError("RUNNER_TEMP is not an absolute path")
        install(Path(runner_temp), os.environ, compile_bytecode=args.compile_bytecode)
    except Exception as error:
        # Only our own fixed texts are printed; anything else is named by its type, never by a
        # message that could carry a path or a remote answer.
        message = str(error) if isinstance(error, InstallError) else type(error).__name__
        print(f"jev-select: the action's install failed: {message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
