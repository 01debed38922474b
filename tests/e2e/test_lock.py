"""requirements.lock against pyproject.toml, and the command that regenerates it.

- Every runtime dependency declared in ``pyproject.toml`` is pinned in the lock at a version
  inside its declared range, for the action's CPython 3.11 on each runner platform (a
  requirement whose marker excludes all of them needs no pin). Entries beyond those (transitive
  dependencies) are allowed; their hashes, exactness and closure are checked by the action and
  supply-chain tests.
- ``scripts/lock.sh`` feeds exactly those declarations to ``uv pip compile`` with hashes, a
  universal resolution for Python 3.11 and no configuration of the machine, keeps the committed
  pins as preferences, writes the fixed header, and ``--check`` tells a current lock from a stale
  one. A stand-in ``uv`` records what the script asks, so these tests need no index.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
import tomllib
from pathlib import Path
from typing import Any

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
LOCK = ROOT / "requirements.lock"
SCRIPT = ROOT / "scripts" / "lock.sh"
PIN = re.compile(r"([A-Za-z0-9][A-Za-z0-9._-]*)==([^\s\\;]+)")
# The action installs with CPython 3.11 on Linux, macOS and Windows runners.
ENVIRONMENTS = [
    {
        "python_version": "3.11",
        "python_full_version": "3.11.0",
        "implementation_name": "cpython",
        "platform_python_implementation": "CPython",
        "sys_platform": platform,
        "os_name": os_name,
        "platform_system": system,
        "extra": "",
    }
    for platform, os_name, system in (
        ("linux", "posix", "Linux"),
        ("darwin", "posix", "Darwin"),
        ("win32", "nt", "Windows"),
    )
]


def lock_pins(text: str) -> dict[str, str]:
    """Canonical name to pinned version, from the text of a hash-pinned requirements file."""
    pins: dict[str, str] = {}
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith(("#", "--hash=")):
            continue
        match = PIN.match(line)
        assert match is not None, f"not an exact pin: {line}"
        pins[canonicalize_name(match[1])] = match[2]
    return pins


def declared_requirements(pyproject: dict[str, Any]) -> list[Requirement]:
    return [Requirement(text) for text in pyproject["project"]["dependencies"]]


def lock_problems(pyproject: dict[str, Any], lock_text: str) -> list[str]:
    """What keeps the lock from installing what ``pyproject`` declares; empty when nothing."""
    pins = lock_pins(lock_text)
    problems: list[str] = []
    for requirement in declared_requirements(pyproject):
        applies = requirement.marker is None or any(
            requirement.marker.evaluate(environment) for environment in ENVIRONMENTS
        )
        if not applies:
            continue
        name = canonicalize_name(requirement.name)
        if name not in pins:
            problems.append(f"{name} is declared but not locked")
        elif not requirement.specifier.contains(Version(pins[name]), prereleases=True):
            problems.append(f"{name}=={pins[name]} is outside {requirement.specifier}")
    return problems


def _pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))


# ------------------------------------------------------------------------------------------
# The committed lock
# ------------------------------------------------------------------------------------------


def test_the_lock_installs_every_declaration_of_pyproject() -> None:
    assert lock_problems(_pyproject(), LOCK.read_text("utf-8")) == []


def test_a_raised_lower_bound_is_reported() -> None:
    pyproject = _pyproject()
    pins = lock_pins(LOCK.read_text("utf-8"))
    locked = Version(pins["requests"])
    pyproject["project"]["dependencies"] = [
        f"requests>={locked.major}.{locked.minor + 1}" if text.startswith("requests") else text
        for text in pyproject["project"]["dependencies"]
    ]
    assert lock_problems(pyproject, LOCK.read_text("utf-8")) == [
        f"requests=={locked} is outside >={locked.major}.{locked.minor + 1}"
    ]


def test_an_excluding_upper_bound_is_reported() -> None:
    pyproject = _pyproject()
    locked = lock_pins(LOCK.read_text("utf-8"))["pyyaml"]
    pyproject["project"]["dependencies"] = [
        f"PyYAML<{locked}" if text.startswith("PyYAML") else text
        for text in pyproject["project"]["dependencies"]
    ]
    assert lock_problems(pyproject, LOCK.read_text("utf-8")) == [
        f"pyyaml=={locked} is outside <{locked}"
    ]


def test_a_new_runtime_dependency_is_reported() -> None:
    pyproject = _pyproject()
    pyproject["project"]["dependencies"].append("Some_New.Package>=1")
    assert lock_problems(pyproject, LOCK.read_text("utf-8")) == [
        "some-new-package is declared but not locked"
    ]


def test_a_dependency_for_other_interpreters_only_needs_no_pin() -> None:
    pyproject = _pyproject()
    pyproject["project"]["dependencies"].append('tomli>=2; python_version < "3.11"')
    pyproject["project"]["dependencies"].append('colorama>=0.4; sys_platform == "win32"')
    assert lock_problems(pyproject, LOCK.read_text("utf-8")) == [
        "colorama is declared but not locked"
    ]


def test_a_dropped_pin_is_reported() -> None:
    kept = []
    skipping = False
    for line in LOCK.read_text("utf-8").splitlines():
        if PIN.match(line):
            skipping = line.startswith("urllib3==")
        if not skipping:
            kept.append(line)
    assert lock_problems(_pyproject(), "\n".join(kept)) == ["urllib3 is declared but not locked"]


# ------------------------------------------------------------------------------------------
# scripts/lock.sh, with a stand-in uv
# ------------------------------------------------------------------------------------------

FAKE_UV = """\
import json, os, shutil, sys
arguments = sys.argv[1:]
output = arguments[arguments.index("--output-file") + 1]
with open(os.environ["FAKE_UV_LOG"], "w", encoding="utf-8") as log:
    json.dump(
        {
            "arguments": arguments,
            "cwd": os.getcwd(),
            "input": open("jev-select.in", encoding="utf-8").read(),
            "previous": open(output, encoding="utf-8").read(),
            "environment": sorted(os.environ),
        },
        log,
    )
shutil.copyfile(os.environ["FAKE_UV_BODY"], output)
"""


def _header_and_body(text: str) -> tuple[str, str]:
    lines = text.splitlines(keepends=True)
    index = 0
    while index < len(lines) and lines[index].startswith("#"):
        index += 1
    return "".join(lines[:index]), "".join(lines[index:])


@pytest.fixture
def sandbox(tmp_path: Path) -> Path:
    """A repository root with this pyproject, lock and script, and a venv whose uv is fake."""
    root = tmp_path / "repo"
    (root / "scripts").mkdir(parents=True)
    shutil.copy2(ROOT / "pyproject.toml", root / "pyproject.toml")
    shutil.copy2(LOCK, root / "requirements.lock")
    shutil.copy2(SCRIPT, root / "scripts" / "lock.sh")
    bin_dir = tmp_path / "venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").symlink_to(sys.executable)
    uv = bin_dir / "uv"
    uv.write_text(f"#!{sys.executable}\n{FAKE_UV}", "utf-8")
    uv.chmod(uv.stat().st_mode | stat.S_IXUSR)
    return root


def _run_script(
    sandbox: Path, *arguments: str, body: str, extra_env: dict[str, str] | None = None
) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    body_file = sandbox.parent / "body.txt"
    body_file.write_text(body, "utf-8")
    log = sandbox.parent / "uv-log.json"
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "VENV": str(sandbox.parent / "venv"),
        "FAKE_UV_LOG": str(log),
        "FAKE_UV_BODY": str(body_file),
        **(extra_env or {}),
    }
    completed = subprocess.run(
        ["bash", str(sandbox / "scripts" / "lock.sh"), *arguments],
        capture_output=True,
        text=True,
        check=False,
        env=env,
        timeout=60,
    )
    recorded: dict[str, Any] = json.loads(log.read_text("utf-8")) if log.exists() else {}
    return completed, recorded


@pytest.mark.posix
def test_the_script_compiles_exactly_the_declarations_with_hashes(sandbox: Path) -> None:
    header, body = _header_and_body(LOCK.read_text("utf-8"))
    completed, recorded = _run_script(
        sandbox,
        body=body,
        extra_env={"UV_INDEX_URL": "https://mirror.invalid/simple", "PIP_FIND_LINKS": "/x"},
    )
    assert completed.returncode == 0, completed.stderr
    expected_input = "".join(f"{text}\n" for text in _pyproject()["project"]["dependencies"])
    assert recorded["input"] == expected_input
    arguments = recorded["arguments"]
    assert arguments[:2] == ["pip", "compile"]
    for flag in ("--generate-hashes", "--universal", "--no-config", "--no-header"):
        assert flag in arguments
    assert arguments[arguments.index("--python-version") + 1] == "3.11"
    assert arguments[arguments.index("--output-file") + 1] == "requirements.lock"
    assert "--upgrade" not in arguments
    # The committed pins are the preferences, without the header.
    assert recorded["previous"] == body
    # The machine's index settings never reach the resolver.
    assert "UV_INDEX_URL" not in recorded["environment"]
    assert "PIP_FIND_LINKS" not in recorded["environment"]
    # The committed lock is exactly what the script writes from its own resolution.
    assert (sandbox / "requirements.lock").read_text("utf-8") == header + body
    assert "scripts/lock.sh" in header


@pytest.mark.posix
def test_the_script_passes_upgrade_options_through(sandbox: Path) -> None:
    _, body = _header_and_body(LOCK.read_text("utf-8"))
    completed, recorded = _run_script(
        sandbox, "--upgrade-package", "requests", "--upgrade", body=body
    )
    assert completed.returncode == 0, completed.stderr
    arguments = recorded["arguments"]
    assert arguments[-3:] == ["--upgrade-package", "requests", "--upgrade"]


@pytest.mark.posix
def test_check_passes_on_a_current_lock_and_fails_on_a_stale_one(sandbox: Path) -> None:
    committed = (sandbox / "requirements.lock").read_text("utf-8")
    _, body = _header_and_body(committed)
    current, _ = _run_script(sandbox, "--check", body=body)
    assert current.returncode == 0, current.stdout + current.stderr
    assert "current" in current.stdout

    stale_body = body + "extra==1.0\n"
    stale, _ = _run_script(sandbox, "--check", body=stale_body)
    assert stale.returncode == 1
    assert "+extra==1.0" in stale.stdout
    assert "differs" in stale.stderr
    # --check never writes.
    assert (sandbox / "requirements.lock").read_text("utf-8") == committed


@pytest.mark.posix
def test_the_script_refuses_to_run_without_uv(sandbox: Path) -> None:
    (sandbox.parent / "venv" / "bin" / "uv").unlink()
    completed, recorded = _run_script(sandbox, body="")
    assert completed.returncode == 2
    assert "uv" in completed.stderr
    assert recorded == {}
