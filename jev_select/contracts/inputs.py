"""Inputs: names, defaults, constraint texts, validation patterns and input-error messages."""

from __future__ import annotations

from typing import Final, NamedTuple

from .vocab import MergeGroupMode, Mode, TestedRef

# --------------------------------------------------------------------------------------------
# Inputs (docs/reference.md, "Inputs"), in their declaration order
# --------------------------------------------------------------------------------------------


class InputSpec(NamedTuple):
    name: str
    env: str
    action_default: str
    cli_default: str
    required: bool
    description: str


INPUT_TASKS: Final = "tasks"
INPUT_TASKS_FILE: Final = "tasks-file"
INPUT_MODE: Final = "mode"
INPUT_MODEL: Final = "model"
INPUT_SKIP_BELOW: Final = "skip-below"
INPUT_API_BASE_URL: Final = "api-base-url"
INPUT_API_MODEL: Final = "api-model"
INPUT_API_KEY: Final = "api-key"
INPUT_ALLOW_EXTERNAL_CONTEXT: Final = "allow-external-context"
INPUT_GITHUB_TOKEN: Final = "github-token"
INPUT_TESTED_REF: Final = "tested-ref"
INPUT_PULL_REQUEST: Final = "pull-request"
INPUT_FORCE_ALL: Final = "force-all"
INPUT_TIMEOUT_MS: Final = "timeout-ms"
INPUT_MAX_DIFF_BYTES: Final = "max-diff-bytes"
INPUT_MERGE_GROUP: Final = "merge-group"

MODE_ENFORCE: Final = Mode.ENFORCE
MODE_SHADOW: Final = Mode.SHADOW
MODES: Final = (MODE_ENFORCE, MODE_SHADOW)

TESTED_REF_MERGE: Final = TestedRef.MERGE
TESTED_REF_HEAD: Final = TestedRef.HEAD
TESTED_REFS: Final = (TESTED_REF_MERGE, TESTED_REF_HEAD)

# What a merge_group event does (docs/reference.md, "Events"): run every task, or select on the
# queue commit against its verified base.
MERGE_GROUP_RUN_ALL: Final = MergeGroupMode.RUN_ALL
MERGE_GROUP_SELECT: Final = MergeGroupMode.SELECT
MERGE_GROUP_MODES: Final = (MERGE_GROUP_RUN_ALL, MERGE_GROUP_SELECT)

BOOL_TRUE: Final = "true"
BOOL_FALSE: Final = "false"

DEFAULT_MODEL: Final = "jev-1.13.0"
DEFAULT_SKIP_BELOW: Final = "0.05"
DEFAULT_API_BASE_URL: Final = "https://api.typesafe.ai"
DEFAULT_TIMEOUT_MS: Final = "10000"
DEFAULT_MAX_DIFF_BYTES: Final = "65536"
ACTION_GITHUB_TOKEN_DEFAULT: Final = "${{ github.token }}"
SYSTEM_ONE_PATH: Final = "/v1/systemone"

INPUTS: Final = (
    InputSpec(
        INPUT_TASKS,
        "INPUT_TASKS",
        "",
        "",
        False,
        "YAML mapping of task ID to task object (description, jobs, context_files, always, "
        "force_paths); set this or tasks-file.",
    ),
    InputSpec(
        INPUT_TASKS_FILE,
        "INPUT_TASKS_FILE",
        "",
        "",
        False,
        "Repository path of a task-table YAML file, read at the pull request's base commit; "
        "set this or tasks.",
    ),
    InputSpec(
        INPUT_MODE,
        "INPUT_MODE",
        MODE_ENFORCE,
        MODE_ENFORCE,
        False,
        "enforce applies the selection; shadow records proposals and keeps every task.",
    ),
    InputSpec(
        INPUT_MODEL,
        "INPUT_MODEL",
        DEFAULT_MODEL,
        DEFAULT_MODEL,
        False,
        "Canonical Jev model version the response must name, jev-X.Y.Z.",
    ),
    InputSpec(
        INPUT_SKIP_BELOW,
        "INPUT_SKIP_BELOW",
        DEFAULT_SKIP_BELOW,
        DEFAULT_SKIP_BELOW,
        False,
        "Decimal in [0, 1]; a task is skipped only when every score is strictly below it.",
    ),
    InputSpec(
        INPUT_API_BASE_URL,
        "INPUT_API_BASE_URL",
        DEFAULT_API_BASE_URL,
        DEFAULT_API_BASE_URL,
        False,
        "HTTPS root of the Jev System One API; /v1/systemone is appended.",
    ),
    InputSpec(
        INPUT_API_MODEL,
        "INPUT_API_MODEL",
        "",
        "",
        False,
        "Provider model identifier, possibly an alias; blank means the value of model.",
    ),
    InputSpec(
        INPUT_API_KEY,
        "INPUT_API_KEY",
        "",
        "",
        False,
        "Jev API key; blank means no request and every task runs.",
    ),
    InputSpec(
        INPUT_ALLOW_EXTERNAL_CONTEXT,
        "INPUT_ALLOW_EXTERNAL_CONTEXT",
        BOOL_FALSE,
        BOOL_FALSE,
        False,
        "'true' authorises sending the diff and task metadata to Jev.",
    ),
    InputSpec(
        INPUT_GITHUB_TOKEN,
        "INPUT_GITHUB_TOKEN",
        ACTION_GITHUB_TOKEN_DEFAULT,
        "",
        False,
        "Token for fetching commits and GitHub API lookups; contents: read suffices.",
    ),
    InputSpec(
        INPUT_TESTED_REF,
        "INPUT_TESTED_REF",
        TESTED_REF_MERGE,
        TESTED_REF_HEAD,
        False,
        "merge tests the verified merge commit; head tests the pull request head.",
    ),
    InputSpec(
        INPUT_PULL_REQUEST,
        "INPUT_PULL_REQUEST",
        "",
        "",
        False,
        "Open pull request number to evaluate from workflow_dispatch.",
    ),
    InputSpec(
        INPUT_MERGE_GROUP,
        "INPUT_MERGE_GROUP",
        MERGE_GROUP_RUN_ALL,
        MERGE_GROUP_RUN_ALL,
        False,
        "On merge_group events: run-all keeps every task; select plans the queue commit.",
    ),
    InputSpec(
        INPUT_FORCE_ALL,
        "INPUT_FORCE_ALL",
        BOOL_FALSE,
        BOOL_FALSE,
        False,
        "'true' runs every task without asking Jev.",
    ),
    InputSpec(
        INPUT_TIMEOUT_MS,
        "INPUT_TIMEOUT_MS",
        DEFAULT_TIMEOUT_MS,
        DEFAULT_TIMEOUT_MS,
        False,
        "Total deadline of the Jev evaluation in milliseconds, 1 to 2147483647.",
    ),
    InputSpec(
        INPUT_MAX_DIFF_BYTES,
        "INPUT_MAX_DIFF_BYTES",
        DEFAULT_MAX_DIFF_BYTES,
        DEFAULT_MAX_DIFF_BYTES,
        False,
        "Largest complete UTF-8 patch, in bytes, that may be evaluated.",
    ),
)

INPUT_NAMES: Final = tuple(spec.name for spec in INPUTS)

# Local-mode-only fields that can fail input validation (docs/reference.md, "Input errors",
# "Local use").
FIELD_TASKS_FILE: Final = INPUT_TASKS_FILE
FIELD_REPO: Final = "repo"
FIELD_BASE: Final = "base"
FIELD_HEAD: Final = "head"
FIELD_REMOTE: Final = "remote"

# Fixed constraint texts of docs/reference.md, "Input errors", keyed by field.
INPUT_CONSTRAINTS: Final = {
    INPUT_TASKS: "a YAML mapping of uniquely named task objects, each with a nonblank description "
    "and only the documented fields",
    INPUT_MODE: '"enforce" or "shadow"',
    INPUT_MODEL: "a canonical model version such as jev-1.13.0",
    INPUT_SKIP_BELOW: "a plain decimal number between 0 and 1 inclusive",
    INPUT_API_BASE_URL: "an https:// URL without user information, query, fragment, whitespace, "
    "control characters or backslashes",
    INPUT_API_MODEL: "1 to 128 ASCII letters, digits or the characters . _ : / -, starting with a "
    "letter or digit",
    INPUT_API_KEY: "printable ASCII without spaces, or an empty value",
    INPUT_ALLOW_EXTERNAL_CONTEXT: '"true" or "false"',
    INPUT_TESTED_REF: '"merge" or "head"',
    INPUT_MERGE_GROUP: '"run-all" or "select"',
    INPUT_FORCE_ALL: '"true" or "false"',
    INPUT_TIMEOUT_MS: "a whole number of milliseconds from 1 to 2147483647",
    INPUT_MAX_DIFF_BYTES: "a whole number of bytes from 1 to 9007199254740991",
    FIELD_TASKS_FILE: (
        "a readable UTF-8 file containing the task table (in GitHub mode a repository path, "
        "read at the base commit), never together with tasks"
    ),
    FIELD_REPO: "the path of a local Git repository",
    FIELD_BASE: "a revision naming a commit of the repository",
    FIELD_HEAD: "a revision naming a commit of the repository",
    FIELD_REMOTE: "an https:// URL, a loopback http:// URL or a local repository path",
}

INPUT_ERROR_TEMPLATE: Final = (
    'jev-select: invalid input "{field}"; expected {constraint}; no plan published.'
)
FAILURE_TEMPLATE: Final = "jev-select: planning failed ({code}); no plan published."
# SIGINT or SIGTERM (a runner cancelling the job): one of these lines, exit code 128 + signal
# number (130, 143). The second when the outputs had already been written in full.
CANCELLED_MESSAGE: Final = "jev-select: cancelled; no plan published."
CANCELLED_AFTER_PUBLICATION_MESSAGE: Final = (
    "jev-select: cancelled; the plan was already published."
)

# Validation patterns (docs/reference.md, "Inputs"); always applied with re.fullmatch.
MODEL_PATTERN: Final = r"jev-[0-9]+\.[0-9]+\.[0-9]+"
SKIP_BELOW_PATTERN: Final = r"(?:0|[1-9][0-9]*)(?:\.[0-9]+)?"
API_MODEL_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}"
POSITIVE_INTEGER_PATTERN: Final = r"[1-9][0-9]*"
TIMEOUT_MS_MAX: Final = 2147483647
MAX_SAFE_INTEGER: Final = 9007199254740991
SHA40_PATTERN: Final = r"[a-f0-9]{40}"
HEX64_PATTERN: Final = r"[a-f0-9]{64}"
# owner/name as GitHub spells them (docs/reference.md, "GitHub environment"): the owner starts
# with a letter or digit, then letters, digits, hyphens (old accounts end with one or hold two in
# a row) and underscores (managed users are handle_shortcode), 39 at most; the name is 1 to 100
# letters, digits, ".", "_" and "-", but never "." or "..", which would leave /repos/ in a URL.
REPOSITORY_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9_-]{0,38}/(?!\.\.?\Z)[A-Za-z0-9._-]{1,100}"

# "Whitespace" of docs/reference.md, "Conventions".
WHITESPACE: Final = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000\ufeff"
)
