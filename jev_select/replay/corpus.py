"""The evaluation corpus: cases, labels and base trees, rebuilt as real commits (docs/reference.md,
"Evaluation replay")."""

from __future__ import annotations

import os
import re
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import attrs

from .. import contracts as c
from ..core.evidence.resolve import ActionFile
from ..core.jsonutil import (
    JsonError,
    strict_loads,
)
from ..edges.files import open_regular_file
from ..edges.git.remotes import normalise_remote
from ..edges.git.runner import GitError, run_git, sanitised_environment
from ..errors import CommandFailure

# Corpus and campaign layout.
CORPUS_FILE = "corpus.json"
CASES_DIR = "cases"
BASES_DIR = "bases"
PATCH_FILE = "change.patch"
INPUTS_FILE = "inputs.json"
LABELS_FILE = "labels.json"
ACTIONS_FILE = "actions.json"
DEFAULT_CORPUS_DIR = os.path.join("tests", "evaluation")
DEFAULT_CAMPAIGN_DIR = "recordings"
CAMPAIGN_FILE = "campaign.json"
EXPECTED_FILE = "expected.json"
CORPUS_VERSION = 1
CAMPAIGN_VERSION = 1
# Deliberate faults a case may ask the synthetic scorer for.
FAULT_MISSING_ANSWER = "missing-answer"
FAULT_MODEL_MISMATCH = "model-mismatch"
SYNTHETIC_FAULTS = (FAULT_MISSING_ANSWER, FAULT_MODEL_MISMATCH)
RECORDING_NAME = re.compile(r"[0-9a-f]{64}\.json")


# The replayed commits are fully determined, so request bodies (which carry the SHAs) are too.
_IDENTITY = {
    "GIT_AUTHOR_NAME": "jev-select corpus",
    "GIT_AUTHOR_EMAIL": "corpus@jev-select.invalid",
    "GIT_COMMITTER_NAME": "jev-select corpus",
    "GIT_COMMITTER_EMAIL": "corpus@jev-select.invalid",
    "GIT_AUTHOR_DATE": "1704067200 +0000",
    "GIT_COMMITTER_DATE": "1704067200 +0000",
}
_DETERMINISTIC_TREE = (
    "-c",
    "core.fileMode=false",
    "-c",
    "core.autocrlf=false",
    "-c",
    "core.symlinks=false",
)
_GIT_CAP = 16 * 1_048_576


class ReplayFailure(CommandFailure, failures=c.REPLAY_FAILURES):
    """The replay cannot vouch for its figures. Carries a code and, when known, the case ID."""

    def __init__(self, code: str, case: str | None = None) -> None:
        super().__init__(code)
        self.case = case

    @property
    def message(self) -> str:
        if self.case is not None:
            return c.REPLAY_CASE_FAILURE_TEMPLATE.format(code=self.known_code, case=self.case)
        return super().message


# ---------------------------------------------------------------------------------------------
# Corpus
# ---------------------------------------------------------------------------------------------


@attrs.frozen
class Case:
    """One corpus case: where its files are, its input strings, labels and synthetic settings."""

    id: str
    split: str
    directory: Path
    base_dir: Path  # the shared base tree the case's patch applies to
    inputs: Mapping[str, str]
    labels: Mapping[str, str]  # task ID -> relevant / irrelevant
    actions: Mapping[str, ActionFile]  # "owner/repo[/path]@ref" -> metadata snapshot
    synthetic_scores: Mapping[str, float] = attrs.field(factory=dict)
    synthetic_fault: str | None = None

    @property
    def patch_path(self) -> Path:
        return self.directory / PATCH_FILE


def read_json(path: Path, failure: ReplayFailure) -> object:
    try:
        with open_regular_file(path) as handle:
            value: object = strict_loads(handle.read())
    except (OSError, JsonError):
        raise failure from None
    return value


def _load_case(corpus_dir: Path, entry: object) -> Case:
    if not isinstance(entry, dict) or not isinstance(entry.get("id"), str):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    case_id = entry["id"]
    if re.fullmatch(c.REPLAY_CASE_ID_PATTERN, case_id, re.ASCII) is None:
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    invalid = ReplayFailure(c.REPLAY_INVALID_CORPUS, case_id)
    split = entry.get("split")
    if split not in c.REPLAY_SPLITS:
        raise invalid
    directory = corpus_dir / CASES_DIR / case_id
    base_name = entry.get("base")
    if (
        not isinstance(base_name, str)
        or re.fullmatch(c.REPLAY_CASE_ID_PATTERN, base_name, re.ASCII) is None
    ):
        raise invalid
    base_dir = corpus_dir / BASES_DIR / base_name
    if not base_dir.is_dir() or not (directory / PATCH_FILE).is_file():
        raise invalid
    inputs = read_json(directory / INPUTS_FILE, invalid)
    if not isinstance(inputs, dict) or not all(isinstance(v, str) for v in inputs.values()):
        raise invalid
    labels_document = read_json(directory / LABELS_FILE, invalid)
    labelled = (
        labels_document.get(c.REPLAY_LABELS_FIELD_TASKS)
        if isinstance(labels_document, dict)
        else None
    )
    if not isinstance(labelled, dict):
        raise invalid
    labels: dict[str, str] = {}
    for task_id, label in labelled.items():
        if not isinstance(label, dict) or label.get("label") not in c.REPLAY_LABELS:
            raise invalid
        if not isinstance(label.get("reason"), str) or not isinstance(label.get("provenance"), str):
            raise invalid
        labels[task_id] = label["label"]
    actions: dict[str, ActionFile] = {}
    if (directory / ACTIONS_FILE).is_file():
        snapshot = read_json(directory / ACTIONS_FILE, invalid)
        if not isinstance(snapshot, dict):
            raise invalid
        for key, value in snapshot.items():
            try:
                actions[key] = ActionFile(
                    text=value["text"],
                    file_path=value["file_path"],
                    resolved_sha=value["resolved_sha"],
                )
            except (KeyError, TypeError):
                raise invalid from None
    synthetic = entry.get("synthetic", {})
    if not isinstance(synthetic, dict):
        raise invalid
    scores = synthetic.get("scores", {})
    fault = synthetic.get("fault")
    if not isinstance(scores, dict) or not all(
        isinstance(value, int | float) and not isinstance(value, bool) and 0 <= value <= 1
        for value in scores.values()
    ):
        raise invalid
    if fault is not None and fault not in SYNTHETIC_FAULTS:
        raise invalid
    return Case(
        id=case_id,
        split=split,
        directory=directory,
        base_dir=base_dir,
        inputs=inputs,
        labels=labels,
        actions=actions,
        synthetic_scores={key: float(value) for key, value in scores.items()},
        synthetic_fault=fault,
    )


def load_corpus(corpus_dir: Path, only: Sequence[str] = ()) -> tuple[Case, ...]:
    """Every case of ``corpus.json`` (or just the IDs in ``only``), in corpus order."""
    document = read_json(corpus_dir / CORPUS_FILE, ReplayFailure(c.REPLAY_INVALID_CORPUS))
    if (
        not isinstance(document, dict)
        or document.get("version") != CORPUS_VERSION
        or not isinstance(document.get("cases"), list)
    ):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    cases = tuple(_load_case(corpus_dir, entry) for entry in document["cases"])
    ids = [case.id for case in cases]
    if len(set(ids)) != len(ids) or any(case_id not in ids for case_id in only):
        raise ReplayFailure(c.REPLAY_INVALID_CORPUS)
    return tuple(case for case in cases if not only or case.id in only)


# ---------------------------------------------------------------------------------------------
# Rebuilding a case as commits
# ---------------------------------------------------------------------------------------------


class CaseRepository:
    """A temporary bare repository holding the case's base commit and its patched head."""

    def __init__(self, case: Case, *, temp_root: str, environ: Mapping[str, str]) -> None:
        self.case = case
        self._temp_root = temp_root
        self._environ = environ
        self.directory: str | None = None
        self.base_sha = ""
        self.head_sha = ""
        self.remote = ""

    def __enter__(self) -> CaseRepository:
        self.directory = tempfile.mkdtemp(prefix="jev-select-replay-", dir=self._temp_root)
        try:
            self._build(self.directory)
        except (GitError, OSError):
            self.close()
            raise ReplayFailure(c.REPLAY_CASE_UNBUILDABLE, self.case.id) from None
        except BaseException:
            self.close()
            raise
        return self

    def __exit__(self, *_: object) -> None:
        self.close()

    def close(self) -> None:
        directory, self.directory = self.directory, None
        if directory is not None:
            shutil.rmtree(directory, ignore_errors=True)

    def _build(self, directory: str) -> None:
        git_dir = os.path.join(directory, "repo.git")
        environment = sanitised_environment(self._environ)
        environment.update(_IDENTITY)
        environment["GIT_INDEX_FILE"] = os.path.join(directory, "index")

        def git(*args: str) -> str:
            output = run_git(
                ["--git-dir", git_dir, *_DETERMINISTIC_TREE, *args],
                cwd=directory,
                environment=environment,
                cap=_GIT_CAP,
            )
            return output.decode("ascii", "replace").strip()

        run_git(
            ["init", "--bare", "--quiet", git_dir],
            cwd=directory,
            environment=environment,
            cap=_GIT_CAP,
        )
        base_tree = str(self.case.base_dir.resolve())
        git("--work-tree", base_tree, "add", "--all", "--", ".")
        self.base_sha = git("commit-tree", git("write-tree"), "-m", "case base tree")
        patch = str(self.case.patch_path.resolve())
        git("apply", "--cached", "--check", patch)
        git("apply", "--cached", patch)
        self.head_sha = git(
            "commit-tree", git("write-tree"), "-p", self.base_sha, "-m", "case change"
        )
        git("update-ref", "refs/heads/base", self.base_sha)
        git("update-ref", "refs/heads/main", self.head_sha)
        self.remote = normalise_remote(git_dir, cwd=directory)
