"""A subcommand's failure is printed once, by the command line (``errors.CommandFailure``).

Each subcommand's own tests pin its lines; these pin the shared rules: the code is clamped to the
subcommand's vocabulary, the line goes where the mode says (``history`` always plain on stderr),
a failure of another subcommand's vocabulary is an internal error, and the integer type the
parsers share.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping

import pytest

from jev_select import contracts as c
from jev_select.cli import SUBCOMMANDS, main
from jev_select.cli import history as history_command
from jev_select.cli import results as results_command
from jev_select.cli.arguments import integer_in
from jev_select.cli.calibrate import CalibrateFailure
from jev_select.cli.history_ci import HistoryFailure
from jev_select.cli.rollout import RolloutFailure
from jev_select.core.results import ResultsFailure
from jev_select.core.shadow import AnalysisError
from jev_select.errors import CommandFailure, failure_message
from jev_select.replay.corpus import ReplayFailure

FAILURE_CLASSES: tuple[type[CommandFailure], ...] = (
    AnalysisError,
    CalibrateFailure,
    HistoryFailure,
    ReplayFailure,
    ResultsFailure,
    RolloutFailure,
)


@pytest.mark.parametrize("kind", FAILURE_CLASSES, ids=lambda kind: kind.__name__)
def test_every_failure_class_names_a_subcommand_and_a_listed_fallback(
    kind: type[CommandFailure],
) -> None:
    failures = kind.failures
    assert failures.command in SUBCOMMANDS
    assert failures.fallback in failures.codes
    assert failures.template.count("{code}") == 1
    assert failures.exit_code == 1
    for code in failures.codes:
        assert kind(code).message == failures.template.format(code=code)


def test_each_subcommand_has_its_own_vocabulary() -> None:
    commands = [kind.failures.command for kind in FAILURE_CLASSES]
    assert len(set(commands)) == len(commands)


def test_an_unlisted_code_shows_the_fallback() -> None:
    assert ResultsFailure("no-such-code").message == (
        c.RESULTS_FAILURE_TEMPLATE.format(code=c.RESULTS_UNWRITABLE)
    )
    assert ReplayFailure("no-such-code", "case-1").message == (
        c.REPLAY_CASE_FAILURE_TEMPLATE.format(code=c.REPLAY_INVALID_CORPUS, case="case-1")
    )
    assert ReplayFailure(c.REPLAY_STALE_RECORDING).message == (
        c.REPLAY_FAILURE_TEMPLATE.format(code=c.REPLAY_STALE_RECORDING)
    )


def _failing_with(failure: CommandFailure) -> object:
    def handler(_namespace: argparse.Namespace, _environ: Mapping[str, str]) -> int:
        raise failure

    return handler


RESULTS_ARGS = ("results", "--run-id", "1", "--report", "r.json", "--output", "o.json")


@pytest.mark.parametrize("github", [False, True], ids=["local", "github"])
def test_the_command_line_prints_the_clamped_line_once(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], github: bool
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true" if github else "false")
    monkeypatch.setattr(results_command, "run_results", _failing_with(ResultsFailure("bogus")))
    assert main(list(RESULTS_ARGS)) == 1
    out, err = capsys.readouterr()
    line = c.RESULTS_FAILURE_TEMPLATE.format(code=c.RESULTS_UNWRITABLE)
    assert (out, err) == (("::error::" + line + "\n", "") if github else ("", line + "\n"))


def test_a_failure_of_another_subcommand_is_an_internal_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "false")
    failure = RolloutFailure(c.ROLLOUT_RATE_LIMITED)
    monkeypatch.setattr(results_command, "run_results", _failing_with(failure))
    assert main(list(RESULTS_ARGS)) == 1
    assert capsys.readouterr().err == failure_message(c.FAILURE_INTERNAL_ERROR) + "\n"


def test_history_prints_plain_lines_even_inside_actions(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    failure = HistoryFailure(c.HISTORY_NO_CHANGES)
    monkeypatch.setattr(history_command, "run_history", _failing_with(failure))
    assert main(["history", "--tasks-file", "tasks.yml"]) == 1
    out, err = capsys.readouterr()
    assert (out, err) == ("", c.HISTORY_FAILURE_TEMPLATE.format(code=c.HISTORY_NO_CHANGES) + "\n")


# ---------------------------------------------------------------------------------------------
# The shared integer type
# ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("text", ["", "-1", "+1", " 1", "1 ", "01", "1_0", "1.0", "\u0661", "x"])
def test_integers_are_plain_decimal_digits(text: str) -> None:
    with pytest.raises(ValueError, match=r"^$"):
        integer_in(0)(text)


def test_integer_bounds_are_inclusive() -> None:
    parse = integer_in(1, 5)
    assert [parse(text) for text in ("1", "5")] == [1, 5]
    for text in ("0", "6"):
        with pytest.raises(ValueError, match=r"^$"):
            parse(text)
    assert integer_in(1)("123456789012345678901234567890") == 123456789012345678901234567890


@pytest.mark.parametrize(
    ("kind", "shown"),
    [
        pytest.param(integer_in(1, 100), "integer from 1 to 100", id="bounded"),
        pytest.param(integer_in(1), "integer from 1", id="unbounded"),
        pytest.param(integer_in(1, name="count"), "count", id="named"),
    ],
)
def test_argparse_names_the_type_in_its_error_line(kind: Callable[[str], int], shown: str) -> None:
    parser = argparse.ArgumentParser(exit_on_error=False)
    parser.add_argument("--n", type=kind)
    with pytest.raises(argparse.ArgumentError) as caught:
        parser.parse_args(["--n", "0"])
    assert str(caught.value) == f"argument --n: invalid {shown} value: '0'"
