"""Build the action's runtime bundle: the locked wheels, unpacked and compiled, in two parts.

A bundle is what a JavaScript action's ``dist/`` is to its sources: the code the action runs,
prepared once by the release workflow so that no job has to resolve, download or compile it.
``action/install.py`` uses it when ``dist/bundles.lock`` pins a part for the running interpreter's
platform, and installs ``requirements.lock`` from the index otherwise.

    python scripts/bundle.py build (--wheelhouse DIR | --download) [--part shared|platform|both]
                                   [--platform-key KEY] [--dist DIR] [--root DIR]
    python scripts/bundle.py lock [--dist DIR] [--root DIR]
    python scripts/bundle.py verify [--dist DIR] [--root DIR]

The runner unpacks the action's whole archive at its ref for every job, so every byte of
``dist/`` is paid by every job on every platform. Hence two parts: the **shared part**
(``<cache tag>-any``), every distribution that is pure Python once its optional extension modules
are left out, with the bytecode of ``jev_select``, built once; and one small **platform part** per
runner platform, the distributions that still hold compiled code (rpds-py). ``build`` makes them
with the interpreter that runs it (CPython 3.11, as the action pins):

1. one wheel per pin of ``requirements.lock``, from ``--wheelhouse`` or fetched by pip with
   ``--require-hashes``; each file's SHA-256 must be one of the lock's hashes for its pin, checked
   here whoever fetched it;
2. each wheel unpacked on its own (``.data/purelib`` and ``.data/platlib`` merged in, scripts,
   headers and data left out: the plan needs none of them), each member name checked as
   ``action/bundle_layout.py`` checks the bundle's; the extension modules of
   ``OPTIONAL_EXTENSIONS`` removed; a wheel with compiled code left goes to the platform part,
   any other to the shared part;
3. every module compiled with checked hashes (``PycInvalidationMode.CHECKED_HASH``): the
   interpreter compares each ``.pyc`` with the hash of the source beside it and compiles the source
   instead when they differ, so bytecode can only ever stand for its own source. The ``.pyc`` sits
   beside its module (``m.pyc``, where zipimport looks), except in the packages that are written
   to disk at install (those with an extension module, and certifi and jsonschema_specifications,
   which read their own data files), where it is in ``__pycache__``. ``jev_select`` is compiled
   from the checkout and only its bytecode is packed, in the shared part under
   ``jev-select-package/`` where no import finds it: the install pairs it with the action
   checkout's sources, so a checkout that differs from the release runs its own code;
4. one stored ZIP per part, which the installed environment imports from as it is; members
   sorted and dated 1980-01-01, so the same inputs give the same bytes; its first member,
   ``jev-select-bundle.json``, names the part, its key, the interpreter, the wheels, the packages
   to write to disk and the digest of the ``requirements.lock`` it was built from;
5. ``dist/bundles.lock`` rewritten from every part in ``--dist``: the digest of
   ``requirements.lock`` and each part's SHA-256.

``--platform-key`` builds the platform part of another platform from a wheelhouse of that
platform's wheels (the bytecode depends only on the interpreter). ``lock`` only does step 5 (the
release workflow builds on each runner and locks in one place); ``verify`` checks that every
pinned part is present, matches its digest, was built from the current ``requirements.lock``, and
that every platform part has its shared part.
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
SHARED, PLATFORM = "shared", "platform"
# Extension modules left out of the bundle, each with whether its pure-Python module must sit
# beside it for the package to work without it. PyYAML's LibYAML binding is only imported by
# the C loaders and dumpers, which jev_select never uses (yaml falls back to Python when the
# binding is absent); charset_normalizer's mypyc modules compile the md.py and cd.py that the
# wheel also ships, and the package imports those when the compiled ones are gone.
OPTIONAL_EXTENSIONS = {
    "yaml/_yaml": False,
    "charset_normalizer/md": True,
    "charset_normalizer/cd": True,
}
LOCK_HEADER = """\
# Runtime bundle of the jev-select action, pinned by SHA-256: one shared part per interpreter
# (<cache tag>-any) and one part per platform. Written by scripts/bundle.py on release commits
# only; action/install.py uses the shared part and the line of the running platform after
# checking both digests, and installs requirements.lock from the index when no platform line
# matches. The first line names the requirements.lock the bundle holds.
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


def drop_optional(site: Path) -> list[str]:
    """Remove the extension modules of ``OPTIONAL_EXTENSIONS`` from one unpacked wheel; return
    the names removed. One whose pure-Python module must be there is kept when it is not."""
    dropped = []
    for path in sorted(site.rglob("*")):
        if not (path.is_file() and path.name.endswith(NATIVE_SUFFIXES)):
            continue
        relative = path.relative_to(site)
        module = relative.parent / relative.name.split(".")[0]
        if module.as_posix() not in OPTIONAL_EXTENSIONS:
            continue
        source = site / module.with_suffix(".py")
        if OPTIONAL_EXTENSIONS[module.as_posix()] and not source.is_file():
            continue
        path.unlink()
        dropped.append(relative.as_posix())
    return dropped


def has_native(site: Path) -> bool:
    return any(path.is_file() and path.name.endswith(NATIVE_SUFFIXES) for path in site.rglob("*"))


def merge(tree: Path, site: Path) -> None:
    """Move one unpacked wheel into a part's tree; two wheels never share a top-level name."""
    site.mkdir(exist_ok=True)
    for entry in sorted(tree.iterdir()):
        if (site / entry.name).exists():
            raise BundleError(f"two locked wheels both install {entry.name}")
        entry.rename(site / entry.name)


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


def build(
    root: Path,
    dist: Path,
    wheelhouse: Path | None,
    *,
    parts: tuple[str, ...] = (SHARED, PLATFORM),
    platform: str | None = None,
) -> list[Path]:
    """Build the parts named in ``parts``; ``platform`` (an installer.lock key) builds the
    platform part of another platform from a wheelhouse holding that platform's wheels."""
    installer = load_installer(root)
    if installer.BUNDLE_MANIFEST != MANIFEST_NAME:
        raise BundleError("action/install.py expects another manifest name")
    cache_tag = sys.implementation.cache_tag
    if platform is not None:
        installer.installer_pin(installer.INSTALLER_LOCK, platform)  # a platform the action knows
    keys = {
        SHARED: str(installer.shared_key(cache_tag)),
        PLATFORM: f"{cache_tag}-{platform}" if platform else str(installer.bundle_key(cache_tag)),
    }
    lock = root / "requirements.lock"
    built = []
    with tempfile.TemporaryDirectory(prefix="jev-bundle-") as temp_name:
        temp = Path(temp_name)
        if wheelhouse is None:
            wheelhouse = temp / "wheels"
            wheelhouse.mkdir()
            download(lock, wheelhouse)
        wheels = locked_wheels(lock, wheelhouse)
        sites = {SHARED: temp / "shared", PLATFORM: temp / "platform"}
        chosen: dict[str, list[Path]] = {SHARED: [], PLATFORM: []}
        dropped: list[str] = []
        for wheel in wheels:
            tree = temp / "unpacked" / wheel.name
            tree.mkdir(parents=True)
            unpack_wheel(installer, wheel, tree)
            dropped += drop_optional(tree)
            # A wheel with compiled code left belongs to its platform; every other one, even a
            # platform wheel stripped of its optional extension, is the same on every platform.
            kind = PLATFORM if has_native(tree) else SHARED
            chosen[kind].append(wheel)
            merge(tree, sites[kind])
        for kind in parts:
            site = sites[kind]
            site.mkdir(exist_ok=True)
            if kind == SHARED:
                shutil.copytree(
                    root / PACKAGE,
                    site / PACKAGE,
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
                )
            extracted = on_disk(site)
            compile_tree(site, extracted)
            manifest: dict[str, object] = {
                "key": keys[kind],
                "part": kind,
                "cache_tag": cache_tag,
                "requirements_sha256": installer.file_digest(lock),
                "wheels": {wheel.name: installer.file_digest(wheel) for wheel in chosen[kind]},
                "on_disk": extracted,
            }
            if kind == SHARED:
                manifest["dropped"] = dropped
            dist.mkdir(parents=True, exist_ok=True)
            destination = dist / str(installer.bundle_file_name(keys[kind]))
            write_archive(destination, manifest, site)
            built.append(destination)
    write_lock(root, dist)
    return built


def manifest_of(installer: ModuleType, bundle: Path) -> dict[str, object]:
    with zipfile.ZipFile(bundle) as archive:
        manifest = installer.read_manifest(archive)
    if not isinstance(manifest, dict):
        raise BundleError(f"{bundle.name} has no manifest")
    return manifest


def write_lock(root: Path, dist: Path) -> Path:
    """dist/bundles.lock for every part in ``dist`` built from the current requirements.lock."""
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
    """The keys of every part dist/bundles.lock pins, each checked as the installer checks it,
    and a shared part for every interpreter that has a platform part."""
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
            manifest = installer.check_manifest(
                archive, key, root / "requirements.lock", cache_tag=None
            )
        shared = installer.shared_key(manifest["cache_tag"])
        if shared not in keys:
            raise BundleError(f"bundles.lock pins no shared part for {key}")
    return keys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("command", choices=["build", "lock", "verify"])
    parser.add_argument("--root", type=Path, default=ROOT, help="the action's checkout")
    parser.add_argument("--dist", type=Path, default=None, help="default: ROOT/dist")
    parser.add_argument(
        "--part", choices=["shared", "platform", "both"], default="both", help="build: which part"
    )
    parser.add_argument(
        "--platform-key",
        help="build: the platform part of this installer.lock platform, from its wheels",
    )
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
            if args.platform_key and (args.part != "platform" or args.wheelhouse is None):
                parser.error("--platform-key needs --part platform and --wheelhouse DIR")
            wheelhouse = args.wheelhouse.resolve() if args.wheelhouse else None
            parts = (SHARED, PLATFORM) if args.part == "both" else (args.part,)
            for path in build(root, dist, wheelhouse, parts=parts, platform=args.platform_key):
                print(path)
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
