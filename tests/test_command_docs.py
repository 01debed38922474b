"""The commands the docs and examples name are the commands the parser has, with flags it takes."""

from __future__ import annotations

import argparse
import os
import re
import shlex
from pathlib import Path

import pytest
import yaml

from jev_select import contracts as c
from jev_select.cli import _build_parser

ROOT = Path(__file__).resolve().parent.parent
COMMAND_ROW = re.compile(r"^\| `jev-select (?P<name>[a-z-]+)` \|", re.MULTILINE)
INVOCATION = re.compile(r"-m jev_select (?P<arguments>[^)|>]*)")


def subcommands() -> set[str]:
    parser = _build_parser()
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return set(action.choices)
    raise AssertionError("no subcommands")


def test_the_reference_lists_every_command_once() -> None:
    text = (ROOT / "docs" / "reference.md").read_text(encoding="utf-8")
    table = text.split("## Commands", 1)[1].split("\n## ", 1)[0]
    listed = COMMAND_ROW.findall(table)
    assert len(listed) == len(set(listed))
    assert set(listed) == subcommands()
    assert c.COMMAND_ROLLOUT in listed


def example_invocations() -> list[tuple[str, str]]:
    found = []
    for path in sorted((ROOT / "examples").rglob("*.yml")):
        workflow = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(workflow, dict) or not isinstance(workflow.get("jobs"), dict):
            continue
        for job in workflow["jobs"].values():
            for step in job.get("steps", []):
                script = step.get("run", "")
                joined = script.replace("\\\n", " ")
                for line in joined.splitlines():
                    match = INVOCATION.search(line)
                    if match is not None:
                        found.append((str(path.relative_to(ROOT)), match["arguments"].strip()))
    return found


def test_examples_call_jev_select() -> None:
    commands = {shlex.split(arguments)[0] for _, arguments in example_invocations()}
    assert {c.COMMAND_PLAN, c.COMMAND_ROLLOUT, c.COMMAND_CALIBRATE} <= commands


@pytest.mark.parametrize(
    ("path", "arguments"), example_invocations(), ids=lambda value: str(value)[:60]
)
def test_example_command_lines_parse(path: str, arguments: str) -> None:
    words = [os.path.expandvars(word) for word in shlex.split(arguments)]
    namespace = _build_parser(words[0]).parse_args(words)
    assert namespace.command == words[0], path
