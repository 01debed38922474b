"""Publication (docs/reference.md, "Report fields", "Publication", "Step summary and plan block"):
masks, the report file, GITHUB_OUTPUT and the summary."""

from __future__ import annotations

import base64
import os
import secrets
import stat
from pathlib import Path

import pytest
from support.cliutil import parse_output_file

from jev_select import contracts as c
from jev_select.edges.publish import (
    append_outputs,
    append_summary,
    close_outputs,
    format_outputs,
    mask_commands,
    open_outputs,
    remove_report,
    write_report,
)
from jev_select.errors import PlanningFailure

# --------------------------------------------------------------------------------------------
# Masks (docs/reference.md, "Publication")
# --------------------------------------------------------------------------------------------


def masked(lines: list[str]) -> list[str]:
    prefix = "::add-mask::"
    assert all(line.startswith(prefix) for line in lines)
    return [line[len(prefix) :] for line in lines]


def test_masks_cover_raw_trimmed_lines_and_the_git_header_form() -> None:
    key = "  key-one\nkey-two  "
    token = "\tghs_token\n"
    values = masked(mask_commands(key, token))
    assert "  key-one%0Akey-two  " in values  # raw
    assert "key-one%0Akey-two" in values  # trimmed
    assert "  key-one" in values
    assert "key-two  " in values
    assert "key-one" in values
    assert "key-two" in values
    assert "\tghs_token%0A" in values
    assert "ghs_token" in values
    header = base64.b64encode(b"x-access-token:ghs_token").decode()
    assert header in values
    # The key is never sent in a git header, so it has no Base64 form.
    assert base64.b64encode(b"x-access-token:key-one\nkey-two").decode() not in values
    assert len(values) == len(set(values))


def test_mask_values_escape_percent_cr_and_lf() -> None:
    assert mask_commands("a%b\r\nc", None) == [
        "::add-mask::a%25b%0D%0Ac",
        "::add-mask::a%25b",
        "::add-mask::c",
    ]


@pytest.mark.parametrize("blank", [None, "", "   ", "\n\t\u3000"])
def test_blank_secrets_get_no_mask(blank: str | None) -> None:
    assert mask_commands(blank, blank) == []


def test_token_equal_to_the_key_still_gets_its_header_form() -> None:
    secret = "same-secret"
    values = masked(mask_commands(secret, "".join(secret)))
    assert values[0] == secret
    assert base64.b64encode(b"x-access-token:same-secret").decode() in values


# --------------------------------------------------------------------------------------------
# Report file (docs/reference.md, "Report fields")
# --------------------------------------------------------------------------------------------


@pytest.mark.posix
def test_report_is_written_atomically_with_private_modes(tmp_path: Path) -> None:
    path = Path(write_report('{\n  "version": 5\n}\n', str(tmp_path)))
    assert path.is_absolute()
    assert path.name == c.REPORT_FILE_NAME
    assert path.parent.parent == tmp_path
    assert path.parent.name.startswith(c.REPORT_DIR_PREFIX)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_bytes() == b'{\n  "version": 5\n}\n'
    assert os.listdir(path.parent) == [c.REPORT_FILE_NAME]  # no staging file left behind


def test_report_text_is_utf8_with_lf_only(tmp_path: Path) -> None:
    path = Path(write_report('{"path": "café"}\n', str(tmp_path)))
    assert path.read_bytes() == '{"path": "café"}\n'.encode()


def test_every_report_gets_a_fresh_directory(tmp_path: Path) -> None:
    first = write_report("{}\n", str(tmp_path))
    second = write_report("{}\n", str(tmp_path))
    assert Path(first).parent != Path(second).parent


def test_unwritable_report_location(tmp_path: Path) -> None:
    with pytest.raises(PlanningFailure) as caught:
        write_report("{}\n", str(tmp_path / "missing" / "dir"))
    assert caught.value.code == c.FAILURE_REPORT_UNWRITABLE
    blocker = tmp_path / "file"
    blocker.write_text("x")
    with pytest.raises(PlanningFailure):
        write_report("{}\n", str(blocker))


def test_failed_write_leaves_no_directory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def failing_replace(*_args: object) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", failing_replace)
    with pytest.raises(PlanningFailure) as caught:
        write_report("{}\n", str(tmp_path))
    assert caught.value.code == c.FAILURE_REPORT_UNWRITABLE
    assert list(tmp_path.iterdir()) == []


def test_remove_report_removes_its_directory(tmp_path: Path) -> None:
    path = write_report("{}\n", str(tmp_path))
    remove_report(path)
    assert list(tmp_path.iterdir()) == []
    remove_report(path)  # best effort: a second removal is harmless


# --------------------------------------------------------------------------------------------
# GITHUB_OUTPUT (docs/reference.md, "Publication")
# --------------------------------------------------------------------------------------------

PAIRS = [("run", '{"unit":true}'), ("has-tasks", "true"), ("unit", "true")]


def write_outputs(path: str, pairs: list[tuple[str, str]]) -> None:
    """The three calls with which ``plan`` publishes its outputs (``cli/plan_github.py``)."""
    descriptor = open_outputs(path)
    try:
        append_outputs(descriptor, pairs)
    finally:
        close_outputs(descriptor)


def test_outputs_use_the_multiline_form_in_order() -> None:
    text = format_outputs(PAIRS)
    assert parse_output_file(text) == dict(PAIRS)
    lines = text.split("\n")
    assert [line.split("<<")[0] for line in lines[0::3] if line] == ["run", "has-tasks", "unit"]
    delimiters = [line.split("<<")[1] for line in lines[0::3] if line]
    assert len(set(delimiters)) == len(delimiters)
    for delimiter in delimiters:
        assert delimiter.startswith(c.OUTPUT_DELIMITER_PREFIX)
        assert len(delimiter) == len(c.OUTPUT_DELIMITER_PREFIX) + 32


def test_a_delimiter_found_in_the_value_or_name_is_regenerated(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    draws = iter(["0" * 32, "1" * 32, "2" * 32])
    monkeypatch.setattr(secrets, "token_hex", lambda _n: next(draws))
    colliding = c.OUTPUT_DELIMITER_PREFIX + "0" * 32
    other = c.OUTPUT_DELIMITER_PREFIX + "1" * 32
    text = format_outputs([("x", f"a{colliding}b"), (other, "v")])
    third = c.OUTPUT_DELIMITER_PREFIX + "2" * 32
    assert text == f"x<<{other}\na{colliding}b\n{other}\n{other}<<{third}\nv\n{third}\n"


def test_outputs_are_appended_in_one_write(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "output"
    path.write_text("earlier<<EOF\nvalue\nEOF\n")
    writes: list[int] = []
    real_write = os.write

    def counting_write(descriptor: int, data: bytes | memoryview) -> int:
        writes.append(len(data))
        return real_write(descriptor, data)

    monkeypatch.setattr(os, "write", counting_write)
    write_outputs(str(path), PAIRS)
    assert len(writes) == 1
    text = path.read_text()
    assert text.startswith("earlier<<EOF\nvalue\nEOF\n")
    assert parse_output_file(text[len("earlier<<EOF\nvalue\nEOF\n") :]) == dict(PAIRS)


def test_unwritable_output_file(tmp_path: Path) -> None:
    for target in (tmp_path, tmp_path / "missing" / "output"):
        with pytest.raises(PlanningFailure) as caught:
            write_outputs(str(target), PAIRS)
        assert caught.value.code == c.FAILURE_OUTPUT_UNWRITABLE


def test_a_failed_write_restores_the_output_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "output"
    path.write_text("earlier\n")
    real_write = os.write

    def partial_then_fail(descriptor: int, data: bytes | memoryview) -> int:
        if len(data) > 10:
            return real_write(descriptor, bytes(data[:10]))
        raise OSError("disk full")

    monkeypatch.setattr(os, "write", partial_then_fail)
    with pytest.raises(PlanningFailure) as caught:
        write_outputs(str(path), PAIRS)
    assert caught.value.code == c.FAILURE_OUTPUT_UNWRITABLE
    assert path.read_text() == "earlier\n"


# --------------------------------------------------------------------------------------------
# Step summary (docs/reference.md, "Step summary and plan block")
# --------------------------------------------------------------------------------------------


def test_summary_is_appended(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    path.write_text("before\n")
    assert append_summary(str(path), "### jev-select\n")
    assert path.read_text() == "before\n### jev-select\n"


def test_unwritable_summary_is_reported_not_raised(tmp_path: Path) -> None:
    assert append_summary(str(tmp_path), "text") is False
    assert append_summary(str(tmp_path / "missing" / "summary.md"), "text") is False


def test_unencodable_summary_is_reported_not_raised(tmp_path: Path) -> None:
    path = tmp_path / "summary.md"
    assert append_summary(str(path), "lone surrogate \ud800") is False


def test_a_token_that_was_not_utf8_is_masked_by_its_bytes() -> None:
    # os.environ holds undecodable bytes as surrogate escapes (\udcff stands for byte 0xff).
    token = "tok\udcffen"
    values = masked(mask_commands(None, token))
    assert values[0] == token
    assert base64.b64encode(b"x-access-token:tok\xffen").decode() in values
    assert masked(mask_commands(None, "\ud800x")) == ["\ud800x"]
