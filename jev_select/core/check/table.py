"""Lint a task table for its author: every problem with its task, field, line and column.

Pure core (docs/reference.md, "Checking a task table"). ``parse_tasks`` answers CI with one fixed
line that never quotes the table; here the reader is the person who wrote the file, so each
problem names the task, the field and the position, and suggests the likely fix. Repository facts
(the files at a revision, file contents, external action metadata) come in through ``Repository``;
nothing here touches git, files or the network.

The text problems are those of the one task-table grammar (:func:`.tasks.read_table`), the same
reading ``parse_tasks`` refuses a table by: a table has an error here exactly when ``plan``
refuses it.
"""

from __future__ import annotations

from ..tasks import read_table
from .problems import Problem, ProblemLog, sorted_problems, table_offset
from .repository import Repository, check_repository

__all__ = ["check_table"]


def check_table(text: str, repository: Repository | None = None) -> tuple[Problem, ...]:
    """Every problem of the task-table ``text``, in file order.

    The text checks cover the whole grammar of docs/reference.md, "Task fields". With
    ``repository``, a table without errors is also checked against the files at that commit:
    ``force_paths`` that match nothing (warnings) and every metadata gap a plan would report (errors
    for references to files or jobs that are not there).
    """
    reading = read_table(text)
    if reading.table is None or reading.document is None or repository is None:
        return sorted_problems(list(reading.problems))
    log = ProblemLog(text, table_offset(text))
    check_repository(log, reading.document, reading.table, repository)
    return sorted_problems([*reading.problems, *log.problems])
