"""The steps of action.yml, run for real with bash the way the runner runs composite steps.

Nothing is stubbed. The install step runs verbatim, both ways it can go: without ``dist/``,
``action/install.py`` verifies and unpacks uv, creates the private environment and has uv install
``requirements.lock`` into it; with the bundle a release commit carries (built here by
scripts/bundle.py from the same wheels), it verifies and lays out the bundle instead; the plan step
runs ``jev-select plan`` from that environment with a ``push`` event (the bypass path: no git, no
network). Tests stay offline, so the wheels come from a wheelhouse rebuilt from the test
environment (tests/support/wheelhouse.py) through the action's documented ``JEV_SELECT_WHEELHOUSE``
variable, and the action is copied to a temporary action path whose two locks pin those rebuilt
wheels, in the format and with the options of the real locks (the real locks are checked below
and in test_supply_chain.py).

Every step runs in a hostile job: the workspace (the working directory of a step that names
none), the runner's temporary directory and the user's home are planted with modules a Python
start-up or ``-m venv``/``-m pip`` would import (venv.py, pip.py, ensurepip/, sitecustomize.py,
usercustomize.py, a .pth file ...), pip and uv configuration files, ``.python-version`` and a
forged wheel, and the environment carries ``PYTHON*``, ``PIP_*`` and ``UV_*`` variables pointing
at them. Each planted piece of code writes a sentinel holding the API key it can read; no
sentinel may exist after both steps.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from support import wheelhouse

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block

ROOT = Path(__file__).resolve().parents[2]
LOCK_FILE = ROOT / "requirements.lock"
BASH = shutil.which("bash")
BASE_PYTHON = getattr(sys, "_base_executable", sys.executable)
GITHUB_SHA = "0123456789abcdef0123456789abcdef01234567"
API_KEY_SENTINEL = "jev-key-SENTINEL-4b1d"
TOKEN_SENTINEL = "ghs_TOKEN-SENTINEL-77aa"
TASKS = """\
unit:
  description: Runs the unit tests; $(touch "$RUNNER_TEMP/pwned") `touch "$RUNNER_TEMP/pwned"`
docs:
  description: Builds the documentation site.
  force_paths: [docs/**]
"""
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
# What the action path holds at run time, besides the two locks the tests write.
ACTION_FILES = (
    "action.yml",
    "pyproject.toml",
    "README.md",
    "LICENSE",
    "action/install.py",
    "action/bundle_layout.py",
)
# Module names a Python start-up, `python -m venv`, `python -m pip` or the installer would import.
PLANTED_MODULES = (
    "venv",
    "pip",
    "ensurepip",
    "sitecustomize",
    "usercustomize",
    "argparse",
    "subprocess",
    "sysconfig",
    "zipfile",
    "hashlib",
    "tomllib",
    "shutil",
    "site",
    "jev_select",
)

# The steps run as bash scripts against a POSIX virtual environment layout, with stand-in
# programs that are shell scripts.
# Under xdist one worker runs the module: its module fixtures install the action once.
pytestmark = [
    pytest.mark.posix,
    pytest.mark.skipif(BASH is None, reason="bash is required"),
    pytest.mark.xdist_group("action-shell"),
]


def load_installer() -> ModuleType:
    spec = importlib.util.spec_from_file_location("jev_action_install", ROOT / "action/install.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_action() -> dict[str, Any]:
    loaded = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def step(step_id: str) -> dict[str, Any]:
    for candidate in load_action()["runs"]["steps"]:
        if candidate.get("id") == step_id:
            assert isinstance(candidate, dict)
            return candidate
    raise AssertionError(step_id)


def substitute(value: object, context: Mapping[str, str]) -> str:
    """Evaluate the only expression form the env mappings use: a context lookup."""

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        assert name in context, f"unexpected expression {name!r}"
        return context[name]

    return EXPRESSION.sub(lookup, str(value))


def runner_env(
    extra: Mapping[str, str], mapping: Mapping[str, Any], context: Mapping[str, str]
) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "LANG": "C.UTF-8",
        **extra,
    }
    env.update({name: substitute(value, context) for name, value in mapping.items()})
    return env


def run_step(
    script: str, env: Mapping[str, str], workdir: Path, script_dir: Path | None = None
) -> subprocess.CompletedProcess[str]:
    # The runner writes the script to a file and runs `bash --noprofile --norc -eo pipefail {0}`.
    script_file = (script_dir or workdir) / "step.sh"
    script_file.write_text(script, encoding="utf-8")
    assert BASH is not None
    return subprocess.run(
        [BASH, "--noprofile", "--norc", "-eo", "pipefail", str(script_file)],
        env=dict(env),
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def input_context(overrides: Mapping[str, str]) -> dict[str, str]:
    """What the runner substitutes: the given inputs, else the declared defaults."""
    context = {}
    for spec in c.INPUTS:
        value = overrides.get(spec.name, spec.action_default)
        context[f"inputs.{spec.name}"] = value.replace("${{ github.token }}", TOKEN_SENTINEL)
    return context


def parse_github_output(text: str) -> list[tuple[str, str]]:
    pairs = []
    lines = iter(text.split("\n"))
    for line in lines:
        if not line:
            continue
        name, delimiter = line.split("<<", 1)
        value_lines = []
        for value_line in lines:
            if value_line == delimiter:
                break
            value_lines.append(value_line)
        else:
            raise AssertionError(f"unterminated output {name}")
        pairs.append((name, "\n".join(value_lines)))
    return pairs


def step_workdir(step_spec: Mapping[str, Any], context: Mapping[str, str]) -> Path:
    """Where the runner starts a step: its working-directory, else the workspace."""
    return Path(substitute(step_spec.get("working-directory", "${{ github.workspace }}"), context))


# ------------------------------------------------------------------------------------------
# The hostile job
# ------------------------------------------------------------------------------------------

PLANTED_CODE = """\
import os, pathlib
pathlib.Path({sentinels!r}, {label!r}).write_text(os.environ.get("INPUT_API_KEY", "-"))
"""
PLANTED_PTH = (
    "import os, pathlib; pathlib.Path({sentinels!r}, {label!r})"
    '.write_text(os.environ.get("INPUT_API_KEY", "-"))\n'
)
PLANTED_PROGRAM = """\
#!/bin/sh
printf '%s' "${{INPUT_API_KEY:--}}" > {sentinel}
exit 1
"""
UNREACHABLE_INDEX = "http://127.0.0.1:9/simple"


def plant_modules(directory: Path, sentinels: Path, where: str) -> None:
    for name in PLANTED_MODULES:
        label = f"{name}@{where}"
        if name in {"ensurepip", "jev_select"}:
            package = directory / name
            package.mkdir(parents=True, exist_ok=True)
            for module in ("__init__.py", "__main__.py"):
                code = PLANTED_CODE.format(sentinels=str(sentinels), label=label)
                (package / module).write_text(code, encoding="utf-8")
        else:
            code = PLANTED_CODE.format(sentinels=str(sentinels), label=label)
            (directory / f"{name}.py").write_text(code, encoding="utf-8")
    pth = PLANTED_PTH.format(sentinels=str(sentinels), label=f"pth@{where}")
    (directory / "jev-hostile.pth").write_text(pth, encoding="utf-8")


def plant_configuration(directory: Path, forged: Path) -> None:
    pip_conf = f"[global]\nindex-url = {UNREACHABLE_INDEX}\nfind-links = {forged}\n"
    uv_conf = (
        f'index-url = "{UNREACHABLE_INDEX}"\nfind-links = ["{forged}"]\n'
        "[pip]\nverify-hashes = false\nrequire-hashes = false\n"
    )
    (directory / "pip.conf").write_text(pip_conf, encoding="utf-8")
    (directory / "pip.ini").write_text(pip_conf, encoding="utf-8")
    (directory / "uv.toml").write_text(uv_conf, encoding="utf-8")
    (directory / "pyproject.toml").write_text(
        '[project]\nname = "hostile"\nversion = "1"\n[tool.uv]\n'
        + uv_conf.replace("[pip]", "[tool.uv.pip]"),
        encoding="utf-8",
    )
    (directory / ".python-version").write_text("3.7\n", encoding="utf-8")


def plant_program(path: Path, sentinels: Path, label: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(PLANTED_PROGRAM.format(sentinel=sentinels / label), encoding="utf-8")
    path.chmod(0o755)


def plant_launcher_venv(directory: Path, sentinels: Path) -> Path:
    """A virtual environment of the base interpreter whose site-packages holds a .pth file."""
    subprocess.run(
        [BASE_PYTHON, "-I", "-m", "venv", "--without-pip", str(directory)],
        cwd=directory.parent,
        check=True,
    )
    site = next((directory / "lib").glob("python3*")) / "site-packages"
    pth = PLANTED_PTH.format(sentinels=str(sentinels), label="pth@launcher-venv")
    (site / "jev-hostile.pth").write_text(pth, encoding="utf-8")
    return directory / "bin" / "python"


def forge_wheel(forged: Path, name: str, version: str, sentinels: Path) -> None:
    """A wheel under a locked name and version whose code writes a sentinel."""
    stem = f"{name.replace('-', '_')}-{version}"
    code = PLANTED_CODE.format(sentinels=str(sentinels), label=f"forged-{name}")
    with zipfile.ZipFile(forged / f"{stem}-py3-none-any.whl", "w") as wheel:
        wheel.writestr(f"{name.replace('-', '_')}/__init__.py", code)
        wheel.writestr(
            f"{stem}-forged.pth",
            PLANTED_PTH.format(sentinels=str(sentinels), label=f"forged-pth-{name}"),
        )
        wheel.writestr(
            f"{stem}.dist-info/METADATA",
            f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
        )
        wheel.writestr(
            f"{stem}.dist-info/WHEEL",
            "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
        )
        wheel.writestr(f"{stem}.dist-info/RECORD", "")


@dataclass(frozen=True)
class Job:
    """One runner job: an action checkout, a planted workspace, home and temp directory."""

    root: Path
    action_path: Path
    wheels: Path
    workspace: Path
    runner_temp: Path
    home: Path
    sentinels: Path
    hostile_env: dict[str, str]

    def context(self) -> dict[str, str]:
        return {
            "steps.python.outputs.python-path": BASE_PYTHON,
            "github.action_path": str(self.action_path),
            "github.workspace": str(self.workspace),
            "runner.temp": str(self.runner_temp),
        }

    def env(
        self,
        extra: Mapping[str, str],
        step_spec: Mapping[str, Any],
        context: Mapping[str, str],
    ) -> dict[str, str]:
        base = {
            **self.hostile_env,
            "HOME": str(self.home),
            "GITHUB_WORKSPACE": str(self.workspace),
            "RUNNER_TEMP": str(self.runner_temp),
            "JEV_SELECT_WHEELHOUSE": str(self.wheels),
            **extra,
        }
        return runner_env(base, step_spec.get("env", {}), {**self.context(), **context})

    def run(
        self, step_id: str, extra: Mapping[str, str], context: Mapping[str, str] | None = None
    ) -> subprocess.CompletedProcess[str]:
        spec = step(step_id)
        env = self.env(extra, spec, context or {})
        workdir = step_workdir(spec, self.context())
        return run_step(spec["run"], env, workdir, script_dir=self.root)


def copy_action(destination: Path, wheels: Path) -> Path:
    """The action path: the project's files, with locks that pin the rebuilt wheels."""
    for name in ACTION_FILES:
        if (ROOT / name).exists():
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)
    shutil.copytree(
        ROOT / "jev_select",
        destination / "jev_select",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    pinned = []
    for name in wheelhouse.runtime_closure(c.DISTRIBUTION_NAME):
        distribution = metadata.distribution(name)
        pinned.append((name, distribution.version, wheelhouse.repack(distribution, wheels)))
    (destination / "requirements.lock").write_text(
        wheelhouse.requirements_lock(pinned), encoding="utf-8"
    )
    uv_wheel = wheelhouse.repack(metadata.distribution("uv"), wheels)
    key = load_installer().platform_key()
    (destination / "action" / "installer.lock").write_text(
        f"# Test lock\n{key} {uv_wheel.name} sha256:{wheelhouse.sha256_file(uv_wheel)} "
        f"https://files.pythonhosted.org/packages/test/{uv_wheel.name}\n",
        encoding="utf-8",
    )
    return destination


def locked_versions(lock: Path) -> list[tuple[str, str]]:
    pins = []
    for line in lock.read_text(encoding="utf-8").splitlines():
        match = re.match(r"([A-Za-z0-9._-]+)==([^\s\\]+)", line)
        if match:
            pins.append((match.group(1), match.group(2)))
    return pins


def make_job(root: Path) -> Job:
    sentinels = root / "sentinels"
    workspace = root / "workspace"
    runner_temp = root / "runner-temp"
    home = root / "home"
    forged = root / "forged"
    wheels = root / "wheels"
    for directory in (sentinels, workspace, runner_temp, home, forged, wheels):
        directory.mkdir()
    action_path = copy_action(root / "action", wheels)
    user_site = home / ".local" / "lib" / "python3.11" / "site-packages"
    user_site.mkdir(parents=True)
    for directory, where in (
        (workspace, "workspace"),
        (runner_temp, "runner-temp"),
        (user_site, "user-site"),
    ):
        plant_modules(directory, sentinels, where)
        plant_configuration(directory, forged)
    for config in (home / ".config" / "pip", home / ".config" / "uv", home / ".pip"):
        config.mkdir(parents=True)
        plant_configuration(config, forged)
    for name, version in locked_versions(action_path / "requirements.lock"):
        forge_wheel(forged, name, version, sentinels)
    plant_program(workspace / "hostile-venv" / "bin" / "python", sentinels, "virtual-env-python")
    plant_program(workspace / "bin" / "python3.11", sentinels, "uv-python")
    launcher = plant_launcher_venv(workspace / "launcher-venv", sentinels)
    hostile_env = {
        "PYTHONPATH": os.pathsep.join([str(workspace), str(user_site)]),
        "PYTHONSTARTUP": str(workspace / "sitecustomize.py"),
        "PYTHONUSERBASE": str(home / ".local"),
        "PYTHONNOUSERSITE": "",
        "PIP_CONFIG_FILE": str(workspace / "pip.conf"),
        "PIP_INDEX_URL": UNREACHABLE_INDEX,
        "PIP_EXTRA_INDEX_URL": UNREACHABLE_INDEX,
        "PIP_FIND_LINKS": str(forged),
        "PIP_TARGET": str(workspace / "pip-target"),
        "PIP_REQUIRE_HASHES": "0",
        "UV_CONFIG_FILE": str(workspace / "uv.toml"),
        "UV_INDEX_URL": UNREACHABLE_INDEX,
        "UV_DEFAULT_INDEX": UNREACHABLE_INDEX,
        "UV_EXTRA_INDEX_URL": UNREACHABLE_INDEX,
        "UV_FIND_LINKS": str(forged),
        "UV_NO_VERIFY_HASHES": "1",
        "UV_INDEX_STRATEGY": "unsafe-best-match",
        "UV_PYTHON": str(workspace / "bin" / "python3.11"),
        "UV_CACHE_DIR": str(workspace / "uv-cache"),
        "UV_LINK_MODE": "symlink",
        "VIRTUAL_ENV": str(workspace / "hostile-venv"),
        "CONDA_PREFIX": str(workspace / "hostile-venv"),
        "XDG_CONFIG_HOME": str(home / ".config"),
        # Not PYTHON*, so -I leaves it in force: the interpreter takes the planted environment
        # as its own and runs its .pth files.
        "__PYVENV_LAUNCHER__": str(launcher),
        "SSLKEYLOGFILE": str(sentinels / "tls-key-log"),
        "GIT_TRACE": str(sentinels / "git-trace"),
        "GIT_PYTHON_GIT_EXECUTABLE": str(workspace / "bin" / "python3.11"),
    }
    return Job(root, action_path, wheels, workspace, runner_temp, home, sentinels, hostile_env)


def bundle_action(job: Job) -> list[Path]:
    """Both parts of the bundle, the shared one and this platform's, built into the job's action
    path from the job's wheels, as the release workflow builds them into a release commit."""
    result = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "bundle.py"),
            "build",
            "--root",
            str(job.action_path),
            "--wheelhouse",
            str(job.wheels),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return [Path(line) for line in result.stdout.splitlines()]


@dataclass(frozen=True)
class Installed:
    job: Job
    result: subprocess.CompletedProcess[str]
    source: str  # "index": requirements.lock through uv; "bundle": the action's dist/

    @property
    def runner_temp(self) -> Path:
        return self.job.runner_temp


# Both ways the install step can go run the whole module: an action checkout without dist/
# (uv, the hash-checked lock) and a release checkout with a bundle for this interpreter.
@pytest.fixture(scope="module", params=["index", "bundle"])
def installed(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Installed:
    job = make_job(tmp_path_factory.mktemp("job"))
    if request.param == "bundle":
        bundle_action(job)
    return Installed(job, job.run("install", {}), request.param)


def import_roots(site: Path) -> list[str]:
    """site-packages and the archives its jev-select.pth adds to the path (a bundled install)."""
    path_file = site / "jev-select.pth"
    lines = path_file.read_text(encoding="utf-8").splitlines() if path_file.exists() else []
    return [str(site), *(str(site / line) for line in lines)]


def sentinels_of(job: Job) -> dict[str, str]:
    return {path.name: path.read_text() for path in sorted(job.sentinels.iterdir())}


# ------------------------------------------------------------------------------------------
# Step 2: install
# ------------------------------------------------------------------------------------------


def test_install_step_succeeds_in_a_hostile_job(installed: Installed) -> None:
    assert installed.result.returncode == 0, installed.result.stderr
    assert installed.result.stdout == ""
    assert installed.result.stderr == ""


def test_no_planted_code_runs_during_the_install(installed: Installed) -> None:
    # Checked again after the plan step, with the key in the environment.
    assert sentinels_of(installed.job) == {}


def test_install_step_creates_the_private_environment_under_runner_temp(
    installed: Installed,
) -> None:
    venv = installed.runner_temp / "jev-select-venv"
    assert "include-system-site-packages = false" in (venv / "pyvenv.cfg").read_text()
    python = venv / "bin" / "python"
    probe = subprocess.run(
        [
            str(python),
            "-I",
            "-c",
            "import importlib.metadata as m, jev_select, attrs, yaml; "
            "print(jev_select.__file__); print(attrs.__file__); "
            f"print(m.version({c.DISTRIBUTION_NAME!r}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=installed.job.workspace,
    )
    package, dependency, version = probe.stdout.splitlines()
    assert Path(package).is_relative_to(venv)
    assert Path(dependency).is_relative_to(venv)
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    assert version == pyproject["project"]["version"]


def test_install_step_writes_nothing_into_the_workspace_or_home(installed: Installed) -> None:
    job = installed.job
    assert not (job.workspace / "pip-target").exists()
    assert not (job.workspace / "uv-cache").exists()
    assert not (job.home / ".cache").exists()
    assert not any(job.workspace.rglob("*.pyc")), "a planted module was imported"


def test_install_step_takes_only_the_locked_wheels(installed: Installed) -> None:
    venv = installed.runner_temp / "jev-select-venv"
    site = next((venv / "lib").glob("python3*/site-packages"))
    installed_names = {
        str(canonicalize_name(d.metadata["Name"]))
        for d in metadata.distributions(path=import_roots(site))
    }
    locked = {
        str(canonicalize_name(name))
        for name, _ in locked_versions(installed.job.action_path / "requirements.lock")
    }
    assert installed_names == locked | {c.DISTRIBUTION_NAME}
    assert not list(site.glob("*forged*"))


def test_a_bundled_install_runs_neither_uv_nor_the_index(installed: Installed) -> None:
    uv_used = (installed.runner_temp / "jev-select-uv").exists()
    site = next((installed.runner_temp / "jev-select-venv" / "lib").glob("python3*/site-packages"))
    assert uv_used == (installed.source == "index")
    for part in ("jev-select-runtime.zip", "jev-select-native.zip"):
        assert (site / part).is_file() == (installed.source == "bundle")
    if installed.source == "bundle":
        # The package is the checkout's, never a copy from the bundle.
        with zipfile.ZipFile(site / "jev-select.zip") as package:
            sources = {name for name in package.namelist() if not name.endswith(".pyc")}
        checkout = {
            path.relative_to(installed.job.action_path).as_posix()
            for path in (installed.job.action_path / "jev_select").rglob("*")
            if path.is_file()
        }
        assert sources == checkout


@pytest.mark.parametrize("target", ["dependency", "installer"])
def test_install_step_refuses_a_wheel_that_is_not_the_locked_file(
    tmp_path: Path, target: str
) -> None:
    job = make_job(tmp_path)
    if target == "installer":
        wheel = next(job.wheels.glob("uv-*.whl"))
    else:
        wheel = next(job.wheels.glob("attrs-*.whl"))
    with zipfile.ZipFile(wheel, "a") as archive:
        archive.writestr("extra.txt", "one more file")
    result = job.run("install", {})
    assert result.returncode != 0
    if target == "installer":
        assert result.stderr == (
            "jev-select: the action's install failed: "
            "the installer wheel does not match installer.lock\n"
        )
    venv = job.runner_temp / "jev-select-venv"
    assert not list(venv.glob("lib/python3*/site-packages/attrs"))
    assert sentinels_of(job) == {}


def test_a_planted_launcher_variable_takes_effect_without_the_scrub(tmp_path: Path) -> None:
    # The premise of the hostile job: -I alone does not stop __PYVENV_LAUNCHER__.
    sentinels = tmp_path / "sentinels"
    sentinels.mkdir()
    launcher = plant_launcher_venv(tmp_path / "launcher-venv", sentinels)
    subprocess.run(
        [BASE_PYTHON, "-I", "-c", "pass"],
        env={"PATH": os.environ.get("PATH", ""), "__PYVENV_LAUNCHER__": str(launcher)},
        check=True,
    )
    assert [path.name for path in sentinels.iterdir()] == ["pth@launcher-venv"]


def scrub_block(step_id: str) -> str:
    lines = step(step_id)["run"].splitlines()
    start = lines.index("shopt -s nocasematch")
    end = lines.index("shopt -u nocasematch")
    return "\n".join(lines[start : end + 1]) + "\n"


STEERING_VARIABLES = {
    "PYTHONPATH": "x",
    "PYTHONHOME": "x",
    "pythonstartup": "x",
    "PIP_INDEX_URL": "x",
    "UV_INDEX_URL": "x",
    "uv_find_links": "x",
    "VIRTUAL_ENV": "x",
    "VIRTUAL_ENV_PROMPT": "x",
    "CONDA_PREFIX": "x",
    "__PYVENV_LAUNCHER__": "x",
    "SSLKEYLOGFILE": "x",
    "GIT_TRACE": "x",
    "GIT_PYTHON_GIT_EXECUTABLE": "x",
}
KEPT_VARIABLES = {
    "HTTPS_PROXY": "http://proxy.example:3128",
    "NO_PROXY": "localhost",
    "SSL_CERT_FILE": "/etc/ssl/bundle.pem",
    "REQUESTS_CA_BUNDLE": "/etc/ssl/bundle.pem",
    "GITHUB_OUTPUT": "/tmp/out",
    "INPUT_API_KEY": "k",
    "HOME": "/home/runner",
}


@pytest.mark.parametrize("step_id", ["install", "plan"])
def test_each_step_clears_the_variables_that_steer_an_interpreter(
    tmp_path: Path, step_id: str
) -> None:
    script = scrub_block(step_id) + "env -0\n"
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), **STEERING_VARIABLES, **KEPT_VARIABLES}
    result = run_step(script, env, tmp_path)
    assert result.returncode == 0, result.stderr
    left = dict(entry.split("=", 1) for entry in result.stdout.split("\0") if entry)
    assert not set(STEERING_VARIABLES) & set(left)
    assert {name: left.get(name) for name in KEPT_VARIABLES} == KEPT_VARIABLES


def test_both_steps_clear_the_same_variables_as_the_installer() -> None:
    assert scrub_block("install") == scrub_block("plan")
    installer = load_installer()
    patterns = re.search(r"case \"\$name\" in\n\s*(\S+)\)", scrub_block("plan"))
    assert patterns is not None
    scrubbed_by_shell = {pattern.rstrip("*") for pattern in patterns.group(1).split("|")}
    assert scrubbed_by_shell == {
        prefix.rstrip("_") + ("_" if prefix.endswith("_") else "")
        for prefix in installer.SCRUBBED_PREFIXES
    } - {"__PYVENV"} | {"__PYVENV_LAUNCHER__"}


def install_in(job: Job, runner_temp: Path) -> subprocess.CompletedProcess[str]:
    spec = step("install")
    context = {**job.context(), "runner.temp": str(runner_temp)}
    env = job.env({"RUNNER_TEMP": str(runner_temp)}, spec, context)
    return run_step(spec["run"], env, runner_temp, script_dir=job.root)


FIXED_FAILURE = re.compile(r"jev-select: the action's install failed: [^\n]+\n")


@pytest.mark.parametrize("planted", ["symlink", "file", "dangling"])
def test_anything_but_a_directory_at_the_environment_path_stops_the_install_untouched(
    tmp_path: Path, planted: str
) -> None:
    (tmp_path / "job").mkdir()
    job = make_job(tmp_path / "job")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me", encoding="utf-8")
    target = job.runner_temp / "jev-select-venv"
    if planted == "symlink":
        target.symlink_to(victim, target_is_directory=True)
    elif planted == "dangling":
        target.symlink_to(tmp_path / "nowhere")
    else:
        target.write_text("not a directory", encoding="utf-8")
    result = job.run("install", {})
    assert result.returncode == 1
    assert result.stderr == (
        "jev-select: the action's install failed: $RUNNER_TEMP/jev-select-venv exists and is "
        "not a plain directory; it was left as it is\n"
    )
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "keep me"
    assert sorted(path.name for path in victim.iterdir()) == ["precious.txt"]
    assert target.is_symlink() or target.read_text(encoding="utf-8") == "not a directory"
    assert not (tmp_path / "nowhere").exists()
    assert sentinels_of(job) == {}


def test_a_left_over_environment_is_replaced_without_following_its_links(tmp_path: Path) -> None:
    (tmp_path / "job").mkdir()
    job = make_job(tmp_path / "job")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "precious.txt").write_text("keep me", encoding="utf-8")
    stale = job.runner_temp / "jev-select-venv"
    (stale / "lib").mkdir(parents=True)
    (stale / "lib" / "link").symlink_to(victim, target_is_directory=True)
    (stale / "pyvenv.cfg").write_text("home = /nowhere\n", encoding="utf-8")
    result = job.run("install", {})
    assert result.returncode == 0, result.stderr
    assert (victim / "precious.txt").read_text(encoding="utf-8") == "keep me"
    assert not (stale / "lib" / "link").exists()
    assert "include-system-site-packages = false" in (stale / "pyvenv.cfg").read_text()


def test_a_runner_temp_with_a_path_separator_is_a_fixed_diagnostic(tmp_path: Path) -> None:
    (tmp_path / "job").mkdir()
    job = make_job(tmp_path / "job")
    colon_temp = tmp_path / "runner:temp"
    colon_temp.mkdir()
    result = install_in(job, colon_temp)
    assert result.returncode == 1
    assert FIXED_FAILURE.fullmatch(result.stderr), result.stderr
    assert "RUNNER_TEMP contains ':'" in result.stderr
    assert "Traceback" not in result.stderr
    # Refused before anything is made there.
    assert list(colon_temp.iterdir()) == []


def test_every_step_runs_outside_the_workspace_and_every_python_isolated() -> None:
    for spec in load_action()["runs"]["steps"]:
        if "run" not in spec:
            continue
        assert spec.get("working-directory") == "${{ runner.temp }}", spec["id"]
        for line in spec["run"].splitlines():
            # A line that starts an interpreter names its program and then an argument.
            if re.search(
                r"python(\.exe)?\"? ", line, re.IGNORECASE
            ) and not line.lstrip().startswith("#"):
                assert line.lstrip().startswith("exec "), line
                assert " -I " in line, line


def test_the_installer_drops_every_python_pip_and_uv_variable() -> None:
    installer = load_installer()
    environ = {
        "PATH": "/usr/bin",
        "HOME": "/home/runner",
        "PYTHONPATH": "x",
        "PIP_INDEX_URL": "x",
        "UV_INDEX_URL": "x",
        "uv_find_links": "x",
        "VIRTUAL_ENV": "x",
        "CONDA_PREFIX": "x",
        "__PYVENV_LAUNCHER__": "x",
        "HTTPS_PROXY": "http://proxy:3128",
    }
    assert installer.scrubbed_environment(environ) == {
        "PATH": "/usr/bin",
        "HOME": "/home/runner",
        "HTTPS_PROXY": "http://proxy:3128",
    }


def test_the_installer_asks_uv_for_hashed_wheels_from_the_index_only() -> None:
    installer = load_installer()
    command = installer.uv_install_command(Path("/t/uv"), Path("/t/venv/bin/python"), None)
    assert command == [
        "/t/uv",
        "pip",
        "install",
        "--quiet",
        "--no-config",
        "--no-cache",
        "--python",
        "/t/venv/bin/python",
        "--require-hashes",
        "--only-binary",
        ":all:",
        "--index-url",
        "https://pypi.org/simple",
        "-r",
        str(LOCK_FILE),
    ]
    offline = installer.uv_install_command(Path("/t/uv"), Path("/p"), Path("/w"))
    assert offline[offline.index("--require-hashes") :][3:6] == ["--no-index", "--find-links", "/w"]


@pytest.mark.parametrize(
    ("system", "machine", "libc", "key"),
    [
        ("linux", "x86_64", "glibc", "linux-x86_64-gnu"),
        ("linux", "x86_64", "", "linux-x86_64-musl"),
        ("linux", "aarch64", "glibc", "linux-aarch64"),
        ("darwin", "arm64", "", "darwin-arm64"),
        ("darwin", "x86_64", "", "darwin-x86_64"),
        ("win32", "AMD64", "", "windows-amd64"),
        ("win32", "ARM64", "", "windows-arm64"),
    ],
)
def test_every_runner_platform_has_an_installer_pin(
    monkeypatch: pytest.MonkeyPatch, system: str, machine: str, libc: str, key: str
) -> None:
    installer = load_installer()
    monkeypatch.setattr(installer.layout.sys, "platform", system)
    monkeypatch.setattr(installer.layout.platform, "machine", lambda: machine)
    monkeypatch.setattr(installer.layout.platform, "libc_ver", lambda: (libc, ""))
    assert installer.platform_key() == key
    name, digest, url = installer.installer_pin(installer.INSTALLER_LOCK, key)
    assert re.fullmatch(r"[0-9a-f]{64}", digest)
    assert url.startswith("https://files.pythonhosted.org/packages/")
    assert url.endswith("/" + name)


# ------------------------------------------------------------------------------------------
# Step 3: plan
# ------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PlanRun:
    result: subprocess.CompletedProcess[str]
    outputs: list[tuple[str, str]]
    summary: str
    runner_temp: Path


def run_plan(installed: Installed, tmp_path: Path, overrides: Mapping[str, str]) -> PlanRun:
    event = tmp_path / "event.json"
    event.write_text(json.dumps({"ref": "refs/heads/main"}), encoding="utf-8")
    output_file = tmp_path / "github_output"
    output_file.write_text("", encoding="utf-8")
    summary_file = tmp_path / "step_summary"
    summary_file.write_text("", encoding="utf-8")
    result = installed.job.run(
        "plan",
        {
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "octo/widgets",
            "GITHUB_SHA": GITHUB_SHA,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary_file),
        },
        input_context(overrides),
    )
    return PlanRun(
        result,
        parse_github_output(output_file.read_text(encoding="utf-8")),
        summary_file.read_text(encoding="utf-8"),
        installed.runner_temp,
    )


@pytest.fixture(scope="module")
def bypass_run(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> PlanRun:
    assert installed.result.returncode == 0, installed.result.stderr
    return run_plan(
        installed,
        tmp_path_factory.mktemp("bypass-run"),
        {
            c.INPUT_TASKS: TASKS,
            c.INPUT_API_KEY: API_KEY_SENTINEL,
            c.INPUT_ALLOW_EXTERNAL_CONTEXT: c.BOOL_TRUE,
        },
    )


def test_plan_step_publishes_the_bypass_plan(bypass_run: PlanRun) -> None:
    assert bypass_run.result.returncode == 0, bypass_run.result.stdout
    assert bypass_run.result.stderr == ""
    outputs = dict(bypass_run.outputs)
    assert [name for name, _ in bypass_run.outputs] == [*c.OUTPUTS, "docs", "unit"]
    assert outputs[c.OUTPUT_RUN] == '{"docs":true,"unit":true}'
    assert outputs[c.OUTPUT_SELECTED] == '["docs","unit"]'
    assert outputs[c.OUTPUT_MATRIX] == '{"include":[{"task":"docs"},{"task":"unit"}]}'
    assert outputs[c.OUTPUT_HAS_TASKS] == c.BOOL_TRUE
    assert outputs[c.OUTPUT_STATUS] == c.STATUS_BYPASSED
    assert outputs[c.OUTPUT_TESTED_SHA] == GITHUB_SHA
    assert outputs["docs"] == outputs["unit"] == c.BOOL_TRUE


def test_every_declared_action_output_resolves(bypass_run: PlanRun) -> None:
    published = {f"steps.plan.outputs.{name}": value for name, value in bypass_run.outputs}
    for name, declared in load_action()["outputs"].items():
        assert substitute(declared["value"], published) == dict(bypass_run.outputs)[name]


def test_report_outputs_and_plan_block_agree(bypass_run: PlanRun) -> None:
    outputs = dict(bypass_run.outputs)
    report_path = Path(outputs[c.OUTPUT_REPORT_PATH])
    assert report_path.is_absolute()
    assert report_path.parent.parent == bypass_run.runner_temp
    report = json.loads(report_path.read_text(encoding="utf-8"))
    assert report["version"] == c.REPORT_VERSION
    assert report["status"] == outputs[c.OUTPUT_STATUS]
    assert report["tested_sha"] == outputs[c.OUTPUT_TESTED_SHA]
    run_map = json.loads(outputs[c.OUTPUT_RUN])
    assert {task: decision["run"] for task, decision in report["tasks"].items()} == run_map
    for decision in report["tasks"].values():
        assert decision["reasons"] == [c.REASON_NON_PULL_REQUEST]
        assert decision["proposed_run"] is None
    block = read_plan_block(bypass_run.summary, expected_tested_sha=outputs[c.OUTPUT_TESTED_SHA])
    assert block is not None
    assert dict(block.run) == run_map
    assert list(block.selected) == json.loads(outputs[c.OUTPUT_SELECTED])
    assert block.status == outputs[c.OUTPUT_STATUS]
    assert block.selection_hash == report["selection_hash"]


def test_plan_step_masks_the_key_and_leaks_no_secret(bypass_run: PlanRun) -> None:
    stdout_lines = bypass_run.result.stdout.splitlines()
    assert f"::add-mask::{API_KEY_SENTINEL}" in stdout_lines
    assert f"::add-mask::{TOKEN_SENTINEL}" in stdout_lines
    unmasked = [line for line in stdout_lines if not line.startswith("::add-mask::")]
    report = Path(dict(bypass_run.outputs)[c.OUTPUT_REPORT_PATH]).read_text(encoding="utf-8")
    published = "\n".join(
        [*unmasked, bypass_run.summary, report, *(value for _, value in bypass_run.outputs)]
    )
    for secret in (API_KEY_SENTINEL, TOKEN_SENTINEL):
        assert secret not in published
    assert "Runs the unit tests" not in published


def test_no_planted_code_runs_or_reads_the_key(installed: Installed, bypass_run: PlanRun) -> None:
    assert bypass_run.result.returncode == 0
    assert sentinels_of(installed.job) == {}


def test_inputs_never_reach_the_shell(bypass_run: PlanRun) -> None:
    assert bypass_run.result.returncode == 0
    assert not (bypass_run.runner_temp / "pwned").exists()


def test_plan_step_fails_closed_on_an_invalid_input(installed: Installed, tmp_path: Path) -> None:
    run = run_plan(installed, tmp_path, {c.INPUT_TASKS: TASKS, c.INPUT_MODE: "Enforce"})
    assert run.result.returncode == 1
    assert run.result.stdout.splitlines()[-1] == "::error::" + c.INPUT_ERROR_TEMPLATE.format(
        field=c.INPUT_MODE, constraint=c.INPUT_CONSTRAINTS[c.INPUT_MODE]
    )
    assert run.outputs == []
    assert run.summary == ""


def test_plan_step_prefers_the_windows_layout_when_present(tmp_path: Path) -> None:
    scripts = tmp_path / "jev-select-venv" / "Scripts"
    scripts.mkdir(parents=True)
    launcher = scripts / "python.exe"
    launcher.write_text('#!/bin/sh\necho "windows python: $*"\n', encoding="utf-8")
    launcher.chmod(0o755)
    plan = step("plan")
    env = runner_env({"RUNNER_TEMP": str(tmp_path)}, plan["env"], input_context({}))
    result = run_step(plan["run"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "windows python: -I -m jev_select plan\n"


# ------------------------------------------------------------------------------------------
# requirements.lock
# ------------------------------------------------------------------------------------------


def lock_pins() -> dict[str, tuple[str, list[str]]]:
    pins: dict[str, tuple[str, list[str]]] = {}
    current: str | None = None
    for raw in LOCK_FILE.read_text(encoding="utf-8").splitlines():
        line = raw.split(" #", 1)[0].strip().rstrip("\\").strip()
        if not line or line.startswith("#"):
            continue
        if line.startswith("--hash="):
            assert current is not None
            algorithm, digest = line.removeprefix("--hash=").split(":", 1)
            assert algorithm == "sha256"
            assert re.fullmatch(c.HEX64_PATTERN, digest), digest
            pins[current][1].append(digest)
            continue
        # An environment marker (``; python_full_version < '3.13'``) keeps the pin exact.
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)(?: ; [^;]+)?", line)
        assert match, f"only exact pins belong in the lock: {line!r}"
        current = str(canonicalize_name(match.group(1)))
        assert current not in pins, f"{current} pinned twice"
        pins[current] = (match.group(2), [])
    return pins


def test_lock_pins_every_package_with_hashes() -> None:
    pins = lock_pins()
    assert pins
    for name, (_, hashes) in pins.items():
        assert hashes, f"{name} has no hash"
        assert len(set(hashes)) == len(hashes)


def test_lock_satisfies_the_declared_dependency_ranges() -> None:
    pins = lock_pins()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    for text in pyproject["project"]["dependencies"]:
        requirement = Requirement(text)
        name = str(canonicalize_name(requirement.name))
        assert name in pins, f"{name} is missing from requirements.lock"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), name


def test_lock_covers_the_transitive_runtime_closure() -> None:
    missing = set(wheelhouse.runtime_closure(c.DISTRIBUTION_NAME)) - set(lock_pins())
    assert not missing, f"requirements.lock lacks {sorted(missing)}"


def test_lock_holds_no_build_backend() -> None:
    # The package is copied from the action's checkout, never built, in the job with the key.
    assert not {"setuptools", "wheel", "packaging"} & set(lock_pins())


def test_compiled_dependencies_list_wheels_for_every_runner_platform() -> None:
    # A pure-Python wheel has one file; a compiled dependency lists one per platform and
    # interpreter, so the action installs from wheels on Linux, macOS and Windows alike.
    pins = lock_pins()
    for compiled in ("pyyaml", "rpds-py", "charset-normalizer"):
        assert len(pins[compiled][1]) >= 20, compiled
