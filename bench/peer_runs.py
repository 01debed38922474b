"""Process runs, the push event, the runner environment and the action archives of
bench/peer_start.py.

Both sides of that benchmark, the composite action's steps and paths-filter's script, start
from what is here: one timed process (wall time, CPU time and peak RSS of its tree), one push
event over this repository's last commits, the fresh directories and variables the runner
gives each step, and the archive of each action's ref that the runner fetches and unpacks
before the job's first step.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from common import REPOSITORY, ROOT

COMMITS_BACK = 5
# paths-filter's filters, one per task of the action's table; each is a single ``<directory>/**``
# pattern, so the expected decision is whether any changed path lies under that directory.
FILTERS = {"code": "jev_select", "docs": "docs", "ci": ".github"}
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
# The action archive the runner fetches and unpacks for every job.
# ------------------------------------------------------------------------------------------

# The runner platforms a release carries a platform part for (the bundle job's matrix), with
# the platform tags pip selects their wheels by (pip adds the older macOS versions itself, not
# the older manylinux tags).
RELEASE_PLATFORMS = {
    "linux-x86_64-gnu": ("manylinux_2_28_x86_64", "manylinux_2_17_x86_64", "manylinux2014_x86_64"),
    "linux-aarch64": ("manylinux_2_28_aarch64", "manylinux_2_17_aarch64", "manylinux2014_aarch64"),
    "darwin-arm64": ("macosx_14_0_arm64",),
    "darwin-x86_64": ("macosx_15_0_x86_64",),
    "windows-amd64": ("win_amd64",),
}
# git archive compresses with zlib's default level, as GitHub's tarball of a ref does.
GZIP_LEVEL = 6


def download_platform_wheels(lock: Path, tags: Sequence[str], destination: Path) -> bool:
    """The locked wheels of another platform, by pip with their hashes required; False when pip
    cannot get them (no network): the caller then says it used a stand-in."""
    command = [sys.executable, "-m", "pip", "download", "--quiet", "--isolated"]
    command += ["--disable-pip-version-check", "--index-url", "https://pypi.org/simple"]
    command += ["--only-binary", ":all:", "--no-deps", "--require-hashes"]
    command += ["--python-version", "3.11", "--implementation", "cp", "--abi", "cp311"]
    for tag in tags:
        command += ["--platform", tag]
    command += ["--dest", str(destination), "-r", str(lock)]
    return subprocess.run(command, check=False, stdout=subprocess.DEVNULL).returncode == 0


def release_dist(action: Path, destination: Path, work: Path, this_key: str) -> dict[str, str]:
    """``dist/`` as a release commit carries it: the shared part, one platform part for every
    platform of ``RELEASE_PLATFORMS`` and the lock. ``action/dist`` holds the shared part and
    this platform's; the others are built from their own locked wheels. Returns how each
    platform's part was made."""
    destination.mkdir(parents=True)
    for part in (action / "dist").glob("*.zip"):
        shutil.copy2(part, destination / part.name)
    cache_tag = sys.implementation.cache_tag
    this_part = destination / f"jev-select-runtime-{cache_tag}-{this_key}.zip"
    made = {this_key: "built here"}
    stand_ins = []
    for key, tags in RELEASE_PLATFORMS.items():
        if key == this_key:
            continue
        wheels, built = work / f"wheels-{key}", work / f"dist-{key}"
        wheels.mkdir(parents=True)
        name = f"jev-select-runtime-{cache_tag}-{key}.zip"
        if download_platform_wheels(action / "requirements.lock", tags, wheels):
            command = [sys.executable, str(ROOT / "scripts" / "bundle.py"), "build"]
            command += ["--part", "platform", "--platform-key", key, "--root", str(action)]
            command += ["--wheelhouse", str(wheels), "--dist", str(built)]
            subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
            shutil.copy2(built / name, destination / name)
            made[key] = "built from its locked wheels"
        else:
            stand_ins.append(key)
            made[key] = f"stand-in: a copy of the {this_key} part"
    for key in stand_ins:
        shutil.copy2(this_part, destination / f"jev-select-runtime-{cache_tag}-{key}.zip")
    if stand_ins:
        # A stand-in's manifest names this platform, so scripts/bundle.py would refuse to lock
        # it; its line is only for the size, which it does not change.
        lines = (action / "dist" / "bundles.lock").read_text("utf-8").splitlines()
        lines += [f"{cache_tag}-{key} stand-in sha256:{'0' * 64}" for key in stand_ins]
        (destination / "bundles.lock").write_text("\n".join(lines) + "\n", "utf-8")
    else:
        command = [sys.executable, str(ROOT / "scripts" / "bundle.py"), "lock"]
        command += ["--root", str(action), "--dist", str(destination)]
        subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
    return made


def action_archive(repository: Path, destination: Path, dist: Path | None = None) -> int:
    """The tar.gz of ``git archive HEAD`` of ``repository``, with ``dist`` under ``dist/``;
    return its size in bytes."""
    prefix = f"{repository.name}/"
    tar = subprocess.run(
        ["git", "-C", str(repository), "archive", "--format=tar", f"--prefix={prefix}", "HEAD"],
        capture_output=True,
        check=True,
    ).stdout
    with (
        tarfile.open(fileobj=io.BytesIO(tar)) as source,
        tarfile.open(destination, "w:gz", compresslevel=GZIP_LEVEL) as archive,
    ):
        for member in source.getmembers():
            archive.addfile(member, source.extractfile(member) if member.isfile() else None)
        for path in sorted(dist.iterdir()) if dist is not None else []:
            info = archive.gettarinfo(str(path), arcname=f"{prefix}dist/{path.name}")
            info.mtime, info.uid, info.gid, info.uname, info.gname = 0, 0, 0, "root", "root"
            with path.open("rb") as handle:
                archive.addfile(info, handle)
    return destination.stat().st_size


def unpack(archive: Path, target: Path) -> Sample:
    """``tar -xzf`` into a fresh directory: what the runner does with the archive it fetched."""
    target.mkdir(parents=True)
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8"}
    sample = timed(["tar", "-xzf", str(archive), "-C", str(target)], env, target)
    if sample.code != 0:
        raise fail(f"unpacking {archive.name}", sample)
    return sample
