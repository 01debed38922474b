"""Run ``jev-select`` as a real process, the way a runner would, and read what it published."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "API_KEY_SENTINEL",
    "PARSER_SCORES",
    "PARSER_TASKS",
    "THREE_TASKS_TEMPLATE",
    "TOKEN_SENTINEL",
    "UNIT_WORKFLOW",
    "CliRun",
    "GitHubEnv",
    "parse_output_file",
    "run_cli",
]

API_KEY_SENTINEL = "jevkey-SENTINEL-7f3a91c2"
TOKEN_SENTINEL = "ghs_TOKENSENTINEL0b1c2d3e4f"
BASE_SHA = "1" * 40
HEAD_SHA = "2" * 40
MERGE_SHA = "3" * 40
REPOSITORY = "octo-org/octo-repo"

# A three-task table (one task with workflow and context-file references, one with force_paths,
# one always) and the workflow it references; `{unit}` is the unit task's description.
THREE_TASKS_TEMPLATE = """
unit:
  description: {unit}
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
  context_files: [tests/conftest.py]
docs:
  description: Builds the documentation site.
  force_paths: [docs/**]
lint:
  description: Lints every source file.
  always: true
"""
# The table of the manual and merge-queue runs: a unit task that references the job of
# UNIT_WORKFLOW, a docs task with force_paths and an always lint task; PARSER_SCORES asks Jev to
# keep only unit.
PARSER_TASKS = """
unit:
  description: Runs the unit tests of the parser package.
  jobs:
    - workflow: .github/workflows/ci.yml
      job: unit
docs:
  description: Builds the documentation site.
  force_paths: [docs/**]
lint:
  description: Lints every source file.
  always: true
"""
PARSER_SCORES = {"unit": 0.9, "docs": 0.01, "lint": 0.01}
UNIT_WORKFLOW = """name: ci
on: pull_request
jobs:
  unit:
    runs-on: ubuntu-latest
    steps:
      - run: python -m pytest tests/unit
"""

_OUTPUT_START = re.compile(r"^(?P<name>[^\n<]+)<<(?P<delimiter>jev-select-[0-9a-f]{32})$")


def parse_output_file(text: str) -> dict[str, str]:
    """Parse ``GITHUB_OUTPUT`` written in the ``name<<delimiter`` form; fail on anything else."""
    outputs: dict[str, str] = {}
    lines = text.split("\n")
    index = 0
    while index < len(lines):
        line = lines[index]
        if line == "" and index == len(lines) - 1:
            break
        match = _OUTPUT_START.match(line)
        assert match is not None, f"unexpected output line {index}"
        delimiter = match["delimiter"]
        end = lines.index(delimiter, index + 1)
        assert end == index + 2, "every output value is one line"
        assert match["name"] not in outputs, "an output was written twice"
        outputs[match["name"]] = lines[index + 1]
        index = end + 1
    return outputs


@dataclass
class CliRun:
    code: int
    stdout: str
    stderr: str
    outputs_text: str
    summary_text: str | None
    temp_root: Path

    @property
    def outputs(self) -> dict[str, str]:
        return parse_output_file(self.outputs_text)

    def report_paths(self) -> list[Path]:
        return sorted(self.temp_root.glob("jev-select-report-*/report.json"))

    @property
    def report(self) -> dict[str, Any]:
        paths = self.report_paths()
        assert len(paths) == 1, "exactly one report"
        loaded: dict[str, Any] = json.loads(paths[0].read_text("utf-8"))
        return loaded

    def everything(self) -> str:
        """Every text the run produced, for secret and source-text checks."""
        parts = [self.stdout, self.stderr, self.outputs_text, self.summary_text or ""]
        for directory in self.temp_root.glob("jev-select-*"):
            for path in directory.rglob("*"):
                if path.is_file():
                    parts.append(path.read_text("utf-8", errors="replace"))
        return "\n".join(parts)

    def without_masks(self) -> str:
        """Everything except the ``::add-mask::`` lines, which carry the secrets on purpose."""
        kept = [
            line for line in self.everything().split("\n") if not line.startswith("::add-mask::")
        ]
        return "\n".join(kept)


def run_cli(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path | None = None,
    timeout: float = 120,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m jev_select`` with exactly ``env`` (plus PATH and a private HOME)."""
    return subprocess.run(
        [sys.executable, "-m", "jev_select", *args],
        env=dict(env),
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@dataclass
class GitHubEnv:
    """A runner-like environment in ``root``: event file, output and summary files, temp dir."""

    root: Path
    event_name: str = "pull_request"
    event: Mapping[str, Any] | None = None
    inputs: dict[str, str] = field(default_factory=dict)
    sha: str = MERGE_SHA
    extra: dict[str, str] = field(default_factory=dict)

    def pull_request_event(
        self,
        *,
        base: str = BASE_SHA,
        head: str = HEAD_SHA,
        fork: bool = False,
        repository: str = REPOSITORY,
    ) -> dict[str, Any]:
        head_repo = {"id": 99 if fork else 42, "full_name": "someone/fork" if fork else repository}
        return {
            "pull_request": {
                "number": 7,
                "base": {"sha": base, "repo": {"id": 42, "full_name": repository}},
                "head": {"sha": head, "repo": head_repo},
            }
        }

    def environ(self) -> dict[str, str]:
        self.root.mkdir(parents=True, exist_ok=True)
        event_path = self.root / "event.json"
        event = self.event if self.event is not None else self.pull_request_event()
        event_path.write_text(json.dumps(event), "utf-8")
        temp = self.root / "runner-temp"
        temp.mkdir(exist_ok=True)
        home = self.root / "home"
        home.mkdir(exist_ok=True)
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(home),
            "GITHUB_ACTIONS": "true",
            "GITHUB_EVENT_NAME": self.event_name,
            "GITHUB_EVENT_PATH": str(event_path),
            "GITHUB_REPOSITORY": REPOSITORY,
            "GITHUB_SHA": self.sha,
            "GITHUB_SERVER_URL": "https://github.com",
            "GITHUB_OUTPUT": str(self.root / "output.txt"),
            "GITHUB_STEP_SUMMARY": str(self.root / "summary.md"),
            "RUNNER_TEMP": str(temp),
        }
        for name, value in self.inputs.items():
            env["INPUT_" + name.upper().replace("-", "_")] = value
        env.update(self.extra)
        return env

    def run(self, *args: str, timeout: float = 120) -> CliRun:
        env = self.environ()
        completed = run_cli(["plan", *args], env, cwd=self.root, timeout=timeout)
        output_path = Path(env["GITHUB_OUTPUT"])
        summary_path = Path(env["GITHUB_STEP_SUMMARY"])
        return CliRun(
            code=completed.returncode,
            stdout=completed.stdout,
            stderr=completed.stderr,
            outputs_text=output_path.read_text("utf-8") if output_path.is_file() else "",
            summary_text=summary_path.read_text("utf-8") if summary_path.is_file() else None,
            temp_root=Path(env["RUNNER_TEMP"]),
        )
