"""Settings shared by the local commands (``plan`` in local mode, ``history``).

Application module: the task table file and flags become validated inputs with the rules of local
``plan`` (docs/reference.md, "Local use"), and external action metadata is looked up through the
GitHub API only on first use. A local run's lookups (``local_environ``) also keep commit-pinned
answers in the user's cache directory and print the cause of failed lookups once on stderr
(docs/reference.md, "Lookup failures and the local cache").
"""

from __future__ import annotations

import argparse
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import contracts as c
from ..core.inputs import parse_inputs, threshold_syntax_ok, trim
from ..core.models import Inputs
from ..edges.files import read_capped_text
from ..errors import InputError

if TYPE_CHECKING:
    from ..core.lookup_causes import LookupCause
    from ..edges.github.lookups import LookupApi, LookupStore, MetadataLookups

__all__ = ["local_inputs", "lookup_cause_of", "metadata_lookups", "read_tasks_file"]


def metadata_lookups(
    server_origin: str,
    api_url: str | None,
    token: str,
    *,
    local_environ: Mapping[str, str] | None = None,
) -> MetadataLookups:
    """GitHub lookups for one run, the HTTP client loaded on the first lookup only.

    ``local_environ`` is the environment of a local command (``plan`` in local mode, ``check``,
    ``history``): its lookups answer commit-pinned references from the user's lookup cache and
    keep what they fetch there (never when ``GITHUB_ACTIONS=true``), and the cause of failed
    lookups is printed once on stderr. Without it (GitHub mode) nothing is cached or printed;
    the cause is still kept for the step summary (``lookup_cause_of``).
    """
    from ..edges.github.lookups import MetadataLookups, NoUsableApi, announce_cause
    from ..edges.github.roots import api_root

    root = api_root(server_origin, api_url)

    def make_api() -> LookupApi:
        # Loaded on the first lookup only: most runs never look anything up (every bypass,
        # every table without jobs) and must not pay for importing the HTTP stack.
        from ..edges.github.api import GitHubApi

        # An unusable GITHUB_API_URL must not send the token to another host: no lookups at
        # all, so every external action and workflow becomes a metadata gap of its task.
        return GitHubApi(root, token) if root is not None else NoUsableApi()

    cache: LookupStore | None = None
    if local_environ is not None and root is not None:
        from ..edges.github.cache import local_lookup_cache

        cache = local_lookup_cache(local_environ, root)
    return MetadataLookups(
        api_factory=make_api,
        bound_s=c.METADATA_LOOKUP_BOUND_S,
        cache=cache,
        on_cause=announce_cause if local_environ is not None else None,
    )


def lookup_cause_of(lookups: object) -> LookupCause | None:
    """Why the lookups of a run failed (``RunContext.lookups``), for the step summary: the most
    severe cause seen, None when every failure was "not found" or nothing was looked up."""
    from ..edges.github.lookups import lookup_cause_of as cause_of

    return cause_of(lookups)


def local_inputs(namespace: argparse.Namespace, environ: Mapping[str, str]) -> Inputs:
    raw: dict[str, str | None] = {
        c.INPUT_MODE: namespace.mode,
        c.INPUT_MODEL: namespace.model,
        c.INPUT_SKIP_BELOW: namespace.skip_below,
        c.INPUT_API_BASE_URL: namespace.api_base_url,
        c.INPUT_API_MODEL: namespace.api_model,
        c.INPUT_API_KEY: environ.get(c.LOCAL_API_KEY_ENV, ""),
        c.INPUT_ALLOW_EXTERNAL_CONTEXT: c.BOOL_TRUE
        if namespace.allow_external_context
        else c.BOOL_FALSE,
        c.INPUT_GITHUB_TOKEN: environ.get(c.LOCAL_GITHUB_TOKEN_ENV, ""),
        c.INPUT_TESTED_REF: namespace.tested_ref,
        c.INPUT_PULL_REQUEST: "",
        c.INPUT_FORCE_ALL: c.BOOL_TRUE if namespace.force_all else c.BOOL_FALSE,
        c.INPUT_TIMEOUT_MS: namespace.timeout_ms,
        c.INPUT_MAX_DIFF_BYTES: namespace.max_diff_bytes,
    }
    text = read_tasks_file(namespace.tasks_file)
    if text is None:
        # The file is read at the position of `tasks` in the validation order (docs/reference.md,
        # "Validation order"): an earlier field's error still wins over an unreadable file.
        try:
            parse_inputs({**raw, c.INPUT_TASKS: "{}"}, local_mode=True)
        except InputError as error:
            if error.field in (c.INPUT_MODE, c.INPUT_TESTED_REF, c.INPUT_MERGE_GROUP) or (
                error.field == c.INPUT_SKIP_BELOW
                and not threshold_syntax_ok(trim(raw[c.INPUT_SKIP_BELOW]))
            ):
                raise
        raise InputError(c.FIELD_TASKS_FILE)
    return parse_inputs({**raw, c.INPUT_TASKS: text}, local_mode=True)


def read_tasks_file(path: str | None) -> str | None:
    if not path:
        return None
    try:
        # A text over the cap comes back too long, and parse_tasks refuses it as input tasks.
        return read_capped_text(path, c.MAX_TASKS_TEXT_BYTES)
    except OSError:  # a FIFO, a device or a directory too: refused before it is read
        return None
