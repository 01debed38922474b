"""What the commands that walk GitHub Actions history share: their flags and their client.

Shell module, used by ``rollout`` and ``history --repository``: the ``--map``, ``--max-wait`` and
``--token-env`` flags, and one ``ActionsHistory`` client per command whose rate-limit waits are
told on stderr.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING

from .. import contracts as c
from .arguments import integer_in
from .progress import end_steps

if TYPE_CHECKING:
    from ..edges.github.actions import ActionsHistory

__all__ = ["actions_client", "add_actions_arguments"]


def add_actions_arguments(parser: argparse.ArgumentParser) -> None:
    """``--map``, ``--max-wait`` and ``--token-env``."""
    parser.add_argument(
        "--map", dest="job_map", metavar="PATH", help="JSON file mapping job names to task IDs"
    )
    parser.add_argument(
        "--max-wait",
        metavar="SECONDS",
        type=integer_in(0, c.ROLLOUT_MAX_WAIT_LIMIT_S),
        default=c.ROLLOUT_DEFAULT_MAX_WAIT_S,
        help="seconds the command may wait on rate limits in total (default %(default)s)",
    )
    parser.add_argument(
        "--token-env",
        metavar="NAME",
        default=c.LOCAL_GITHUB_TOKEN_ENV,
        help="environment variable holding the GitHub token",
    )


def _tell(seconds: float) -> None:
    # Progress, not a diagnostic: stderr in both modes, so a JSON standard output stays one
    # document even inside Actions.
    end_steps()
    sys.stderr.write(c.ROLLOUT_WAIT_TEMPLATE.format(seconds=int(seconds)) + "\n")
    sys.stderr.flush()


def actions_client(
    root: str, namespace: argparse.Namespace, environ: Mapping[str, str]
) -> ActionsHistory:
    """The command's one client: its token from ``--token-env``, its wait budget ``--max-wait``."""
    from ..edges.github.actions import ActionsHistory

    return ActionsHistory(
        root, environ.get(namespace.token_env, ""), max_wait=namespace.max_wait, on_wait=_tell
    )
