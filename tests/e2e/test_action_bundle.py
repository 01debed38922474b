"""The runtime bundle of a release commit: built from the locked wheels, verified before use.

scripts/bundle.py builds both parts of the bundle, the shared one and this platform's, from the
offline wheelhouse of test_action_shell.py (whose locks pin those wheels), into the ``dist/`` of a
hostile job's action path; the install step then runs verbatim. What a release must guarantee is
checked as it would happen on a runner: a part that differs from its pin by one byte, is missing,
has members that would land outside the environment or are links, or was made for another part,
platform, interpreter or requirements.lock stops the action with a fixed line, and never falls
back to the index; a lock without a line for this platform, or no ``dist/``, takes the
hash-checked install; the checkout's own sources are what runs, whatever bytecode the bundle
carries; and the packages whose optional extension modules were left out still work.
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


SHARED, PLATFORM = "shared", "platform"


def the_part(job: Job, kind: str = SHARED) -> Path:
    installer = load_installer()
    key = installer.shared_key() if kind == SHARED else installer.bundle_key()
    part: Path = job.action_path / "dist" / str(installer.bundle_file_name(key))
    assert part.is_file()
    return part


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


def drop_lock_line(job: Job, key: str) -> None:
    lock = job.action_path / "dist" / "bundles.lock"
    lines = lock.read_text(encoding="utf-8").splitlines()
    kept = [line for line in lines if line.split()[:1] != [key]]
    assert len(kept) == len(lines) - 1
    lock.write_text("\n".join(kept) + "\n", encoding="utf-8")


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


@pytest.mark.parametrize("kind", [SHARED, PLATFORM])
@pytest.mark.parametrize("offset", [0.0, 0.5, 1.0])
def test_one_changed_byte_in_either_part_stops_the_install(
    tmp_path: Path, built: Job, kind: str, offset: float
) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)
    data = bytearray(bundle.read_bytes())
    data[min(int(len(data) * offset), len(data) - 1)] ^= 0x01
    bundle.write_bytes(bytes(data))
    result = job.run("install", {})
    assert_stopped(job, result, "the bundle does not match dist/bundles.lock")


@pytest.mark.parametrize(
    ("kind", "name"),
    [
        (SHARED, "../escaped.txt"),
        (SHARED, "yaml/../../escaped.txt"),
        (SHARED, "/tmp/escaped.txt"),
        (SHARED, "yaml\\..\\x.py"),
        (PLATFORM, "rpds/../../escaped.txt"),
        (PLATFORM, "/tmp/escaped.txt"),
    ],
)
def test_a_member_that_would_leave_the_environment_stops_the_install(
    tmp_path: Path, built: Job, kind: str, name: str
) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)
    rewrite(bundle, added(name))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, "an archive member has an unsafe name")
    assert not list(tmp_path.rglob("escaped.txt"))
    assert not Path("/tmp/escaped.txt").exists()


@pytest.mark.parametrize(("kind", "name"), [(SHARED, "certifi"), (PLATFORM, "rpds")])
def test_a_link_member_stops_the_install(tmp_path: Path, built: Job, kind: str, name: str) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)
    # Inside a package that is written to disk: a link there would point anywhere.
    link = stat.S_IFLNK | 0o777
    rewrite(bundle, added(f"{name}/planted.py", str(job.workspace).encode(), link))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, "an archive member is not a plain file")
    assert not list(tmp_path.rglob("planted.py"))


@pytest.mark.filterwarnings("ignore:Duplicate name")
@pytest.mark.parametrize(
    ("kind", "name", "message"),
    [
        (SHARED, "yaml/__init__.py", "the bundle names a member twice"),
        (PLATFORM, "rpds/__init__.py", "the bundle names a member twice"),
        (SHARED, "jev_select/__init__.py", "the bundle holds sources of the package itself"),
        (PLATFORM, "jev_select/__init__.py", "the bundle holds sources of the package itself"),
        # Only the shared part, built once, may pair bytecode with the checkout's sources.
        (
            PLATFORM,
            "jev-select-package/jev_select/version.pyc",
            "the bundle's compiled package is malformed",
        ),
        # Which copy an import found would depend on the order of the path.
        (SHARED, "rpds/planted.py", "the bundle's parts hold the same package"),
        (PLATFORM, "yaml/planted.py", "the bundle's parts hold the same package"),
    ],
)
def test_a_planted_member_stops_the_install(
    tmp_path: Path, built: Job, kind: str, name: str, message: str
) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)
    rewrite(bundle, added(name, b"raise SystemExit(3)\n"))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, message)


OTHER_PLATFORM = "the bundle was built for another interpreter or platform"
OTHER_LOCK = "the bundle was built from another requirements.lock"
MALFORMED = "the bundle's manifest is malformed"


@pytest.mark.parametrize(
    ("kind", "fields", "message"),
    [
        (PLATFORM, {"key": "cpython-312-linux-x86_64-gnu"}, OTHER_PLATFORM),
        (PLATFORM, {"key": "cpython-311-windows-amd64"}, OTHER_PLATFORM),
        (PLATFORM, {"part": "shared"}, OTHER_PLATFORM),
        (PLATFORM, {"cache_tag": "cpython-312"}, OTHER_PLATFORM),
        (SHARED, {"key": "cpython-312-any"}, OTHER_PLATFORM),
        (SHARED, {"part": "platform"}, OTHER_PLATFORM),
        (SHARED, {"cache_tag": "cpython-312"}, OTHER_PLATFORM),
        (SHARED, {"requirements_sha256": "0" * 64}, OTHER_LOCK),
        (PLATFORM, {"requirements_sha256": "0" * 64}, OTHER_LOCK),
        (SHARED, {"on_disk": ["certifi", "planted.pth"]}, MALFORMED),
        (PLATFORM, {"on_disk": ["rpds", "planted.pth"]}, MALFORMED),
        (SHARED, {"on_disk": ["jev_select"]}, MALFORMED),
    ],
)
def test_a_part_made_for_something_else_stops_the_install(
    tmp_path: Path, built: Job, kind: str, fields: dict[str, object], message: str
) -> None:
    # The lock is forged to match: the manifest alone has to catch it.
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)
    rewrite(bundle, with_manifest(**fields))
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, message)


def test_the_platform_part_of_another_platform_stops_the_install(
    tmp_path: Path, built: Job
) -> None:
    # A real part, built for another platform, put where this platform's part is pinned, under
    # this platform's name, with the lock forged to match.
    job = bundled_job(tmp_path, built)
    installer = load_installer()
    other_key = "windows-amd64" if installer.platform_key() != "windows-amd64" else "linux-aarch64"
    # The test installer.lock pins this platform only; the build takes platforms it names.
    installer_lock = job.action_path / "action" / "installer.lock"
    line = installer_lock.read_text(encoding="utf-8").splitlines()[-1]
    with installer_lock.open("a", encoding="utf-8") as handle:
        handle.write(line.replace(installer.platform_key(), other_key, 1) + "\n")
    other_dist = tmp_path / "other-dist"
    made = bundle_command(
        job,
        *("build", "--part", "platform", "--platform-key", other_key),
        *("--wheelhouse", str(job.wheels), "--dist", str(other_dist)),
    )
    assert made.returncode == 0, made.stderr
    (other,) = other_dist.glob(f"*-{other_key}.zip")
    bundle = the_part(job, PLATFORM)
    shutil.copy(other, bundle)
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, OTHER_PLATFORM)


def test_the_shared_part_in_place_of_the_platform_part_stops_the_install(
    tmp_path: Path, built: Job
) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, PLATFORM)
    shutil.copy(the_part(job, SHARED), bundle)
    pin_again(job, bundle)
    result = job.run("install", {})
    assert_stopped(job, result, OTHER_PLATFORM)


@pytest.mark.parametrize("kind", [SHARED, PLATFORM])
def test_a_pinned_part_that_is_missing_stops_the_install(
    tmp_path: Path, built: Job, kind: str
) -> None:
    job = bundled_job(tmp_path, built)
    the_part(job, kind).unlink()
    result = job.run("install", {})
    assert_stopped(job, result, "a bundle that dist/bundles.lock pins is missing")


def test_a_platform_line_without_a_shared_line_stops_the_install(
    tmp_path: Path, built: Job
) -> None:
    job = bundled_job(tmp_path, built)
    drop_lock_line(job, load_installer().shared_key())
    the_part(job, SHARED).unlink()
    result = job.run("install", {})
    assert_stopped(job, result, "dist/bundles.lock pins no shared part for this interpreter")


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


@pytest.mark.parametrize("dist", ["absent", "other platforms only", "shared part only"])
def test_without_a_line_for_this_platform_the_lock_is_installed_from_the_index(
    tmp_path: Path, built: Job, dist: str
) -> None:
    job = bundled_job(tmp_path, built)
    directory = job.action_path / "dist"
    if dist == "absent":
        shutil.rmtree(directory)
    elif dist == "shared part only":
        drop_lock_line(job, load_installer().bundle_key())
        the_part(job, PLATFORM).unlink()
    else:
        bundle = the_part(job, PLATFORM)
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


@pytest.mark.parametrize(
    ("kind", "module"), [(SHARED, "bracex/__meta__"), (PLATFORM, "rpds/__init__")]
)
def test_a_dependency_s_bytecode_must_match_its_source(
    tmp_path: Path, built: Job, kind: str, module: str
) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)

    def change(members: Members) -> Members:
        changed = []
        for info, data in members:
            if info.filename == f"{module}.py":
                data += b'\nPROBE = "source"\n'
            changed.append((info, data))
        return changed

    rewrite(bundle, change)
    pin_again(job, bundle)
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    name = module.removesuffix("/__init__").replace("/", ".")
    probe = python_in(job, f"import {name} as v; print(v.PROBE)")
    assert probe.stdout == "source\n", probe.stderr


def test_the_bundled_environment_needs_nothing_of_the_action_path(
    tmp_path: Path, built: Job
) -> None:
    job = bundled_job(tmp_path, built)
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    shutil.rmtree(job.action_path)
    probe = python_in(
        job, "import jev_select.cli, yaml, jsonschema, git, requests, rpds; print('ok')"
    )
    assert probe.stdout == "ok\n", probe.stderr


@pytest.fixture(scope="module")
def bundled_install(tmp_path_factory: pytest.TempPathFactory, built: Job) -> Job:
    job = bundled_job(tmp_path_factory.mktemp("bundled-install"), built)
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    return job


def test_pyyaml_works_without_its_extension_module(bundled_install: Job) -> None:
    document = "tasks:\n  code:\n    paths: ['src/**', !!str 3]\n  docs: {description: d}\n"
    probe = python_in(
        bundled_install,
        "import importlib.util, json, yaml\n"
        f"print(yaml.__with_libyaml__, importlib.util.find_spec('yaml._yaml'))\n"
        f"print(json.dumps(yaml.safe_load({document!r}), sort_keys=True))",
    )
    assert probe.returncode == 0, probe.stderr
    flag, loaded = probe.stdout.splitlines()
    assert flag == "False None"
    assert json.loads(loaded) == {
        "tasks": {"code": {"paths": ["src/**", "3"]}, "docs": {"description": "d"}}
    }


SAMPLES = [
    "Grüße aus Köln, schöne Straße.".encode("cp1252"),
    "Привет, как дела? Это проверка кодировки.".encode("cp1251"),
    "日本語の文字コードを判定します。".encode("shift_jis"),
    "plain ascii text\n".encode("ascii"),
    "Ελληνικά κείμενα για δοκιμή.".encode(),
]
DETECT = (
    "import json, sys, charset_normalizer, charset_normalizer.md as md\n"
    "samples = [bytes.fromhex(h) for h in json.loads(sys.argv[1])]\n"
    "found = [charset_normalizer.from_bytes(s).best() for s in samples]\n"
    "print(json.dumps([md.__file__.endswith(('.py', '.pyc'))] +"
    " [[b.encoding, str(b)] if b else None for b in found]))\n"
)


def test_charset_normalizer_without_its_compiled_modules_decides_the_same(
    bundled_install: Job,
) -> None:
    argument = json.dumps([sample.hex() for sample in SAMPLES])
    venv_python = bundled_install.runner_temp / "jev-select-venv" / "bin" / "python"
    bundled = subprocess.run(
        [str(venv_python), "-I", "-c", DETECT, argument],
        cwd=bundled_install.workspace,
        capture_output=True,
        text=True,
        check=False,
    )
    assert bundled.returncode == 0, bundled.stderr
    here = subprocess.run(
        [sys.executable, "-I", "-c", DETECT, argument], capture_output=True, text=True, check=True
    )
    pure, *bundled_results = json.loads(bundled.stdout)
    _, *reference = json.loads(here.stdout)
    assert pure is True
    assert bundled_results == reference


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
    before = {kind: the_part(job, kind).read_bytes() for kind in (SHARED, PLATFORM)}
    again = bundle_command(job, "build", "--wheelhouse", str(job.wheels))
    assert again.returncode == 0, again.stderr
    assert {kind: the_part(job, kind).read_bytes() for kind in (SHARED, PLATFORM)} == before
    verified = bundle_command(job, "verify")
    assert verified.returncode == 0, verified.stderr
    installer = load_installer()
    keys = sorted([installer.shared_key(), installer.bundle_key()])
    assert verified.stdout == "".join(f"{key}: verified\n" for key in keys)


@pytest.mark.parametrize("kind", [SHARED, PLATFORM])
def test_verify_refuses_a_changed_part(tmp_path: Path, built: Job, kind: str) -> None:
    job = bundled_job(tmp_path, built)
    bundle = the_part(job, kind)
    bundle.write_bytes(bundle.read_bytes() + b"\0")
    verified = bundle_command(job, "verify")
    assert verified.returncode == 1
    assert verified.stderr == "bundle: the bundle does not match dist/bundles.lock\n"


def test_verify_refuses_a_platform_part_without_its_shared_part(tmp_path: Path, built: Job) -> None:
    job = bundled_job(tmp_path, built)
    the_part(job, SHARED).unlink()
    locked = bundle_command(job, "lock")
    assert locked.returncode == 0, locked.stderr
    verified = bundle_command(job, "verify")
    assert verified.returncode == 1
    key = load_installer().bundle_key()
    assert verified.stderr == f"bundle: bundles.lock pins no shared part for {key}\n"


def test_the_build_takes_only_the_wheels_the_lock_pins(tmp_path: Path) -> None:
    job = make_job(tmp_path)
    wheel = next(job.wheels.glob("attrs-*.whl"))
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("attrs/planted.py", "raise SystemExit(3)\n")
    result = bundle_command(job, "build", "--wheelhouse", str(job.wheels))
    assert result.returncode == 1
    assert result.stderr == f"bundle: {wheel.name} is not a file requirements.lock pins\n"
    assert not (job.action_path / "dist").exists()


def test_the_parts_hold_the_locked_distributions_and_no_package_source(built: Job) -> None:
    manifests, names = {}, {}
    for kind in (SHARED, PLATFORM):
        with zipfile.ZipFile(the_part(built, kind)) as archive:
            names[kind] = archive.namelist()
            manifests[kind] = json.loads(archive.read("jev-select-bundle.json"))
        assert names[kind][0] == "jev-select-bundle.json"
        assert not [name for name in names[kind] if name.startswith("jev_select/")]
        assert manifests[kind]["part"] == kind
    shared, platform = manifests[SHARED], manifests[PLATFORM]
    assert all(
        name.endswith(".pyc") for name in names[SHARED] if name.startswith("jev-select-package/")
    )
    assert not [name for name in names[PLATFORM] if name.startswith("jev-select-package/")]
    installer = load_installer()
    assert (shared["key"], platform["key"]) == (installer.shared_key(), installer.bundle_key())
    # Only rpds-py keeps compiled code; PyYAML's and charset_normalizer's are left out.
    assert platform["on_disk"] == ["rpds"]
    assert [name.split("-")[0] for name in platform["wheels"]] == ["rpds_py"]
    assert not [name for name in names[SHARED] if name.endswith((".so", ".pyd", ".dll"))]
    assert sorted(
        name.split("/")[0] + "/" + name.split("/")[1].split(".")[0] for name in shared["dropped"]
    ) == ["charset_normalizer/cd", "charset_normalizer/md", "yaml/_yaml"]
    assert {"yaml/cyaml.py", "charset_normalizer/md.py"} <= set(names[SHARED])
    wheels = {path.name for path in built.wheels.glob("*.whl") if path.name[:3] != "uv-"}
    assert set(shared["wheels"]) | set(platform["wheels"]) == wheels
    assert not set(shared["wheels"]) & set(platform["wheels"])
