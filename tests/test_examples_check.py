"""Every example workflow passes ``jev-select check``, wiring included.

An example is a set of files to copy into a repository that holds what its table names (the
workflows and context files of the user's own CI), so each is checked in such a repository:
the example's files, plus a stand-in for each file its tables name that the example does not
ship. Metadata of other repositories' actions is not looked up (no network): those warnings
describe the lookup, not the example, and are the only ones allowed.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.gitrepo import Change, GitRepo

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.check.repository import Repository
from jev_select.core.check.wiring import check_wiring
from jev_select.core.check.workflows import plan_steps, read_workflow, workflow_paths
from jev_select.core.tasks import read_table

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"
# The gaps a repository without network lookups and without the project's files shows.
ALLOWED_WARNINGS = {"action-metadata-missing", "force-paths-no-match"}


def _example_files(example: Path) -> dict[str, bytes]:
    return {
        path.relative_to(example).as_posix(): path.read_bytes()
        for path in example.rglob("*")
        if path.is_file()
    }


def _tables(files: dict[str, bytes]) -> list[str]:
    texts: list[str] = []
    for path in workflow_paths(tuple(files)):
        workflow = read_workflow(path, files[path])
        assert workflow is not None, path
        for step in plan_steps(workflow, own_repository=False):
            if step.table.inline is not None:
                texts.append(step.table.inline)
            elif step.table.file is not None:
                texts.append(files[step.table.file].decode("utf-8"))
    return texts


def _with_stand_ins(files: dict[str, bytes]) -> dict[str, bytes]:
    """``files`` and a stand-in for each workflow job and context file a table names."""
    every = dict(files)
    jobs: dict[str, set[str]] = {}
    for text in _tables(files):
        table = read_table(text).table
        assert table is not None
        for task in table.tasks:
            for reference in task.jobs or ():
                if reference.workflow not in files:
                    jobs.setdefault(reference.workflow, set()).add(reference.job or "build")
            for context in task.context_files or ():
                every.setdefault(context, b"stand-in\n")
    for workflow, names in jobs.items():
        body = "".join(
            f"  {name}:\n    runs-on: ubuntu-latest\n    steps:\n      - run: make {name}\n"
            for name in sorted(names)
        )
        every[workflow] = f"on: pull_request\njobs:\n{body}".encode()
    return every


EXAMPLE_DIRECTORIES = sorted(
    path for path in EXAMPLES.iterdir() if (path / ".github" / "workflows").is_dir()
)


@pytest.mark.parametrize("example", EXAMPLE_DIRECTORIES, ids=lambda path: path.name)
def test_every_example_passes_check_with_its_wiring(example: Path) -> None:
    files = _with_stand_ins(_example_files(example))
    repository = Repository(commit="e" * 40, paths=tuple(files), read_file=files.get)
    wiring = check_wiring(repository)
    unexpected = [
        (problem.path, problem.line, str(problem.code), problem.message)
        for problem in wiring.problems
        if problem.severity == c.CHECK_SEVERITY_ERROR or str(problem.code) not in ALLOWED_WARNINGS
    ]
    assert unexpected == []


def test_the_examples_that_run_the_action_are_all_read() -> None:
    checked = {
        example.name
        for example in EXAMPLE_DIRECTORIES
        if check_wiring(
            Repository(
                commit="e" * 40,
                paths=tuple(_example_files(example)),
                read_file=_example_files(example).get,
            )
        ).workflows
    }
    # The ones that run the command directly (no action step) are not plan workflows.
    assert checked == {path.name for path in EXAMPLE_DIRECTORIES} - {
        "ceiling-weekly",
        "cli-direct",
        "rollout-report",
    }


def test_the_several_workflows_example_passes_the_command_in_a_repository(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _example_files(EXAMPLES / "several-workflows")
    repository = GitRepo.init(tmp_path / "repo")
    changes: dict[str | bytes, Change] = {"docs/index.md": b"# Docs\n", "mkdocs.yml": b"x: 1\n"}
    for path, data in files.items():
        changes[path] = data
    repository.commit(changes)
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    # No lookups leave this machine: the API root is a closed local port.
    monkeypatch.setenv("GITHUB_API_URL", "https://127.0.0.1:9")
    code = main([c.COMMAND_CHECK, "--repo", str(repository.path), "--format", "json"])
    out = capsys.readouterr().out
    assert code == 0, out
    assert '"ok": true' in out
