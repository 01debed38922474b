"""The runtime bundle of a release commit: built from the locked wheels, verified before use.

scripts/bundle.py builds the bundle of this interpreter from the offline wheelhouse of
test_action_shell.py (whose locks pin those wheels), into the ``dist/`` of a hostile job's action
path; the install step then runs verbatim. What a release must guarantee is checked as it would
happen on a runner: a bundle that differs from its pin by one byte, one whose members would land
outside the environment or are links, one made for another interpreter or from another
requirements.lock stops the action with a fixed line, and never falls back to the index; a lock
without a line for this interpreter, or no ``dist/``, takes the hash-checked install; and the
checkout's own sources are what runs, whatever bytecode the bundle carries.
"""

from __future__ import annotations

import hashlib
import io
import json
import shutil
import stat
import subprocess
import sys
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from test_action_shell import (
    BASH,
    Job,
    bundle_action,
    load_installer,
    make_job,
    sentinels_of,
)

ROOT = Path(__file__).resolve().parents[2]
BUNDLE_SCRIPT = ROOT / "scripts" / "bundle.py"
FAILED = "jev-select: the action's install failed: "
Members = list[tuple[zipfile.ZipInfo, bytes]]

# The install step runs as a bash script against a POSIX environment layout, as in
# test_action_shell.py; the rules on member names are tested on every platform in
# test_action_install.py. One worker runs the module, so the bundle is built once.
pytestmark = [
    pytest.mark.posix,
    pytest.mark.skipif(BASH is None, reason="bash is required"),
    pytest.mark.xdist_group("action-bundle"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Job:
    """One job whose action path carries a bundle; each test copies it into a job of its own."""
    job = make_job(tmp_path_factory.mktemp("bundle-job"))
    bundle_action(job)
    return job


def bundled_job(tmp_path: Path, built: Job) -> Job:
    job = make_job(tmp_path)
    # The built job's wheels and the locks that pin them come along: a rebuilt wheel's bytes
    # differ from one build of the wheelhouse to the next.
    shutil.rmtree(job.wheels)
    shutil.copytree(built.wheels, job.wheels)
    for name in ("requirements.lock", "action/installer.lock"):
        shutil.copy2(built.action_path / name, job.action_path / name)
    shutil.copytree(built.action_path / "dist", job.action_path / "dist")
    return job


def the_bundle(job: Job) -> Path:
    (bundle,) = (job.action_path / "dist").glob("*.zip")
    return bundle


def pin_again(job: Job, bundle: Path) -> None:
    """Write the digest of ``bundle`` into bundles.lock: what a forged lock would say."""
    lock = job.action_path / "dist" / "bundles.lock"
    lines = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        fields = line.split()
        if len(fields) == 3 and fields[1] == bundle.name:
            line = (
                f"{fields[0]} {fields[1]} sha256:{hashlib.sha256(bundle.read_bytes()).hexdigest()}"
            )
        lines.append(line)
    lock.write_text("\n".join(lines) + "\n", encoding="utf-8")


def rewrite(bundle: Path, change: Callable[[Members], Members]) -> None:
    with zipfile.ZipFile(bundle) as archive:
        members = [(info, archive.read(info)) for info in archive.infolist()]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for info, data in change(members):
            archive.writestr(info, data)
    bundle.write_bytes(buffer.getvalue())


def added(
    name: str, data: bytes = b"planted\n", mode: int = 0o100644
) -> Callable[[Members], Members]:
    def change(members: Members) -> Members:
        info = zipfile.ZipInfo(name, date_time=(1980, 1, 1, 0, 0, 0))
        info.external_attr = mode << 16
        return [*members, (info, data)]

    return change


def with_manifest(**fields: object) -> Callable[[Members], Members]:
    def change(members: Members) -> Members:
        changed = []
        for info, data in members:
            if info.filename == "jev-select-bundle.json":
                data = json.dumps({**json.loads(data), **fields}).encode()
            changed.append((info, data))
        return changed

    return change


def site_of(job: Job) -> Path:
    venv = job.runner_temp / "jev-select-venv"
    return next((venv / "lib").glob("python3*")) / "site-packages"


def assert_stopped(job: Job, result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr == f"{FAILED}{message}\n"
    # Stopped, not diverted: uv never ran, nothing of the bundle is importable.
    assert not (job.runner_temp / "jev-select-uv").exists()
    venv = job.runner_temp / "jev-select-venv"
    assert not list(venv.glob("lib/python3*/site-packages/jev-select.pth"))
    assert sentinels_of(job) == {}


def python_in(job: Job, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(job.runner_temp / "jev-select-venv" / "bin" / "python"), "-I", "-c", code],
        cwd=job.workspace,
        capture_output=True,
        text=True,
        check=False,
    )


# ------------------------------------------------------------------------------------------
# What stops the install
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("offset", [0.0, 0.5, 1.0])
def test_one_changed_byte_stops_the_install(tmp_path: Path, built: Job, offset: float) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    data = bytearray(bundle.read_bytes())
    data[min(int(len(data) * offset), len(data) - 1)] ^= 0x01
    bundle.write_bytes(bytes(data))
    result = job.run("install", {})
    assert_stopped(job, result, "the bundle does not match dist/bundles.lock")


@pytest.mark.parametrize(
    "name", ["../escaped.txt", "yaml/../../escaped.txt", "/tmp/escaped.txt", "yaml\\..\\x.py"]
)
def test_a_member_that_would_leave_the_environment_stops_the_install(
    tmp_path: Path, built: Job, name: str
) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    rewrite(bundle, added(name))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, "an archive member has an unsafe name")
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not Path("/tmp/escaped.txt").exists()


def test_a_link_member_stops_the_install(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    # Inside a package that is written to disk: a link there would point anywhere.
    rewrite(bundle, added("yaml/planted.py", str(job.workspace).encode(), stat.S_IFLNK | 0o777))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, "an archive member is not a plain file")
    assert not list(tmp_path.rglob("planted.py"))


@pytest.mark.filterwarnings("ignore:Duplicate name")
def test_a_member_named_twice_stops_the_install(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    rewrite(bundle, added("yaml/__init__.py", b"import os\n"))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, "the bundle names a member twice")


def test_sources_of_the_package_in_the_bundle_stop_the_install(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    rewrite(bundle, added("jev_select/__init__.py", b"raise SystemExit(3)\n"))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, "the bundle holds sources of the package itself")


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        (
            {"key": "cpython-312-linux-x86_64-gnu"},
            "the bundle was built for another interpreter or platform",
        ),
        (
            {"key": "cpython-311-windows-amd64"},
            "the bundle was built for another interpreter or platform",
        ),
        ({"cache_tag": "cpython-312"}, "the bundle was built for another interpreter or platform"),
        ({"requirements_sha256": "0" * 64}, "the bundle was built from another requirements.lock"),
        ({"on_disk": ["yaml", "planted.pth"]}, "the bundle's manifest is malformed"),
        ({"on_disk": ["jev_select"]}, "the bundle's manifest is malformed"),
    ],
)
def test_a_bundle_made_for_something_else_stops_the_install(
    tmp_path: Path, built: Job, fields: dict[str, object], message: str
) -> None:
    # The lock is forged to match: the manifest alone has to catch it.
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    rewrite(bundle, with_manifest(**fields))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, message)


def test_a_pinned_bundle_that_is_missing_stops_the_install(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    the_bundle(job).unlink()
    result = job.run("install", {})
    assert_stopped(job, result, "a bundle that dist/bundles.lock pins is missing")


def test_a_bundle_of_another_requirements_lock_stops_the_install(
    tmp_path: Path, built: Job
) -> None:
    job = bundled_job(tmp_path, built)
    lock = job.action_path / "requirements.lock"
    lock.write_text(lock.read_text(encoding="utf-8") + "# changed after the release\n")
    result = job.run("install", {})
    assert_stopped(job, result, "dist/bundles.lock was built from another requirements.lock")


# ------------------------------------------------------------------------------------------
# What takes the hash-checked install instead
# ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dist", ["absent", "other platforms only"])
def test_without_a_bundle_for_this_interpreter_the_lock_is_installed_from_the_index(
    tmp_path: Path, built: Job, dist: str
) -> None:
    job = bundled_job(tmp_path, built)
    directory = job.action_path / "dist"
    if dist == "absent":
        shutil.rmtree(directory)
    else:
        bundle = the_bundle(job)
        key = load_installer().bundle_key()
        other = key.replace("cpython-311", "cpython-312")
        lock = directory / "bundles.lock"
        text = lock.read_text(encoding="utf-8").replace(key, other)
        lock.write_text(text, encoding="utf-8")
        bundle.rename(directory / bundle.name.replace(key, other))
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    assert (job.runner_temp / "jev-select-uv").is_dir()
    site = site_of(job)
    assert (site / "attrs").is_dir()
    assert not (site / "jev-select-runtime.zip").exists()
    assert sentinels_of(job) == {}


# ------------------------------------------------------------------------------------------
# What runs
# ------------------------------------------------------------------------------------------


def test_the_checkout_s_sources_run_whatever_bytecode_the_bundle_holds(
    tmp_path: Path, built: Job
) -> None:
    job = bundled_job(tmp_path, built)
    package = job.action_path / "jev_select"
    # A checkout that differs from the release: one module changed, one removed.
    version = package / "version.py"
    version.write_text(version.read_text(encoding="utf-8") + 'PROBE = "checkout"\n')
    (package / "cli" / "replay.py").unlink()
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    probe = python_in(
        job,
        "import importlib.util, jev_select.version as v, jev_select.errors as e\n"
        "print(v.PROBE, v.__file__.endswith('.py'), e.__file__.endswith('.pyc'))\n"
        "print(importlib.util.find_spec('jev_select.cli.replay'))",
    )
    assert probe.returncode == 0, probe.stderr
    # The changed module is compiled from its source (its bundled .pyc names another hash); the
    # unchanged one is read from the bundle's bytecode; the removed one no longer exists.
    assert probe.stdout.splitlines() == ["checkout True True", "None"]


def test_a_dependency_s_bytecode_must_match_its_source(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)

    def change(members: Members) -> Members:
        changed = []
        for info, data in members:
            if info.filename == "bracex/__meta__.py":
                data += b'\nPROBE = "source"\n'
            changed.append((info, data))
        return changed

    rewrite(bundle, change)
    pin_again(job, bundle)
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    probe = python_in(job, "import bracex.__meta__ as v; print(v.PROBE)")
    assert probe.stdout == "source\n", probe.stderr


def test_the_bundled_environment_needs_nothing_of_the_action_path(
    tmp_path: Path, built: Job
) -> None:
    job = bundled_job(tmp_path, built)
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    shutil.rmtree(job.action_path)
    probe = python_in(job, "import jev_select.cli, yaml, jsonschema, git, requests; print('ok')")
    assert probe.stdout == "ok\n", probe.stderr


# ------------------------------------------------------------------------------------------
# The build
# ------------------------------------------------------------------------------------------


def bundle_command(job: Job, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(BUNDLE_SCRIPT), *args, "--root", str(job.action_path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_the_build_is_reproducible_and_verifies(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    before = the_bundle(job).read_bytes()
    again = bundle_command(job, "build", "--wheelhouse", str(job.wheels))
    assert again.returncode == 0, again.stderr
    assert the_bundle(job).read_bytes() == before
    verified = bundle_command(job, "verify")
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout == f"{load_installer().bundle_key()}: verified\n"


def test_verify_refuses_a_changed_bundle(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_bundle(job)
    bundle.write_bytes(bundle.read_bytes() + b"\0")
    verified = bundle_command(job, "verify")
    assert verified.returncode == 1
    assert verified.stderr == "bundle: the bundle does not match dist/bundles.lock\n"


def test_the_build_takes_only_the_wheels_the_lock_pins(tmp_path: Path) -> None:
    job = make_job(tmp_path)
    wheel = next(job.wheels.glob("attrs-*.whl"))
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("attrs/planted.py", "raise SystemExit(3)\n")
    result = bundle_command(job, "build", "--wheelhouse", str(job.wheels))
    assert result.returncode == 1
    assert result.stderr == f"bundle: {wheel.name} is not a file requirements.lock pins\n"
    assert not (job.action_path / "dist").exists()


def test_the_bundle_holds_the_locked_distributions_and_no_package_source(built: Job) -> None:
    bundle = the_bundle(built)
    with zipfile.ZipFile(bundle) as archive:
        names = archive.namelist()
        manifest = json.loads(archive.read("jev-select-bundle.json"))
    assert names[0] == "jev-select-bundle.json"
    assert not [name for name in names if name.startswith("jev_select/")]
    assert all(name.endswith(".pyc") for name in names if name.startswith("jev-select-package/"))
    assert manifest["key"] == load_installer().bundle_key()
    assert "yaml" in manifest["on_disk"]
    wheels = {path.name for path in built.wheels.glob("*.whl")}
    assert set(manifest["wheels"]) == {name for name in wheels if not name.startswith("uv-")}
