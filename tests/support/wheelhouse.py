"""An offline wheelhouse for running the action's real install step in tests.

Tests never reach the package index, so the wheels the install step needs are rebuilt from the
distributions installed in the test environment: every file a distribution's RECORD lists is
packed again into a wheel with the same name, version and tags (files installed outside
site-packages, such as uv's program, go back under ``<name>-<version>.data/scripts``). The
rebuilt wheels are not the files on the index, so their hashes differ from the project's locks;
the tests write locks of the same format, with the same options, that pin these wheels instead.
"""

from __future__ import annotations

import base64
import hashlib
import zipfile
from collections.abc import Iterable
from importlib import metadata
from pathlib import Path, PurePosixPath

from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

SCRIPTS_PREFIX = "../../../bin/"


def _record_hash(data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"sha256={digest}"


def _wheel_tags(distribution: metadata.Distribution) -> str:
    wheel_text = distribution.read_text("WHEEL") or ""
    tags = [
        line.split(":", 1)[1].strip() for line in wheel_text.splitlines() if line.startswith("Tag:")
    ]
    assert tags, f"{distribution.metadata['Name']} has no wheel tags"
    # The compressed tag set of a wheel file name: each part's values, in order of appearance.
    split = [tag.split("-") for tag in tags]
    parts = [".".join(dict.fromkeys(tag[index] for tag in split)) for index in range(3)]
    return "-".join(parts)


def repack(distribution: metadata.Distribution, destination: Path) -> Path:
    """Write a wheel of an installed distribution into ``destination``; return its path."""
    name = str(canonicalize_name(distribution.metadata["Name"])).replace("-", "_")
    version = distribution.version
    data_dir = f"{name}-{version}.data"
    files = distribution.files
    assert files is not None, f"{name} has no RECORD"
    entries: list[tuple[str, bytes]] = []
    dist_info: str | None = None
    for file in files:
        text = str(PurePosixPath(*file.parts))
        if "__pycache__" in file.parts or text.endswith(".pyc"):
            continue
        if text.startswith(SCRIPTS_PREFIX):
            arcname = f"{data_dir}/scripts/{text.removeprefix(SCRIPTS_PREFIX)}"
        elif text.startswith("../"):
            continue  # headers, shared data: nothing the action's install uses
        else:
            arcname = text
        top = arcname.split("/", 1)[0]
        if top.endswith(".dist-info"):
            dist_info = top
            if arcname.endswith("/RECORD"):
                continue
        entries.append((arcname, Path(file.locate()).read_bytes()))
    assert dist_info is not None, f"{name} has no dist-info directory"
    record_lines = [f"{arcname},{_record_hash(data)},{len(data)}" for arcname, data in entries]
    record_lines.append(f"{dist_info}/RECORD,,")
    wheel_path = destination / f"{name}-{version}-{_wheel_tags(distribution)}.whl"
    with zipfile.ZipFile(wheel_path, "w", compression=zipfile.ZIP_STORED) as wheel:
        for arcname, data in entries:
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o755 if "/scripts/" in arcname else 0o644) << 16
            wheel.writestr(info, data)
        wheel.writestr(f"{dist_info}/RECORD", "\n".join(record_lines) + "\n")
    return wheel_path


def runtime_closure(distribution_name: str) -> list[str]:
    """Canonical names of a distribution's runtime dependencies, transitively, as installed."""
    environment = {"extra": "", "python_version": "3.11", "python_full_version": "3.11.0"}
    seen: set[str] = set()
    pending = [Requirement(text) for text in metadata.requires(distribution_name) or []]
    while pending:
        requirement = pending.pop()
        if requirement.marker and not requirement.marker.evaluate(environment):
            continue
        name = str(canonicalize_name(requirement.name))
        if name in seen:
            continue
        seen.add(name)
        pending.extend(Requirement(text) for text in metadata.requires(name) or [])
    return sorted(seen)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def requirements_lock(wheels: Iterable[tuple[str, str, Path]]) -> str:
    """A requirements.lock of (name, version, wheel) triples, in the project lock's format."""
    lines = ["# Test lock: the wheels rebuilt from the test environment."]
    for name, version, wheel in wheels:
        lines.append(f"{name}=={version} \\")
        lines.append(f"    --hash=sha256:{sha256_file(wheel)}")
    return "\n".join(lines) + "\n"
