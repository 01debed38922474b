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

A release commit also carries ``dist/``: the locked wheels already unpacked and compiled
(scripts/bundle.py) in two parts, one shared by every platform (the pure-Python packages and the
bytecode of ``jev_select``) and one per platform (only what is compiled for it), each pinned by
SHA-256 in ``dist/bundles.lock``. When that lock has a line for the running interpreter's
platform, steps 1 and 3 are replaced (action/bundle_layout.py): both parts' digests are checked
against the lock, their manifests against the interpreter, the platform and ``requirements.lock``,
and every member's name and kind are checked so that none can land outside the environment. Each
part then becomes one file of site-packages that the interpreter imports from, only the packages
that need the disk are written out, and step 4 puts the checkout's ``jev_select`` beside them as a
ZIP with the bundle's bytecode. A missing or mismatched part stops the install; only a lock
without a line for this platform (or no ``dist/`` at all) leads to uv and the index.

Packages come from https://pypi.org/simple, or, when ``JEV_SELECT_WHEELHOUSE`` names a directory,
from the wheels in that directory and nowhere else (runners without access to the index). Either
way the hashes decide what is installed; the source only decides where the bytes come from.
"""

from __future__ import annotations

import argparse
import hashlib
import hmac
import importlib.util
import io
import os
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
from typing import TYPE_CHECKING

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


def _load_layout() -> object:
    """action/bundle_layout.py, from this file's own directory: ``-I`` puts no script directory
    on the path, and nothing else on it may stand in for the module."""
    spec = importlib.util.spec_from_file_location(
        "jev_select_action_bundle_layout", Path(__file__).resolve().parent / "bundle_layout.py"
    )
    if spec is None or spec.loader is None:
        raise ImportError("action/bundle_layout.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    # dataclasses looks the module up by name while it builds the module's classes.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


if TYPE_CHECKING:
    import bundle_layout as layout
else:
    layout = _load_layout()

InstallError = layout.InstallError
platform_key = layout.platform_key
bundle_key = layout.bundle_key
shared_key = layout.shared_key
bundle_file_name = layout.bundle_file_name
file_digest = layout.file_digest
parse_bundle_lock = layout.parse_bundle_lock
bundle_keys = layout.bundle_keys
bundle_pin = layout.bundle_pin
bundle_parts = layout.bundle_parts
read_bundle = layout.read_bundle
member_parts = layout.member_parts
read_manifest = layout.read_manifest
check_manifest = layout.check_manifest
unpack_bundle = layout.unpack_bundle
BUNDLE_MANIFEST = layout.BUNDLE_MANIFEST


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
    parts = bundle_parts(BUNDLE_LOCK, REQUIREMENTS_LOCK) if BUNDLE_LOCK.is_file() else None
    if parts is not None:
        # Both parts read and checked against their pins before the environment exists.
        dist = BUNDLE_LOCK.parent
        data = {part.kind: read_bundle(dist / part.name, part.digest) for part in parts}
        environment = new_environment(temp)
        site = site_packages(environment)
        unpack_bundle(data, parts, site)
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
