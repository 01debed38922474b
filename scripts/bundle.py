"""Build the action's runtime bundle: the locked wheels, unpacked and compiled, in one archive.

A bundle is what a JavaScript action's ``dist/`` is to its sources: the code the action runs,
prepared once by the release workflow so that no job has to resolve, download or compile it.
``action/install.py`` uses it when ``dist/bundles.lock`` pins a bundle for the running interpreter
and platform, and installs ``requirements.lock`` from the index otherwise.

    python scripts/bundle.py build (--wheelhouse DIR | --download) [--dist DIR] [--root DIR]
    python scripts/bundle.py lock [--dist DIR] [--root DIR]
    python scripts/bundle.py verify [--dist DIR] [--root DIR]

``build`` makes the bundle of the interpreter that runs it (CPython 3.11, as the action pins):

1. one wheel per pin of ``requirements.lock``, from ``--wheelhouse`` or fetched by pip with
   ``--require-hashes``; each file's SHA-256 must be one of the lock's hashes for its pin, checked
   here whoever fetched it;
2. the wheels unpacked into a site-packages tree (``.data/purelib`` and ``.data/platlib`` merged in,
   scripts, headers and data left out: the plan needs none of them), each member name checked as
   ``action/install.py`` checks the bundle's;
3. every module compiled with checked hashes (``PycInvalidationMode.CHECKED_HASH``): the
   interpreter compares each ``.pyc`` with the hash of the source beside it and compiles the source
   instead when they differ, so bytecode can only ever stand for its own source. The ``.pyc`` sits
   beside its module (``m.pyc``, where zipimport looks), except in the packages that are written
   to disk at install (those with an extension module, and certifi and jsonschema_specifications,
   which read their own data files), where it is in ``__pycache__``. ``jev_select`` is compiled
   from the checkout and only its bytecode is packed, under ``jev-select-package/`` where no import
   finds it: the install pairs it with the action checkout's sources, so a checkout that differs
   from the release runs its own code;
4. one stored ZIP, which the installed environment imports from as it is; members sorted and dated
   1980-01-01, so the same inputs give the same bytes; its first member,
   ``jev-select-bundle.json``, names the interpreter, the platform, the wheels, the packages to
   write to disk and the digest of the ``requirements.lock`` it was built from;
5. ``dist/bundles.lock`` rewritten from every bundle in ``--dist``: the digest of
   ``requirements.lock`` and each bundle's SHA-256.

``lock`` only does step 5 (the release workflow builds on each runner and locks in one place);
``verify`` checks that every pinned bundle is present, matches its digest and was built from the
current ``requirements.lock``.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.util
import io
import json
import os
import py_compile
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DATE_TIME = (1980, 1, 1, 0, 0, 0)
PIN = re.compile(r"^([A-Za-z0-9][A-Za-z0-9._-]*)==(\S+)")
HASH = re.compile(r"--hash=sha256:([0-9a-f]{64})")
WHEEL_NAME = re.compile(r"^([^-]+)-([^-]+)(?:-\d[^-]*)?-[^-]+-[^-]+-[^-]+\.whl$")
KEPT_DATA = ("purelib", "platlib")
MANIFEST_NAME = "jev-select-bundle.json"
PACKAGE = "jev_select"
PACKAGE_PYC_PREFIX = "jev-select-package"
# Packages that read their own data files: certifi hands out its CA file by path (from a ZIP it
# would extract a copy on every start), and jsonschema_specifications walks its directory of
# metaschemas, which costs a start several times more inside a ZIP than on disk.
DATA_ON_DISK = ("certifi", "jsonschema_specifications")
NATIVE_SUFFIXES = (".so", ".pyd", ".dylib", ".dll")
LOCK_HEADER = """\
# Runtime bundles of the jev-select action, one per interpreter and platform, pinned by SHA-256.
# Written by scripts/bundle.py on release commits only; action/install.py uses the line of the
# running interpreter after checking the bundle's digest, and installs requirements.lock from the
# index when no line matches. The first line names the requirements.lock the bundles hold.
"""


class BundleError(Exception):
    """What stops the build; the message says which input is wrong."""


_INSTALLERS: dict[Path, ModuleType] = {}


def load_installer(root: Path) -> ModuleType:
    """action/install.py of ``root``: the key, lock format and member rules come from there."""
    if root in _INSTALLERS:
        return _INSTALLERS[root]
    spec = importlib.util.spec_from_file_location("jev_action_install", root / "action/install.py")
    if spec is None or spec.loader is None:
        raise BundleError(f"{root}/action/install.py cannot be loaded")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    _INSTALLERS[root] = module
    return module


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def locked_hashes(lock: Path) -> dict[tuple[str, str], set[str]]:
    """(canonical name, version) of every pin of requirements.lock, with its sha256 hashes."""
    pins: dict[tuple[str, str], set[str]] = {}
    current: tuple[str, str] | None = None
    for line in lock.read_text("utf-8").splitlines():
        match = PIN.match(line)
        if match:
            current = (canonical(match[1]), match[2])
            pins[current] = set()
        elif current is not None:
            pins[current].update(HASH.findall(line))
    if not pins or not all(pins.values()):
        raise BundleError(f"{lock} has no pins, or a pin without a hash")
    return pins


def download(lock: Path, destination: Path) -> None:
    """The locked wheels for this interpreter, fetched by pip; their hashes are checked later."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--isolated"]
    command += ["--disable-pip-version-check"]
    command += ["--index-url", "https://pypi.org/simple", "--only-binary", ":all:"]
    command += ["--require-hashes", "--no-deps", "--dest", str(destination), "-r", str(lock)]
    if subprocess.run(command, check=False).returncode != 0:
        raise BundleError("pip could not download the locked wheels")


def locked_wheels(lock: Path, wheelhouse: Path) -> list[Path]:
    """Exactly one wheel per pin, each one a file the lock names by its hash."""
    pins = locked_hashes(lock)
    found: dict[tuple[str, str], list[Path]] = {}
    for wheel in sorted(wheelhouse.glob("*.whl")):
        match = WHEEL_NAME.match(wheel.name)
        if match and (canonical(match[1]), match[2]) in pins:
            found.setdefault((canonical(match[1]), match[2]), []).append(wheel)
    wheels = []
    for pin, hashes in sorted(pins.items()):
        candidates = found.get(pin, [])
        if len(candidates) != 1:
            raise BundleError(f"{wheelhouse} holds {len(candidates)} wheels of {pin[0]}=={pin[1]}")
        wheel = candidates[0]
        if hashlib.sha256(wheel.read_bytes()).hexdigest() not in hashes:
            raise BundleError(f"{wheel.name} is not a file requirements.lock pins")
        wheels.append(wheel)
    return wheels


def unpack_wheel(installer: ModuleType, wheel: Path, site: Path) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for info in archive.infolist():
            parts = installer.member_parts(info)
            if parts is None:
                continue
            if parts[0].endswith(".data"):
                if len(parts) < 3 or parts[1] not in KEPT_DATA:
                    continue
                parts = parts[2:]
            if len(parts) == 1 and parts[0].endswith(".pth"):
                # Run by every start of a normal install, but never from inside a ZIP.
                raise BundleError(f"{wheel.name} installs a .pth file; a bundle cannot hold it")
            target = site.joinpath(*parts)
            target.parent.mkdir(parents=True, exist_ok=True)
            with archive.open(info) as source, target.open("xb") as sink:
                shutil.copyfileobj(source, sink)
    dist_info = [path for path in site.glob("*.dist-info") if not (path / "INSTALLER").exists()]
    for path in dist_info:
        (path / "INSTALLER").write_text("jev-select bundle\n", encoding="utf-8")


def on_disk(site: Path) -> list[str]:
    """Top-level names written to disk at install: the packages holding an extension module (no
    ZIP can load one) and those of ``DATA_ON_DISK``."""
    names = {name for name in DATA_ON_DISK if (site / name).is_dir()}
    for path in site.rglob("*"):
        if path.is_file() and path.name.endswith(NATIVE_SUFFIXES):
            names.add(path.relative_to(site).parts[0])
    names.discard(PACKAGE)
    for name in names:
        if not name.isidentifier() or not (site / name).is_dir():
            raise BundleError(f"{name} is not a package; only packages can be written to disk")
    return sorted(names)


def compile_tree(site: Path, extracted: list[str]) -> None:
    """Every module, compiled with checked hashes: beside its source for zipimport (``m.pyc``),
    in ``__pycache__`` for the packages that are written to disk."""
    for source in sorted(site.rglob("*.py")):
        relative = source.relative_to(site)
        top = relative.parts[0]
        cfile = (
            importlib.util.cache_from_source(str(source))
            if top in extracted
            else str(source.with_suffix(".pyc"))
        )
        try:
            py_compile.compile(
                str(source),
                cfile=cfile,
                dfile=relative.as_posix(),
                doraise=True,
                invalidation_mode=py_compile.PycInvalidationMode.CHECKED_HASH,
            )
        except py_compile.PyCompileError:
            raise BundleError(f"{relative.as_posix()} does not compile") from None


def members(site: Path) -> list[tuple[str, Path]]:
    """What the archive holds: the tree, but of jev_select only its compiled modules, under a
    name no import can reach (the install pairs them with the checkout's sources)."""
    chosen = []
    for path in sorted(site.rglob("*")):
        if not path.is_file():
            continue
        relative = path.relative_to(site).as_posix()
        if relative.startswith(PACKAGE + "/"):
            if not relative.endswith(".pyc"):
                continue
            relative = f"{PACKAGE_PYC_PREFIX}/{relative}"
        chosen.append((relative, path))
    return chosen


def write_archive(destination: Path, manifest: dict[str, object], site: Path) -> None:
    """Stored, not deflated: the archive is imported from as it is, and git compresses it anyway."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_STORED) as archive:
        entries = [(MANIFEST_NAME, json.dumps(manifest, indent=1, sort_keys=True).encode())]
        entries += [(name, path.read_bytes()) for name, path in members(site)]
        for name, data in entries:
            info = zipfile.ZipInfo(name, date_time=DATE_TIME)
            info.external_attr = 0o100644 << 16
            archive.writestr(info, data)
    destination.write_bytes(buffer.getvalue())


def build(root: Path, dist: Path, wheelhouse: Path | None) -> Path:
    installer = load_installer(root)
    if installer.BUNDLE_MANIFEST != MANIFEST_NAME:
        raise BundleError("action/install.py expects another manifest name")
    key = installer.bundle_key()
    lock = root / "requirements.lock"
    with tempfile.TemporaryDirectory(prefix="jev-bundle-") as temp_name:
        temp = Path(temp_name)
        if wheelhouse is None:
            wheelhouse = temp / "wheels"
            wheelhouse.mkdir()
            download(lock, wheelhouse)
        wheels = locked_wheels(lock, wheelhouse)
        site = temp / "site-packages"
        site.mkdir()
        for wheel in wheels:
            unpack_wheel(installer, wheel, site)
        shutil.copytree(
            root / PACKAGE,
            site / PACKAGE,
            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
        )
        extracted = on_disk(site)
        compile_tree(site, extracted)
        manifest: dict[str, object] = {
            "key": key,
            "cache_tag": sys.implementation.cache_tag,
            "requirements_sha256": installer.file_digest(lock),
            "wheels": {wheel.name: installer.file_digest(wheel) for wheel in wheels},
            "on_disk": extracted,
        }
        dist.mkdir(parents=True, exist_ok=True)
        destination = dist / str(installer.bundle_file_name(key))
        write_archive(destination, manifest, site)
    write_lock(root, dist)
    return destination


def manifest_of(installer: ModuleType, bundle: Path) -> dict[str, object]:
    with zipfile.ZipFile(bundle) as archive:
        manifest = installer.read_manifest(archive)
    if not isinstance(manifest, dict):
        raise BundleError(f"{bundle.name} has no manifest")
    return manifest


def write_lock(root: Path, dist: Path) -> Path:
    """dist/bundles.lock for every bundle in ``dist`` built from the current requirements.lock."""
    installer = load_installer(root)
    requirements = installer.file_digest(root / "requirements.lock")
    lines = [LOCK_HEADER.rstrip("\n"), f"requirements sha256:{requirements}"]
    for bundle in sorted(dist.glob(installer.bundle_file_name("*"))):
        manifest = manifest_of(installer, bundle)
        if manifest.get("requirements_sha256") != requirements:
            raise BundleError(f"{bundle.name} was built from another requirements.lock")
        key = str(manifest.get("key"))
        if installer.bundle_file_name(key) != bundle.name:
            raise BundleError(f"{bundle.name} holds the bundle of {key}")
        lines.append(f"{key} {bundle.name} sha256:{installer.file_digest(bundle)}")
    if len(lines) == 2:
        raise BundleError(f"{dist} holds no bundle")
    path = dist / "bundles.lock"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def verify(root: Path, dist: Path) -> list[str]:
    """The keys of every bundle dist/bundles.lock pins, each checked as the installer checks it."""
    installer = load_installer(root)
    lock = dist / "bundles.lock"
    keys: list[str] = installer.bundle_keys(lock)
    for key in keys:
        pin = installer.bundle_pin(lock, key, root / "requirements.lock")
        if pin is None:
            raise BundleError(f"bundles.lock has no line for {key}")
        name, digest = pin
        data = installer.read_bundle(dist / name, digest)
        with zipfile.ZipFile(io.BytesIO(data)) as archive:
            installer.check_manifest(archive, key, root / "requirements.lock", cache_tag=None)
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("command", choices=["build", "lock", "verify"])
    parser.add_argument("--root", type=Path, default=ROOT, help="the action's checkout")
    parser.add_argument("--dist", type=Path, default=None, help="default: ROOT/dist")
    source = parser.add_mutually_exclusive_group()
    source.add_argument("--wheelhouse", type=Path, help="a directory holding the locked wheels")
    source.add_argument("--download", action="store_true", help="fetch them from PyPI with pip")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    dist = (args.dist or root / "dist").resolve()
    installer_error: type[Exception] = load_installer(root).InstallError
    try:
        if args.command == "build":
            if args.wheelhouse is None and not args.download:
                parser.error("build needs --wheelhouse DIR or --download")
            wheelhouse = args.wheelhouse.resolve() if args.wheelhouse else None
            print(build(root, dist, wheelhouse))
        elif args.command == "lock":
            print(write_lock(root, dist))
        else:
            for key in verify(root, dist):
                print(f"{key}: verified")
    except (BundleError, installer_error) as error:
        print(f"bundle: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    os.umask(0o022)
    raise SystemExit(main())
