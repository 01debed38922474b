"""Validation and normalisation of the inputs (docs/reference.md, "Inputs").

``parse_inputs`` is pure: it takes the raw strings, checks them in the fixed order of
docs/reference.md, "Validation order" and raises ``InputError(field)`` for the first step that
fails. The error names the field only.
"""

from __future__ import annotations

import ipaddress
import math
import re
from collections.abc import Mapping

from .. import contracts as c
from ..errors import InputError
from .models import Inputs
from .tasks import parse_tasks

__all__ = [
    "github_inputs",
    "is_repository_name",
    "normalise_https_url",
    "parse_bool",
    "parse_inputs",
    "parse_positive_int",
    "parse_threshold",
    "threshold_syntax_ok",
    "trim",
]

_HTTPS_SCHEME = "https://"
_DEFAULT_HTTPS_PORT = 443
_MAX_PORT = 65535
_DNS_LABEL = re.compile(r"[A-Za-z0-9-]+")
_ALL_DIGITS = re.compile(r"[0-9]+")
_HEX_NUMBER = re.compile(r"0[xX][0-9A-Fa-f]*")
_IPV4_PART = re.compile(r"0|[1-9][0-9]{0,2}")
_PORT_DIGITS = re.compile(r"[0-9]{1,5}")
_IPV6_BODY = re.compile(r"[0-9A-Fa-f:.]+")
# One path segment: unreserved, sub-delimiters, ":", "@" and percent escapes (docs/reference.md,
# "API base URL" rule 4).
_PATH_SEGMENT = re.compile(r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})*")
_ENCODED_DOT = re.compile(r"%2[eE]")


def trim(value: str | None) -> str:
    """Remove the whitespace set (docs/reference.md, "Conventions") from both ends; ``None`` is
    the empty string."""
    return (value or "").strip(c.WHITESPACE)


def _is_ipv4(host: str) -> bool:
    parts = host.split(".")
    return len(parts) == 4 and all(
        _IPV4_PART.fullmatch(part) and int(part) <= 255 for part in parts
    )


def _canonical_ipv6(body: str) -> str | None:
    if not _IPV6_BODY.fullmatch(body):
        return None
    try:
        packed = ipaddress.IPv6Address(body).packed
    except ValueError:
        return None
    pieces = [int.from_bytes(packed[i : i + 2], "big") for i in range(0, 16, 2)]
    # Compress the first longest run of two or more zero pieces, as URL serialisation does.
    best_start, best_length, run_start = -1, 1, -1
    for position, piece in enumerate([*pieces, 1]):
        if piece == 0 and run_start < 0:
            run_start = position
        elif piece != 0 and run_start >= 0:
            if position - run_start > best_length:
                best_start, best_length = run_start, position - run_start
            run_start = -1
    hex_pieces = [format(piece, "x") for piece in pieces]
    if best_start < 0:
        return "[" + ":".join(hex_pieces) + "]"
    head = ":".join(hex_pieces[:best_start])
    tail = ":".join(hex_pieces[best_start + best_length :])
    return "[" + head + "::" + tail + "]"


def _normalise_host(host: str) -> str | None:
    if host.startswith("["):
        if not host.endswith("]"):
            return None
        return _canonical_ipv6(host[1:-1])
    labels = host.split(".")
    if not all(_DNS_LABEL.fullmatch(label) for label in labels):
        return None
    last = labels[-1]
    if (_ALL_DIGITS.fullmatch(last) or _HEX_NUMBER.fullmatch(last)) and not _is_ipv4(host):
        return None
    return host.lower()


def _split_host_port(authority: str) -> tuple[str, str | None] | None:
    if authority.startswith("["):
        closing = authority.find("]")
        if closing < 0:
            return None
        host, rest = authority[: closing + 1], authority[closing + 1 :]
        if not rest:
            return host, None
        if not rest.startswith(":"):
            return None
        return host, rest[1:]
    host, colon, port = authority.partition(":")
    return host, (port if colon else None)


def _normalise_port(port: str | None) -> str | None:
    """The port text to write (``""`` for none or 443), or ``None`` when invalid."""
    if port is None:
        return ""
    if not _PORT_DIGITS.fullmatch(port):
        return None
    number = int(port)
    if not 1 <= number <= _MAX_PORT:
        return None
    return "" if number == _DEFAULT_HTTPS_PORT else ":" + str(number)


def _normalise_path(path: str) -> str | None:
    if not path:
        return ""
    segments = path.split("/")[1:]
    resolved: list[str] = []
    for segment in segments:
        if not _PATH_SEGMENT.fullmatch(segment) or _ENCODED_DOT.search(segment):
            return None
        if segment == ".":
            continue
        if segment == "..":
            if resolved:
                resolved.pop()
            continue
        resolved.append(segment)
    return ("/" + "/".join(resolved)).rstrip("/")


def normalise_https_url(text: str, *, allow_path: bool = True) -> str | None:
    """The normalised root of an acceptable ``https://`` URL (docs/reference.md, "API base URL"),
    else ``None``.

    The root has a lower-case scheme and host, a canonical IPv6 host, no default port, resolved
    dot segments and no trailing ``/``. With ``allow_path=False`` a non-root path is refused.
    """
    if text[: len(_HTTPS_SCHEME)].lower() != _HTTPS_SCHEME:
        return None
    # Printable ASCII only excludes whitespace, control characters and anything non-ASCII.
    if any(not "\x21" <= char <= "\x7e" or char in "\\?#" for char in text):
        return None
    rest = text[len(_HTTPS_SCHEME) :]
    slash = rest.find("/")
    authority, path = (rest, "") if slash < 0 else (rest[:slash], rest[slash:])
    if "@" in authority:
        return None
    split = _split_host_port(authority)
    if split is None:
        return None
    host = _normalise_host(split[0])
    port = _normalise_port(split[1])
    normalised_path = _normalise_path(path)
    if host is None or port is None or normalised_path is None:
        return None
    if normalised_path and not allow_path:
        return None
    return _HTTPS_SCHEME + host + port + normalised_path


def is_repository_name(text: str) -> bool:
    """Whether ``text`` is an ``owner/name`` as GitHub spells it (``REPOSITORY_PATTERN``): the one
    check of ``GITHUB_REPOSITORY``, ``--repository`` and every API path built from a name."""
    return re.fullmatch(c.REPOSITORY_PATTERN, text, re.ASCII) is not None


def threshold_syntax_ok(text: str) -> bool:
    """Whether ``text`` is a plain decimal as ``skip-below`` requires (range not checked)."""
    return re.fullmatch(c.SKIP_BELOW_PATTERN, text) is not None


def parse_threshold(text: str) -> float | None:
    """The nearest double of a plain decimal in [0, 1], else ``None``."""
    if not threshold_syntax_ok(text):
        return None
    value = float(text)
    if not math.isfinite(value) or not 0 <= value <= 1:
        return None
    return value


def parse_positive_int(text: str, maximum: int) -> int | None:
    """A decimal integer from 1 to ``maximum`` without sign or leading zero, else ``None``."""
    if not re.fullmatch(c.POSITIVE_INTEGER_PATTERN, text):
        return None
    # Compare lengths first: converting a huge digit string would be slow or refused.
    if len(text) > len(str(maximum)) or int(text) > maximum:
        return None
    return int(text)


def parse_bool(text: str) -> bool | None:
    """``True`` or ``False`` for exactly ``true`` or ``false``, else ``None``."""
    if text == c.BOOL_TRUE:
        return True
    if text == c.BOOL_FALSE:
        return False
    return None


def normalise_tasks_file(text: str) -> str | None:
    """The repository path named by input ``tasks-file``: one leading ``./`` removed, then the
    file-path rules of the task table (relative, no ``..`` or empty segment, no ``\\``, NUL, CR
    or LF). None when the text is not such a path."""
    path = text[2:] if text.startswith("./") else text
    if (
        not path
        or path.startswith("/")
        or any(segment in ("", "..") for segment in path.split("/"))
        or any(character in path for character in "\\\x00\r\n")
    ):
        return None
    return path


def _tasks_file(tasks_file_text: str, tasks_text: str) -> str | None:
    if not tasks_file_text:
        return None
    if tasks_text:
        raise InputError(c.INPUT_TASKS_FILE)  # the two sources exclude each other
    path = normalise_tasks_file(tasks_file_text)
    if path is None:
        raise InputError(c.INPUT_TASKS_FILE)
    return path


def _defaults(local_mode: bool) -> dict[str, str]:
    return {
        spec.name: (spec.cli_default if local_mode else spec.action_default) for spec in c.INPUTS
    }


def parse_inputs(raw: Mapping[str, str | None], *, local_mode: bool = False) -> Inputs:
    """Validate and normalise the inputs in the order of docs/reference.md, "Validation order".

    ``raw`` maps input names (``"skip-below"``) to raw text; a missing or ``None`` value is empty.
    Blank values take the defaults of docs/reference.md, "Inputs" (``local_mode`` selects the
    command-line defaults, where ``tested-ref`` is ``head``). ``github-token`` is only trimmed and
    ``pull-request`` is kept as trimmed text for the caller to check. Raises ``InputError(field)``
    for the first failure.
    """
    defaults = _defaults(local_mode)
    values: dict[str, str] = {}
    for spec in c.INPUTS:
        value = trim(raw.get(spec.name))
        if not value and spec.name != c.INPUT_GITHUB_TOKEN:
            value = trim(defaults[spec.name])
        values[spec.name] = value

    mode = values[c.INPUT_MODE]
    if mode not in c.MODES:
        raise InputError(c.INPUT_MODE)
    tested_ref = values[c.INPUT_TESTED_REF]
    if tested_ref not in c.TESTED_REFS:
        raise InputError(c.INPUT_TESTED_REF)
    merge_group = values[c.INPUT_MERGE_GROUP]
    if merge_group not in c.MERGE_GROUP_MODES:
        raise InputError(c.INPUT_MERGE_GROUP)
    skip_below_text = values[c.INPUT_SKIP_BELOW]
    if not threshold_syntax_ok(skip_below_text):
        raise InputError(c.INPUT_SKIP_BELOW)
    tasks_file = _tasks_file(values[c.INPUT_TASKS_FILE], values[c.INPUT_TASKS])
    tasks = parse_tasks("{}" if tasks_file is not None else values[c.INPUT_TASKS])
    model = values[c.INPUT_MODEL]
    if not re.fullmatch(c.MODEL_PATTERN, model):
        raise InputError(c.INPUT_MODEL)
    skip_below = parse_threshold(skip_below_text)
    if skip_below is None:
        raise InputError(c.INPUT_SKIP_BELOW)
    allow_external_context = parse_bool(values[c.INPUT_ALLOW_EXTERNAL_CONTEXT])
    if allow_external_context is None:
        raise InputError(c.INPUT_ALLOW_EXTERNAL_CONTEXT)
    force_all = parse_bool(values[c.INPUT_FORCE_ALL])
    if force_all is None:
        raise InputError(c.INPUT_FORCE_ALL)
    timeout_text = values[c.INPUT_TIMEOUT_MS]
    if not re.fullmatch(c.POSITIVE_INTEGER_PATTERN, timeout_text):
        raise InputError(c.INPUT_TIMEOUT_MS)
    max_diff_bytes = parse_positive_int(values[c.INPUT_MAX_DIFF_BYTES], c.MAX_SAFE_INTEGER)
    if max_diff_bytes is None:
        raise InputError(c.INPUT_MAX_DIFF_BYTES)
    timeout_ms = parse_positive_int(timeout_text, c.TIMEOUT_MS_MAX)
    if timeout_ms is None:
        raise InputError(c.INPUT_TIMEOUT_MS)
    api_base_url = normalise_https_url(values[c.INPUT_API_BASE_URL])
    if api_base_url is None:
        raise InputError(c.INPUT_API_BASE_URL)
    api_model = values[c.INPUT_API_MODEL] or model
    if not re.fullmatch(c.API_MODEL_PATTERN, api_model):
        raise InputError(c.INPUT_API_MODEL)
    api_key = values[c.INPUT_API_KEY]
    if any(not "\x21" <= char <= "\x7e" for char in api_key):
        raise InputError(c.INPUT_API_KEY)

    return Inputs(
        tasks=tasks,
        mode=c.Mode(mode),
        model=model,
        skip_below=skip_below,
        api_base_url=api_base_url,
        api_model=api_model,
        api_key=api_key,
        allow_external_context=allow_external_context,
        github_token=values[c.INPUT_GITHUB_TOKEN],
        tested_ref=c.TestedRef(tested_ref),
        pull_request=values[c.INPUT_PULL_REQUEST],
        merge_group=c.MergeGroupMode(merge_group),
        force_all=force_all,
        timeout_ms=timeout_ms,
        max_diff_bytes=max_diff_bytes,
        tasks_file=tasks_file,
    )


def github_inputs(environ: Mapping[str, str]) -> dict[str, str | None]:
    """The raw inputs of GitHub mode: ``INPUT_*`` variables by input name (unset is ``None``)."""
    return {spec.name: environ.get(spec.env) for spec in c.INPUTS}
