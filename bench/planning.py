"""Planning time outside Jev, by diff size and by task count, with peak memory and a plot.

Each point is a real ``jev-select plan`` process in local mode against a temporary repository,
talking to the HTTPS stand-in Jev of the test suite with no latency. Planning time is the
report's ``durations_ms.total`` minus ``durations_ms.jev`` (inputs, git, metadata, grouping,
policy and report); the whole-process wall time and the child's peak RSS are shown beside it.
Past 64 groups a diff is ``diff-too-large`` and falls back without asking Jev; that time counts.

    python bench/planning.py [--runs 3]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

from common import API_KEY, base_environment, median, run_product, table, write_results
from support.fakejev import FakeJev
from support.gitrepo import GitRepo

KIB = 1024
MIB = 1024 * KIB
DIFF_SIZES = (1 * KIB, 16 * KIB, 64 * KIB, 512 * KIB, 2 * MIB, 8 * MIB)
TASK_COUNTS = (1, 10, 100, 500)
SWEEP_TASKS = 10
SWEEP_DIFF = 16 * KIB
JOBS = 30
LINE = "x" * 60
# One changed line costs its old and new version in the patch.
CHANGED_LINE_BYTES = 2 * (len(LINE) + 8)
FILE_DIFF_BYTES = 16 * KIB


def workflow() -> str:
    lines = ["name: ci", "on: pull_request", "jobs:"]
    for index in range(JOBS):
        lines += [
            f"  job{index}:",
            "    runs-on: ubuntu-latest",
            "    steps:",
            "      - uses: ./.github/actions/setup",
            f"      - run: make test-{index}",
            f"        working-directory: src/mod{index}",
        ]
    return "\n".join(lines) + "\n"


SETUP_ACTION = "name: setup\ndescription: Installs the toolchain.\nruns:\n  using: composite\n"


def tasks_yaml(count: int) -> str:
    blocks = []
    for index in range(count):
        blocks.append(
            f"task{index}:\n"
            f"  description: Tests of module {index % JOBS} and the shared helpers it uses.\n"
            "  jobs:\n"
            "    - workflow: .github/workflows/ci.yml\n"
            f"      job: job{index % JOBS}\n"
        )
    return "".join(blocks)


def file_lines(lines: int, version: str) -> str:
    return "".join(f"{version} {number:06d} {LINE}\n" for number in range(lines))


def build_repository(root: Path, diff_bytes: int) -> tuple[GitRepo, str, str]:
    files = max(1, diff_bytes // FILE_DIFF_BYTES)
    per_file = diff_bytes // files
    lines = max(1, (per_file - 200) // CHANGED_LINE_BYTES)
    repo = GitRepo.init(root / "repo")
    base_files: dict[str | bytes, Any] = {
        ".github/workflows/ci.yml": workflow(),
        ".github/actions/setup/action.yml": SETUP_ACTION,
    }
    head_files: dict[str | bytes, Any] = {}
    for index in range(files):
        path = f"src/mod{index % JOBS}/part{index}.txt"
        base_files[path] = file_lines(lines, "old")
        head_files[path] = file_lines(lines, "new")
    base = repo.commit(base_files)
    head = repo.commit(head_files, parents=[base], branch="feature")
    return repo, base, head


def measure(
    root: Path, jev: FakeJev, *, diff_bytes: int, task_count: int, runs: int
) -> dict[str, Any]:
    repo, base, head = build_repository(root, diff_bytes)
    tasks_file = root / "tasks.yml"
    tasks_file.write_text(tasks_yaml(task_count), "utf-8")
    env = base_environment(root / "home")
    env["JEV_API_KEY"] = API_KEY
    assert jev.ca_bundle is not None
    env["REQUESTS_CA_BUNDLE"] = jev.ca_bundle
    env["TMPDIR"] = str(root)
    args = [
        "plan",
        "--tasks-file",
        str(tasks_file),
        "--repo",
        str(repo.path),
        "--base",
        base,
        "--head",
        head,
        "--allow-external-context",
        "--api-base-url",
        jev.base_url,
        "--max-diff-bytes",
        str(64 * MIB),
        "--timeout-ms",
        "600000",
    ]
    planning: list[float] = []
    wall: list[float] = []
    rss: list[int] = []
    report: dict[str, Any] = {}
    for _ in range(runs):
        run = run_product(args, env, root)
        if run.code != 0:
            raise SystemExit(f"plan failed: {run.stderr.strip()}")
        report = run.report()
        durations = report["durations_ms"]
        planning.append(durations["total"] - (durations["jev"] or 0.0))
        wall.append(run.seconds * 1000)
        rss.append(run.max_rss_kib)
    groups = len(report["observation"]["chunks"]) if report["observation"] else 0
    return {
        "target_diff_bytes": diff_bytes,
        "diff_bytes": report["diff_bytes"],
        "tasks": task_count,
        "status": report["status"],
        "observation_error": report["observation_error"],
        "groups": groups,
        "planning_ms": median(planning),
        "collection_ms": report["durations_ms"]["collection"],
        "wall_ms": median(wall),
        "peak_rss_kib": max(rss),
    }


# Okabe-Ito colours, a marker and a line style per series, so that no series hides another.
PLANNING_STYLE = {"color": "#D55E00", "marker": "o", "linestyle": "-", "zorder": 4}
WALL_STYLE = {"color": "#0072B2", "marker": "s", "linestyle": "--", "zorder": 3}
RSS_STYLE = {"color": "#009E73", "marker": "^", "linestyle": ":", "zorder": 2}


def plot(diff_rows: list[dict[str, Any]], task_rows: list[dict[str, Any]], path: Path) -> None:
    """Two panels (by patch size, by task count): planning and whole-process time on a log axis
    in ms, peak RSS on a secondary axis in MiB; one legend outside the axes. No point, no plot."""
    if not diff_rows or not task_rows:
        raise SystemExit("planning.py: no measured point to plot")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import FuncFormatter, LogFormatter, NullFormatter

    # 550 and 2,200, not 5.5 x 10^2 or 549.945.
    plain = FuncFormatter(lambda value, _: f"{value:,.0f}" if value >= 10 else f"{value:.2g}")
    figure, panels = plt.subplots(1, 2, figsize=(12, 4.8), layout="constrained")
    sweeps = (
        (diff_rows, [row["diff_bytes"] / KIB for row in diff_rows], "patch size (KiB, log scale)"),
        (task_rows, [float(row["tasks"]) for row in task_rows], "tasks (count, log scale)"),
    )
    titles = (f"{SWEEP_TASKS} tasks", f"{SWEEP_DIFF // KIB} KiB patch")
    handles: list[Any] = []  # the three series once, for the one legend
    for axis, (rows, xs, xlabel), title in zip(panels, sweeps, titles, strict=True):
        axis.plot(
            xs,
            [row["planning_ms"] for row in rows],
            label="planning outside Jev (ms)",
            **PLANNING_STYLE,
        )
        axis.plot(xs, [row["wall_ms"] for row in rows], label="whole process (ms)", **WALL_STYLE)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_xlabel(xlabel)
        axis.set_ylabel("time (ms, log scale)")
        axis.set_title(title)
        # Ticks at the measured points; plain numbers on the time axis, some minor ones too.
        axis.set_xticks(xs)
        axis.xaxis.set_major_formatter(plain)
        axis.xaxis.set_minor_formatter(NullFormatter())
        axis.yaxis.set_major_formatter(LogFormatter())
        axis.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
        axis.grid(True, which="major", alpha=0.3)
        memory = axis.twinx()
        memory.plot(
            xs, [row["peak_rss_kib"] / 1024 for row in rows], label="peak RSS (MiB)", **RSS_STYLE
        )
        memory.set_ylim(0, max(row["peak_rss_kib"] / 1024 for row in rows) * 1.2)
        memory.set_ylabel("peak RSS of the plan process (MiB)")
        for x, row in zip(xs, rows, strict=True):
            if row.get("status", "planned") != "planned":  # a fallback asks Jev nothing
                # On the twin axes, which are drawn last, at the point of the time axis.
                memory.annotate(
                    row["status"],
                    (x, row["planning_ms"]),
                    xycoords=axis.transData,
                    textcoords="offset points",
                    xytext=(0, -15),
                    ha="center",
                    fontsize=8,
                    color=PLANNING_STYLE["color"],
                    bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none"},
                )
        handles = [*axis.get_lines(), *memory.get_lines()]
    figure.legend(handles=handles, loc="outside lower center", ncols=3)
    figure.suptitle("jev-select plan: time outside Jev and memory (median of each point)")
    figure.savefig(path, dpi=110)
    plt.close(figure)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--runs", type=int, default=3)
    runs = max(1, parser.parse_args().runs)
    diff_rows: list[dict[str, Any]] = []
    task_rows: list[dict[str, Any]] = []
    with FakeJev(tls=True, scores=0.5) as jev, tempfile.TemporaryDirectory() as temp:
        for size in DIFF_SIZES:
            point = Path(temp) / f"diff-{size}"
            diff_rows.append(
                measure(point, jev, diff_bytes=size, task_count=SWEEP_TASKS, runs=runs)
            )
        for count in TASK_COUNTS:
            point = Path(temp) / f"tasks-{count}"
            task_rows.append(
                measure(point, jev, diff_bytes=SWEEP_DIFF, task_count=count, runs=runs)
            )
    headers = ["patch KiB", "tasks", "groups", "status", "planning ms", "wall ms", "RSS MiB"]

    def row(entry: dict[str, Any]) -> list[Any]:
        status = entry["status"]
        if entry["observation_error"]:
            status += f" ({entry['observation_error']})"
        return [
            round(entry["diff_bytes"] / KIB, 1),
            entry["tasks"],
            entry["groups"],
            status,
            entry["planning_ms"],
            entry["wall_ms"],
            entry["peak_rss_kib"] // 1024,
        ]

    print(f"Planning time outside Jev, median of {runs} runs per point")
    print(table(headers, [row(entry) for entry in diff_rows + task_rows]))
    from common import RESULTS

    RESULTS.mkdir(parents=True, exist_ok=True)
    png = RESULTS / "planning.png"
    plot(diff_rows, task_rows, png)
    path = write_results("planning", {"runs": runs, "by_diff": diff_rows, "by_tasks": task_rows})
    print(f"results: {path}\nplot: {png}")


if __name__ == "__main__":
    main()
