"""The scripts of action.yml, run with bash the way the runner runs composite steps.

Step 2 (install) runs verbatim except for its two pip commands, which are replaced by a stub that
records their arguments and links the already-installed packages into the new virtual
environment: the tests stay offline. Step 3 (plan) runs verbatim against the real `jev-select`
console script with a `push` event (the bypass path: no git, no network).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
import yaml
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

from jev_select import contracts as c
from jev_select.core.plan_block import read_plan_block

ROOT = Path(__file__).resolve().parents[2]
LOCK_FILE = ROOT / "requirements.lock"
BASH = shutil.which("bash")
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
PIP_STUB = """\
jev_select_stub_pip() {
  local python="$1" bin site
  shift 3  # the interpreter, then "-m pip"
  printf '%s\\0' "$@" >> "$JEV_TEST_PIP_LOG"
  printf '%s\\n' "${PIP_CACHE_DIR:-}" >> "$JEV_TEST_PIP_CACHE_LOG"
  bin="$(dirname "$python")"
  for site in "$bin"/../lib/python3*/site-packages; do
    if [ -d "$site" ]; then
      printf '%s\\n%s\\n' "$JEV_TEST_SITE_PACKAGES" "$JEV_TEST_SOURCE_ROOT" > "$site/jev-test.pth"
    fi
  done
  printf '#!%s\\nimport sys\\nfrom jev_select.cli import main\\nsys.exit(main())\\n' \\
    "$python" > "$bin/jev-select"
  chmod +x "$bin/jev-select"
}
"""

pytestmark = pytest.mark.skipif(BASH is None, reason="bash is required")


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
    script: str, env: Mapping[str, str], workdir: Path
) -> subprocess.CompletedProcess[str]:
    # The runner writes the script to a file and runs `bash --noprofile --norc -eo pipefail {0}`.
    script_file = workdir / "step.sh"
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


def with_stubbed_pip(script: str) -> str:
    pip_call = '"$venv_python" -m pip install'
    assert script.count(pip_call) == 2, "the install step runs pip exactly twice"
    return PIP_STUB + script.replace(pip_call, 'jev_select_stub_pip "$venv_python" -m pip install')


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


@dataclass(frozen=True)
class Installed:
    runner_temp: Path
    tool_cache: Path
    result: subprocess.CompletedProcess[str]
    pip_calls: list[list[str]]
    pip_cache_dirs: list[str]


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    runner_temp = tmp_path_factory.mktemp("runner-temp")
    tool_cache = tmp_path_factory.mktemp("tool-cache")
    workdir = tmp_path_factory.mktemp("install-step")
    install = step("install")
    pip_log = workdir / "pip.log"
    cache_log = workdir / "cache.log"
    context = {
        "steps.python.outputs.python-path": sys.executable,
        "github.action_path": str(ROOT),
    }
    env = runner_env(
        {
            "HOME": str(workdir),
            "RUNNER_TEMP": str(runner_temp),
            "RUNNER_TOOL_CACHE": str(tool_cache),
            "JEV_TEST_PIP_LOG": str(pip_log),
            "JEV_TEST_PIP_CACHE_LOG": str(cache_log),
            "JEV_TEST_SITE_PACKAGES": sysconfig.get_paths()["purelib"],
            "JEV_TEST_SOURCE_ROOT": str(ROOT),
        },
        install["env"],
        context,
    )
    result = run_step(with_stubbed_pip(install["run"]), env, workdir)
    calls = [] if not pip_log.exists() else pip_log.read_text().rstrip("\0").split("\0")
    split_calls: list[list[str]] = []
    for argument in calls:
        if argument == "install":
            split_calls.append([])
        split_calls[-1].append(argument)
    cache_dirs = cache_log.read_text().splitlines() if cache_log.exists() else []
    return Installed(runner_temp, tool_cache, result, split_calls, cache_dirs)


# ------------------------------------------------------------------------------------------
# Step 2: install
# ------------------------------------------------------------------------------------------


def test_install_step_creates_the_venv_under_runner_temp(installed: Installed) -> None:
    assert installed.result.returncode == 0, installed.result.stderr
    venv = installed.runner_temp / "jev-select-venv"
    assert (venv / "pyvenv.cfg").is_file()
    assert os.access(venv / "bin" / "python", os.X_OK)


def test_install_step_installs_the_lock_with_hashes_then_the_package(
    installed: Installed,
) -> None:
    assert installed.pip_calls == [
        [
            "install",
            "--quiet",
            "--require-hashes",
            "--only-binary",
            ":all:",
            "-r",
            f"{ROOT}/requirements.lock",
        ],
        ["install", "--quiet", "--no-deps", "--no-build-isolation", str(ROOT)],
    ]


def test_install_step_reuses_a_pip_cache_in_the_tool_cache(installed: Installed) -> None:
    expected = f"{installed.tool_cache}/jev-select-pip-cache"
    assert installed.pip_cache_dirs == [expected, expected]


def test_install_step_keeps_a_caller_pip_cache_dir(tmp_path: Path) -> None:
    install = step("install")
    script = with_stubbed_pip(install["run"]).replace(
        '"$JEV_SELECT_PYTHON" -m venv --clear "$venv"', 'mkdir -p "$venv/bin"'
    )
    env = runner_env(
        {
            "RUNNER_TEMP": str(tmp_path),
            "RUNNER_TOOL_CACHE": str(tmp_path / "tools"),
            "PIP_CACHE_DIR": str(tmp_path / "mine"),
            "JEV_TEST_PIP_LOG": str(tmp_path / "pip.log"),
            "JEV_TEST_PIP_CACHE_LOG": str(tmp_path / "cache.log"),
        },
        install["env"],
        {"steps.python.outputs.python-path": sys.executable, "github.action_path": str(ROOT)},
    )
    result = run_step(script, env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "cache.log").read_text().splitlines() == [str(tmp_path / "mine")] * 2


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
    plan = step("plan")
    env = runner_env(
        {
            "HOME": str(tmp_path),
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": "push",
            "GITHUB_EVENT_PATH": str(event),
            "GITHUB_REPOSITORY": "octo/widgets",
            "GITHUB_SHA": GITHUB_SHA,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_OUTPUT": str(output_file),
            "GITHUB_STEP_SUMMARY": str(summary_file),
            "RUNNER_TEMP": str(installed.runner_temp),
        },
        plan["env"],
        input_context(overrides),
    )
    result = run_step(plan["run"], env, tmp_path)
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
    launcher = scripts / "jev-select.exe"
    launcher.write_text('#!/bin/sh\necho "windows launcher: $*"\n', encoding="utf-8")
    launcher.chmod(0o755)
    plan = step("plan")
    env = runner_env({"RUNNER_TEMP": str(tmp_path)}, plan["env"], input_context({}))
    result = run_step(plan["run"], env, tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "windows launcher: plan\n"


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
        match = re.fullmatch(r"([A-Za-z0-9._-]+)==([A-Za-z0-9.+!-]+)", line)
        assert match, f"only exact pins belong in the lock: {line!r}"
        current = str(canonicalize_name(match.group(1)))
        assert current not in pins, f"{current} pinned twice"
        pins[current] = (match.group(2), [])
    return pins


def runtime_closure() -> set[str]:
    """Names of jev-select's runtime dependencies, transitively, as installed here."""
    environment = {"extra": "", "python_version": "3.11", "python_full_version": "3.11.0"}
    seen: set[str] = set()
    pending = [Requirement(text) for text in metadata.requires(c.DISTRIBUTION_NAME) or []]
    while pending:
        requirement = pending.pop()
        if requirement.marker and not requirement.marker.evaluate(environment):
            continue
        name = str(canonicalize_name(requirement.name))
        if name in seen:
            continue
        seen.add(name)
        pending.extend(Requirement(text) for text in metadata.requires(name) or [])
    return seen


def test_lock_pins_every_package_with_hashes() -> None:
    pins = lock_pins()
    assert pins
    for name, (_, hashes) in pins.items():
        assert hashes, f"{name} has no hash"
        assert len(set(hashes)) == len(hashes)


def test_lock_satisfies_the_declared_dependency_ranges() -> None:
    pins = lock_pins()
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    declared = [
        *pyproject["project"]["dependencies"],
        *pyproject["build-system"]["requires"],
    ]
    for text in declared:
        requirement = Requirement(text)
        name = str(canonicalize_name(requirement.name))
        assert name in pins, f"{name} is missing from requirements.lock"
        assert requirement.specifier.contains(pins[name][0], prereleases=True), name


def test_lock_covers_the_transitive_runtime_closure() -> None:
    missing = runtime_closure() - set(lock_pins())
    assert not missing, f"requirements.lock lacks {sorted(missing)}"


def test_compiled_dependencies_list_wheels_for_every_runner_platform() -> None:
    # A pure-Python wheel has one file; a compiled dependency lists one per platform and
    # interpreter, so the action installs from wheels on Linux, macOS and Windows alike.
    pins = lock_pins()
    for compiled in ("pyyaml", "rpds-py", "charset-normalizer"):
        assert len(pins[compiled][1]) >= 20, compiled
