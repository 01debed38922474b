"""``jev-select replay``: the subcommand, its options and its one-line failures."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from pathlib import Path

from .. import contracts as c
from ..core.jsonutil import (
    pretty_json,
)
from ..errors import InvocationError
from ..replay.corpus import DEFAULT_CORPUS_DIR, ReplayFailure
from ..replay.metrics import render_table, result_json
from ..replay.run import RECORD_LIVE, RECORD_SYNTHETIC, replay_corpus, write_text

# ---------------------------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------------------------


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add ``jev-select replay`` to the command parser."""
    replay = commands.add_parser(
        c.COMMAND_REPLAY,
        help="replay the evaluation corpus against a recorded campaign (offline)",
        exit_on_error=False,
    )
    replay.add_argument("--corpus", default=DEFAULT_CORPUS_DIR, help="corpus directory")
    replay.add_argument("--campaign", help="campaign directory (default <corpus>/recordings)")
    replay.add_argument("--case", action="append", default=[], help="replay only this case")
    replay.add_argument("--json", dest="json_path", help="also write the result as JSON here")
    replay.add_argument(
        "--live",
        action="store_true",
        help="record a new campaign from Jev (key from JEV_API_KEY; never run in CI)",
    )
    replay.add_argument(
        "--write-synthetic",
        action="store_true",
        help="regenerate the synthetic campaign from the labels",
    )
    replay.add_argument(
        f"--{c.INPUT_API_BASE_URL}", dest="api_base_url", help="Jev API root for --live"
    )
    replay.set_defaults(handler=run_replay)


def run_replay(namespace: argparse.Namespace, environ: Mapping[str, str]) -> int:
    """``jev-select replay``: print the table (and write JSON), or one fixed failure line."""
    if namespace.live and namespace.write_synthetic:
        raise InvocationError("--live and --write-synthetic exclude each other")
    if namespace.api_base_url is not None and not namespace.live:
        raise InvocationError("--api-base-url needs --live")
    record = (
        RECORD_LIVE if namespace.live else RECORD_SYNTHETIC if namespace.write_synthetic else None
    )
    corpus = Path(namespace.corpus)
    campaign = Path(namespace.campaign) if namespace.campaign is not None else None
    api_key = ""
    if record == RECORD_LIVE:
        api_key = environ.get(c.LOCAL_API_KEY_ENV, "").strip(c.WHITESPACE)
        if not api_key:
            raise ReplayFailure(c.REPLAY_LIVE_UNAVAILABLE)
    result = replay_corpus(
        corpus,
        campaign,
        environ=environ,
        only=tuple(namespace.case),
        record=record,
        api_key=api_key,
        api_base_url=namespace.api_base_url,
    )
    if namespace.json_path is not None:
        try:
            write_text(Path(namespace.json_path), pretty_json(result_json(result)) + "\n")
        except OSError:
            raise ReplayFailure(c.REPLAY_JSON_UNWRITABLE) from None
    sys.stdout.write(render_table(result))
    sys.stdout.flush()
    return 0
