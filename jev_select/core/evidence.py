"""Task metadata evidence (spec §7): workflows, actions, package scripts and context files.

This module is pure apart from the two callables it is handed: ``read_file`` (raw bytes of a
repository path at the metadata commit, or None) and ``fetch_action`` (an external action's
metadata file, see ``github_api.GitHubApi.fetch_action``). Nothing found in metadata is executed.

Per task, resolution runs in four phases, and gaps are recorded in that order (first seen, once):

1. job references, in order (workflow, job and reusable-workflow gaps);
2. actions, once per distinct ``uses`` in first-appearance order;
3. package scripts, scanning each step's ``run`` in job and step order;
4. context files, in the configured order.

Public API:

- ``resolve_metadata(tasks, *, read_file, fetch_action, repository, commit) -> MetadataResult``
- ``MetadataFiles(read_file, fetch_action, *, repository, commit)``: cached, decoded file access at
  one commit, shared by every task of a run (each file read, each workflow parsed, each action
  resolved at most once).
- ``build_evidence(task, metadata_files) -> TaskMetadata``: the pure per-task builder; its
  ``evidence`` is the ``TaskEvidence`` of the task and its ``hints`` the task's own
  working-directory hints (spec §7.9), first-seen order.
- ``ActionFile``: what ``fetch_action`` returns on success.
- ``normalise_path(text) -> str | None``: the path normalisation of spec §7.5.
- ``scan_command(command) -> ScriptScan``: the package-script scanner of spec §7.4.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import yaml

from .. import contracts as c
from .jsonutil import (
    JsonError,
    canonical_json,
    code_unit_key,
    sort_keys_deep,
    strict_loads,
)
from .models import MetadataResult, Task, TaskEvidence, TaskTable
from .workflow_shapes import flatten_steps, job_shape_supported, workflow_shape_supported
from .yamlstrict import YamlStrictError, load_strict, mapping_key_text

__all__ = [
    "ActionFile",
    "MetadataFiles",
    "ScriptScan",
    "TaskMetadata",
    "build_evidence",
    "normalise_path",
    "resolve_metadata",
    "scan_command",
]

ReadFile = Callable[[str], "bytes | None"]
FetchAction = Callable[[str, str, str, str], "ActionFile | str"]

_ACTION_INVALID = "invalid"
_BOM = "\ufeff"
_DOCKER_PREFIX = "docker://"
_LOCAL_PREFIX = "./"
_ACTION_FILE_NAMES = ("action.yml", "action.yaml")
_MANIFEST_NAME = "package.json"
_EXPRESSION_MARKERS = ("${{", "}}")
_CURRENT_DIRECTORY = "."

# Workflow and action keys read from YAML (GitHub Actions syntax, not product contracts).
_JOBS = "jobs"
_STEPS = "steps"
_NAME = "name"
_RUN = "run"
_USES = "uses"
_WITH = "with"
_NEEDS = "needs"
_SHELL = "shell"
_DEFAULTS = "defaults"
_WORKING_DIRECTORY = "working-directory"
_DESCRIPTION = "description"
_INPUTS = "inputs"
_SCRIPTS = "scripts"

# Provenance kinds, by their position in the contract tuple (spec §7.8 order).
_KIND_WORKFLOW_JOB = c.PROVENANCE_KINDS[0]
_KIND_WORKFLOW_DEFAULTS = c.PROVENANCE_KINDS[1]
_KIND_JOB_DEFAULTS = c.PROVENANCE_KINDS[2]
_KIND_WORKFLOW_STEP = c.PROVENANCE_KINDS[3]
_KIND_ACTION = c.PROVENANCE_KINDS[4]
_KIND_PACKAGE_SCRIPT = c.PROVENANCE_KINDS[5]
_KIND_CONTEXT_FILE = c.PROVENANCE_KINDS[6]

# --------------------------------------------------------------------------------------------
# Package-script scanning (spec §7.4)
# --------------------------------------------------------------------------------------------

_WS = "[" + re.escape(c.WHITESPACE) + "]"
_NAME_PATTERN = "[A-Za-z0-9][A-Za-z0-9:_-]*+"
# Possessive quantifiers stop the engine from backtracking into shorter names or into reading
# the word "run" itself as the script name.
_SCRIPT_CALL = re.compile(
    rf"\b(?:(?:npm|pnpm|yarn){_WS}++(?:(?:run|exec){_WS}++)?+|bun{_WS}++run{_WS}++)"
    rf"({_NAME_PATTERN})",
    re.ASCII,
)
_SKIPPED_NAMES = frozenset(
    (
        "install",
        "ci",
        "add",
        "remove",
        "update",
        "publish",
        "pack",
        "exec",
        "dlx",
        "config",
        "init",
        "version",
    )
)
_TOOL_WORD = re.compile(r"\b(?:npm|pnpm|yarn|bun)\b", re.ASCII)
_WS_CHARS = re.escape(c.WHITESPACE)
_DIRECTORY_CHANGE = re.compile(
    rf"(?:\A|(?<=[{_WS_CHARS};&|()]))(?:cd|pushd|popd)(?={_WS})",
)
_DIRECTORY_FLAG = re.compile(
    rf"(?:\A|(?<={_WS}))"
    rf"(?:--prefix|--cwd|--dir|--workspaces|--workspace|--filter)(?=[={_WS_CHARS}]|\Z)",
)
_SHORT_DIRECTORY_FLAG = re.compile(rf"(?:\A|(?<={_WS}))-[Cw](?={_WS}|\Z)")
_HEX40 = re.compile(r"[0-9a-fA-F]{40}")


@attrs.frozen
class ScriptScan:
    """Script names a command invokes, or ``unresolved`` when its directory cannot be known."""

    names: tuple[str, ...] = ()
    unresolved: bool = False


def scan_command(command: str) -> ScriptScan:
    """Find the package scripts ``command`` runs (spec §7.4), in order of appearance."""
    if _TOOL_WORD.search(command) is not None and (
        _DIRECTORY_CHANGE.search(command) is not None
        or _DIRECTORY_FLAG.search(command) is not None
        or _SHORT_DIRECTORY_FLAG.search(command) is not None
    ):
        return ScriptScan(unresolved=True)
    names: list[str] = []
    for match in _SCRIPT_CALL.finditer(command):
        name = match.group(1)
        following = command[match.end(1) : match.end(1) + 1]
        if following in ("/", ".") or name in _SKIPPED_NAMES:
            continue
        names.append(name)
    return ScriptScan(names=tuple(names))


# --------------------------------------------------------------------------------------------
# Paths, text and JSON-safe values
# --------------------------------------------------------------------------------------------


def normalise_path(text: str) -> str | None:
    """Strip one leading ``./``; None for an empty, absolute or malformed path (spec §7.5)."""
    path = text[2:] if text.startswith(_LOCAL_PREFIX) else text
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        return None
    if any(segment in ("", "..") for segment in path.split("/")):
        return None
    return path


def _is_dynamic(text: str) -> bool:
    return any(marker in text for marker in _EXPRESSION_MARKERS)


def _decode(data: bytes | None) -> str | None:
    """Strict UTF-8 without one leading BOM; None when absent, oversized or undecodable."""
    if data is None or len(data) > c.METADATA_FILE_CAP:
        return None
    try:
        text = data.decode("utf-8", "strict")
    except UnicodeDecodeError:
        return None
    return text[1:] if text.startswith(_BOM) else text


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_text(key: Any) -> str:
    """A mapping key as a string, by the conversion rules of spec §4.1."""
    try:
        return mapping_key_text(key)
    except YamlStrictError:
        return str(key)


def _json_safe(value: Any) -> Any:
    """A copy of a YAML value that JSON can carry (string keys, lists for sequences)."""
    if isinstance(value, Mapping):
        return {_key_text(key): _json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_json_safe(item) for item in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return str(value)


def _whole_file_location(text: str) -> dict[str, int]:
    last_newline = text.rfind("\n")
    return {
        "line": 1,
        "column": 1,
        "endLine": text.count("\n") + 1,
        "endColumn": len(text) - last_newline,
    }


def _mark_location(start: yaml.Mark, end: yaml.Mark) -> dict[str, int]:
    return {
        "line": start.line + 1,
        "column": start.column + 1,
        "endLine": end.line + 1,
        "endColumn": end.column + 1,
    }


def _text_location(text: str, needle: str) -> dict[str, int]:
    """The first occurrence of ``needle`` in ``text``, or the whole file."""
    offset = text.find(needle)
    if offset < 0:
        return _whole_file_location(text)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    end = offset + len(needle)
    end_line = text.count("\n", 0, end) + 1
    end_column = end - (text.rfind("\n", 0, end) + 1) + 1
    return {"line": line, "column": column, "endLine": end_line, "endColumn": end_column}


# --------------------------------------------------------------------------------------------
# Parsed YAML documents with best-effort node positions
# --------------------------------------------------------------------------------------------


class _YamlDocument:
    """A strictly parsed YAML text; node positions come from a second, composition-only pass."""

    def __init__(self, text: str, data: Any) -> None:
        self.text = text
        self.data = data
        self.sha256 = _sha256(text)
        self._root: yaml.Node | None = None
        self._composed = False

    @property
    def root(self) -> yaml.Node | None:
        if not self._composed:
            self._composed = True
            try:
                # The text already passed the strict loader, so plain composition is safe; the
                # pure-Python loader keeps the marks.
                self._root = yaml.compose(self.text, Loader=yaml.SafeLoader)
            except Exception:  # positions are best effort; any failure means "whole file"
                self._root = None
        return self._root

    def location(self, path: Sequence[str | int], *, with_key: bool = False) -> dict[str, int]:
        """Position of the element at ``path`` (mapping keys and sequence indexes)."""
        node = self.root
        key_node: yaml.Node | None = None
        for step in path:
            key_node = None
            if isinstance(step, int) and isinstance(node, yaml.SequenceNode):
                node = node.value[step] if 0 <= step < len(node.value) else None
            elif isinstance(step, str) and isinstance(node, yaml.MappingNode):
                found = None
                for candidate_key, candidate_value in node.value:
                    if isinstance(candidate_key, yaml.ScalarNode) and candidate_key.value == step:
                        found = (candidate_key, candidate_value)
                        break
                if found is None:
                    node = None
                else:
                    key_node, node = found
            else:
                node = None
            if node is None:
                return _whole_file_location(self.text)
        if node is None:
            return _whole_file_location(self.text)
        start = key_node.start_mark if with_key and key_node is not None else node.start_mark
        return _mark_location(start, node.end_mark)


def _parse_yaml(text: str) -> _YamlDocument | None:
    try:
        data = load_strict(text, aliases=True)
    except Exception:  # any loader failure, including the strict rejections, is "invalid"
        return None
    return _YamlDocument(text, data)


# --------------------------------------------------------------------------------------------
# File access at the metadata commit
# --------------------------------------------------------------------------------------------


@attrs.frozen
class ActionFile:
    """An external action's metadata file.

    ``text`` is the strictly decoded UTF-8 text (a leading BOM, if any, is removed here, not by
    the fetcher); ``file_path`` its path inside the action's repository (``action.yml`` or
    ``<sub/path>/action.yaml``); ``resolved_sha`` the 40-hex commit the ref resolved to.
    """

    text: str
    file_path: str
    resolved_sha: str


@attrs.frozen
class _ResolvedAction:
    document: _YamlDocument
    repository: str
    commit: str
    file: str
    resolved_sha: str | None


_ActionOutcome = _ResolvedAction | str  # a warning prefix on failure


@attrs.frozen
class _Manifest:
    text: str
    data: Mapping[str, Any]


class MetadataFiles:
    """Decoded, cached access to metadata files at one commit and to external actions.

    Shared by every task of one resolution so that each path is read, each workflow parsed and
    each action resolved at most once. ``repository`` and ``commit`` name the source in
    provenance locators and ``hashes`` keys.
    """

    def __init__(
        self,
        read_file: ReadFile,
        fetch_action: FetchAction,
        *,
        repository: str,
        commit: str,
    ) -> None:
        self.repository = repository
        self.commit = commit
        self._read_file = read_file
        self._fetch_action = fetch_action
        self._texts: dict[str, str | None] = {}
        self._workflows: dict[str, _YamlDocument | str] = {}
        self._actions: dict[str, _ActionOutcome] = {}
        self._manifests: dict[str, _Manifest | str] = {}

    def text(self, path: str) -> str | None:
        """Decoded text of a normalised repository path, or None when it counts as missing."""
        if path not in self._texts:
            if normalise_path(path) != path or _CURRENT_DIRECTORY in path.split("/"):
                # A "." segment passes normalisation but names no stored path (spec §7.5).
                self._texts[path] = None
                return None
            try:
                data = self._read_file(path)
            except Exception:  # a failing reader is the same as a missing file
                data = None
            self._texts[path] = _decode(data)
        return self._texts[path]

    def workflow(self, path: str) -> _YamlDocument | str:
        """The parsed workflow at ``path`` (as written), or a warning prefix."""
        if path not in self._workflows:
            normalised = normalise_path(path)
            text = self.text(normalised) if normalised is not None else None
            outcome: _YamlDocument | str
            if text is None:
                outcome = c.WARN_WORKFLOW_MISSING
            else:
                document = _parse_yaml(text)
                if document is None or not isinstance(document.data, Mapping):
                    outcome = c.WARN_WORKFLOW_INVALID
                else:
                    outcome = document
            self._workflows[path] = outcome
        return self._workflows[path]

    def manifest(self, path: str) -> _Manifest | str:
        """The parsed ``package.json`` at a normalised path, or a warning prefix."""
        if path not in self._manifests:
            text = self.text(path)
            outcome: _Manifest | str
            if text is None:
                outcome = c.WARN_PACKAGE_SCRIPT_MISSING
            else:
                try:
                    data = strict_loads(text)
                except JsonError:
                    data = None
                if isinstance(data, dict):
                    outcome = _Manifest(text, data)
                else:
                    outcome = c.WARN_PACKAGE_MANIFEST_INVALID
            self._manifests[path] = outcome
        return self._manifests[path]

    def action(self, uses: str) -> _ActionOutcome:
        """The resolved action ``uses`` names, or the warning prefix of its gap (spec §7.3)."""
        if uses not in self._actions:
            self._actions[uses] = self._resolve_action(uses)
        return self._actions[uses]

    def _resolve_action(self, uses: str) -> _ActionOutcome:
        if uses.startswith(_LOCAL_PREFIX):
            directory = normalise_path(uses)
            if directory is None or _is_dynamic(uses):
                return c.WARN_ACTION_METADATA_UNAVAILABLE
            for name in _ACTION_FILE_NAMES:
                file = f"{directory}/{name}"
                text = self.text(file)
                if text is not None:
                    return self._parsed_action(text, self.repository, self.commit, file, None)
            return c.WARN_ACTION_METADATA_MISSING
        if uses.startswith(_DOCKER_PREFIX) or _is_dynamic(uses):
            return c.WARN_ACTION_METADATA_UNAVAILABLE
        target, separator, ref = uses.partition("@")
        segments = target.split("/")
        if (
            not separator
            or not ref
            or len(segments) < 2
            or re.fullmatch(c.REPOSITORY_PATTERN, "/".join(segments[:2]), re.ASCII) is None
            or any(segment in ("", ".", "..") for segment in segments)
        ):
            return c.WARN_ACTION_METADATA_UNAVAILABLE
        owner, repo, subpath = segments[0], segments[1], "/".join(segments[2:])
        try:
            fetched = self._fetch_action(owner, repo, subpath, ref)
        except Exception:  # a failing fetcher is the same as unavailable metadata
            return c.WARN_ACTION_METADATA_MISSING
        if not isinstance(fetched, ActionFile):
            if fetched == _ACTION_INVALID:
                return c.WARN_ACTION_METADATA_INVALID
            return c.WARN_ACTION_METADATA_MISSING
        if _HEX40.fullmatch(fetched.resolved_sha) is None:
            return c.WARN_ACTION_METADATA_MISSING
        text = fetched.text[1:] if fetched.text.startswith(_BOM) else fetched.text
        sha = fetched.resolved_sha.lower()
        return self._parsed_action(text, f"{owner}/{repo}", sha, fetched.file_path, sha)

    @staticmethod
    def _parsed_action(
        text: str, repository: str, commit: str, file: str, resolved_sha: str | None
    ) -> _ActionOutcome:
        document = _parse_yaml(text)
        if document is None or not isinstance(document.data, Mapping):
            return c.WARN_ACTION_METADATA_INVALID
        return _ResolvedAction(document, repository, commit, file, resolved_sha)


# --------------------------------------------------------------------------------------------
# Per-task evidence
# --------------------------------------------------------------------------------------------


@attrs.frozen
class TaskMetadata:
    """The per-task result: the task's evidence and its own working-directory hints."""

    evidence: TaskEvidence
    hints: tuple[str, ...]


def _run_default(owner: Mapping[str, Any], field: str) -> str | None:
    defaults = owner.get(_DEFAULTS)
    run = defaults.get(_RUN) if isinstance(defaults, Mapping) else None
    value = run.get(field) if isinstance(run, Mapping) else None
    return value if isinstance(value, str) else None


def _first_string(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None


@attrs.frozen
class _StepRun:
    """A step command to scan for package scripts, with its effective directory."""

    command: str
    working_directory: str


class _TaskBuilder:
    def __init__(self, task: Task, files: MetadataFiles) -> None:
        self.task = task
        self.files = files
        self.warnings: list[str] = []
        self.provenance: list[dict[str, Any]] = []
        self._provenance_keys: set[str] = set()
        self.hashes: dict[str, str] = {}
        self.jobs: list[dict[str, Any]] = []
        self.actions: list[dict[str, Any]] = []
        self.scripts: list[dict[str, Any]] = []
        self.context_files: list[dict[str, Any]] = []
        self.native_dependencies: set[str] = set()
        self.hints: list[str] = []
        self._script_hints: list[str] = []
        self._uses: dict[str, dict[str, Any]] = {}
        self._runs: list[_StepRun] = []
        self._visited_scripts: set[tuple[str, str]] = set()

    # ---- recording --------------------------------------------------------------------------

    def warn(self, warning: str) -> None:
        if warning not in self.warnings:
            self.warnings.append(warning)

    def hint(self, directory: str, into: list[str] | None = None) -> None:
        target = self.hints if into is None else into
        if directory not in target:
            target.append(directory)

    def record(
        self,
        kind: str,
        *,
        repository: str,
        commit: str,
        file: str,
        location: Mapping[str, int],
        sha256: str,
        resolved_sha: str | None = None,
    ) -> None:
        item: dict[str, Any] = {
            "kind": kind,
            "locator": {
                "repository": repository,
                "commit": commit,
                "file": file,
                "location": dict(location),
            },
            "sha256": sha256,
        }
        if resolved_sha is not None:
            item["resolvedSha"] = resolved_sha
        identity = canonical_json(item)
        if identity not in self._provenance_keys:
            self._provenance_keys.add(identity)
            self.provenance.append(item)
        self.hashes[f"source:{repository}@{commit}:{file}"] = sha256

    def record_local(self, kind: str, file: str, location: Mapping[str, int], sha256: str) -> None:
        self.record(
            kind,
            repository=self.files.repository,
            commit=self.files.commit,
            file=file,
            location=location,
            sha256=sha256,
        )

    # ---- phase 1: jobs ----------------------------------------------------------------------

    def resolve_jobs(self) -> None:
        references: list[tuple[str, str]] = []
        for reference in self.task.jobs or ():
            key = (reference.workflow, reference.job or "")
            if key not in references:
                references.append(key)
        reached: set[tuple[str, str]] = set()
        for workflow, job in references:
            document = self.files.workflow(workflow)
            if isinstance(document, str):
                self.warn(document + workflow)
                continue
            jobs = document.data.get(_JOBS)
            if job:
                job_ids = [job]
            elif isinstance(jobs, Mapping) and jobs:
                job_ids = [str(job_id) for job_id in jobs]
            else:
                self.warn(c.WARN_WORKFLOW_JOBS_MISSING + workflow)
                continue
            for job_id in job_ids:
                if (workflow, job_id) in reached:
                    continue
                reached.add((workflow, job_id))
                job_value = jobs.get(job_id) if isinstance(jobs, Mapping) else None
                if not isinstance(job_value, Mapping):
                    self.warn(f"{c.WARN_JOB_MISSING}{workflow}#{job_id}")
                    continue
                self._add_job(workflow, document, job_id, job_value)

    def _add_job(
        self, workflow: str, document: _YamlDocument, job_id: str, job: Mapping[str, Any]
    ) -> None:
        file = normalise_path(workflow) or workflow
        workflow_data = document.data
        item: dict[str, Any] = {"id": job_id, "workflow": workflow}
        name = job.get(_NAME)
        if isinstance(name, str):
            item["name"] = name
        uses = job.get(_USES)
        if isinstance(uses, str):
            item["uses"] = uses
            self.warn(c.WARN_REUSABLE_WORKFLOW_UNRESOLVED + uses)
        needs = job.get(_NEEDS)
        if isinstance(needs, str):
            self.native_dependencies.add(needs)
        elif isinstance(needs, list):
            self.native_dependencies.update(need for need in needs if isinstance(need, str))

        job_path: list[str | int] = [_JOBS, job_id]
        self.record_local(
            _KIND_WORKFLOW_JOB,
            file,
            document.location(job_path, with_key=True),
            document.sha256,
        )
        if isinstance(workflow_data.get(_DEFAULTS), Mapping):
            self.record_local(
                _KIND_WORKFLOW_DEFAULTS,
                file,
                document.location([_DEFAULTS], with_key=True),
                document.sha256,
            )
        if isinstance(job.get(_DEFAULTS), Mapping):
            self.record_local(
                _KIND_JOB_DEFAULTS,
                file,
                document.location([*job_path, _DEFAULTS], with_key=True),
                document.sha256,
            )

        workflow_directory = _run_default(workflow_data, _WORKING_DIRECTORY)
        job_directory = _run_default(job, _WORKING_DIRECTORY)
        workflow_shell = _run_default(workflow_data, _SHELL)
        job_shell = _run_default(job, _SHELL)
        if workflow_directory is not None:
            self.hint(workflow_directory)
        if job_directory is not None:
            self.hint(job_directory)

        shape = flatten_steps(raw_steps) if isinstance(raw_steps := job.get(_STEPS), list) else None
        if (
            not workflow_shape_supported(workflow_data)
            or not job_shape_supported(job)
            or (shape is not None and not shape.supported)
        ):
            self.warn(f"{c.WARN_WORKFLOW_SHAPE_UNSUPPORTED}{workflow}#{job_id}")
        steps: list[dict[str, Any]] = []
        for flat in shape.steps if shape is not None else ():
            step = flat.step
            # An empty string is still the first string (spec §7.2); only absence means ".".
            directory = _first_string(
                step.get(_WORKING_DIRECTORY), job_directory, workflow_directory
            )
            if directory is None:
                directory = _CURRENT_DIRECTORY
            shell = _first_string(step.get(_SHELL), job_shell, workflow_shell)
            entry: dict[str, Any] = {"working_directory": directory}
            for field in (_NAME, _RUN, _USES, _WITH):
                if field in step:
                    entry[field] = _json_safe(step[field])
            if shell is not None:
                entry[_SHELL] = shell
            if flat.parallel is not None:
                entry[c.EVIDENCE_STEP_PARALLEL] = flat.parallel
            if flat.background:
                entry[c.EVIDENCE_STEP_BACKGROUND] = True
            steps.append(entry)
            self.hint(directory)
            self.record_local(
                _KIND_WORKFLOW_STEP,
                file,
                document.location([*job_path, *flat.path]),
                document.sha256,
            )
            step_uses = step.get(_USES)
            if isinstance(step_uses, str):
                merged = self._uses.setdefault(step_uses, {})
                step_with = step.get(_WITH)
                if isinstance(step_with, Mapping):
                    merged.update(_json_safe(step_with))
            run = step.get(_RUN)
            if isinstance(run, str):
                self._runs.append(_StepRun(run, directory))
        item[_STEPS] = steps
        self.jobs.append(item)

    # ---- phase 2: actions -------------------------------------------------------------------

    def resolve_actions(self) -> None:
        for uses, merged_with in self._uses.items():
            outcome = self.files.action(uses)
            if isinstance(outcome, str):
                self.warn(outcome + uses)
                continue
            data = outcome.document.data
            summary: dict[str, Any] = {"uses": uses}
            for field in (_NAME, _DESCRIPTION):
                value = data.get(field)
                if isinstance(value, str):
                    summary[field] = value
            declared = data.get(_INPUTS)
            inputs: dict[str, str] = {}
            if isinstance(declared, Mapping):
                for key in merged_with:
                    declaration = declared.get(key)
                    if isinstance(declaration, Mapping):
                        description = declaration.get(_DESCRIPTION)
                        if isinstance(description, str):
                            inputs[key] = description
            if inputs:
                summary[_INPUTS] = inputs
            self.actions.append(summary)
            self.record(
                _KIND_ACTION,
                repository=outcome.repository,
                commit=outcome.commit,
                file=outcome.file,
                location=_whole_file_location(outcome.document.text),
                sha256=outcome.document.sha256,
                resolved_sha=outcome.resolved_sha,
            )

    # ---- phase 3: package scripts -----------------------------------------------------------

    def resolve_scripts(self) -> None:
        for step_run in self._runs:
            self._scan(step_run.command, step_run.working_directory, 1)
        for directory in self._script_hints:
            self.hint(directory)

    def _scan(self, command: str, directory: str, depth: int) -> None:
        scan = scan_command(command)
        if scan.unresolved:
            self.warn(c.WARN_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED)
            return
        if not scan.names:
            return
        normalised = normalise_path(directory)
        if directory == _CURRENT_DIRECTORY:
            manifest_path = _MANIFEST_NAME
        elif normalised is None or _is_dynamic(directory):
            self.warn(c.WARN_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY + directory)
            return
        else:
            manifest_path = f"{normalised}/{_MANIFEST_NAME}"
        for name in scan.names:
            if (manifest_path, name) in self._visited_scripts:
                continue
            if depth > c.PACKAGE_SCRIPT_MAX_DEPTH:
                self.warn(c.WARN_PACKAGE_SCRIPT_DEPTH_LIMIT + name)
                continue
            self._visited_scripts.add((manifest_path, name))
            manifest = self.files.manifest(manifest_path)
            if manifest == c.WARN_PACKAGE_SCRIPT_MISSING:
                self.warn(f"{c.WARN_PACKAGE_SCRIPT_MISSING}{manifest_path}#{name}")
                continue
            if not isinstance(manifest, _Manifest):
                self.warn(c.WARN_PACKAGE_MANIFEST_INVALID + manifest_path)
                continue
            scripts = manifest.data.get(_SCRIPTS)
            script = scripts.get(name) if isinstance(scripts, Mapping) else None
            if not isinstance(script, str):
                self.warn(f"{c.WARN_PACKAGE_SCRIPT_ABSENT}{manifest_path}#{name}")
                continue
            self.scripts.append(
                {
                    "name": name,
                    "command": script,
                    "workingDirectory": directory,
                    "manifest": manifest_path,
                }
            )
            self.record_local(
                _KIND_PACKAGE_SCRIPT,
                manifest_path,
                _text_location(manifest.text, json.dumps(name, ensure_ascii=False)),
                _sha256(manifest.text),
            )
            if directory != _CURRENT_DIRECTORY:
                self.hint(directory, self._script_hints)
            self._scan(script, directory, depth + 1)

    # ---- phase 4: context files -------------------------------------------------------------

    def resolve_context_files(self) -> None:
        for configured in self.task.context_files or ():
            normalised = normalise_path(configured)
            if normalised is None or _is_dynamic(configured):
                self.warn(c.WARN_CONTEXT_FILE_DYNAMIC + configured)
                continue
            text = self.files.text(normalised)
            if text is None:
                self.warn(c.WARN_CONTEXT_FILE_MISSING + normalised)
                continue
            self.context_files.append({"path": configured, "content": text})
            self.record_local(
                _KIND_CONTEXT_FILE, normalised, _whole_file_location(text), _sha256(text)
            )

    # ---- assembly ---------------------------------------------------------------------------

    def result(self) -> TaskMetadata:
        incomplete = bool(self.warnings)
        evidence: dict[str, Any] = {
            "actions": self.actions,
            "contextFiles": self.context_files,
            "description": self.task.description,
            "jobs": self.jobs,
            "packageScripts": self.scripts,
        }
        if incomplete:
            evidence["incomplete"] = True
        job_metadata: dict[str, Any] = {
            "incomplete": incomplete,
            "missing": list(self.warnings),
            "provenance": self.provenance,
            "hashes": {key: self.hashes[key] for key in sorted(self.hashes, key=code_unit_key)},
            "warnings": list(self.warnings),
            "nativeDependencies": sorted(self.native_dependencies, key=code_unit_key),
        }
        references = self.task.jobs or ()
        if references:
            job_metadata["workflow"] = references[0].workflow
            if len(references) == 1 and references[0].job is not None:
                job_metadata["job"] = references[0].job
        return TaskMetadata(
            evidence=TaskEvidence(
                evidence=sort_keys_deep(evidence),
                job_metadata=job_metadata,
                incomplete=incomplete,
            ),
            hints=tuple(self.hints),
        )


def build_evidence(task: Task, metadata_files: MetadataFiles) -> TaskMetadata:
    """Resolve one task's metadata (spec §7.2 to §7.8) through ``metadata_files``.

    A description-only task reads nothing and carries the four empty arrays.
    """
    builder = _TaskBuilder(task, metadata_files)
    builder.resolve_jobs()
    builder.resolve_actions()
    builder.resolve_scripts()
    builder.resolve_context_files()
    return builder.result()


def resolve_metadata(
    tasks: TaskTable,
    *,
    read_file: ReadFile,
    fetch_action: FetchAction,
    repository: str,
    commit: str,
) -> MetadataResult:
    """Evidence for every task, in table order, plus the working-directory hints (spec §7.9).

    ``read_file(path)`` returns the raw bytes of a normalised repository path at ``commit`` (the
    metadata commit), or None; ``fetch_action(owner, repo, subpath, ref)`` returns an
    ``ActionFile`` or a failure kind (``"missing"`` or ``"invalid"``).
    """
    files = MetadataFiles(read_file, fetch_action, repository=repository, commit=commit)
    evidence: dict[str, TaskEvidence] = {}
    hints: list[str] = []
    for task in tasks.tasks:
        resolved = build_evidence(task, files)
        evidence[task.id] = resolved.evidence
        for hint in resolved.hints:
            if hint not in hints:
                hints.append(hint)
    return MetadataResult(evidence=evidence, hints=tuple(hints))
