"""Metadata files at one commit, for the evidence builder (docs/reference.md,
"When metadata is read", "Actions in the evidence", "Context files and path normalisation"). Pure.

``MetadataFiles`` reads, decodes, parses and caches every file the evidence of a run needs: the
repository's own files through the ``read_file`` callable, external actions and workflows of
other repositories through the ``fetch_action`` and ``fetch_workflow`` callables (a lookup
implementation of ``evidence.Lookups``). A file that cannot be used comes back as the ``GapKind``
of its gap. Parsed YAML keeps best-effort positions for provenance locators.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeAlias, overload

import attrs
import yaml

from ... import contracts as c
from ...contracts import LookupFailure
from ..inputs import is_repository_name
from ..jsonutil import JsonError, strict_loads
from ..object_ids import is_object_id
from ..yamlstrict import YamlStrictError, load_strict, mapping_key_text
from .budget import ExpansionBudget
from .workspaces import WorkspaceIndex

if TYPE_CHECKING:
    from .effects import Expansion, ExpansionKey

__all__ = [
    "ActionFile",
    "FetchAction",
    "FetchWorkflow",
    "JsonValue",
    "ListPaths",
    "LookupFailure",
    "LookupOutcome",
    "Manifest",
    "MetadataFiles",
    "ReadFile",
    "RemoteWorkflow",
    "ResolvedAction",
    "YamlDocument",
    "YamlMapping",
    "is_dynamic",
    "json_safe",
    "normalise_path",
    "sha256_text",
    "text_location",
    "whole_file_location",
]


ReadFile = Callable[[str], "bytes | None"]
# Every file path at the metadata commit, or None when the listing cannot be had (workspace
# globs then cannot be expanded, and commands that depend on them keep their gap).
ListPaths = Callable[[], "Sequence[str] | None"]
# What a lookup of another repository's action or reusable workflow answers.
LookupOutcome: TypeAlias = "ActionFile | LookupFailure"
FetchAction: TypeAlias = Callable[[str, str, str, str], LookupOutcome]
FetchWorkflow: TypeAlias = Callable[[str, str, str, str], LookupOutcome]
# A parsed value as ``json_safe`` copies it into the evidence.
JsonValue: TypeAlias = "str | int | float | bool | list[JsonValue] | dict[str, JsonValue] | None"
# A parsed YAML mapping: the strict loader gives string keys only, values are still unchecked.
YamlMapping: TypeAlias = Mapping[str, object]

_BOM = "\ufeff"
_DOCKER_PREFIX = "docker://"
_LOCAL_PREFIX = "./"
_ACTION_FILE_NAMES = ("action.yml", "action.yaml")
_CURRENT_DIRECTORY = "."
_EXPRESSION_MARKERS = ("${{", "}}")

# --------------------------------------------------------------------------------------------
# Paths, text and JSON-safe values
# --------------------------------------------------------------------------------------------


def normalise_path(text: str) -> str | None:
    """Strip one leading ``./``; None for an empty, absolute or malformed path (docs/reference.md,
    "Context files and path normalisation")."""
    path = text[2:] if text.startswith(_LOCAL_PREFIX) else text
    if not path or path.startswith("/") or "\\" in path or "\0" in path:
        return None
    if any(segment in ("", "..") for segment in path.split("/")):
        return None
    return path


def is_dynamic(text: str) -> bool:
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


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def _key_text(key: object) -> str:
    """A mapping key as a string, by the conversion rules of docs/reference.md, "Task fields"."""
    try:
        return mapping_key_text(key)
    except YamlStrictError:
        return str(key)


@overload
def json_safe(value: Mapping[str, object]) -> dict[str, JsonValue]: ...


@overload
def json_safe(value: object) -> JsonValue: ...


def json_safe(value: object) -> JsonValue:
    """A copy of a YAML value that JSON can carry (string keys, lists for sequences)."""
    if isinstance(value, Mapping):
        return {_key_text(key): json_safe(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_safe(item) for item in value]
    if value is None or isinstance(value, str | bool | int | float):
        return value
    return str(value)


def whole_file_location(text: str) -> dict[str, int]:
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


def text_location(text: str, needle: str) -> dict[str, int]:
    """The first occurrence of ``needle`` in ``text``, or the whole file."""
    offset = text.find(needle)
    if offset < 0:
        return whole_file_location(text)
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    end = offset + len(needle)
    end_line = text.count("\n", 0, end) + 1
    end_column = end - (text.rfind("\n", 0, end) + 1) + 1
    return {"line": line, "column": column, "endLine": end_line, "endColumn": end_column}


# --------------------------------------------------------------------------------------------
# Parsed YAML documents with best-effort node positions
# --------------------------------------------------------------------------------------------


class YamlDocument:
    """A strictly parsed YAML text whose top level is a mapping; node positions come from a second,
    composition-only pass."""

    def __init__(self, text: str, data: YamlMapping) -> None:
        self.text = text
        self.data = data
        self.sha256 = sha256_text(text)
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

    def value_start(self, path: Sequence[str | int]) -> tuple[int, int, bool]:
        """The 1-based line and column where the scalar at ``path`` starts, and whether it is a
        block scalar (its text then starts on the next line, indented to that column)."""
        node = self._node(path)
        if not isinstance(node, yaml.ScalarNode) or node.start_mark is None:
            return 1, 1, False
        mark = node.start_mark
        if node.style in ("|", ">"):
            lines = self.text.split("\n")
            for index in range(mark.line + 1, len(lines)):
                content = lines[index]
                if content.strip():
                    return index + 1, len(content) - len(content.lstrip(" ")) + 1, True
            return mark.line + 2, mark.column + 1, True
        quoted = 1 if node.style in ("'", '"') else 0
        return mark.line + 1, mark.column + 1 + quoted, False

    def _node(self, path: Sequence[str | int]) -> yaml.Node | None:
        node = self.root
        for step in path:
            if isinstance(step, int) and isinstance(node, yaml.SequenceNode):
                node = node.value[step] if 0 <= step < len(node.value) else None
            elif isinstance(step, str) and isinstance(node, yaml.MappingNode):
                node = next(
                    (
                        value
                        for key, value in node.value
                        if isinstance(key, yaml.ScalarNode) and key.value == step
                    ),
                    None,
                )
            else:
                node = None
            if node is None:
                return None
        return node

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
                return whole_file_location(self.text)
        if node is None:
            return whole_file_location(self.text)
        start = key_node.start_mark if with_key and key_node is not None else node.start_mark
        return _mark_location(start, node.end_mark)


def parse_yaml(text: str) -> YamlDocument | None:
    """The document, or None when it does not parse or its top level is not a mapping (every
    workflow and action metadata file is one)."""
    try:
        data: object = load_strict(text, aliases=True)
    except Exception:  # any loader failure, including the strict rejections, is "invalid"
        return None
    if not isinstance(data, Mapping):
        return None
    return YamlDocument(text, data)


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
class ResolvedAction:
    document: YamlDocument
    repository: str
    commit: str
    file: str
    resolved_sha: str | None


_ActionOutcome = ResolvedAction | c.GapKind  # the kind of its gap on failure


@attrs.frozen
class RemoteWorkflow:
    """A reusable workflow of another repository, parsed, at its resolved commit."""

    document: YamlDocument
    repository: str
    file: str
    resolved_sha: str


@attrs.frozen
class Manifest:
    text: str
    data: Mapping[str, object]


class MetadataFiles:
    """Decoded, cached access to metadata files at one commit and to external actions.

    Shared by every task of one resolution so that each path is read, each workflow parsed and
    each action resolved at most once, and each called workflow expanded once (``expansions``,
    kept by ``evidence_jobs``) within one ``budget``. ``repository`` and ``commit`` name the
    source in provenance locators and ``hashes`` keys.
    """

    def __init__(
        self,
        read_file: ReadFile,
        fetch_action: FetchAction,
        *,
        repository: str,
        commit: str,
        fetch_workflow: FetchWorkflow | None = None,
        budget: ExpansionBudget | None = None,
        list_paths: ListPaths | None = None,
    ) -> None:
        self.repository = repository
        self.commit = commit
        self.budget = ExpansionBudget() if budget is None else budget
        self.expansions: dict[ExpansionKey, list[Expansion]] = {}
        self._read_file = read_file
        self._fetch_action = fetch_action
        self._fetch_workflow = fetch_workflow
        self._remote_workflows: dict[str, RemoteWorkflow | None] = {}
        self._texts: dict[str, str | None] = {}
        self._workflows: dict[str, YamlDocument | c.GapKind] = {}
        self._actions: dict[str, _ActionOutcome] = {}
        self._manifests: dict[str, Manifest | c.GapKind] = {}
        self._list_paths = list_paths
        self._workspaces: WorkspaceIndex | None = None

    @property
    def workspaces(self) -> WorkspaceIndex:
        """The workspaces of the repository at the commit, listed once on first use."""
        if self._workspaces is None:
            paths: Sequence[str] | None = None
            if self._list_paths is not None:
                try:
                    paths = self._list_paths()
                except Exception:  # a failing listing is the same as none
                    paths = None
            self._workspaces = WorkspaceIndex(self.text, paths)
        return self._workspaces

    def text(self, path: str) -> str | None:
        """Decoded text of a normalised repository path, or None when it counts as missing."""
        if path not in self._texts:
            if normalise_path(path) != path or _CURRENT_DIRECTORY in path.split("/"):
                # A "." segment passes normalisation but names no stored path (docs/reference.md,
                # "Context files and path normalisation").
                self._texts[path] = None
                return None
            try:
                data = self._read_file(path)
            except Exception:  # a failing reader is the same as a missing file
                data = None
            self._texts[path] = _decode(data)
        return self._texts[path]

    def workflow(self, path: str) -> YamlDocument | c.GapKind:
        """The parsed workflow at ``path`` (as written), or the kind of its gap."""
        if path not in self._workflows:
            normalised = normalise_path(path)
            text = self.text(normalised) if normalised is not None else None
            outcome: YamlDocument | c.GapKind
            if text is None:
                outcome = c.GAP_WORKFLOW_MISSING
            else:
                document = parse_yaml(text)
                outcome = c.GAP_WORKFLOW_INVALID if document is None else document
            self._workflows[path] = outcome
        return self._workflows[path]

    def remote_workflow(self, uses: str) -> RemoteWorkflow | None:
        """``owner/repo/<path>.yml@ref`` fetched and parsed, or None on any failure."""
        if uses not in self._remote_workflows:
            self._remote_workflows[uses] = self._resolve_remote_workflow(uses)
        return self._remote_workflows[uses]

    def _resolve_remote_workflow(self, uses: str) -> RemoteWorkflow | None:
        target, separator, ref = uses.partition("@")
        segments = target.split("/")
        if (
            self._fetch_workflow is None
            or not separator
            or not ref
            or len(segments) < 3
            or is_dynamic(uses)
            or not is_repository_name("/".join(segments[:2]))
            or any(segment in ("", ".", "..") for segment in segments)
        ):
            return None
        owner, repo, path = segments[0], segments[1], "/".join(segments[2:])
        try:
            fetched = self._fetch_workflow(owner, repo, path, ref)
        except Exception:  # a failing fetcher is the same as an unreadable workflow
            return None
        if not isinstance(fetched, ActionFile) or not is_object_id(
            fetched.resolved_sha, sha1_only=True
        ):
            return None
        text = fetched.text[1:] if fetched.text.startswith(_BOM) else fetched.text
        document = parse_yaml(text)
        if document is None:
            return None
        return RemoteWorkflow(document, f"{owner}/{repo}", path, fetched.resolved_sha.lower())

    def manifest(self, path: str) -> Manifest | c.GapKind:
        """The parsed ``package.json`` at a normalised path, or the kind of its gap."""
        if path not in self._manifests:
            text = self.text(path)
            outcome: Manifest | c.GapKind
            if text is None:
                outcome = c.GAP_PACKAGE_SCRIPT_MISSING
            else:
                data: object
                try:
                    data = strict_loads(text)
                except JsonError:
                    data = None
                if isinstance(data, dict):
                    outcome = Manifest(text, data)
                else:
                    outcome = c.GAP_PACKAGE_MANIFEST_INVALID
            self._manifests[path] = outcome
        return self._manifests[path]

    def action(self, uses: str) -> _ActionOutcome:
        """The resolved action ``uses`` names, or the kind of its gap (docs/reference.md,
        "Actions in the evidence")."""
        if uses not in self._actions:
            self._actions[uses] = self._resolve_action(uses)
        return self._actions[uses]

    def _resolve_action(self, uses: str) -> _ActionOutcome:
        if uses.startswith(_LOCAL_PREFIX):
            directory = normalise_path(uses)
            if directory is None or is_dynamic(uses):
                return c.GAP_ACTION_METADATA_UNAVAILABLE
            for name in _ACTION_FILE_NAMES:
                file = f"{directory}/{name}"
                text = self.text(file)
                if text is not None:
                    return self._parsed_action(text, self.repository, self.commit, file, None)
            return c.GAP_ACTION_METADATA_MISSING
        if uses.startswith(_DOCKER_PREFIX) or is_dynamic(uses):
            return c.GAP_ACTION_METADATA_UNAVAILABLE
        target, separator, ref = uses.partition("@")
        segments = target.split("/")
        if (
            not separator
            or not ref
            or len(segments) < 2
            or not is_repository_name("/".join(segments[:2]))
            or any(segment in ("", ".", "..") for segment in segments)
        ):
            return c.GAP_ACTION_METADATA_UNAVAILABLE
        owner, repo, subpath = segments[0], segments[1], "/".join(segments[2:])
        try:
            fetched = self._fetch_action(owner, repo, subpath, ref)
        except Exception:  # a failing fetcher is the same as unavailable metadata
            return c.GAP_ACTION_METADATA_MISSING
        if not isinstance(fetched, ActionFile):
            # Anything but a file or INVALID (a library fetcher may answer a plain string) is
            # missing.
            if fetched == LookupFailure.INVALID:
                return c.GAP_ACTION_METADATA_INVALID
            return c.GAP_ACTION_METADATA_MISSING
        if not is_object_id(fetched.resolved_sha, sha1_only=True):
            return c.GAP_ACTION_METADATA_MISSING
        text = fetched.text[1:] if fetched.text.startswith(_BOM) else fetched.text
        sha = fetched.resolved_sha.lower()
        return self._parsed_action(text, f"{owner}/{repo}", sha, fetched.file_path, sha)

    @staticmethod
    def _parsed_action(
        text: str, repository: str, commit: str, file: str, resolved_sha: str | None
    ) -> _ActionOutcome:
        document = parse_yaml(text)
        if document is None:
            return c.GAP_ACTION_METADATA_INVALID
        return ResolvedAction(document, repository, commit, file, resolved_sha)
