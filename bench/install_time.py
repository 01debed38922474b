"""Wall time of the action's install step, cold (empty pip cache) and warm (cache populated).

Runs the `run:` script of the `install` step of action.yml for real, against PyPI, with the
environment the runner would give it: a fresh RUNNER_TEMP per run, and RUNNER_TOOL_CACHE either
fresh (cold) or shared with an earlier, uncounted priming run (warm). The package is copied to a
temporary "action path" first, as the runner checks the action out, so the in-tree build leaves
the working tree alone. This machine's pip configuration is ignored so that only PyPI is used.

    python bench/install_time.py [--runs N] [--output bench/results/install_time.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "bench" / "results" / "install_time.json"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
ACTION_FILES = ("action.yml", "requirements.lock", "pyproject.toml", "README.md", "LICENSE")


def install_step() -> dict[str, Any]:
    action = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    for step in action["runs"]["steps"]:
        if step.get("id") == "install":
            assert isinstance(step, dict)
            return step
    raise SystemExit("action.yml has no install step")


def copy_action(destination: Path) -> Path:
    destination.mkdir(parents=True)
    for name in ACTION_FILES:
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, destination / name)
    shutil.copytree(
        ROOT / "jev_select",
        destination / "jev_select",
        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"),
    )
    return destination


def step_env(
    step: Mapping[str, Any], *, python: str, action_path: Path, temp: Path, tool_cache: Path
) -> dict[str, str]:
    context = {"steps.python.outputs.python-path": python, "github.action_path": str(action_path)}
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(temp),
        "LANG": "C.UTF-8",
        "RUNNER_TEMP": str(temp),
        "RUNNER_TOOL_CACHE": str(tool_cache),
        # Only PyPI: no machine-wide index mirrors or local wheel folders.
        "PIP_CONFIG_FILE": os.devnull,
    }
    # Reaching PyPI may need the machine's proxy and CA bundle.
    for proxy in (
        "HTTPS_PROXY",
        "https_proxy",
        "NO_PROXY",
        "no_proxy",
        "SSL_CERT_FILE",
        "REQUESTS_CA_BUNDLE",
        "PIP_CERT",
    ):
        if proxy in os.environ:
            env[proxy] = os.environ[proxy]
    for name, value in step["env"].items():
        env[name] = EXPRESSION.sub(lambda match: context[match.group(1)], str(value))
    return env


def run_once(step: Mapping[str, Any], *, python: str, action_path: Path, tool_cache: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="jev-install-bench-") as temp_name:
        temp = Path(temp_name)
        script = temp / "step.sh"
        script.write_text(step["run"], encoding="utf-8")
        env = step_env(
            step, python=python, action_path=action_path, temp=temp, tool_cache=tool_cache
        )
        started = time.monotonic()
        result = subprocess.run(
            ["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)],
            env=env,
            cwd=temp,
            capture_output=True,
            text=True,
            check=False,
        )
        elapsed = time.monotonic() - started
        if result.returncode != 0:
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit(f"install step failed with exit code {result.returncode}")
        venv_python = temp / "jev-select-venv" / "bin" / "python"
        check = subprocess.run(
            [str(venv_python), "-I", "-m", "jev_select", "--version"],
            capture_output=True,
            text=True,
            check=False,
        )
        if check.returncode != 0:
            raise SystemExit("the installed jev-select does not start")
        return elapsed


def venv_only(python: str) -> float:
    """The interpreter's own share: creating the virtual environment, pip included."""
    with tempfile.TemporaryDirectory(prefix="jev-install-venv-") as temp_name:
        started = time.monotonic()
        subprocess.run(
            [python, "-m", "venv", "--clear", str(Path(temp_name) / "venv")],
            capture_output=True,
            check=True,
        )
        return time.monotonic() - started


def measure(runs: int, python: str) -> dict[str, list[float]]:
    step = install_step()
    timings: dict[str, list[float]] = {"cold": [], "warm": [], "venv-only": []}
    for _ in range(runs):
        timings["venv-only"].append(venv_only(python))
    with tempfile.TemporaryDirectory(prefix="jev-install-action-") as action_root:
        action_path = copy_action(Path(action_root) / "jev-select")
        for _ in range(runs):
            with tempfile.TemporaryDirectory(prefix="jev-install-cold-cache-") as cache:
                timings["cold"].append(
                    run_once(step, python=python, action_path=action_path, tool_cache=Path(cache))
                )
        with tempfile.TemporaryDirectory(prefix="jev-install-warm-cache-") as cache:
            run_once(step, python=python, action_path=action_path, tool_cache=Path(cache))
            for _ in range(runs):
                timings["warm"].append(
                    run_once(step, python=python, action_path=action_path, tool_cache=Path(cache))
                )
    return timings


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    python = getattr(sys, "_base_executable", sys.executable)
    timings = measure(args.runs, python)

    print(f"{'run':<9} {'runs':>4} {'median s':>9} {'min s':>7} {'max s':>7}")
    summary: dict[str, dict[str, Any]] = {}
    for mode, values in timings.items():
        summary[mode] = {
            "runs_s": [round(value, 3) for value in values],
            "median_s": round(statistics.median(values), 3),
        }
        print(
            f"{mode:<9} {len(values):>4} {statistics.median(values):>9.2f} "
            f"{min(values):>7.2f} {max(values):>7.2f}"
        )
    result = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "index": "https://pypi.org/simple",
        **summary,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
