"""Supply chain: what the action and the examples pull in, and how the install is verified.

- every nested ``uses:`` of ``action.yml`` and every third-party ``uses:`` of the examples is pinned
  by a full 40-hex commit SHA; the only tag reference allowed is the examples' reference to this
  very action, under its published name and release tag (the README's name);
- every runtime dependency in ``pyproject.toml`` has a lower and an upper bound;
- ``requirements.lock`` pins every package exactly, with at least one ``--hash``, and names no
  other index, URL or editable source;
- the action installs only with ``--require-hashes`` and wheels, through ``action/install.py`` and
  uv, which ``action/installer.lock`` pins by SHA-256 for every runner platform;
- the release workflow builds the runtime bundle's shared part once and each platform's part on its
  own runner, without write access, pins and verifies them before the one job that may write
  commits them on top of the release commit, and the main line tracks no bundle;
- ``zizmor`` (offline) finds nothing in the action and the example workflows;
- the distribution is ``jev-ci-select`` (the index name ``jev-select`` is an unrelated project),
  nothing tells anyone to install that name, and the Apache-2.0 LICENSE ships in wheel and sdist.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from jev_select import contracts as c

ROOT = Path(__file__).resolve().parents[2]
ACTION = ROOT / "action.yml"
LOCK = ROOT / "requirements.lock"
INSTALLER = ROOT / "action" / "install.py"
INSTALLER_LOCK = ROOT / "action" / "installer.lock"
WORKFLOWS = sorted((ROOT / "examples").glob("*/.github/workflows/*.y*ml"))
PUBLISHED_ACTION = "typesafe-ai/jev-select"
RELEASE_TAG = "v0.1.0"
SHA_PINNED = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:/[^@\s]+)?@[0-9a-f]{40}")
PIN_LINE = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")
HASH_LINE = re.compile(r"--hash=sha256:[0-9a-f]{64}")


def _uses(node: Any) -> Iterator[str]:
    """Every ``uses`` value in a parsed workflow or action, at any depth (steps and jobs)."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "uses" and isinstance(value, str):
                yield value
            else:
                yield from _uses(value)
    elif isinstance(node, list):
        for item in node:
            yield from _uses(item)


def _load(path: Path) -> Any:
    return yaml.safe_load(path.read_text("utf-8"))


def test_the_examples_exist() -> None:
    assert len(WORKFLOWS) >= 5


def test_every_action_step_is_pinned_by_commit_sha() -> None:
    references = list(_uses(_load(ACTION)))
    assert references, "the composite action uses at least setup-python"
    for reference in references:
        assert SHA_PINNED.fullmatch(reference), reference


@pytest.mark.parametrize("workflow", WORKFLOWS, ids=[str(p.relative_to(ROOT)) for p in WORKFLOWS])
def test_every_example_reference_is_pinned(workflow: Path) -> None:
    for reference in _uses(_load(workflow)):
        if reference.startswith("./"):
            continue  # a file of the consumer's own repository
        if reference.split("@")[0].endswith("/jev-select"):
            # Examples name this action's release; the comment on that line tells readers to
            # pin the release commit. Any other owner would point users at someone else's code.
            assert reference == f"{PUBLISHED_ACTION}@{RELEASE_TAG}", (workflow, reference)
            continue
        assert SHA_PINNED.fullmatch(reference), (workflow, reference)
        assert not reference.startswith("docker://"), (workflow, reference)


def test_runtime_dependencies_have_lower_and_upper_bounds() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    dependencies = [Requirement(text) for text in project["dependencies"]]
    assert dependencies
    for requirement in dependencies:
        operators = {spec.operator for spec in requirement.specifier}
        assert operators & {">=", ">", "~=", "=="}, f"{requirement.name} needs a lower bound"
        assert operators & {"<", "<=", "~=", "=="}, f"{requirement.name} needs an upper bound"
        assert requirement.url is None, f"{requirement.name} must come from the index"


def _lock_entries() -> dict[str, tuple[str, list[str]]]:
    entries: dict[str, tuple[str, list[str]]] = {}
    current: str | None = None
    for raw in LOCK.read_text("utf-8").splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("--hash="):
            assert current is not None, "a hash belongs to the pin above it"
            assert HASH_LINE.fullmatch(line.rstrip(" \\")), line
            entries[current][1].append(line)
            continue
        assert not line.startswith("-"), f"no pip options in the lock: {line}"
        assert "://" not in line, f"no direct references: {line}"
        assert " @ " not in line, f"no direct references: {line}"
        match = PIN_LINE.match(line)
        assert match is not None, f"only exact pins: {line}"
        current = canonicalize_name(match[1])
        assert current not in entries, f"{current} is pinned twice"
        entries[current] = (match[2], [])
    return entries


def test_the_lock_pins_every_package_with_hashes() -> None:
    entries = _lock_entries()
    assert entries
    for name, (version, hashes) in entries.items():
        assert hashes, f"{name}=={version} has no hash"


def test_the_lock_covers_every_runtime_dependency() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    entries = _lock_entries()
    for text in project["dependencies"]:
        requirement = Requirement(text)
        name = canonicalize_name(requirement.name)
        assert name in entries, f"{name} is not locked"
        assert requirement.specifier.contains(entries[name][0]), f"{name} lock outside range"


def test_the_action_installs_only_hashed_wheels() -> None:
    steps = _load(ACTION)["runs"]["steps"]
    scripts = "\n".join(str(step.get("run", "")) for step in steps)
    assert "pip install" not in scripts, "the installer is action/install.py"
    assert '-I "$JEV_SELECT_ACTION_PATH/action/install.py"' in scripts
    source = INSTALLER.read_text("utf-8")
    for option in ('"--require-hashes"', '"--only-binary",\n        ":all:"', '"--no-config"'):
        assert option in source, option
    assert 'INDEX_URL = "https://pypi.org/simple"' in source


def test_the_installer_lock_pins_one_uv_version_by_hash_per_platform() -> None:
    pins = [
        line.split()
        for line in INSTALLER_LOCK.read_text("utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert {fields[0] for fields in pins} == {
        "linux-x86_64-gnu",
        "linux-x86_64-musl",
        "linux-aarch64",
        "darwin-x86_64",
        "darwin-arm64",
        "windows-amd64",
        "windows-arm64",
    }
    versions = set()
    for platform_key, file_name, digest, url in pins:
        match = re.fullmatch(r"uv-([0-9][0-9.]*)-py3-none-[A-Za-z0-9_.]+\.whl", file_name)
        assert match, file_name
        versions.add(match[1])
        assert re.fullmatch(r"sha256:[0-9a-f]{64}", digest), platform_key
        assert re.fullmatch(
            r"https://files\.pythonhosted\.org/packages/[0-9a-f]{2}/[0-9a-f]{2}/[0-9a-f]{60}/"
            + re.escape(file_name),
            url,
        ), platform_key
    assert len(versions) == 1


def test_zizmor_finds_nothing() -> None:
    zizmor = ROOT / ".venv" / "bin" / "zizmor"
    program = str(zizmor) if zizmor.exists() else shutil.which("zizmor")
    if program is None:
        pytest.skip("zizmor is not installed")
    completed = subprocess.run(
        [program, "--offline", "--no-progress", str(ACTION), *map(str, WORKFLOWS)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
        cwd=ROOT,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "zizmor" in (ROOT / ".ci" / "lint.sh").read_text("utf-8"), "CI runs it too"


def test_the_package_states_the_version_of_the_distribution() -> None:
    from jev_select.version import __version__

    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert __version__ == project["version"]


# ------------------------------------------------------------------------------------------
# The distribution's name and license
# ------------------------------------------------------------------------------------------

# A requirement on the index name `jev-select` (an unrelated project there), in an install command.
FOREIGN_REQUIREMENT = re.compile(r"(?<![\w/.-])jev-select(?![\w/-])")
INSTALL_COMMAND = re.compile(r"\b(?:pip|pip3|uv pip|pipx|uv tool)\s+install\b|\buv add\b")


def _tracked_files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
    ).stdout.decode("utf-8")
    return [ROOT / name for name in listed.split("\0") if name and (ROOT / name).is_file()]


def _tracked_text_files() -> list[Path]:
    return [
        path
        for path in _tracked_files()
        if path.suffix in {".md", ".yml", ".yaml", ".py", ".toml", ".txt", ".sh", ".lock", ""}
        and path.is_file()
    ]


def test_the_distribution_has_a_name_of_its_own() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["name"] == c.DISTRIBUTION_NAME == "jev-ci-select"
    assert project["scripts"] == {"jev-select": "jev_select.__main__:run"}
    assert c.PRODUCT_NAME == "jev-select"  # the command, the User-Agent and the texts keep it


def test_nothing_tells_anyone_to_install_jev_select_from_the_index() -> None:
    offenders = []
    for path in _tracked_text_files():
        for number, line in enumerate(path.read_text("utf-8", errors="replace").splitlines(), 1):
            if INSTALL_COMMAND.search(line) and FOREIGN_REQUIREMENT.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}")
    assert offenders == []


def test_the_license_is_apache_2_and_ships_in_wheel_and_sdist(tmp_path: Path) -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))["project"]
    assert project["license"] == "Apache-2.0"
    assert project["license-files"] == ["LICENSE"]
    license_text = (ROOT / "LICENSE").read_text("utf-8")
    assert license_text.splitlines()[0].strip() == "Apache License"
    assert "Version 2.0, January 2004" in license_text
    assert "END OF TERMS AND CONDITIONS" in license_text
    # Build both from a copy of the tracked files, offline, with the declared backend.
    source = tmp_path / "source"
    for path in _tracked_files():
        target = source / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    out = tmp_path / "dist"
    out.mkdir()
    names: dict[str, str] = {}
    for hook in ("build_wheel", "build_sdist"):  # one process each: the hooks share state
        built = subprocess.run(
            [
                sys.executable,
                "-c",
                f"import sys; from setuptools import build_meta; "
                f"print('BUILT', build_meta.{hook}(sys.argv[1]))",
                str(out),
            ],
            cwd=source,
            capture_output=True,
            text=True,
            check=False,
            timeout=300,
        )
        assert built.returncode == 0, built.stderr[-2000:]
        names[hook] = built.stdout.splitlines()[-1].removeprefix("BUILT ")
    wheel_name, sdist_name = names["build_wheel"], names["build_sdist"]
    assert wheel_name.startswith("jev_ci_select-")
    with zipfile.ZipFile(out / wheel_name) as wheel:
        members = wheel.namelist()
        metadata_text = wheel.read(
            next(name for name in members if name.endswith(".dist-info/METADATA"))
        ).decode("utf-8")
    assert any(name.endswith(".dist-info/licenses/LICENSE") for name in members), members
    assert "Name: jev-ci-select" in metadata_text.splitlines()
    assert "License-File: LICENSE" in metadata_text.splitlines()
    with tarfile.open(out / sdist_name) as sdist:
        assert f"{sdist_name.removesuffix('.tar.gz')}/LICENSE" in sdist.getnames()


RELEASE = ROOT / ".github" / "workflows" / "release.yml"


def _runs(job: dict[str, Any]) -> str:
    return "\n".join(str(step.get("run", "")) for step in job["steps"])


def test_the_release_builds_the_bundle_s_parts_and_pins_them_before_committing() -> None:
    workflow = _load(RELEASE)
    jobs = workflow["jobs"]
    for reference in _uses(workflow):
        assert SHA_PINNED.fullmatch(reference), reference
    shared, bundle = jobs["bundle-shared"], jobs["bundle"]
    commit, release = jobs["bundle-commit"], jobs["github-release"]
    # The shared part is built once; each platform builds only its own part beside it, and
    # checks both with an install that must not reach uv. None of them can write; only the job
    # that commits may, and it verifies first.
    assert shared["permissions"] == bundle["permissions"] == {"contents": "read"}
    assert "matrix" not in shared.get("strategy", {})
    assert "python scripts/bundle.py build --part shared --download" in _runs(shared)
    assert "bundle-shared" in bundle["needs"]
    assert "python scripts/bundle.py build --part platform --download" in _runs(bundle)
    assert 'test ! -e "$RUNNER_TEMP/jev-select-uv"' in _runs(bundle)
    uploaded = next(step for step in bundle["steps"] if "upload-artifact" in step.get("uses", ""))
    assert "!dist/*-any.zip" in uploaded["with"]["path"]
    assert commit["permissions"] == {"contents": "write"}
    assert set(commit["needs"]) == {"bundle-shared", "bundle", "publish"}
    lock = _runs(commit).index("python scripts/bundle.py lock")
    verify = _runs(commit).index("python scripts/bundle.py verify")
    assert lock < verify < _runs(commit).index("git/commits")
    # The floating tag names the bundled commit, whose parent is the tag's own commit.
    assert "parents: [$parent]" in _runs(commit)
    moved = next(step for step in release["steps"] if "major tag" in step.get("name", ""))
    assert moved["env"]["SHA"] == "${{ needs.bundle-commit.outputs.sha }}"


def test_the_main_line_tracks_no_bundle() -> None:
    # Bundles exist on the commits the release workflow makes, never on a branch.
    tracked = [path for path in _tracked_files() if path.relative_to(ROOT).parts[:1] == ("dist",)]
    assert tracked == []


def test_the_bundled_install_reads_only_the_action_checkout_and_the_standard_library() -> None:
    source = INSTALLER.read_text("utf-8")
    assert 'BUNDLE_LOCK = ACTION_ROOT / "dist" / "bundles.lock"' in source
    # The bundle's layout is loaded from the installer's own directory, by path: with -I no
    # directory of scripts is on the path, and nothing on it may stand in for the module.
    assert 'Path(__file__).resolve().parent / "bundle_layout.py"' in source
    layout = (INSTALLER.parent / "bundle_layout.py").read_text("utf-8")
    imported = {
        line.split()[1].split(".")[0]
        for line in layout.splitlines()
        if line.startswith(("import ", "from ")) and not line.startswith("from __future__")
    }
    assert imported <= set(sys.stdlib_module_names)
    # The network and uv belong to the index install only: urllib is imported where it is used.
    assert "\nimport urllib" not in source
    assert "import urllib.request" in source
