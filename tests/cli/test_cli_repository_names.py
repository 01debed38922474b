"""``owner/name`` as GitHub spells it, checked by one rule wherever a repository is named.

``--repository ../..`` used to pass and sent requests outside ``/repos/`` of the API host (a
client normalises the dot segments away). The rule is ``REPOSITORY_PATTERN``; rollout,
results, GitHub mode and the API path builder all refuse the same names, with the fixed line
each already prints for a bad setting, and never echo the name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.fakegithub import FakeGitHub
from support.reports import make_report

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.inputs import is_repository_name
from jev_select.edges.environment import read_github_context
from jev_select.edges.github.api import repository_path
from jev_select.errors import PlanningFailure

ACCEPTED = [
    "octo-org/octo-repo",
    "Octo/Repo.js",
    "a/b",
    "0/_",
    "a/...",  # not a dot segment
    "a/.github",
    "trailing-/x",  # older accounts
    "double--hyphen/x",  # older accounts
    "mona_acme/x",  # a managed user: handle_shortcode
    "o" * 39 + "/" + "n" * 100,
]
REFUSED = [
    "../..",
    "octo/..",
    "octo/.",
    "./repo",
    "-octo/repo",
    "_octo/repo",
    "octo.org/repo",
    "o" * 40 + "/repo",
    "octo/" + "n" * 101,
    "octo/",
    "/repo",
    "octo",
    "octo/repo/extra",
    "octo/re po",
    "octo/r%2e",
    "octo/rép",
    "octo/repo\n",
    "",
]


@pytest.mark.parametrize("name", ACCEPTED)
def test_names_github_can_answer_for_are_accepted(name: str) -> None:
    assert is_repository_name(name)
    owner, _, repo = name.partition("/")
    assert repository_path(name) == f"repos/{owner}/{repo}"


@pytest.mark.parametrize("name", REFUSED)
def test_other_names_are_refused_and_no_path_is_built(name: str) -> None:
    assert not is_repository_name(name)
    with pytest.raises(ValueError, match=r"^not a repository name$"):
        repository_path(name)


@pytest.mark.parametrize("name", ["../..", "octo/..", "-octo/repo"])
def test_github_mode_refuses_the_environment(tmp_path: Path, name: str) -> None:
    event = tmp_path / "event.json"
    event.write_text("{}", "utf-8")
    environ = {
        "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(event),
        "GITHUB_REPOSITORY": name,
        "GITHUB_SHA": "a" * 40,
        "GITHUB_OUTPUT": str(tmp_path / "output"),
    }
    with pytest.raises(PlanningFailure) as raised:
        read_github_context(environ)
    assert raised.value.code == c.FAILURE_INVALID_ENVIRONMENT


@pytest.fixture
def api(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeGitHub]:
    with FakeGitHub(tls=True) as server:
        assert server.ca_bundle is not None
        for name in ("GITHUB_ACTIONS", "GITHUB_SERVER_URL", "GITHUB_REPOSITORY"):
            monkeypatch.delenv(name, raising=False)
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        monkeypatch.setenv("GITHUB_API_URL", server.url)
        monkeypatch.setenv("GITHUB_TOKEN", "ghs_NAMESENTINEL")
        yield server


@pytest.mark.parametrize("name", ["../..", "octo/..", "octo/.", "o" * 40 + "/x"])
def test_rollout_refuses_the_repository_as_a_usage_error(
    api: FakeGitHub, tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    out = tmp_path / "out"
    code = main(
        [
            "rollout",
            "--repository",
            name,
            "--observer-workflow",
            "shadow.yml",
            "--ci-workflow",
            "ci.yml",
            "--out",
            str(out),
        ]
    )
    captured = capsys.readouterr()
    assert (code, captured.out) == (c.USAGE_EXIT_CODE, "")
    assert captured.err.endswith("error: --repository: owner/name\n")
    assert name not in captured.err
    assert api.requests == []
    assert not out.exists()


def test_rollout_inside_actions_is_the_invalid_invocation_line(
    api: FakeGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    code = main(
        [
            "rollout",
            "--repository",
            "../..",
            "--observer-workflow",
            "shadow.yml",
            "--ci-workflow",
            "ci.yml",
            "--out",
            str(tmp_path / "out"),
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == (
        "::error::" + c.FAILURE_TEMPLATE.format(code=c.FAILURE_INVALID_INVOCATION) + "\n"
    )
    assert api.requests == []


@pytest.mark.parametrize("name", ["../..", "octo/..", "_octo/repo"])
def test_results_refuses_the_repository_as_invalid_settings(
    api: FakeGitHub,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    monkeypatch.setenv("GITHUB_REPOSITORY", name)
    report = tmp_path / "report.json"
    report.write_text(json.dumps(make_report({"unit": True})), "utf-8")
    output = tmp_path / "results.json"
    code = main(["results", "--run-id", "42", "--report", str(report), "--output", str(output)])
    captured = capsys.readouterr()
    assert (code, captured.out) == (1, "")
    assert captured.err == (
        c.RESULTS_FAILURE_TEMPLATE.format(code=c.RESULTS_INVALID_SETTINGS) + "\n"
    )
    assert api.requests == []
    assert not output.exists()
