"""Wall time from the start of the action's install step to `jev-select` running, cold.

Measures, in one run and interleaved (run 1 of every variant, then run 2 of every variant ...), so
that the machine's load weighs on all of them alike:

- ``old``: the install step of action.yml at ``--old-rev`` (default: the last commit before the
  install was reworked): a venv with pip, pip installing the lock, then building the package;
- ``new``: today's install step (``action/install.py``: uv pinned by hash, a venv without pip,
  the package copied from the checkout), as action.yml runs it;
- the other candidates the rework considered, each installing the same ``requirements.lock``
  with hash checking, wheels only:
  ``new+bytecode`` (uv with ``--compile-bytecode``),
  ``pip --python`` (``python -m venv --without-pip`` + the base interpreter's pip),
  ``pip --target`` (no venv: the base interpreter's pip into a directory).

Every run is cold: a fresh RUNNER_TEMP (``old``: an empty pip cache in a fresh tool cache, as
before; the pip candidates ``--no-cache-dir``; uv ``--no-cache``);
packages come from https://pypi.org/simple (this machine's pip configuration is ignored). The
time ends when ``<interpreter> -I -m jev_select --version`` (``jev-select --version`` for ``old``)
has answered: the command is running. The action is copied to a temporary action path first, as
the runner checks it out. Running the package from the checkout through a ``.pth`` file instead of
copying it could save at most the copy, which is timed on its own (``copy-package``).

    python bench/install_time.py [--runs N] [--old-rev REV] [--only VARIANT] [--output FILE]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import platform
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_OUTPUT = ROOT / "bench" / "results" / "install_time.json"
# The last commit whose action installed with pip into a venv with pip and built the package.
DEFAULT_OLD_REV = "a80c6aca8322d74a33ed7fa6580e2b86cc95c9cc"
EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
INDEX_URL = "https://pypi.org/simple"
PASSED_THROUGH = (
    "HTTPS_PROXY",
    "https_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)


def export_tree(rev: str | None, destination: Path) -> Path:
    """The action path: the repository's files at ``rev`` (None: the working tree)."""
    if rev is None:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True
        ).stdout.decode("utf-8")
        for name in filter(None, listed.split("\0")):
            source = ROOT / name
            if source.is_file() and not source.is_symlink():
                target = destination / name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        return destination
    archive = subprocess.run(
        ["git", "archive", "--format=tar", rev], cwd=ROOT, capture_output=True, check=True
    ).stdout
    destination.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(destination, filter="data")
    return destination


def install_step(action_path: Path) -> dict[str, Any]:
    action = yaml.safe_load((action_path / "action.yml").read_text(encoding="utf-8"))
    for step in action["runs"]["steps"]:
        if step.get("id") == "install":
            assert isinstance(step, dict)
            return step
    raise SystemExit("action.yml has no install step")


def base_env(temp: Path) -> dict[str, str]:
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(temp),
        "LANG": "C.UTF-8",
        "RUNNER_TEMP": str(temp),
        "RUNNER_TOOL_CACHE": str(temp / "tool-cache"),
        # Only PyPI: no machine-wide index mirrors or local wheel folders.
        "PIP_CONFIG_FILE": os.devnull,
    }
    env.update({name: os.environ[name] for name in PASSED_THROUGH if name in os.environ})
    if "SSL_CERT_FILE" in os.environ:
        env["PIP_CERT"] = os.environ["SSL_CERT_FILE"]
    return env


def run(command: list[str], env: Mapping[str, str], cwd: Path) -> None:
    result = subprocess.run(
        command, env=dict(env), cwd=cwd, capture_output=True, text=True, check=False
    )
    if result.returncode != 0:
        sys.stderr.write(result.stdout[-3000:] + result.stderr[-3000:])
        raise SystemExit(f"failed: {' '.join(command[:4])} ... ({result.returncode})")


def run_step(step: Mapping[str, Any], python: str, action_path: Path, temp: Path) -> None:
    context = {
        "steps.python.outputs.python-path": python,
        "github.action_path": str(action_path),
        "runner.temp": str(temp),
    }
    env = base_env(temp)
    for name, value in step.get("env", {}).items():
        env[name] = EXPRESSION.sub(lambda match: context[match.group(1)], str(value))
    script = temp / "step.sh"
    script.write_text(step["run"], encoding="utf-8")
    workdir = EXPRESSION.sub(
        lambda match: context[match.group(1)], step.get("working-directory", str(temp))
    )
    run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env, Path(workdir))


def venv_bin(temp: Path) -> Path:
    return temp / "jev-select-venv" / "bin"


# ------------------------------------------------------------------------------------------
# Variants: each installs into ``temp`` and returns the command that shows jev-select running.
# ------------------------------------------------------------------------------------------

Variant = Callable[[str, Path, Path], list[str]]


def old_step(python: str, action_path: Path, temp: Path) -> list[str]:
    run_step(install_step(action_path), python, action_path, temp)
    return [str(venv_bin(temp) / "jev-select"), "--version"]


def new_step(python: str, action_path: Path, temp: Path) -> list[str]:
    run_step(install_step(action_path), python, action_path, temp)
    return [str(venv_bin(temp) / "python"), "-I", "-m", "jev_select", "--version"]


def new_with_bytecode(python: str, action_path: Path, temp: Path) -> list[str]:
    run(
        [python, "-I", str(action_path / "action" / "install.py"), "--compile-bytecode"],
        base_env(temp),
        temp,
    )
    return [str(venv_bin(temp) / "python"), "-I", "-m", "jev_select", "--version"]


def copy_package(action_path: Path, site: Path) -> None:
    shutil.copytree(action_path / "jev_select", site / "jev_select")


def pip_python(python: str, action_path: Path, temp: Path) -> list[str]:
    env = base_env(temp)
    run([python, "-I", "-m", "venv", "--without-pip", str(temp / "jev-select-venv")], env, temp)
    target = venv_bin(temp) / "python"
    run(
        [
            python,
            "-m",
            "pip",
            "--python",
            str(target),
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--require-hashes",
            "--only-binary",
            ":all:",
            "--no-deps",
            "--index-url",
            INDEX_URL,
            "-r",
            str(action_path / "requirements.lock"),
        ],
        env,
        temp,
    )
    site = next((temp / "jev-select-venv").glob("lib/python3*/site-packages"))
    copy_package(action_path, site)
    return [str(target), "-I", "-m", "jev_select", "--version"]


def pip_target(python: str, action_path: Path, temp: Path) -> list[str]:
    env = base_env(temp)
    site = temp / "jev-select-target"
    run(
        [
            python,
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-cache-dir",
            "--require-hashes",
            "--only-binary",
            ":all:",
            "--no-deps",
            "--target",
            str(site),
            "--index-url",
            INDEX_URL,
            "-r",
            str(action_path / "requirements.lock"),
        ],
        env,
        temp,
    )
    copy_package(action_path, site)
    code = (
        f"import sys; sys.path.insert(0, {str(site)!r}); sys.argv[0] = 'jev-select'; "
        "from jev_select.cli import main; raise SystemExit(main())"
    )
    return [python, "-I", "-c", code, "--version"]


VARIANTS: dict[str, Variant] = {
    "old": old_step,
    "new": new_step,
    "new+bytecode": new_with_bytecode,
    "pip --python": pip_python,
    "pip --target": pip_target,
}


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def measure_once(variant: Variant, python: str, action_path: Path) -> tuple[float, float]:
    """Wall time and CPU time (user + system, every process) of one cold install and start."""
    with tempfile.TemporaryDirectory(prefix="jev-install-bench-") as temp_name:
        temp = Path(temp_name)
        cpu_before = children_cpu()
        started = time.monotonic()
        check = variant(python, action_path, temp)
        result = subprocess.run(check, capture_output=True, text=True, cwd=temp, check=False)
        elapsed = time.monotonic() - started
        cpu = children_cpu() - cpu_before
        if result.returncode != 0 or not result.stdout.startswith("jev-select "):
            sys.stderr.write(result.stdout + result.stderr)
            raise SystemExit("the installed jev-select does not start")
        return elapsed, cpu


def copy_cost(action_path: Path) -> float:
    with tempfile.TemporaryDirectory(prefix="jev-install-copy-") as temp_name:
        started = time.monotonic()
        copy_package(action_path, Path(temp_name))
        return time.monotonic() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--old-rev", default=DEFAULT_OLD_REV)
    parser.add_argument("--only", action="append", choices=sorted(VARIANTS), default=None)
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    args = parser.parse_args(argv)
    python = getattr(sys, "_base_executable", sys.executable)
    names = args.only or list(VARIANTS)
    timings: dict[str, list[float]] = {name: [] for name in names}
    cpu_times: dict[str, list[float]] = {name: [] for name in names}
    copies: list[float] = []
    with tempfile.TemporaryDirectory(prefix="jev-install-action-") as root:
        new_path = export_tree(None, Path(root) / "new" / "jev-select")
        old_path = export_tree(args.old_rev, Path(root) / "old" / "jev-select")
        for run_number in range(args.runs):
            for name in names:
                path = old_path if name == "old" else new_path
                wall, cpu = measure_once(VARIANTS[name], python, path)
                timings[name].append(wall)
                cpu_times[name].append(cpu)
                print(
                    f"run {run_number + 1} {name:<13} {wall:6.2f} s wall {cpu:6.2f} s cpu",
                    flush=True,
                )
            copies.append(copy_cost(new_path))

    print()
    print(
        f"{'variant':<13} {'runs':>4} {'median s':>9} {'min s':>7} {'max s':>7} "
        f"{'vs old':>7} {'cpu s':>6}"
    )
    summary: dict[str, dict[str, Any]] = {}
    old_median = statistics.median(timings["old"]) if "old" in timings else None
    for name, values in timings.items():
        median = statistics.median(values)
        ratio = f"{old_median / median:6.1f}x" if old_median else "      -"
        summary[name] = {
            "runs_s": [round(value, 3) for value in values],
            "median_s": round(median, 3),
            "cpu_runs_s": [round(value, 3) for value in cpu_times[name]],
            "cpu_median_s": round(statistics.median(cpu_times[name]), 3),
        }
        if old_median:
            summary[name]["speedup_vs_old"] = round(old_median / median, 2)
        print(
            f"{name:<13} {len(values):>4} {median:>9.2f} {min(values):>7.2f} "
            f"{max(values):>7.2f} {ratio} {statistics.median(cpu_times[name]):>6.2f}"
        )
    print(f"copy-package (inside new): median {statistics.median(copies) * 1000:.0f} ms")
    if old_median and "new" in timings:
        new_median = statistics.median(timings["new"])
        print(
            f"old {old_median:.2f} s -> new {new_median:.2f} s: "
            f"{old_median / new_median:.1f}x faster (medians of {args.runs} cold runs)"
        )
    result = {
        "measured_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        "index": INDEX_URL,
        "old_rev": args.old_rev,
        "copy_package_median_s": round(statistics.median(copies), 4),
        "variants": summary,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    print(f"written: {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
