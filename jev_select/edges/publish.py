"""Publishing a plan: masks, the report file, ``GITHUB_OUTPUT`` and the step summary.

Edge module (docs/reference.md, "Report fields", "Publication", "Step summary and plan block"). The
order is fixed by the caller: masks first, then the report, then the outputs in one write, then the
summary. A failure or a cancellation before the outputs are written leaves nothing behind; the
outputs are the point of publication, appended in one write that is cut back when it fails (the
caller keeps a cancellation from stopping it).
"""

from __future__ import annotations

import contextlib
import os
import secrets
import shutil
import tempfile
from collections.abc import Iterable, Sequence

from .. import contracts as c
from ..core.credentials import basic_credential
from ..errors import PlanningFailure
from .files import write_atomically

__all__ = [
    "append_outputs",
    "append_summary",
    "close_outputs",
    "format_outputs",
    "mask_commands",
    "open_outputs",
    "remove_report",
    "write_report",
    "write_report_file",
]


def _escape_command_value(value: str) -> str:
    return value.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def mask_commands(api_key: str | None, github_token: str | None) -> list[str]:
    """``::add-mask::`` lines for every form of the secrets (docs/reference.md, "Publication"),
    without repeats."""
    values: list[str] = []
    for raw in (api_key, github_token):
        if raw is None:
            continue
        trimmed = raw.strip(c.WHITESPACE)
        if not trimmed:
            continue
        candidates = [raw, trimmed, *raw.splitlines(), *trimmed.splitlines()]
        if raw is github_token:
            header_form = basic_credential(trimmed)
            if header_form is not None:
                candidates.append(header_form)
        for candidate in candidates:
            if candidate.strip(c.WHITESPACE) and candidate not in values:
                values.append(candidate)
    return [f"::add-mask::{_escape_command_value(value)}" for value in values]


# The staging file of a report, beside the report until it is renamed into place.
_STAGING_PREFIX = ".report-"


def write_report(text: str, temp_root: str) -> str:
    """Write the report atomically under a fresh 0700 directory; return its absolute path."""
    directory: str | None = None
    try:
        directory = tempfile.mkdtemp(prefix=c.REPORT_DIR_PREFIX, dir=temp_root)
        os.chmod(directory, 0o700)
        final_path = os.path.join(directory, c.REPORT_FILE_NAME)
        write_atomically(final_path, text, prefix=_STAGING_PREFIX)
        return os.path.abspath(final_path)
    except OSError:
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        raise PlanningFailure(c.FAILURE_REPORT_UNWRITABLE) from None
    except BaseException:  # a cancellation: the caller never learns the path, so remove it here
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)
        raise


def write_report_file(text: str, path: str) -> str:
    """Write the report atomically to ``path`` (0600), replacing an earlier one; return the
    absolute path. A missing parent directory is created (0700) when its own parent exists."""
    final_path = os.path.abspath(path)
    directory = os.path.dirname(final_path)
    try:
        if not os.path.isdir(directory):
            os.mkdir(directory, 0o700)
        write_atomically(final_path, text, prefix=_STAGING_PREFIX)
    except OSError:
        raise PlanningFailure(c.FAILURE_REPORT_UNWRITABLE) from None
    return final_path


def remove_report(path: str) -> None:
    """Best-effort removal of a report written before a later step failed."""
    shutil.rmtree(os.path.dirname(path), ignore_errors=True)


def _delimiter(name: str, value: str) -> str:
    while True:
        candidate = c.OUTPUT_DELIMITER_PREFIX + secrets.token_hex(16)
        if candidate not in name and candidate not in value:
            return candidate


def format_outputs(pairs: Iterable[tuple[str, str]]) -> str:
    """Every output in the multi-line form with a fresh random delimiter (docs/reference.md,
    "Publication")."""
    parts: list[str] = []
    for name, value in pairs:
        delimiter = _delimiter(name, value)
        parts.append(f"{name}<<{delimiter}\n{value}\n{delimiter}\n")
    return "".join(parts)


def open_outputs(path: str) -> int:
    """Open ``GITHUB_OUTPUT`` for appending, or raise ``output-unwritable``.

    Opening writes nothing, so it may be interrupted (a FIFO or a slow file system can block
    here); :func:`append_outputs` is the step that must not stop halfway.
    """
    try:
        return os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    except OSError:
        raise PlanningFailure(c.FAILURE_OUTPUT_UNWRITABLE) from None


def append_outputs(descriptor: int, pairs: Sequence[tuple[str, str]]) -> None:
    """Append all outputs in one write, or leave the file as it was and raise
    ``output-unwritable``. Does not close ``descriptor``."""
    payload = format_outputs(pairs).encode("utf-8")
    original_size: int | None = None
    try:
        original_size = os.fstat(descriptor).st_size
        view = memoryview(payload)
        while view:
            written = os.write(descriptor, view)
            if written <= 0:
                raise OSError("short write")
            view = view[written:]
    except OSError:
        # A partial plan is worse than none: cut the file back to what it was.
        if original_size is not None:
            with contextlib.suppress(OSError):
                os.ftruncate(descriptor, original_size)
        raise PlanningFailure(c.FAILURE_OUTPUT_UNWRITABLE) from None


def close_outputs(descriptor: int) -> None:
    """Close what :func:`open_outputs` returned; the outputs are already complete by then."""
    with contextlib.suppress(OSError):
        os.close(descriptor)


def append_summary(path: str, text: str) -> bool:
    """Append the step summary; False when it could not be written (a warning, not a failure)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    try:
        with open(path, "ab") as handle:
            handle.write(data)
    except OSError:
        return False
    return True
