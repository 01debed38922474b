"""Every public string and constant of jev-select, in one place: one module per vocabulary.

This package is pure data and imports nothing else from the package. Each module holds one
vocabulary (``inputs``, ``outputs``, ``reasons``, ``gaps``, ``check``, ``vocab`` ...), and this
one re-exports every name of them all, so ``contracts.X`` names any constant wherever it lives.
Every other module takes names, codes, texts and limits from here;
``tests/contracts/test_contracts.py`` fails when any of them is spelled elsewhere or when
``action.yml``, the schemas or the docs disagree with these modules.
"""

from __future__ import annotations

from .analysis import *  # noqa: F403
from .calibrate import *  # noqa: F403
from .ceiling import *  # noqa: F403
from .check import *  # noqa: F403
from .failures import *  # noqa: F403
from .gaps import *  # noqa: F403
from .git import *  # noqa: F403
from .github import *  # noqa: F403
from .history import *  # noqa: F403
from .inputs import *  # noqa: F403
from .jev import *  # noqa: F403
from .names import *  # noqa: F403
from .outputs import *  # noqa: F403
from .preview import *  # noqa: F403
from .reasons import *  # noqa: F403
from .replay import *  # noqa: F403
from .report import *  # noqa: F403
from .rollout import *  # noqa: F403
from .tasks import *  # noqa: F403
from .vocab import *  # noqa: F403
