"""The sdist and the wheel, built from this tree the way a release builds them, then used.

One module-scoped build (``python -m build --no-isolation``: the sdist, then the wheel from the
sdist, offline, with the backend of ``[build-system]`` from the test environment) of a copy of
the files git would commit. The checks:

- ``twine check --strict`` accepts both files;
- the sdist carries the licence, the metadata inputs and the whole package;
- the wheel holds exactly the package (every module of the tree, ``py.typed``, the JSON
  Schemas) and its metadata, with the licence file: no tests, no benchmarks, nothing else;
- the wheel's metadata matches ``pyproject.toml`` (name, version, licence, dependencies);
- installed into a fresh virtual environment, outside this checkout, ``jev-select --version``
  prints the version, ``import jev_select`` resolves to the installed copy, and a local
  ``jev-select plan`` runs end to end, validating its report against the packaged schema.

The fresh environment reaches the runtime dependencies through a ``.pth`` line naming this
environment's site-packages, placed after its own: the test stays offline and the package
itself can only come from the wheel.
"""

from __future__ import annotations

import email.parser
import os
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import tomllib
import venv
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

# Under xdist one worker runs the module: its module fixtures build and install the package once.
pytestmark = pytest.mark.xdist_group("distribution")

ROOT = Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
PROJECT = PYPROJECT["project"]
NAME: str = PROJECT["name"]
VERSION: str = PROJECT["version"]
# The file names of sdists and wheels use the normalised name with underscores.
STEM = f"{canonicalize_name(NAME).replace('-', '_')}-{VERSION}"
PACKAGE = "jev_select"
LICENSE = "LICENSE"


@dataclass(frozen=True)
class Built:
    sdist: Path
    wheel: Path


def _tree_files() -> Iterator[Path]:
    """The files a commit of the working tree would hold (tracked or new, not ignored)."""
    listed = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8")
    for name in listed.split("\0"):
        if name and ((ROOT / name).is_symlink() or (ROOT / name).is_file()):
            yield Path(name)


def _copy_tree(destination: Path) -> None:
    for relative in _tree_files():
        source = ROOT / relative
        target = destination / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_symlink():
            target.symlink_to(os.readlink(source))
        else:
            shutil.copy2(source, target)


def _run(
    command: list[str], *, cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command, capture_output=True, text=True, check=False, timeout=300, cwd=cwd, env=env
    )


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    source = tmp_path_factory.mktemp("source")
    _copy_tree(source)
    dist = tmp_path_factory.mktemp("dist")
    completed = _run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(dist), str(source)]
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    sdists = sorted(dist.glob("*.tar.gz"))
    wheels = sorted(dist.glob("*.whl"))
    assert [path.name for path in sdists] == [f"{STEM}.tar.gz"]
    assert [path.name for path in wheels] == [f"{STEM}-py3-none-any.whl"]
    return Built(sdists[0], wheels[0])


def _wheel_names(built: Built) -> list[str]:
    with zipfile.ZipFile(built.wheel) as archive:
        return archive.namelist()


def _source_modules() -> set[str]:
    return {
        path.relative_to(ROOT).as_posix()
        for path in (ROOT / PACKAGE).rglob("*.py")
        if "__pycache__" not in path.parts
    }


def test_twine_accepts_both_files(built: Built) -> None:
    completed = _run(
        [sys.executable, "-m", "twine", "check", "--strict", str(built.sdist), str(built.wheel)]
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.count("PASSED") == 2, completed.stdout


def test_the_sdist_carries_the_licence_and_the_whole_package(built: Built) -> None:
    with tarfile.open(built.sdist) as archive:
        names = {
            PurePosixPath(name).relative_to(STEM).as_posix()
            for name in archive.getnames()
            if name != STEM
        }
    assert {LICENSE, "README.md", "pyproject.toml", "PKG-INFO"} <= names
    assert _source_modules() <= names
    assert f"{PACKAGE}/py.typed" in names
    schemas = {
        f"{PACKAGE}/schemas/{path.name}" for path in (ROOT / PACKAGE / "schemas").glob("*.json")
    }
    assert schemas
    assert schemas <= names


def test_the_wheel_holds_exactly_the_package_and_its_metadata(built: Built) -> None:
    names = _wheel_names(built)
    assert len(names) == len(set(names))
    dist_info = f"{STEM}.dist-info"
    package = {name for name in names if name.startswith(f"{PACKAGE}/")}
    metadata = {name for name in names if name.startswith(f"{dist_info}/")}
    assert package | metadata == set(names), sorted(set(names) - package - metadata)
    schemas = {
        f"{PACKAGE}/schemas/{path.name}" for path in (ROOT / PACKAGE / "schemas").glob("*.json")
    }
    expected = _source_modules() | {f"{PACKAGE}/py.typed"} | schemas
    assert package == expected, (sorted(package - expected), sorted(expected - package))
    assert f"{dist_info}/licenses/{LICENSE}" in metadata
    for name in names:
        parts = PurePosixPath(name).parts
        assert "tests" not in parts, name
        assert "bench" not in parts, name
        assert not name.endswith((".pyc", ".pyo")), name


def test_the_licence_file_is_the_one_in_the_tree(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as archive:
        packaged = archive.read(f"{STEM}.dist-info/licenses/{LICENSE}")
    assert packaged == (ROOT / LICENSE).read_bytes()


def test_the_wheel_metadata_matches_pyproject(built: Built) -> None:
    with zipfile.ZipFile(built.wheel) as archive:
        raw = archive.read(f"{STEM}.dist-info/METADATA").decode("utf-8")
        entry_points = archive.read(f"{STEM}.dist-info/entry_points.txt").decode("utf-8")
    message = email.parser.Parser().parsestr(raw)
    assert message["Name"] == NAME
    assert message["Version"] == VERSION
    assert message["Requires-Python"] == PROJECT["requires-python"]
    assert message["License-Expression"] == PROJECT["license"]
    assert LICENSE in (message.get_all("License-File") or [])
    declared = {str(Requirement(text)) for text in PROJECT["dependencies"]}
    published = {
        str(Requirement(text))
        for text in message.get_all("Requires-Dist") or []
        if "extra ==" not in text
    }
    assert published == declared
    assert "jev-select = jev_select.__main__:run" in entry_points.splitlines()


def _fresh_environment(root: Path) -> tuple[Path, Path]:
    """A virtual environment without pip, whose own site-packages come before ours."""
    venv.EnvBuilder(with_pip=False, symlinks=os.name != "nt").create(root)
    scripts = root / ("Scripts" if os.name == "nt" else "bin")
    python = scripts / ("python.exe" if os.name == "nt" else "python")
    own = _run([str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"])
    assert own.returncode == 0, own.stderr
    ours = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    # .pth files are read in name order; "zz" puts these directories after everything else.
    Path(own.stdout.strip(), "zz-test-dependencies.pth").write_text(
        "".join(f"{path}\n" for path in sorted(ours)), "utf-8"
    )
    return python, scripts


@pytest.fixture(scope="module")
def installed(built: Built, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("fresh") / "venv"
    python, scripts = _fresh_environment(root)
    completed = _run(
        [
            sys.executable,
            "-m",
            "pip",
            "--python",
            str(python),
            "install",
            "--quiet",
            "--no-index",
            "--no-deps",
            "--no-cache-dir",
            str(built.wheel),
        ]
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    return python, scripts


def _outside_env(tmp_path: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}
    env.pop("GITHUB_ACTIONS", None)
    env["HOME"] = str(tmp_path)
    return env


def test_the_installed_command_prints_the_version(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, scripts = installed
    command = scripts / ("jev-select.exe" if os.name == "nt" else "jev-select")
    assert command.is_file()
    completed = _run([str(command), "--version"], cwd=tmp_path, env=_outside_env(tmp_path))
    assert completed.returncode == 0, completed.stderr
    assert VERSION in completed.stdout.split()


def test_import_resolves_to_the_installed_wheel(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    python, _ = installed
    probe = (
        "import jev_select, pathlib, sys; "
        "print(pathlib.Path(jev_select.__file__).resolve()); "
        "print(pathlib.Path(sys.prefix).resolve()); "
        "print(jev_select.__version__)"
    )
    completed = _run([str(python), "-c", probe], cwd=tmp_path, env=_outside_env(tmp_path))
    assert completed.returncode == 0, completed.stderr
    module, prefix, version = completed.stdout.split("\n")[:3]
    assert Path(prefix) in Path(module).parents
    assert version == VERSION


def test_the_installed_command_plans_a_local_change(
    installed: tuple[Path, Path], tmp_path: Path
) -> None:
    _, scripts = installed
    command = scripts / ("jev-select.exe" if os.name == "nt" else "jev-select")
    repo = tmp_path / "repo"
    git_env = {
        **_outside_env(tmp_path),
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_AUTHOR_NAME": "Test",
        "GIT_AUTHOR_EMAIL": "test@example.invalid",
        "GIT_COMMITTER_NAME": "Test",
        "GIT_COMMITTER_EMAIL": "test@example.invalid",
    }
    for step in (
        ["git", "init", "--quiet", "--initial-branch=main", str(repo)],
        ["git", "-C", str(repo), "commit", "--quiet", "--allow-empty", "-m", "base"],
    ):
        assert _run(step, env=git_env).returncode == 0
    (repo / "a.txt").write_text("a\n", "utf-8")
    for step in (
        ["git", "-C", str(repo), "add", "a.txt"],
        ["git", "-C", str(repo), "commit", "--quiet", "-m", "change"],
    ):
        assert _run(step, env=git_env).returncode == 0
    tasks = tmp_path / "tasks.yml"
    tasks.write_text("unit:\n  description: Runs the unit tests.\n", "utf-8")
    env = {key: value for key, value in git_env.items() if key != "JEV_API_KEY"}
    completed = _run(
        [str(command), "plan", "--tasks-file", str(tasks), "--repo", str(repo), "--base", "HEAD~1"],
        cwd=tmp_path,
        env=env,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert completed.stdout.startswith("jev-select: bypassed (enforce): 1 of 1 tasks selected")
