"""Phase 3 of the evidence builder: the package scripts a task's commands run (docs/reference.md,
"Package scripts"). Pure.

Each step's command is split as the shell would (``shell``), each simple command is decided alone
by its package manager's rules (``package_managers``, over the workspaces of ``workspaces``), and
every script found is read in turn, in its package's directory, up to
``PACKAGE_SCRIPT_MAX_DEPTH`` levels. Every gap a command causes is noted once with the command
that caused it (``_Cause``), for the terminal, the step summary and ``check``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import TypedDict

import attrs

from ... import contracts as c
from .expressions import is_whole_expression
from .files import Manifest, MetadataFiles, is_dynamic, normalise_path, sha256_text, text_location
from .package_managers import ScriptTarget, parse_invocation
from .shell import ShellCommand, split_commands
from .steps import StepRun, StepSite

__all__ = ["PackageScript", "ScriptsPhase"]

_CURRENT_DIRECTORY = "."
_SCRIPTS = "scripts"
_KIND_PACKAGE_SCRIPT = c.PROVENANCE_KINDS[5]


class PackageScript(TypedDict):
    name: str
    command: str
    workingDirectory: str
    manifest: str


@attrs.frozen
class _Cause:
    """The step command a gap comes from (a gap inside a package script names the step command
    that ran the script)."""

    site: StepSite | None
    command: str  # the simple command as written
    offset: int  # where it starts in ``run``
    run: str = ""  # the step's command text
    foreign: tuple[str, ...] = ()  # directories holding another repository's checkout

    def note(self, warning: str) -> str:
        site = self.site
        first_line = self.command.strip().split("\n", 1)[0]
        if len(first_line) > c.NOTE_COMMAND_MAX_CHARS:
            first_line = first_line[: c.NOTE_COMMAND_MAX_CHARS - 3] + "..."
        if site is None:
            return warning + c.NOTE_GAP_COMMAND.format(command=first_line)
        before = self.run[: self.offset]
        lines_before = before.count("\n")
        column_in_line = self.offset - (before.rfind("\n") + 1)
        if site.block:
            line, column = site.line + lines_before, site.column + column_in_line
        elif lines_before:
            line, column = site.line + lines_before, column_in_line + 1
        else:
            line, column = site.line, site.column + column_in_line
        note = c.NOTE_GAP_CAUSE.format(
            gap=warning,
            place=c.NOTE_GAP_PLACE.format(file=site.file, line=line, column=column),
            workflow=site.workflow,
            job=site.job,
            step=site.step,
        )
        if site.action is not None:
            note += c.NOTE_GAP_CAUSE_ACTION.format(action=site.action)
        return note + c.NOTE_GAP_COMMAND.format(command=first_line)


# Shells whose commands ``shell`` reads (GitHub's ``bash``, ``sh`` and custom templates that
# start with one of them). Others (``pwsh``, ``powershell``, ``cmd``, ``python``) are read line
# by line with ``_plain_commands``.
_POSIX_SHELLS = frozenset({"bash", "sh", "zsh", "dash", "ksh"})
_PLAIN_SEPARATORS = re.compile(r"&&|\|\||;|\n")
_PLAIN_DIRECTORY_CHANGES = frozenset({"cd", "chdir", "pushd", "popd", "set-location", "sl"})


def _posix_shell(shell: str | None) -> bool:
    if shell is None:
        return True
    words = shell.split()
    return bool(words) and words[0].rsplit("/", 1)[-1] in _POSIX_SHELLS


def _plain_commands(script: str, directory: str) -> tuple[ShellCommand, ...]:
    """The commands of a script in another shell, split at line ends, ``;``, ``&&`` and ``||``,
    words at blanks with quotes dropped; after any directory change, the directory is unknown."""
    commands: list[ShellCommand] = []
    current: str | None = directory
    start = 0
    for match in [*_PLAIN_SEPARATORS.finditer(script), None]:
        end = match.start() if match is not None else len(script)
        text = script[start:end]
        stripped = text.strip()
        if stripped and not stripped.startswith("#"):
            words = tuple(word.strip("'\"") for word in stripped.split())
            commands.append(ShellCommand(words, stripped, start + text.index(stripped), current))
            if words[0].lower() in _PLAIN_DIRECTORY_CHANGES:
                current = None
        start = match.end() if match is not None else len(script)
    return tuple(commands)


def _within(directory: str, ancestor: str) -> bool:
    return (
        ancestor == _CURRENT_DIRECTORY
        or directory == ancestor
        or directory.startswith(ancestor + "/")
    )


class ScriptsPhase:
    """Collects the package scripts of one task's commands, and the gaps they cause."""

    def __init__(
        self,
        files: MetadataFiles,
        *,
        warn: Callable[[str], None],
        record: Callable[[str, str, Mapping[str, int], str], None],
    ) -> None:
        self.files = files
        self.warn = warn
        self.record = record
        self.scripts: list[PackageScript] = []
        self.hints: list[str] = []  # directories of scripts found outside the root
        self.notes: list[str] = []
        self._warned: set[str] = set()
        self._visited_scripts: set[tuple[str, str]] = set()
        self._written_directories: dict[str, str] = {}

    def _hint(self, directory: str) -> None:
        if directory not in self.hints:
            self.hints.append(directory)

    def step(self, step_run: StepRun) -> None:
        """Read the commands of one step for the package scripts they run."""
        site = step_run.site
        if step_run.expression:
            detail = f"{site.workflow}#{site.job}" if site is not None else ""
            cause = _Cause(site, step_run.command, 0)
            self._gap(c.GAP_COMMAND_EXPRESSION_UNRESOLVED.warning(detail), cause)
            return
        directory = step_run.working_directory
        dynamic: str | None = None
        start = _CURRENT_DIRECTORY
        if directory != _CURRENT_DIRECTORY:
            normalised = normalise_path(directory)
            if normalised is None or is_dynamic(directory):
                dynamic = directory
            else:
                start = normalised
                # A script in the step's own directory keeps the directory as the step wrote it.
                self._written_directories.setdefault(normalised, directory)
        commands = (
            split_commands(step_run.command, start)
            if _posix_shell(step_run.shell)
            else _plain_commands(step_run.command, start)
        )
        for command in commands:
            cause = _Cause(site, command.text, command.offset, step_run.command, step_run.foreign)
            self._command(command.words, command.directory, 1, cause, dynamic)

    def _command(
        self,
        words: Sequence[str],
        directory: str | None,
        depth: int,
        cause: _Cause,
        dynamic: str | None = None,
    ) -> None:
        """Resolve the package scripts one simple command runs (and the scripts they run)."""
        if not words:
            return
        if is_whole_expression(words[0]):
            site = cause.site
            detail = f"{site.workflow}#{site.job}" if site is not None else ""
            self._gap(c.GAP_COMMAND_EXPRESSION_UNRESOLVED.warning(detail), cause)
            return
        invocation = parse_invocation(words, directory or _CURRENT_DIRECTORY, self.files.workspaces)
        if invocation is None:
            return
        runs_scripts = bool(
            invocation.targets or invocation.unresolved is not None or invocation.over_bound
        )
        if runs_scripts and dynamic is not None:
            self._gap(c.GAP_PACKAGE_SCRIPT_DYNAMIC_DIRECTORY.warning(dynamic), cause)
            return
        if runs_scripts and directory is None:
            self._gap(c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning(), cause)
            return
        # A run over several packages skips those without the script: only the others count
        # against the bound.
        targets = [
            target for target in invocation.targets if target.required or self._has_script(target)
        ]
        matched = len({target.directory for target in targets})
        if invocation.unresolved is not None:
            self._gap(c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning(), cause)
        elif invocation.over_bound is not None or matched > c.WORKSPACE_MATCH_BOUND:
            count = invocation.over_bound if invocation.over_bound is not None else matched
            detail = f"{count}#{invocation.name or ''}"
            self._gap(c.GAP_WORKSPACE_MATCH_BOUND.warning(detail), cause)
            targets = []
        for target in targets:
            self._target(target, depth, cause)
        if invocation.nested is not None:
            nested_directory = invocation.nested_directory or directory
            self._command(invocation.nested, nested_directory, depth, cause, dynamic)

    def _has_script(self, target: ScriptTarget) -> bool:
        manifest = self.files.manifest(target.manifest)
        if not isinstance(manifest, Manifest):
            # An unreadable manifest is still reported where the target is resolved.
            return manifest != c.GAP_PACKAGE_SCRIPT_MISSING
        scripts = manifest.data.get(_SCRIPTS)
        return isinstance(scripts, Mapping) and isinstance(scripts.get(target.name), str)

    def _target(self, target: ScriptTarget, depth: int, cause: _Cause) -> None:
        manifest_path, name = target.manifest, target.name
        if any(_within(target.directory, foreign) for foreign in cause.foreign):
            # Another repository's files are there at run time, not the ones read here.
            self._gap(c.GAP_PACKAGE_SCRIPT_CONTEXT_UNRESOLVED.warning(), cause)
            return
        if (manifest_path, name) in self._visited_scripts:
            return
        if depth > c.PACKAGE_SCRIPT_MAX_DEPTH:
            self._gap(c.GAP_PACKAGE_SCRIPT_DEPTH_LIMIT.warning(name), cause)
            return
        manifest = self.files.manifest(manifest_path)
        if manifest == c.GAP_PACKAGE_SCRIPT_MISSING:
            if target.required:
                self._gap(c.GAP_PACKAGE_SCRIPT_MISSING.warning(f"{manifest_path}#{name}"), cause)
            return
        if not isinstance(manifest, Manifest):
            self._gap(c.GAP_PACKAGE_MANIFEST_INVALID.warning(manifest_path), cause)
            return
        scripts = manifest.data.get(_SCRIPTS)
        script = scripts.get(name) if isinstance(scripts, Mapping) else None
        if not isinstance(script, str):
            # Without a script of that name, pnpm and yarn run the binary of that name, and a
            # run over several packages skips the ones that lack it.
            if target.required:
                self._gap(c.GAP_PACKAGE_SCRIPT_ABSENT.warning(f"{manifest_path}#{name}"), cause)
            return
        self._visited_scripts.add((manifest_path, name))
        directory = self._written_directories.get(target.directory, target.directory)
        self.scripts.append(
            {
                "name": name,
                "command": script,
                "workingDirectory": directory,
                "manifest": manifest_path,
            }
        )
        self.record(
            _KIND_PACKAGE_SCRIPT,
            manifest_path,
            text_location(manifest.text, json.dumps(name, ensure_ascii=False)),
            sha256_text(manifest.text),
        )
        if directory != _CURRENT_DIRECTORY:
            self._hint(directory)
        for command in split_commands(script, target.directory):
            self._command(command.words, command.directory, depth + 1, cause)

    def _gap(self, warning: str, cause: _Cause) -> None:
        """A gap of a command, with the command named for people the first time it is seen."""
        if warning in self._warned:
            return
        self._warned.add(warning)
        self.warn(warning)
        self.notes.append(cause.note(warning))
