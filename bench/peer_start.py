"""Start-up of the composite action beside a bundled JavaScript action, both cold, on a push.

Two things run in turn, run 1 of A, run 1 of B, run 2 of A ..., so that the machine's load weighs
on both alike; the figures are medians of ``--runs``:

- **A**, this action as action.yml runs it on a push event without a key (a bypass: every task
  runs): its install step, then its plan step. Each step's ``run:`` script and ``env:`` block are
  taken from action.yml, the ``${{ }}`` expressions filled in from the action's input defaults
  and a runner-like context, and the script is run the way the runner runs a ``bash`` step
  (``bash --noprofile --norc -eo pipefail FILE`` in ``working-directory``). The interpreter is
  the base interpreter of the running Python (setup-python's step is not timed). Every run is
  cold: a fresh ``RUNNER_TEMP``, ``HOME`` and ``XDG_CACHE_HOME``; the install step itself clears
  every ``PIP_*`` and ``UV_*`` variable and uv runs with ``--no-cache``, so nothing is reused
  between runs. Packages come from https://pypi.org/simple over the network (as in
  ``install_time.py``, proxy and CA-bundle variables are passed through; nothing else of this
  machine's pip configuration reaches the step). The bytes this machine received on its
  non-loopback interfaces during each install are recorded as evidence of the download (a
  machine-wide counter, so an upper bound).
- **B**, dorny/paths-filter's committed ``dist/index.js``, started with ``node`` as the runner
  starts a node action (``INPUT_*`` for every input that has a default, ``INPUT_TOKEN`` empty so
  that it diffs with git rather than asking the API), deciding three filters on a real push: a
  clone of this repository's history whose event names ``HEAD~5`` as ``before``. The run must
  exit 0 and its outputs file must hold each filter's decision, equal to what ``git diff``
  between the same commits says; anything else stops the benchmark.

Both read the same push event. Also measured, in a copy of each run's freshly installed
environment made before the plan step starts: the import floor of the plan's libraries
(``python -I -c "import yaml, attrs, cattrs, jsonschema, requests, git, wcmatch"``), first in the
untouched copy (it compiles the bytecode, as the plan step's first start does) and once more
(bytecode present); and a second start of the plan step. After the runs, one more cold install
and two ``python -X importtime`` starts of the plan step's command (first, then second) show
what its imports spend.

Getting paths-filter: fetch ``dorny/paths-filter`` (a mirror or ``https://github.com/dorny/
paths-filter``) and clone it, e.g. ``git clone https://github.com/dorny/paths-filter
/tmp/peer/paths-filter``; nothing of it is copied into this repository.

    python bench/peer_start.py --paths-filter DIR [--runs 5]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from common import REPOSITORY, ROOT, median, table, write_results

EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
INDEX_URL = "https://pypi.org/simple"
FLOOR_IMPORTS = "import yaml, attrs, cattrs, jsonschema, requests, git, wcmatch"
# Variables the runner's own environment would provide for the network: passed through as
# install_time.py does (the install step does not clear them).
PASSED_THROUGH = (
    "HTTPS_PROXY",
    "https_proxy",
    "HTTP_PROXY",
    "http_proxy",
    "NO_PROXY",
    "no_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "REQUESTS_CA_BUNDLE",
)
TASKS = (
    "code:\n  description: Unit tests of the package.\n"
    "docs:\n  description: Build of the documentation.\n"
    "ci:\n  description: Lint of the workflow files.\n"
)
# paths-filter's filters, one per task above; each is a single ``<directory>/**`` pattern, so the
# expected decision is whether any changed path lies under that directory.
FILTERS = {"code": "jev_select", "docs": "docs", "ci": ".github"}
COMMITS_BACK = 5
FAKE_TOKEN = "ghs_" + "0" * 36  # never used: a push is a bypass that asks nobody
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")


@dataclass
class Sample:
    """One finished process: wall time, CPU time and peak RSS of its tree, exit code, output."""

    seconds: float
    cpu_seconds: float
    max_rss_kib: int
    code: int
    stdout: str
    stderr: str


def timed(command: Sequence[str], env: Mapping[str, str], cwd: Path) -> Sample:
    """Run ``command`` from fork to exit; ``wait4`` adds the children it waited for."""
    out_path = cwd.parent / f"{cwd.name}-stdout.txt"
    err_path = cwd.parent / f"{cwd.name}-stderr.txt"
    with out_path.open("wb") as out, err_path.open("wb") as err:
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command), env=dict(env), cwd=cwd, stdin=subprocess.DEVNULL, stdout=out, stderr=err
        )
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    return Sample(
        seconds=seconds,
        cpu_seconds=usage.ru_utime + usage.ru_stime,
        max_rss_kib=int(usage.ru_maxrss),
        code=process.returncode,
        stdout=out_path.read_text("utf-8", errors="replace"),
        stderr=err_path.read_text("utf-8", errors="replace"),
    )


def fail(what: str, sample: Sample) -> SystemExit:
    sys.stderr.write(sample.stdout[-3000:] + sample.stderr[-3000:])
    return SystemExit(f"{what} failed (exit code {sample.code})")


def received_bytes() -> int | None:
    """Bytes received on every non-loopback interface so far (Linux), else None."""
    try:
        lines = Path("/proc/net/dev").read_text("ascii").splitlines()[2:]
    except OSError:
        return None
    total = 0
    for line in lines:
        name, _, counters = line.partition(":")
        if name.strip() != "lo":
            total += int(counters.split()[0])
    return total


def read_outputs(path: Path) -> dict[str, str]:
    """A ``GITHUB_OUTPUT`` file: ``name=value`` lines and ``name<<DELIMITER`` blocks."""
    outputs: dict[str, str] = {}
    lines = path.read_text("utf-8").splitlines() if path.exists() else []
    index = 0
    while index < len(lines):
        line = lines[index]
        index += 1
        if "<<" in line and ("=" not in line or line.index("<<") < line.index("=")):
            name, delimiter = line.split("<<", 1)
            value: list[str] = []
            while index < len(lines) and lines[index] != delimiter:
                value.append(lines[index])
                index += 1
            index += 1
            outputs[name] = "\n".join(value)
        elif "=" in line:
            name, value_text = line.split("=", 1)
            outputs[name] = value_text
    return outputs


def git(workspace: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(workspace), *args], capture_output=True, text=True, check=True
    ).stdout


# ------------------------------------------------------------------------------------------
# The shared push event and runner environment.
# ------------------------------------------------------------------------------------------


@dataclass
class Push:
    workspace: Path
    event_path: Path
    branch: str
    before: str
    after: str
    expected: dict[str, bool]
    changed_files: int


def prepare_push(root: Path) -> Push:
    """A clone of this repository's committed history and a push event over its last commits."""
    workspace = root / "workspace"
    subprocess.run(["git", "clone", "--quiet", str(ROOT), str(workspace)], check=True)
    after = git(workspace, "rev-parse", "HEAD").strip()
    depth = int(git(workspace, "rev-list", "--count", "HEAD"))
    before = git(workspace, "rev-parse", f"HEAD~{min(COMMITS_BACK, depth - 1)}").strip()
    branch = git(workspace, "rev-parse", "--abbrev-ref", "HEAD").strip()
    changed = git(workspace, "diff", "--no-renames", "--name-only", f"{before}..{after}")
    paths = [path for path in changed.splitlines() if path]
    expected = {
        name: any(path.startswith(directory + "/") for path in paths)
        for name, directory in FILTERS.items()
    }
    event = {
        "ref": f"refs/heads/{branch}",
        "before": before,
        "after": after,
        "created": False,
        "deleted": False,
        "forced": False,
        "repository": {"full_name": REPOSITORY, "default_branch": branch},
        "head_commit": {"id": after},
    }
    event_path = root / "event.json"
    event_path.write_text(json.dumps(event), "utf-8")
    return Push(workspace, event_path, branch, before, after, expected, len(paths))


def runner_environment(run_root: Path, push: Push, step: str) -> dict[str, str]:
    """What the runner gives one step: a fresh HOME, RUNNER_TEMP, cache and file commands."""
    home = run_root / "home"
    temp = run_root / "runner-temp"
    commands = temp / "_runner_file_commands"
    for directory in (home, temp, commands, run_root / "cache"):
        directory.mkdir(parents=True, exist_ok=True)
    files = {name: commands / f"{name.lower()}_{step}" for name in ("OUTPUT", "STEP_SUMMARY")}
    for name in ("ENV", "PATH", "STATE"):
        files[name] = commands / f"{name.lower()}_{step}"
    for path in files.values():
        path.touch()
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": str(home),
        "LANG": "C.UTF-8",
        "XDG_CACHE_HOME": str(run_root / "cache"),
        "CI": "true",
        "RUNNER_TEMP": str(temp),
        "RUNNER_TOOL_CACHE": str(run_root / "tool-cache"),
        "RUNNER_OS": "Linux",
        "RUNNER_ARCH": "X64",
        "GITHUB_ACTIONS": "true",
        "GITHUB_EVENT_NAME": "push",
        "GITHUB_EVENT_PATH": str(push.event_path),
        "GITHUB_REF": f"refs/heads/{push.branch}",
        "GITHUB_SHA": push.after,
        "GITHUB_REPOSITORY": REPOSITORY,
        "GITHUB_REPOSITORY_OWNER": REPOSITORY.split("/")[0],
        "GITHUB_SERVER_URL": "https://github.com",
        "GITHUB_API_URL": "https://api.github.com",
        "GITHUB_WORKSPACE": str(push.workspace),
        "GITHUB_RUN_ID": "1",
        "GITHUB_RUN_ATTEMPT": "1",
        "GITHUB_WORKFLOW": "bench",
        "GITHUB_JOB": "select",
    }
    env.update({f"GITHUB_{name}": str(path) for name, path in files.items()})
    env.update({name: os.environ[name] for name in PASSED_THROUGH if name in os.environ})
    return env


# ------------------------------------------------------------------------------------------
# A: the composite action's install and plan steps.
# ------------------------------------------------------------------------------------------


def action_steps() -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """The install step, the plan step and the input defaults of action.yml."""
    action = yaml.safe_load((ROOT / "action.yml").read_text("utf-8"))
    steps = {step.get("id"): step for step in action["runs"]["steps"]}
    if "install" not in steps or "plan" not in steps:
        raise SystemExit("action.yml has no install or plan step")
    defaults = {name: str(spec.get("default", "")) for name, spec in action["inputs"].items()}
    return steps["install"], steps["plan"], defaults


def substitute(text: str, context: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        if match.group(1) not in context:
            raise SystemExit(f"action.yml uses an expression the benchmark cannot fill: {text}")
        return context[match.group(1)]

    return EXPRESSION.sub(value, text)


def step_context(python: str, temp: Path, defaults: Mapping[str, str]) -> dict[str, str]:
    context = {
        "steps.python.outputs.python-path": python,
        "github.action_path": str(ROOT),
        "github.token": FAKE_TOKEN,
        "runner.temp": str(temp),
    }
    inputs = {**defaults, "tasks": TASKS, "api-key": ""}
    for name, value in inputs.items():
        context[f"inputs.{name}"] = substitute(value, context)
    return context


def run_step(
    step: Mapping[str, Any], name: str, base: Mapping[str, str], context: Mapping[str, str]
) -> Sample:
    """One ``shell: bash`` step of a composite action, as the runner starts it."""
    if step.get("shell") != "bash":
        raise SystemExit(f"the {name} step is not a bash step")
    temp = Path(base["RUNNER_TEMP"])
    env = {**base, "GITHUB_ACTION_PATH": str(ROOT), "GITHUB_ACTION": name}
    for variable, value in step.get("env", {}).items():
        env[variable] = substitute(str(value), context)
    script = temp / f"step-{name}.sh"
    script.write_text(str(step["run"]), "utf-8")
    workdir = Path(substitute(str(step.get("working-directory", str(temp))), context))
    return timed(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env, workdir)


def copy_environment(venv: Path, destination: Path) -> Path:
    """A copy of a freshly installed environment (no bytecode yet); return its interpreter."""
    shutil.copytree(venv, destination, symlinks=True)
    return destination / "bin" / "python"


@dataclass
class ARun:
    install: Sample
    plan: Sample
    plan_again: Sample
    floor_first: Sample
    floor_again: Sample
    received: int | None


def run_a(run_root: Path, push: Push, python: str) -> ARun:
    install_step, plan_step, defaults = action_steps()
    env = runner_environment(run_root, push, "install")
    temp = Path(env["RUNNER_TEMP"])
    context = step_context(python, temp, defaults)
    before = received_bytes()
    install = run_step(install_step, "install", env, context)
    after = received_bytes()
    if install.code != 0:
        raise fail("the install step", install)
    venv = temp / "jev-select-venv"
    floor_python = copy_environment(venv, run_root / "floor-venv")

    env = runner_environment(run_root, push, "plan")
    plan = run_step(plan_step, "plan", env, context)
    outputs = read_outputs(Path(env["GITHUB_OUTPUT"]))
    if plan.code != 0 or outputs.get("status") != "bypassed":
        raise fail(f"the plan step (status {outputs.get('status')!r})", plan)
    if json.loads(outputs.get("run", "{}")) != {name: True for name in FILTERS}:
        raise fail("the plan step (not every task runs)", plan)
    again_env = runner_environment(run_root, push, "plan-again")
    plan_again = run_step(plan_step, "plan", again_env, context)
    if plan_again.code != 0:
        raise fail("the second plan step", plan_again)

    floor = [str(floor_python), "-I", "-c", FLOOR_IMPORTS]
    floor_first = timed(floor, env, temp)
    floor_again = timed(floor, env, temp)
    if floor_first.code != 0 or floor_again.code != 0:
        raise fail("the import floor", floor_first if floor_first.code else floor_again)
    received = after - before if before is not None and after is not None else None
    return ARun(install, plan, plan_again, floor_first, floor_again, received)


@dataclass
class ImportProfile:
    """One ``-X importtime`` run of the plan step."""

    wall_ms: float
    imports_ms: float  # the sum of every module's own time
    top_level: list[tuple[str, float]]  # cumulative ms of the imports made at the top level
    packages: list[tuple[str, float]]  # own ms summed per top-level package


def import_profile(sample: Sample, count: int) -> ImportProfile:
    top_level: list[tuple[str, float]] = []
    packages: dict[str, float] = {}
    for line in sample.stderr.splitlines():
        match = _IMPORT_LINE.match(line)
        if match is None:
            continue
        if len(match[3]) == 1:
            # Imported at the top level (not from inside another import): no time counted twice.
            top_level.append((match[4], int(match[2]) / 1000))
        package = match[4].split(".")[0]
        packages[package] = packages.get(package, 0.0) + int(match[1]) / 1000
    return ImportProfile(
        wall_ms=round(sample.seconds * 1000, 1),
        imports_ms=round(sum(packages.values()), 1),
        top_level=sorted(top_level, key=lambda item: -item[1])[:count],
        packages=sorted(packages.items(), key=lambda item: -item[1])[:count],
    )


def import_profiles(
    run_root: Path, push: Push, python: str, count: int
) -> tuple[ImportProfile, ImportProfile]:
    """The plan step's interpreter run directly with -X importtime: first start, then again."""
    install_step, plan_step, defaults = action_steps()
    env = runner_environment(run_root, push, "install")
    temp = Path(env["RUNNER_TEMP"])
    context = step_context(python, temp, defaults)
    install = run_step(install_step, "install", env, context)
    if install.code != 0:
        raise fail("the install step", install)
    interpreter = temp / "jev-select-venv" / "bin" / "python"
    profiles = []
    for step in ("plan", "plan-again"):
        plan_env = runner_environment(run_root, push, step)
        for variable, value in plan_step.get("env", {}).items():
            plan_env[variable] = substitute(str(value), context)
        command = [str(interpreter), "-I", "-X", "importtime", "-m", "jev_select", "plan"]
        sample = timed(command, plan_env, temp)
        if sample.code != 0:
            raise fail("the plan step under -X importtime", sample)
        profiles.append(import_profile(sample, count))
    return profiles[0], profiles[1]


# ------------------------------------------------------------------------------------------
# B: paths-filter's bundled dist/index.js under node.
# ------------------------------------------------------------------------------------------


@dataclass
class Peer:
    script: Path
    using: str
    defaults: dict[str, str]
    commit: str | None


def load_peer(directory: Path) -> Peer:
    action_file = directory / "action.yml"
    if not action_file.is_file():
        raise SystemExit(f"{directory} has no action.yml: is it a checkout of dorny/paths-filter?")
    action = yaml.safe_load(action_file.read_text("utf-8"))
    using = str(action["runs"]["using"])
    if not using.startswith("node"):
        raise SystemExit(f"{action_file} is not a node action ({using})")
    script = directory / str(action["runs"]["main"])
    if not script.is_file():
        raise SystemExit(f"{script} is missing")
    defaults = {
        name: str(spec["default"])
        for name, spec in action.get("inputs", {}).items()
        if "default" in spec
    }
    found = subprocess.run(
        ["git", "-C", str(directory), "rev-parse", "HEAD"], capture_output=True, text=True
    )
    commit = found.stdout.strip() if found.returncode == 0 else None
    return Peer(script, using, defaults, commit)


def run_b(run_root: Path, push: Push, peer: Peer, node: str) -> Sample:
    env = runner_environment(run_root, push, "paths-filter")
    inputs = {
        **peer.defaults,
        "token": "",
        "filters": "".join(f"{name}: ['{path}/**']\n" for name, path in FILTERS.items()),
    }
    for name, value in inputs.items():
        # The runner's naming, which @actions/core reads back: spaces become _, hyphens stay.
        env["INPUT_" + name.replace(" ", "_").upper()] = value
    env["GITHUB_ACTION_PATH"] = str(peer.script.parent.parent)
    env["GITHUB_ACTION"] = "paths-filter"
    sample = timed([node, str(peer.script)], env, push.workspace)
    outputs = read_outputs(Path(env["GITHUB_OUTPUT"]))
    decided = {name: outputs.get(name) for name in FILTERS}
    expected = {name: "true" if value else "false" for name, value in push.expected.items()}
    if sample.code != 0 or decided != expected:
        sys.stderr.write(f"paths-filter decided {decided}, git diff says {expected}\n")
        raise fail("paths-filter", sample)
    return sample


# ------------------------------------------------------------------------------------------


def ms(samples: Sequence[Sample]) -> list[float]:
    return [round(sample.seconds * 1000, 1) for sample in samples]


def cpu_ms(samples: Sequence[Sample]) -> list[float]:
    return [round(sample.cpu_seconds * 1000, 1) for sample in samples]


def row(label: str, samples: Sequence[Sample], *, rss: bool = False) -> list[Any]:
    wall = ms(samples)
    peak: object = max(sample.max_rss_kib for sample in samples) // 1024 if rss else "-"
    return [label, median(wall), min(wall), max(wall), median(cpu_ms(samples)), peak]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--paths-filter",
        type=Path,
        required=True,
        help="a checkout of dorny/paths-filter (git clone https://github.com/dorny/paths-filter)",
    )
    options = parser.parse_args()
    runs = max(1, options.runs)
    node = shutil.which("node")
    if node is None:
        raise SystemExit("node is not on PATH; B cannot run")
    node_version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    peer = load_peer(options.paths_filter.resolve())
    python = getattr(sys, "_base_executable", sys.executable)
    python_version = subprocess.run(
        [python, "-I", "-c", "import platform; print(platform.python_version())"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()

    a_runs: list[ARun] = []
    b_runs: list[Sample] = []
    with tempfile.TemporaryDirectory(prefix="jev-bench-peer-") as temp_name:
        root = Path(temp_name)
        push = prepare_push(root)
        for number in range(runs):
            a = run_a(root / f"a-{number}", push, python)
            a_runs.append(a)
            b = run_b(root / f"b-{number}", push, peer, node)
            b_runs.append(b)
            print(
                f"run {number + 1}: A install {a.install.seconds * 1000:7.1f} ms, "
                f"plan {a.plan.seconds * 1000:6.1f} ms; B {b.seconds * 1000:6.1f} ms",
                flush=True,
            )
        cold, warm = import_profiles(root / "importtime", push, python, 5)

    install_ms = ms([a.install for a in a_runs])
    plan_ms = ms([a.plan for a in a_runs])
    total_ms = [round(i + p, 1) for i, p in zip(install_ms, plan_ms, strict=True)]
    plan_again_ms = ms([a.plan_again for a in a_runs])
    floor_first_ms = ms([a.floor_first for a in a_runs])
    floor_again_ms = ms([a.floor_again for a in a_runs])
    b_ms = ms(b_runs)
    a_median, b_median = median(total_ms), median(b_ms)
    rows = [
        row("A: install step (cold, PyPI)", [a.install for a in a_runs]),
        row("A: plan step (first start)", [a.plan for a in a_runs], rss=True),
        ["A: install + plan", a_median, min(total_ms), max(total_ms), "-", "-"],
        row("B: paths-filter dist/index.js", b_runs, rss=True),
        row("A: plan step, second start", [a.plan_again for a in a_runs], rss=True),
        row("import floor, first", [a.floor_first for a in a_runs]),
        row("import floor, again", [a.floor_again for a in a_runs]),
    ]
    received = [a.received for a in a_runs]
    print()
    print(
        f"push event, {runs} runs interleaved; A: Python {python_version}, B: node "
        f"{node_version.strip()} (the action asks for {peer.using}); "
        f"{push.changed_files} files changed between {push.before[:7]} and {push.after[:7]}"
    )
    print(table(["what", "median ms", "min ms", "max ms", "cpu ms", "peak RSS MiB"], rows))
    install_share = median(install_ms) / a_median
    print(
        f"A / B = {a_median / b_median:.1f}x ({a_median:.0f} ms / {b_median:.0f} ms); "
        f"A is {install_share:.0%} install, {1 - install_share:.0%} plan"
    )
    print(
        f"plan / import floor: first start {median(plan_ms) / median(floor_first_ms):.2f}, "
        f"second start {median(plan_again_ms) / median(floor_again_ms):.2f}"
    )
    if all(value is not None for value in received):
        print(f"received during each install (machine-wide): {received} bytes")
    for label, profile in (("first start", cold), ("second start", warm)):
        print(
            f"plan step under -X importtime, {label}: {profile.wall_ms:.0f} ms wall, "
            f"{profile.imports_ms:.0f} ms in imports (own times summed)"
        )
        print(
            "  top-level imports, cumulative: "
            + ", ".join(f"{name} {value:.1f}" for name, value in profile.top_level)
        )
        print(
            "  own time per package: "
            + ", ".join(f"{name} {value:.1f}" for name, value in profile.packages)
        )
    path = write_results(
        "peer_start",
        {
            "runs": runs,
            "python_action": python_version,
            "node": node_version.strip(),
            "paths_filter": {"commit": peer.commit, "using": peer.using},
            "push": {
                "before": push.before,
                "after": push.after,
                "changed_files": push.changed_files,
                "expected": push.expected,
            },
            "index": INDEX_URL,
            "install_received_bytes": received,
            "a_install_ms": install_ms,
            "a_install_cpu_ms": cpu_ms([a.install for a in a_runs]),
            "a_plan_ms": plan_ms,
            "a_plan_cpu_ms": cpu_ms([a.plan for a in a_runs]),
            "a_plan_peak_rss_kib": [a.plan.max_rss_kib for a in a_runs],
            "a_total_ms": total_ms,
            "a_plan_second_start_ms": plan_again_ms,
            "floor_first_ms": floor_first_ms,
            "floor_again_ms": floor_again_ms,
            "b_ms": b_ms,
            "b_cpu_ms": cpu_ms(b_runs),
            "b_peak_rss_kib": [b.max_rss_kib for b in b_runs],
            "a_median_ms": a_median,
            "b_median_ms": b_median,
            "ratio_a_b": round(a_median / b_median, 2),
            "install_share": round(install_share, 3),
            "plan_to_floor_first": round(median(plan_ms) / median(floor_first_ms), 2),
            "plan_to_floor_again": round(median(plan_again_ms) / median(floor_again_ms), 2),
            "importtime_first_start": asdict(cold),
            "importtime_second_start": asdict(warm),
        },
    )
    print(f"results: {path}")


if __name__ == "__main__":
    main()
