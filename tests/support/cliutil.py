"""Run ``jev-select`` the way a runner would, and read what it published.

Two runners with one signature and one result type (``subprocess.CompletedProcess[str]``):

- :func:`run_cli` starts ``python -m jev_select`` as a real process. Tests of the process
  boundary need it: signals and cancellation, ``os._exit``, the environment a child is given,
  what gets imported, raw bytes on the standard streams.
- :func:`run_cli_in_process` calls the command's ``main`` in the test process, with the
  process-wide state a command reads (environment, working directory, standard streams,
  ``tempfile``'s cached directory, warning filters, log handlers, cancellation clean-ups) set
  for the call and restored afterwards. It saves a process start and the imports per run, and
  is meant for every CLI test that is not about the process boundary.

``python -m jev_select`` runs ``__main__.run``, which ends the process with ``os._exit`` once
``main`` has returned; the in-process runner calls ``cli.main``, the layer that returns the
exit status, so the test process is never ended by it.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import re
import subprocess
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import pytest

__all__ = [
    "API_KEY_SENTINEL",
    "BASIC_TASKS",
    "BASIC_TASK_IDS",
    "PARSER_SCORES",
    "PARSER_TASKS",
    "THREE_TASKS_TEMPLATE",
    "TOKEN_SENTINEL",
    "UNIT_WORKFLOW",
    "CliRun",
    "GitHubEnv",
    "Runner",
    "parse_output_file",
    "run_check_locally",
    "run_cli",
    "run_cli_in_process",
]

API_KEY_SENTINEL = "jevkey-SENTINEL-7f3a91c2"
TOKEN_SENTINEL = "ghs_TOKENSENTINEL0b1c2d3e4f"
BASE_SHA = "1" * 40
HEAD_SHA = "2" * 40
MERGE_SHA = "3" * 40
REPOSITORY = "octo-org/octo-repo"

# A three-task table of the GitHub-mode tests: unit, docs (force_paths) and lint (always).
BASIC_TASKS = """
unit:
  description: Runs the unit tests of the parser package.
docs:
  description: Builds the documentation site.
  force_paths: [docs/**]
lint:
  description: Lints every source file.
  always: true
"""
BASIC_TASK_IDS = ["docs", "lint", "unit"]

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


class Runner(Protocol):
    """How a test starts the command: :func:`run_cli` or :func:`run_cli_in_process`."""

    def __call__(
        self,
        args: Sequence[str],
        env: Mapping[str, str],
        *,
        cwd: Path | None = ...,
        timeout: float = ...,
        stdin: bytes | None = ...,
    ) -> subprocess.CompletedProcess[str]: ...


def run_cli(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path | None = None,
    timeout: float = 120,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run ``python -m jev_select`` with exactly ``env`` (plus PATH and a private HOME);
    ``stdin`` (UTF-8 text) is its standard input, else it reads end of file."""
    return subprocess.run(
        [sys.executable, "-m", "jev_select", *args],
        env=dict(env),
        cwd=cwd,
        input=None if stdin is None else stdin.decode("utf-8"),
        stdin=subprocess.DEVNULL if stdin is None else None,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _as_text(data: bytes) -> str:
    # What ``subprocess.run(text=True)`` makes of a child's output: UTF-8 (the child's locale
    # is coerced to it) with universal newlines.
    return data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


@contextlib.contextmanager
def _process_state(
    args: Sequence[str], env: Mapping[str, str], cwd: Path | None, stdin: bytes
) -> Iterator[tuple[io.BytesIO, io.BytesIO]]:
    """The process-wide state a fresh ``jev-select`` process would start with, for one call."""
    from jev_select.edges import cancellation

    stdout, stderr = io.BytesIO(), io.BytesIO()
    streams = (
        io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8"),
        io.TextIOWrapper(stdout, encoding="utf-8"),
        io.TextIOWrapper(stderr, encoding="utf-8"),
    )
    root_logger = logging.getLogger()
    with pytest.MonkeyPatch.context() as patch, warnings.catch_warnings():
        for name in list(os.environ):
            patch.delenv(name)
        for name, value in env.items():
            patch.setenv(name, value)
        if cwd is not None:
            patch.chdir(cwd)
        # A new process would look TMPDIR up again; this one cached what it saw first.
        patch.setattr(tempfile, "tempdir", None)
        patch.setattr(sys, "argv", ["jev-select", *args])
        patch.setattr(sys, "stdin", streams[0])
        patch.setattr(sys, "stdout", streams[1])
        patch.setattr(sys, "stderr", streams[2])
        # main adds a handler to the root logger and registers clean-ups for its children; both
        # belong to one run, not to the rest of the test session.
        patch.setattr(root_logger, "handlers", list(root_logger.handlers))
        patch.setattr(cancellation, "_cleanups", [])
        try:
            yield stdout, stderr
        finally:
            # Detached, a wrapper no longer closes its buffer when it is collected, so what the
            # command wrote can still be read.
            for stream in streams:
                with contextlib.suppress(ValueError):
                    stream.flush()
                    stream.detach()


def run_cli_in_process(
    args: Sequence[str],
    env: Mapping[str, str],
    *,
    cwd: Path | None = None,
    timeout: float = 120,
    stdin: bytes | None = None,
) -> subprocess.CompletedProcess[str]:
    """:func:`run_cli` without a process: ``cli.main(args)`` with exactly ``env`` in
    ``os.environ``, ``cwd`` as the working directory and ``stdin`` (default: empty) as standard
    input; stdout, stderr and the exit status as a real run would report them.

    ``timeout`` is accepted for the signature's sake: a call cannot be abandoned, and the
    deadlines under test are the command's own. An exception that escapes ``main`` (a real
    process would print a traceback and exit 1) propagates, so the test shows it.
    """
    del timeout
    from jev_select.cli import main

    with _process_state(args, env, cwd, b"" if stdin is None else stdin) as (stdout, stderr):
        code = main(list(args))
    return subprocess.CompletedProcess(
        [sys.executable, "-m", "jev_select", *args],
        code,
        _as_text(stdout.getvalue()),
        _as_text(stderr.getvalue()),
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
    # How ``run`` starts the command: a real process unless a test module opts into the
    # in-process runner for what is not about the process boundary.
    runner: Runner = run_cli

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
        completed = self.runner(["plan", *args], env, cwd=self.root, timeout=timeout)
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


def run_check_locally(
    args: list[str], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> tuple[int, str, str]:
    """``jev-select check ARGS`` in local mode, in process: exit code, stdout, stderr."""
    from jev_select import contracts
    from jev_select.cli import main

    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    code = main([contracts.COMMAND_CHECK, *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """``cli.main(args)`` in this process: the exit status, standard output and standard error."""
    from jev_select.cli import main

    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err
