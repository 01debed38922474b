"""Input validation (docs/reference.md, "Inputs", "Input errors"): syntax, defaults, trimming, order
and diagnostics."""

from __future__ import annotations

import itertools

import pytest

from jev_select import contracts as c
from jev_select.core.inputs import (
    github_inputs,
    normalise_https_url,
    parse_bool,
    parse_inputs,
    parse_positive_int,
    parse_threshold,
    trim,
)
from jev_select.core.models import Inputs, Task, TaskTable
from jev_select.errors import InputError, input_error_message

TASKS = "unit:\n  description: Runs the unit tests.\n"

MESSAGES = {
    "tasks": 'jev-select: invalid input "tasks"; expected a YAML mapping of uniquely named task '
    "objects, each with a nonblank description and only the documented fields; no plan "
    "published.",
    "mode": 'jev-select: invalid input "mode"; expected "enforce" or "shadow"; no plan published.',
    "model": 'jev-select: invalid input "model"; expected a canonical model version such as '
    "jev-1.13.0; no plan published.",
    "skip-below": 'jev-select: invalid input "skip-below"; expected a plain decimal number '
    "between 0 and 1 inclusive; no plan published.",
    "api-base-url": 'jev-select: invalid input "api-base-url"; expected an https:// URL without '
    "user information, query, fragment, whitespace, control characters or backslashes; no plan "
    "published.",
    "api-model": 'jev-select: invalid input "api-model"; expected 1 to 128 ASCII letters, '
    "digits or the characters . _ : / -, starting with a letter or digit; no plan published.",
    "api-key": 'jev-select: invalid input "api-key"; expected printable ASCII without spaces, '
    "or an empty value; no plan published.",
    "allow-external-context": 'jev-select: invalid input "allow-external-context"; expected '
    '"true" or "false"; no plan published.',
    "tested-ref": 'jev-select: invalid input "tested-ref"; expected "merge" or "head"; no plan '
    "published.",
    "merge-group": 'jev-select: invalid input "merge-group"; expected "run-all" or "select"; '
    "no plan published.",
    "force-all": 'jev-select: invalid input "force-all"; expected "true" or "false"; no plan '
    "published.",
    "timeout-ms": 'jev-select: invalid input "timeout-ms"; expected a whole number of '
    "milliseconds from 1 to 2147483647; no plan published.",
    "max-diff-bytes": 'jev-select: invalid input "max-diff-bytes"; expected a whole number of '
    "bytes from 1 to 9007199254740991; no plan published.",
}


def parse(**overrides: str | None) -> Inputs:
    raw: dict[str, str | None] = {"tasks": TASKS}
    raw.update({name.replace("_", "-"): value for name, value in overrides.items()})
    return parse_inputs(raw)


def expect_error(field: str, raw: dict[str, str | None], bad_value: str | None = None) -> None:
    with pytest.raises(InputError) as caught:
        parse_inputs(raw)
    error = caught.value
    assert error.field == field
    assert input_error_message(error.field) == MESSAGES[field]
    assert str(error) == field
    assert repr(error) == f"InputError({field!r})"
    value = (bad_value or "").strip(c.WHITESPACE)
    if value and value not in repr(error):
        assert value not in str(error)
        assert value not in repr(error)
        assert value not in error.args


def bad(field: str, value: str) -> None:
    expect_error(field, {"tasks": TASKS, field: value}, value)


# --- defaults and normalised values ---------------------------------------------------------------


def test_defaults() -> None:
    inputs = parse()
    assert inputs == Inputs(
        tasks=TaskTable(tasks=(Task(id="unit", description="Runs the unit tests."),)),
        mode="enforce",
        model="jev-1.13.0",
        skip_below=0.05,
        api_base_url="https://api.typesafe.ai",
        api_model="jev-1.13.0",
        api_key="",
        allow_external_context=False,
        github_token="",
        tested_ref="merge",
        pull_request="",
        merge_group="run-all",
        force_all=False,
        timeout_ms=10000,
        max_diff_bytes=65536,
    )
    assert inputs.endpoint == "https://api.typesafe.ai/v1/systemone"


def test_blank_values_take_defaults() -> None:
    blank = {spec.name: " \t\u3000" for spec in c.INPUTS}
    blank["tasks"] = TASKS
    assert parse_inputs(blank) == parse()
    nones: dict[str, str | None] = {spec.name: None for spec in c.INPUTS}
    nones["tasks"] = TASKS
    assert parse_inputs(nones) == parse()


def test_local_mode_defaults_tested_ref_to_head() -> None:
    assert parse_inputs({"tasks": TASKS}, local_mode=True).tested_ref == "head"
    assert parse_inputs({"tasks": TASKS, "tested-ref": "merge"}, local_mode=True).tested_ref == (
        "merge"
    )


def test_every_value_is_trimmed() -> None:
    ws = "\ufeff \t\n\u00a0\u2028\u3000"
    inputs = parse_inputs(
        {
            "tasks": ws + TASKS + ws,
            "mode": ws + "shadow" + ws,
            "model": ws + "jev-2.0.1" + ws,
            "skip-below": ws + "0.25" + ws,
            "api-base-url": ws + "https://gw.example/p/" + ws,
            "api-model": ws + "jev-latest" + ws,
            "api-key": ws + "sk-123" + ws,
            "allow-external-context": ws + "true" + ws,
            "github-token": ws + "ghs_x" + ws,
            "tested-ref": ws + "head" + ws,
            "pull-request": ws + "42" + ws,
            "force-all": ws + "true" + ws,
            "timeout-ms": ws + "500" + ws,
            "max-diff-bytes": ws + "1024" + ws,
        }
    )
    assert inputs == Inputs(
        tasks=parse().tasks,
        mode="shadow",
        model="jev-2.0.1",
        skip_below=0.25,
        api_base_url="https://gw.example/p",
        api_model="jev-latest",
        api_key="sk-123",
        allow_external_context=True,
        github_token="ghs_x",
        tested_ref="head",
        pull_request="42",
        force_all=True,
        timeout_ms=500,
        max_diff_bytes=1024,
    )
    assert inputs.endpoint == "https://gw.example/p/v1/systemone"


def test_trim_helper() -> None:
    assert trim(None) == ""
    assert trim("\u205f x \u202f") == "x"
    # U+001C is not in the spec's whitespace set although Python's str.strip removes it.
    assert trim("\x1cx") == "\x1cx"


# --- tasks -------------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [None, "", "   ", "\n"])
def test_tasks_required(value: str | None) -> None:
    expect_error("tasks", {"tasks": value})
    expect_error("tasks", {})


@pytest.mark.parametrize("value", ["./tasks.yml", "[]", "null", "unit: x", "run: {description: x}"])
def test_tasks_invalid(value: str) -> None:
    bad("tasks", value)


def test_empty_table_is_valid() -> None:
    assert parse(tasks="{}").tasks == TaskTable()


# --- mode and tested-ref -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["enforce", "shadow"])
def test_mode_valid(value: str) -> None:
    assert parse(mode=value).mode == value


@pytest.mark.parametrize("value", ["Enforce", "SHADOW", "dry-run", "enforce,shadow", "0"])
def test_mode_invalid(value: str) -> None:
    bad("mode", value)


@pytest.mark.parametrize("value", ["merge", "head"])
def test_tested_ref_valid(value: str) -> None:
    assert parse(tested_ref=value).tested_ref == value


@pytest.mark.parametrize("value", ["Merge", "HEAD", "base", "refs/heads/main"])
def test_tested_ref_invalid(value: str) -> None:
    bad("tested-ref", value)


@pytest.mark.parametrize("value", ["run-all", "select"])
def test_merge_group_valid(value: str) -> None:
    assert parse(merge_group=value).merge_group == value
    assert parse(merge_group=f" {value}\n").merge_group == value


def test_merge_group_defaults_to_run_all_in_both_modes() -> None:
    assert parse().merge_group == "run-all"
    assert parse(merge_group="").merge_group == "run-all"
    assert parse_inputs({"tasks": TASKS}, local_mode=True).merge_group == "run-all"


@pytest.mark.parametrize(
    "value", ["Select", "SELECT", "run_all", "runall", "all", "true", "select,run-all", "sélect"]
)
def test_merge_group_invalid(value: str) -> None:
    bad("merge-group", value)


# --- model and api-model -------------------------------------------------------------------------


@pytest.mark.parametrize("value", ["jev-1.13.0", "jev-0.0.0", "jev-10.200.3000"])
def test_model_valid(value: str) -> None:
    inputs = parse(model=value)
    assert inputs.model == value
    assert inputs.api_model == value


@pytest.mark.parametrize(
    "value",
    [
        "jev-latest",
        "jev-1.13",
        "JEV-1.13.0",
        "jev-1.13.0-rc1",
        "jev-1.13.0.1",
        "jev-١.13.0",
        "1.13.0",
    ],
)
def test_model_invalid(value: str) -> None:
    bad("model", value)


@pytest.mark.parametrize(
    "value", ["jev-latest", "a", "9", "org/model:v1.2_x", "A" + "b" * 127, "jev-1.13.0"]
)
def test_api_model_valid(value: str) -> None:
    assert parse(api_model=value).api_model == value


@pytest.mark.parametrize(
    "value", ["-x", ".x", "_x", "a b", "a?b", "modèle", "a" * 129, "a\\b", "a@b", "a\x00"]
)
def test_api_model_invalid(value: str) -> None:
    bad("api-model", value)


# --- skip-below -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [("0", 0.0), ("0.05", 0.05), ("0.10", 0.1), ("1", 1.0), ("1.0", 1.0), ("0.3", 0.3)],
)
def test_threshold_valid(value: str, expected: float) -> None:
    assert parse(skip_below=value).skip_below == expected
    assert parse_threshold(value) == expected


@pytest.mark.parametrize(
    "value",
    [".5", "5.", "00.1", "-0.1", "+0.1", "1e-2", "NaN", "Infinity", "0.2suffix", "0,5", "½", "٠.5"],
)
def test_threshold_syntax_errors(value: str) -> None:
    bad("skip-below", value)
    assert parse_threshold(value) is None


@pytest.mark.parametrize("value", ["1.01", "2", "10", "1.0000001", "9" * 400])
def test_threshold_range_errors(value: str) -> None:
    bad("skip-below", value)
    assert parse_threshold(value) is None


def test_threshold_parses_to_the_nearest_double() -> None:
    assert parse(skip_below="0.1000000000000000055511151231257827").skip_below == 0.1
    assert parse(skip_below="0." + "0" * 400 + "1").skip_below == 0.0


# --- booleans -------------------------------------------------------------------------------------


@pytest.mark.parametrize("field", ["allow-external-context", "force-all"])
@pytest.mark.parametrize(("value", "expected"), [("true", True), ("false", False)])
def test_booleans_valid(field: str, value: str, expected: bool) -> None:
    inputs = parse_inputs({"tasks": TASKS, field: value})
    attribute = field.replace("-", "_")
    assert getattr(inputs, attribute) is expected
    assert parse_bool(value) is expected


@pytest.mark.parametrize("field", ["allow-external-context", "force-all"])
@pytest.mark.parametrize("value", ["True", "TRUE", "yes", "1", "on", "False", "no", "0", "t"])
def test_booleans_invalid(field: str, value: str) -> None:
    bad(field, value)
    assert parse_bool(value) is None


# --- integers ------------------------------------------------------------------------------------

INTEGER_SYNTAX_ERRORS = [
    "0",
    "010",
    "+5",
    "-5",
    "1e4",
    "1.0",
    "10ms",
    "1_000",
    "1 000",
    "１２",
    "0x10",
]


@pytest.mark.parametrize(
    ("value", "expected"), [("1", 1), ("10000", 10000), ("2147483647", 2147483647)]
)
def test_timeout_valid(value: str, expected: int) -> None:
    assert parse(timeout_ms=value).timeout_ms == expected


@pytest.mark.parametrize("value", [*INTEGER_SYNTAX_ERRORS, "2147483648", "9" * 5000])
def test_timeout_invalid(value: str) -> None:
    bad("timeout-ms", value)


@pytest.mark.parametrize(
    ("value", "expected"), [("1", 1), ("65536", 65536), ("9007199254740991", 9007199254740991)]
)
def test_max_diff_bytes_valid(value: str, expected: int) -> None:
    assert parse(max_diff_bytes=value).max_diff_bytes == expected


@pytest.mark.parametrize("value", [*INTEGER_SYNTAX_ERRORS, "9007199254740992", "9" * 5000])
def test_max_diff_bytes_invalid(value: str) -> None:
    bad("max-diff-bytes", value)


def test_parse_positive_int_helper() -> None:
    assert parse_positive_int("7", 10) == 7
    assert parse_positive_int("10", 10) == 10
    assert parse_positive_int("11", 10) is None
    assert parse_positive_int("07", 10) is None
    assert parse_positive_int("9" * 10000, 10) is None


# --- api-key, github-token, pull-request ----------------------------------------------------------


@pytest.mark.parametrize("value", ["sk-abc123", "!~", "a" * 500, "key=with/odd+chars"])
def test_api_key_valid(value: str) -> None:
    assert parse(api_key=value).api_key == value


@pytest.mark.parametrize("value", ["a b", "a\tb", "a\x7fb", "clé", "a\x00b", "a\nb", "a\u00a0b"])
def test_api_key_invalid(value: str) -> None:
    bad("api-key", value)


def test_api_key_is_not_in_the_repr() -> None:
    inputs = parse(api_key="sk-secret-value", github_token="ghs_secret_value")
    assert "sk-secret-value" not in repr(inputs)
    assert "ghs_secret_value" not in repr(inputs)


@pytest.mark.parametrize("value", ["any thing é", "${{ github.token }}", "x\ty"])
def test_github_token_is_not_validated(value: str) -> None:
    assert parse(github_token=value).github_token == value


@pytest.mark.parametrize("value", ["", "42", "abc", "-1", "0"])
def test_pull_request_is_kept_as_text(value: str) -> None:
    assert parse(pull_request=f" {value} ").pull_request == value


# --- api-base-url ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("https://api.typesafe.ai", "https://api.typesafe.ai"),
        ("https://gateway.example/prefix///", "https://gateway.example/prefix"),
        ("HTTPS://API.Example:443/", "https://api.example"),
        ("hTtPs://api.example:8443", "https://api.example:8443"),
        ("https://api.example:00443", "https://api.example"),
        ("https://api.example:08080/", "https://api.example:8080"),
        ("https://api.example/a/./b/../c/", "https://api.example/a/c"),
        ("https://api.example/../../x", "https://api.example/x"),
        ("https://api.example/a/..", "https://api.example"),
        ("https://api.example/a//b", "https://api.example/a//b"),
        (
            "https://api.example/v1;x=1/%41@:~!$&'()*+,=-._",
            "https://api.example/v1;x=1/%41@:~!$&'()*+,=-._",
        ),
        ("https://10.0.0.1", "https://10.0.0.1"),
        ("https://255.255.255.255:1", "https://255.255.255.255:1"),
        ("https://[::1]", "https://[::1]"),
        ("https://[0:0:0:0:0:0:0:1]:65535/x", "https://[::1]:65535/x"),
        ("https://[2001:DB8:0:0:1:0:0:1]", "https://[2001:db8::1:0:0:1]"),
        ("https://[2001:db8:1:0:1:1:1:1]", "https://[2001:db8:1:0:1:1:1:1]"),
        ("https://[::ffff:1.2.3.4]", "https://[::ffff:102:304]"),
        ("https://my-host.internal", "https://my-host.internal"),
        ("https://a.b.c.example.", None),
        ("https://localhost", "https://localhost"),
        ("https://x.1a", "https://x.1a"),
    ],
)
def test_api_base_url_normalisation(value: str, expected: str | None) -> None:
    assert normalise_https_url(value) == expected
    if expected is None:
        bad("api-base-url", value)
    else:
        inputs = parse(api_base_url=value)
        assert inputs.api_base_url == expected
        assert inputs.endpoint == expected + "/v1/systemone"


@pytest.mark.parametrize(
    "value",
    [
        "http://api.example",
        "https:api.example",
        "https:/api.example",
        "file:///tmp/api",
        "/relative",
        "api.example",
        "https://user:pw@api.example",
        "https://user@api.example",
        "https://@api.example",
        "https://api.example?key=x",
        "https://api.example/?",
        "https://api.example#frag",
        "https://api.example/#",
        "https://api.example/a\nb",
        "https://api.example\n/x",
        "https://api.exa\x00mple",
        "https://api.example\\x",
        "https://api.example/a\\b",
        "https://api example",
        "https://api.example/a b",
        "https://api.example/\u00e9",
        "https://bücher.example",
        "https://api.example/\x7f",
        "https://api.example/a\u3000b",
        "https://",
        "https:///path",
        "https://:443",
        "https://api.example:",
        "https://api.example:0",
        "https://api.example:65536",
        "https://api.example:123456",
        "https://api.example:+1",
        "https://api.example:x",
        "https://api_example.com",
        "https://a..b",
        "https://.example",
        "https://example.123",
        "https://example.0x1f",
        "https://0x7f000001",
        "https://1.2.3",
        "https://1.2.3.4.5",
        "https://1.2.3.256",
        "https://1.2.3.04",
        "https://01.2.3.4",
        "https://2130706433",
        "https://[::1",
        "https://[::1]x",
        "https://[::1]:",
        "https://[fe80::1%25eth0]",
        "https://[not-ipv6]",
        "https://[1.2.3.4]",
        "https://api.example/%2e",
        "https://api.example/%2E%2E/x",
        "https://api.example/a/%2e./b",
        "https://api.example/%",
        "https://api.example/%4",
        "https://api.example/%zz",
        "https://api.example/a[b]",
        "https://api.example/a|b",
        'https://api.example/a"b',
        "https://api.example/a<b>",
        "https://api.example/a^b",
        "https://api.example/a`b",
        "https://api.example/a{b}",
    ],
)
def test_api_base_url_rejected(value: str) -> None:
    assert normalise_https_url(value) is None
    bad("api-base-url", value)


def test_normalise_without_path() -> None:
    assert normalise_https_url("https://ghe.example/", allow_path=False) == "https://ghe.example"
    assert (
        normalise_https_url("https://ghe.example/a/..", allow_path=False) == "https://ghe.example"
    )
    assert normalise_https_url("https://ghe.example/api/v3", allow_path=False) is None
    assert normalise_https_url("https://ghe.example/api/v3/") == "https://ghe.example/api/v3"


# --- validation order ---------------------------------------------------------------------------

# Each step of docs/reference.md, "Validation order" with an input that fails exactly that step.
ORDERED_FAILURES: list[tuple[str, str, str]] = [
    ("mode", "mode", "observe"),
    ("tested-ref", "tested-ref", "HEAD"),
    ("merge-group", "merge-group", "selective"),
    ("skip-below", "skip-below", ".5"),
    ("tasks", "tasks", "- unit"),
    ("model", "model", "jev-latest"),
    ("skip-below", "skip-below", "1.5"),
    ("allow-external-context", "allow-external-context", "yes"),
    ("force-all", "force-all", "TRUE"),
    ("timeout-ms", "timeout-ms", "10ms"),
    ("max-diff-bytes", "max-diff-bytes", "0"),
    ("timeout-ms", "timeout-ms", "2147483648"),
    ("api-base-url", "api-base-url", "http://api.example"),
    ("api-model", "api-model", "-alias"),
    ("api-key", "api-key", "two words"),
]


@pytest.mark.parametrize(
    ("earlier", "later"),
    [
        pair
        for pair in itertools.combinations(ORDERED_FAILURES, 2)
        if pair[0][1] != pair[1][1]  # two failures of one input cannot be combined
    ],
    ids=lambda step: f"{step[1]}={step[2]}",
)
def test_earlier_step_wins(earlier: tuple[str, str, str], later: tuple[str, str, str]) -> None:
    raw: dict[str, str | None] = {"tasks": TASKS, earlier[1]: earlier[2], later[1]: later[2]}
    expect_error(earlier[0], raw, earlier[2])


@pytest.mark.parametrize("step", ORDERED_FAILURES, ids=lambda step: f"{step[1]}={step[2]}")
def test_each_step_alone(step: tuple[str, str, str]) -> None:
    expect_error(step[0], {"tasks": TASKS, step[1]: step[2]}, step[2])


def test_every_adjacent_pair_is_covered() -> None:
    # Adjacent steps on the same input (skip-below syntax then tasks, etc.) differ in input, so
    # every adjacent pair of the order appears in test_earlier_step_wins.
    for first, second in itertools.pairwise(ORDERED_FAILURES):
        assert first[1] != second[1]


def test_force_all_never_skips_validation() -> None:
    expect_error("api-key", {"tasks": TASKS, "force-all": "true", "api-key": "a b"}, "a b")
    expect_error("tasks", {"tasks": "[]", "force-all": "true"})


# --- GitHub mode raw inputs ---------------------------------------------------------------------


def test_github_inputs_reads_input_variables() -> None:
    environ = {
        "INPUT_TASKS": TASKS,
        "INPUT_SKIP_BELOW": "0.2",
        "INPUT_API_BASE_URL": "https://gw.example",
        "INPUT_ALLOW_EXTERNAL_CONTEXT": "true",
        "INPUT_MODE": "",
        "skip-below": "0.9",
        "INPUT_skip_below": "0.9",
    }
    raw = github_inputs(environ)
    assert list(raw) == [spec.name for spec in c.INPUTS]
    assert raw["tasks"] == TASKS
    assert raw["skip-below"] == "0.2"
    assert raw["mode"] == ""
    assert raw["api-key"] is None
    inputs = parse_inputs(raw)
    assert inputs.skip_below == 0.2
    assert inputs.api_base_url == "https://gw.example"
    assert inputs.allow_external_context is True
    assert inputs.mode == "enforce"
    assert inputs.tested_ref == "merge"


def test_github_inputs_env_names() -> None:
    for spec in c.INPUTS:
        assert spec.env == "INPUT_" + spec.name.upper().replace("-", "_")
        assert github_inputs({spec.env: "x"})[spec.name] == "x"
