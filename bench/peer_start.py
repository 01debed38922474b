"""Start-up of the composite action beside a bundled JavaScript action, both cold, on a push.

Three things run in turn, run 1 of A-bundle, of B and of A-index, then run 2 of each ..., so that
the machine's load weighs on all alike; the figures are medians of ``--runs``:

- **A**, this action as action.yml runs it on a push event without a key (a bypass: every task
  runs): its install step, then its plan step, from two copies of the action made for the run:
  **bundle**, a copy carrying ``dist/`` as a release commit does (scripts/bundle.py builds the
  bundle of this machine's interpreter and platform from the locked wheels, before any timing),
  and **index**, a copy without ``dist/``, which installs ``requirements.lock`` from
  https://pypi.org/simple with uv. Each step's ``run:`` script and ``env:`` block are taken from
  action.yml, the ``${{ }}`` expressions filled in from the action's input defaults and a
  runner-like context, and the script is run the way the runner runs a ``bash`` step (``bash
  --noprofile --norc -eo pipefail FILE`` in ``working-directory``). The interpreter is the base
  interpreter of the running Python (setup-python's step is not timed). Every run is cold: a
  fresh ``RUNNER_TEMP``, ``HOME`` and ``XDG_CACHE_HOME``; the install step itself clears every
  ``PIP_*`` and ``UV_*`` variable and uv runs with ``--no-cache``, so nothing is reused between
  runs (proxy and CA-bundle variables are passed through, as in ``install_time.py``). The bytes
  this machine received on its non-loopback interfaces during each install are recorded as
  evidence of the download, or of its absence (a machine-wide counter, so an upper bound).
- **B**, dorny/paths-filter's committed ``dist/index.js``, started with ``node`` as the runner
  starts a node action (``INPUT_*`` for every input that has a default, ``INPUT_TOKEN`` empty so
  that it diffs with git rather than asking the API), deciding three filters on a real push: a
  clone of this repository's history whose event names ``HEAD~5`` as ``before``. The run must
  exit 0 and its outputs file must hold each filter's decision, equal to what ``git diff``
  between the same commits says; anything else stops the benchmark.

All read the same push event. Also measured, for each A, in a copy of the freshly installed
environment made before the plan step starts: the import floor of the plan's libraries
(``python -I -c "import yaml, attrs, cattrs, jsonschema, requests, git, wcmatch"``), first in the
untouched copy (it compiles whatever bytecode is missing, as the plan step's first start does)
and once more; and a second start of the plan step. After the runs, one more cold install of
each and two ``python -X importtime`` starts of the plan step's command (first, then second)
show what its imports spend.

Getting paths-filter: fetch ``dorny/paths-filter`` (a mirror or ``https://github.com/dorny/
paths-filter``) and clone it, e.g. ``git clone https://github.com/dorny/paths-filter
/tmp/peer/paths-filter``; nothing of it is copied into this repository. ``--wheelhouse DIR``
builds the bundle from the locked wheels in DIR instead of fetching them (their hashes are
checked against requirements.lock either way).

    python bench/peer_start.py --paths-filter DIR [--runs 5] [--wheelhouse DIR]
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import yaml
from common import ROOT, median, table, write_results
from peer_runs import (
    FILTERS,
    Push,
    Sample,
    action_archive,
    fail,
    prepare_push,
    read_outputs,
    received_bytes,
    release_dist,
    runner_environment,
    timed,
    unpack,
)

EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")
INDEX_URL = "https://pypi.org/simple"
FLOOR_IMPORTS = "import yaml, attrs, cattrs, jsonschema, requests, git, wcmatch"
TASKS = (
    "code:\n  description: Unit tests of the package.\n"
    "docs:\n  description: Build of the documentation.\n"
    "ci:\n  description: Lint of the workflow files.\n"
)
FAKE_TOKEN = "ghs_" + "0" * 36  # never used: a push is a bypass that asks nobody
_IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
# What an action checkout holds that the two steps read.
ACTION_FILES = ("action.yml", "pyproject.toml", "README.md", "LICENSE", "requirements.lock")
PATHS = ("bundle", "index")
# The three archives whose unpack is timed: a release commit's, the same without dist/, and
# paths-filter's at its checkout's HEAD.
ARCHIVE_FILES = {
    "release": "release.tar.gz",
    "no-dist": "no-dist.tar.gz",
    "paths-filter": "pf.tar.gz",
}


# ------------------------------------------------------------------------------------------
# A: the composite action's install and plan steps.
# ------------------------------------------------------------------------------------------


def copy_action(destination: Path) -> Path:
    """An action checkout as ``uses:`` gets it: the steps' files, no bytecode, no ``dist/``."""
    destination.mkdir(parents=True)
    for name in ACTION_FILES:
        shutil.copy2(ROOT / name, destination / name)
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc")
    shutil.copytree(ROOT / "action", destination / "action", ignore=ignore)
    shutil.copytree(ROOT / "jev_select", destination / "jev_select", ignore=ignore)
    return destination


def build_bundle(action: Path, wheelhouse: Path | None) -> tuple[Path, Path]:
    """scripts/bundle.py, as the release workflow runs it, into the copy's ``dist/``: the shared
    part and this platform's."""
    source = ["--wheelhouse", str(wheelhouse)] if wheelhouse else ["--download"]
    command = [sys.executable, str(ROOT / "scripts" / "bundle.py"), "build", "--root", str(action)]
    subprocess.run([*command, *source], check=True, stdout=subprocess.DEVNULL)
    parts = sorted((action / "dist").glob("*.zip"))
    shared = [part for part in parts if part.name.endswith("-any.zip")]
    if len(parts) != 2 or len(shared) != 1:
        raise SystemExit("scripts/bundle.py made no bundle")
    return shared[0], next(part for part in parts if part not in shared)


def action_steps(action: Path) -> tuple[dict[str, Any], dict[str, Any], dict[str, str]]:
    """The install step, the plan step and the input defaults of action.yml."""
    loaded = yaml.safe_load((action / "action.yml").read_text("utf-8"))
    steps = {step.get("id"): step for step in loaded["runs"]["steps"]}
    if "install" not in steps or "plan" not in steps:
        raise SystemExit("action.yml has no install or plan step")
    defaults = {name: str(spec.get("default", "")) for name, spec in loaded["inputs"].items()}
    return steps["install"], steps["plan"], defaults


def substitute(text: str, context: Mapping[str, str]) -> str:
    def value(match: re.Match[str]) -> str:
        if match.group(1) not in context:
            raise SystemExit(f"action.yml uses an expression the benchmark cannot fill: {text}")
        return context[match.group(1)]

    return EXPRESSION.sub(value, text)


def step_context(
    python: str, temp: Path, defaults: Mapping[str, str], action: Path
) -> dict[str, str]:
    context = {
        "steps.python.outputs.python-path": python,
        "github.action_path": str(action),
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
    action = context["github.action_path"]
    env = {**base, "GITHUB_ACTION_PATH": action, "GITHUB_ACTION": name}
    for variable, value in step.get("env", {}).items():
        env[variable] = substitute(str(value), context)
    script = temp / f"step-{name}.sh"
    script.write_text(str(step["run"]), "utf-8")
    workdir = Path(substitute(str(step.get("working-directory", str(temp))), context))
    return timed(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(script)], env, workdir)


def copy_environment(venv: Path, destination: Path) -> Path:
    """A copy of a freshly installed environment, before any start; return its interpreter."""
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


def run_a(run_root: Path, push: Push, python: str, action: Path) -> ARun:
    install_step, plan_step, defaults = action_steps(action)
    env = runner_environment(run_root, push, "install")
    temp = Path(env["RUNNER_TEMP"])
    context = step_context(python, temp, defaults, action)
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
    run_root: Path, push: Push, python: str, count: int, action: Path
) -> tuple[ImportProfile, ImportProfile]:
    """The plan step's interpreter run directly with -X importtime: first start, then again."""
    install_step, plan_step, defaults = action_steps(action)
    env = runner_environment(run_root, push, "install")
    temp = Path(env["RUNNER_TEMP"])
    context = step_context(python, temp, defaults, action)
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


def summary(runs: Sequence[ARun], b_median: float) -> dict[str, Any]:
    """One A's figures: per-run lists, medians and the ratios the issue asks about."""
    install_ms = ms([a.install for a in runs])
    plan_ms = ms([a.plan for a in runs])
    total_ms = [round(i + p, 1) for i, p in zip(install_ms, plan_ms, strict=True)]
    total = median(total_ms)
    floor_first, floor_again = ms([a.floor_first for a in runs]), ms([a.floor_again for a in runs])
    return {
        "install_ms": install_ms,
        "install_cpu_ms": cpu_ms([a.install for a in runs]),
        "plan_ms": plan_ms,
        "plan_cpu_ms": cpu_ms([a.plan for a in runs]),
        "plan_peak_rss_kib": [a.plan.max_rss_kib for a in runs],
        "total_ms": total_ms,
        "plan_second_start_ms": ms([a.plan_again for a in runs]),
        "floor_first_ms": floor_first,
        "floor_again_ms": floor_again,
        "install_received_bytes": [a.received for a in runs],
        "median_total_ms": total,
        "median_install_ms": median(install_ms),
        "median_plan_ms": median(plan_ms),
        "ratio_to_b": round(total / b_median, 2),
        "install_share": round(median(install_ms) / total, 3),
        "plan_to_floor_first": round(median(plan_ms) / median(floor_first), 2),
        "plan_to_floor_again": round(median(plan_ms) / median(floor_again), 2),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--paths-filter",
        type=Path,
        required=True,
        help="a checkout of dorny/paths-filter (git clone https://github.com/dorny/paths-filter)",
    )
    parser.add_argument("--wheelhouse", type=Path, help="the locked wheels, instead of PyPI")
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

    a_runs: dict[str, list[ARun]] = {path: [] for path in PATHS}
    b_runs: list[Sample] = []
    profiles: dict[str, tuple[ImportProfile, ImportProfile]] = {}
    with tempfile.TemporaryDirectory(prefix="jev-bench-peer-") as temp_name:
        root = Path(temp_name)
        actions = {path: copy_action(root / f"action-{path}") for path in PATHS}
        wheelhouse = options.wheelhouse.resolve() if options.wheelhouse else None
        shared, platform_part = build_bundle(actions["bundle"], wheelhouse)
        prefix = f"jev-select-runtime-{sys.implementation.cache_tag}-"
        this_key = platform_part.name.removeprefix(prefix).removesuffix(".zip")
        dist = root / "release-dist"
        made = release_dist(actions["bundle"], dist, root / "platform-wheels", this_key)
        parts = {path.name: path.stat().st_size for path in sorted(dist.iterdir())}
        archives = {
            "release": action_archive(ROOT, root / ARCHIVE_FILES["release"], dist),
            "no-dist": action_archive(ROOT, root / ARCHIVE_FILES["no-dist"]),
            "paths-filter": action_archive(
                options.paths_filter.resolve(), root / ARCHIVE_FILES["paths-filter"]
            ),
        }
        push = prepare_push(root)
        for number in range(runs):
            line = [f"run {number + 1}:"]
            for path in PATHS:
                a = run_a(root / f"{path}-{number}", push, python, actions[path])
                a_runs[path].append(a)
                line.append(
                    f"A-{path} install {a.install.seconds * 1000:6.1f} ms, "
                    f"plan {a.plan.seconds * 1000:6.1f} ms;"
                )
                if path == PATHS[0]:
                    b = run_b(root / f"b-{number}", push, peer, node)
                    b_runs.append(b)
                    line.append(f"B {b.seconds * 1000:6.1f} ms;")
            print(" ".join(line).rstrip(";"), flush=True)
        unpacks: dict[str, list[Sample]] = {name: [] for name in archives}
        for number in range(runs):
            # Interleaved, as the runs above; each into a fresh directory.
            for name in archives:
                target = root / f"unpack-{name}-{number}"
                unpacks[name].append(unpack(root / ARCHIVE_FILES[name], target))
                shutil.rmtree(target)
        for path in PATHS:
            profiles[path] = import_profiles(
                root / f"importtime-{path}", push, python, 5, actions[path]
            )

    b_ms = ms(b_runs)
    b_median = median(b_ms)
    figures = {path: summary(a_runs[path], b_median) for path in PATHS}
    rows = []
    for path in PATHS:
        group, figure = a_runs[path], figures[path]
        source = "verified bundle" if path == "bundle" else "cold, PyPI"
        total_range = (min(figure["total_ms"]), max(figure["total_ms"]))
        rows += [
            row(f"A-{path}: install step ({source})", [a.install for a in group]),
            row(f"A-{path}: plan step (first start)", [a.plan for a in group], rss=True),
            [f"A-{path}: install + plan", figure["median_total_ms"], *total_range, "-", "-"],
            row(f"A-{path}: plan step, second start", [a.plan_again for a in group], rss=True),
            row(f"A-{path}: import floor, first", [a.floor_first for a in group]),
            row(f"A-{path}: import floor, again", [a.floor_again for a in group]),
        ]
    rows.insert(6, row("B: paths-filter dist/index.js", b_runs, rss=True))
    print()
    print(
        f"push event, {runs} runs interleaved; A: Python {python_version}, B: node "
        f"{node_version.strip()} (the action asks for {peer.using}); "
        f"{push.changed_files} files changed between {push.before[:7]} and {push.after[:7]}"
    )
    print(table(["what", "median ms", "min ms", "max ms", "cpu ms", "peak RSS MiB"], rows))
    for name in PATHS:
        figure = figures[name]
        share = figure["install_share"]
        print(
            f"A-{name} / B = {figure['ratio_to_b']:.1f}x ({figure['median_total_ms']:.0f} ms / "
            f"{b_median:.0f} ms); install {figure['median_install_ms']:.0f} ms ({share:.0%}), "
            f"plan {figure['median_plan_ms']:.0f} ms ({1 - share:.0%}); plan / import floor: "
            f"{figure['plan_to_floor_first']:.2f} (floor first), "
            f"{figure['plan_to_floor_again']:.2f} (floor again)"
        )
        received = figure["install_received_bytes"]
        if all(value is not None for value in received):
            print(f"  received during each install (machine-wide): {received} bytes")
        for label, profile in zip(("first start", "second start"), profiles[name], strict=True):
            print(
                f"  plan step under -X importtime, {label}: {profile.wall_ms:.0f} ms wall, "
                f"{profile.imports_ms:.0f} ms in imports (own times summed); top level: "
                + ", ".join(f"{name} {value:.1f}" for name, value in profile.top_level)
            )
            print(
                "    own time per package: "
                + ", ".join(f"{name} {value:.1f}" for name, value in profile.packages)
            )
    unpack_ms = {name: median(ms(samples)) for name, samples in unpacks.items()}
    extra_ms = round(unpack_ms["release"] - unpack_ms["no-dist"], 1)
    bundle_total = figures["bundle"]["median_total_ms"]
    counted = round(bundle_total + unpack_ms["release"], 1)
    b_counted = round(b_median + unpack_ms["paths-filter"], 1)
    sizes = ", ".join(f"{name} {size / 1e6:.2f} MB" for name, size in parts.items())
    print(f"release dist/: {sizes}")
    for key, how in made.items():
        print(f"  {key}: {how}")
    print(
        "action archive (tar.gz of git archive HEAD): "
        + ", ".join(f"{name} {size / 1e6:.2f} MB" for name, size in archives.items())
        + "; tar -xzf medians: "
        + ", ".join(f"{name} {value:.0f} ms" for name, value in unpack_ms.items())
    )
    print(
        f"bypass, archive unpack not counted: A-bundle / B = {bundle_total / b_median:.1f}x "
        f"({bundle_total:.0f} ms / {b_median:.0f} ms); dist/ adds {extra_ms:.0f} ms of unpack"
    )
    print(
        f"bypass, each action's archive unpack counted: A-bundle / B = {counted / b_counted:.1f}x "
        f"({bundle_total:.0f} + {unpack_ms['release']:.0f} ms / {b_median:.0f} + "
        f"{unpack_ms['paths-filter']:.0f} ms); the download of the archives is not counted"
    )
    results = write_results(
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
            "bundle": {"shared": shared.name, "platform": platform_part.name},
            "release_dist_bytes": parts,
            "release_parts_made": made,
            "archive_bytes": archives,
            "unpack_ms": {name: ms(samples) for name, samples in unpacks.items()},
            "unpack_median_ms": unpack_ms,
            "bypass_with_unpack": {
                "a_bundle_ms": counted,
                "b_ms": b_counted,
                "ratio": round(counted / b_counted, 2),
                "dist_unpack_ms": extra_ms,
            },
            "b_ms": b_ms,
            "b_cpu_ms": cpu_ms(b_runs),
            "b_peak_rss_kib": [b.max_rss_kib for b in b_runs],
            "b_median_ms": b_median,
            **{f"a_{name}": figures[name] for name in PATHS},
            **{
                f"importtime_{name}": [asdict(profile) for profile in profiles[name]]
                for name in PATHS
            },
        },
    )
    print(f"results: {results}")


if __name__ == "__main__":
    main()
