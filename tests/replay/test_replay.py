"""Evaluation replay over the committed corpus and its synthetic campaign (docs/reference.md,
"Evaluation replay").

Every case is rebuilt as real commits and analysed by the production pipeline; the only thing
replaced is the Jev transport, which answers from recordings whose bodies match byte for byte.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from support.fakejev import FakeJev

from jev_select import contracts as c
from jev_select.cli import main
from jev_select.core.jsonutil import strict_loads
from jev_select.replay.corpus import CAMPAIGN_FILE, EXPECTED_FILE, ReplayFailure, load_corpus
from jev_select.replay.metrics import ReplayResult, render_table, result_json
from jev_select.replay.run import replay_corpus

# Under xdist one worker runs the module: its module fixture replays the whole corpus.
pytestmark = pytest.mark.xdist_group("replay")

CORPUS = Path(__file__).parent.parent / "evaluation"
CAMPAIGN = CORPUS / "recordings"
FIRST_THRESHOLD = (c.EVALUATION_THRESHOLDS[0],)

# threshold: relevant, relevant_misses, irrelevant, correct_omissions, irrelevant_retained, unknown
EXPECTED_METRICS = {
    0.05: (26, 0, 41, 28, 4, 12),
    0.1: (26, 0, 41, 28, 4, 12),
    # text-dependency-bump scores the irrelevant geo task exactly 0.2: equality retains it.
    0.2: (26, 0, 41, 28, 4, 12),
    0.3: (26, 0, 41, 29, 3, 12),
    0.5: (26, 0, 41, 29, 3, 12),
}
EXPECTED_STATUSES = {
    "api-tax-rounding": c.STATUS_PLANNED,
    "docs-invoice-numbering": c.STATUS_PLANNED,
    "schema-currency-column": c.STATUS_PLANNED,
    "shared-setup-action": c.STATUS_PLANNED,
    "web-message-catalogue": c.STATUS_PLANNED,
    "web-test-only": c.STATUS_PLANNED,
    "vitest-lockfile-bump": c.STATUS_FALLBACK,  # a response misses one answer
    "geo-file-rename": c.STATUS_PLANNED,
    "text-dependency-bump": c.STATUS_PLANNED,
    "compose-postgis-upgrade": c.STATUS_PLANNED,
    "contributing-guide": c.STATUS_PLANNED,
    "protected-workflow-timeout": c.STATUS_BYPASSED,  # .github/workflows/ changed
    "readme-run-flag": c.STATUS_FALLBACK,  # the response names another model version
    "storefront-price-locale": c.STATUS_PLANNED,  # parallel, background and reusable evidence
    "pnpm-workspace-filter": c.STATUS_PLANNED,  # pnpm filters, composite steps, input default
}


def environ() -> dict[str, str]:
    return {key: value for key, value in os.environ.items() if key != "JEV_API_KEY"}


@pytest.fixture(scope="module")
def full_replay() -> ReplayResult:
    return replay_corpus(CORPUS, environ=environ())


@pytest.fixture
def campaign_copy(tmp_path: Path) -> Path:
    target = tmp_path / "campaign"
    shutil.copytree(CAMPAIGN, target)
    return target


def recording_paths(campaign: Path, case_id: str) -> list[Path]:
    return sorted(path for path in (campaign / case_id).glob("*.json") if len(path.stem) == 64)


def run_cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["replay", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def local_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("GITHUB_ACTIONS", raising=False)
    monkeypatch.delenv("JEV_API_KEY", raising=False)


# ---------------------------------------------------------------------------------------------
# The corpus itself
# ---------------------------------------------------------------------------------------------


def test_corpus_has_the_required_kinds_of_case() -> None:
    document = json.loads((CORPUS / "corpus.json").read_text("utf-8"))
    kinds = {entry["kind"] for entry in document["cases"]}
    assert len(document["cases"]) >= 10
    for required in (
        "single-package change",
        "documentation-only change",
        "schema migration",
        "shared CI setup change",
        "large diff (several groups)",
        "rename",
        "dependency bump (library)",
        "change to a task's context file",
        "change irrelevant to every task",
        "protected path (deliberate)",
    ):
        assert required in kinds
    assert {entry["split"] for entry in document["cases"]} == set(c.REPLAY_SPLITS)


def test_every_case_is_labelled_completely_with_one_line_reasons() -> None:
    for case in load_corpus(CORPUS):
        labels = json.loads((case.directory / "labels.json").read_text("utf-8"))["tasks"]
        assert set(labels) == set(case.labels)
        for label in labels.values():
            assert label["label"] in c.REPLAY_LABELS
            for field in ("reason", "provenance"):
                assert label[field].strip()
                assert "\n" not in label[field]
        assert not list(case.base_dir.rglob("*.py")), "the repository's tools scan tests/"
        assert not list(case.base_dir.rglob(".gitignore"))


def test_every_patch_applies_to_its_base_tree(tmp_path: Path) -> None:
    for case in load_corpus(CORPUS):
        work = tmp_path / case.id
        shutil.copytree(case.base_dir, work)
        result = subprocess.run(
            ["git", "apply", "--check", str(case.patch_path)],
            cwd=work,
            capture_output=True,
            check=False,
        )
        assert result.returncode == 0, case.id


def test_large_case_exceeds_the_preferred_group_size() -> None:
    patch = CORPUS / "cases" / "web-message-catalogue" / "change.patch"
    assert patch.stat().st_size > c.PREFERRED_GROUP_BYTES


def test_recordings_hold_bodies_only() -> None:
    for path in CAMPAIGN.rglob("*.json"):
        text = path.read_text("utf-8")
        for forbidden in ("Authorization", "Bearer", "offline-replay", "User-Agent"):
            assert forbidden not in text, path.name
        if len(path.stem) == 64:
            recording = json.loads(text)
            assert set(recording) == {
                "synthetic",
                "request_sha256",
                "request_body",
                "response_body",
                "failure",
            }
            assert recording["synthetic"] is True


# ---------------------------------------------------------------------------------------------
# The synthetic campaign
# ---------------------------------------------------------------------------------------------


def test_metrics_per_threshold(full_replay: ReplayResult) -> None:
    assert full_replay.thresholds == c.EVALUATION_THRESHOLDS
    for row in full_replay.metrics:
        threshold = row[c.REPLAY_THRESHOLD_COLUMN]
        assert tuple(row[name] for name in c.REPLAY_METRICS) == EXPECTED_METRICS[threshold]


def test_split_metrics_add_up(full_replay: ReplayResult) -> None:
    for index, row in enumerate(full_replay.metrics):
        for name in c.REPLAY_METRICS:
            parts = sum(rows[index][name] for rows in full_replay.by_split.values())
            assert parts == row[name]


def test_statuses_and_synthetic_answers(full_replay: ReplayResult) -> None:
    statuses = {
        outcome.case.id: set(outcome.statuses().values()) for outcome in full_replay.outcomes
    }
    assert statuses == {case_id: {status} for case_id, status in EXPECTED_STATUSES.items()}
    assert full_replay.answers == full_replay.synthetic_answers > len(full_replay.outcomes)
    chunked = next(o for o in full_replay.outcomes if o.case.id == "web-message-catalogue")
    assert chunked.recordings_used > 1
    report = chunked.reports[0.05]
    assert report.observation is not None
    assert report.observation.strategy == c.STRATEGY_CHUNKED_DIFF


def test_policy_paths_of_the_deliberate_cases(full_replay: ReplayResult) -> None:
    outcomes = {outcome.case.id: outcome for outcome in full_replay.outcomes}
    tie = outcomes["text-dependency-bump"]
    assert tie.proposals(0.2)["geo"] is True
    assert tie.proposals(0.3)["geo"] is False
    missing = outcomes["vitest-lockfile-bump"].reports[0.05]
    assert missing.observation_error == c.REASON_INVALID_RESPONSE
    assert missing.tasks["lint"].proposed_run is True  # always: true stays mandatory
    assert missing.tasks["api-tests"].proposed_run is None
    mismatch = outcomes["readme-run-flag"].reports[0.05]
    assert mismatch.observation_error == c.REASON_INVALID_RESPONSE
    assert mismatch.model.returned != mismatch.model.expected
    protected = outcomes["protected-workflow-timeout"].reports[0.05]
    assert protected.observation is not None  # answers are still recorded
    assert all(task.proposed_run is None for task in protected.tasks.values())
    migration = outcomes["schema-currency-column"].reports[0.5]
    assert c.REASON_PATH_MATCH in migration.tasks["migrations"].reasons


def test_table_and_json_say_the_answers_are_synthetic(full_replay: ReplayResult) -> None:
    table = render_table(full_replay)
    assert table.splitlines()[0] == c.REPLAY_HEADING_TEMPLATE.format(
        cases=15, answers=full_replay.answers, synthetic=full_replay.answers
    )
    assert c.REPLAY_SYNTHETIC_NOTE in table
    assert "0.3        26        0                41          29" in table
    document = result_json(full_replay)
    assert document["synthetic"] is True
    rows = document["thresholds"]
    assert isinstance(rows, list)
    assert [row["threshold"] for row in rows] == list(c.EVALUATION_THRESHOLDS)
    stored = strict_loads((CAMPAIGN / CAMPAIGN_FILE).read_bytes())
    assert stored["synthetic"] is True
    assert stored["metrics"] == document["thresholds"]


def test_cli_replays_selected_cases_and_writes_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, local_mode: None
) -> None:
    output = tmp_path / "replay.json"
    code, out, err = run_cli(
        capsys, "--corpus", str(CORPUS), "--case", "docs-invoice-numbering", "--json", str(output)
    )
    assert (code, err) == (0, "")
    assert out.startswith("jev-select replay: 1 cases, 1 recorded answers (1 synthetic)\n")
    document = json.loads(output.read_text("utf-8"))
    proposals = document["cases"][0]["proposals"]["0.05"]
    assert proposals == {
        "api-tests": False,
        "docs-site": True,
        "lint": True,
        "migrations": False,
        "web-tests": False,
    }


# ---------------------------------------------------------------------------------------------
# Stale and mismatching campaigns
# ---------------------------------------------------------------------------------------------


def stale_message(case_id: str) -> str:
    return c.REPLAY_CASE_FAILURE_TEMPLATE.format(code=c.REPLAY_STALE_RECORDING, case=case_id) + "\n"


def test_one_changed_byte_in_a_stored_body_is_a_stale_recording(
    capsys: pytest.CaptureFixture[str], campaign_copy: Path, local_mode: None
) -> None:
    path = recording_paths(campaign_copy, "api-tax-rounding")[0]
    recording = json.loads(path.read_text("utf-8"))
    body = recording["request_body"]
    index = body.index("Math.round")
    recording["request_body"] = body[:index] + "N" + body[index + 1 :]
    path.write_text(json.dumps(recording, indent=2, ensure_ascii=False) + "\n", "utf-8")
    code, out, err = run_cli(capsys, "--corpus", str(CORPUS), "--campaign", str(campaign_copy))
    assert (code, out) == (1, "")
    assert err == stale_message("api-tax-rounding")


def test_a_recording_under_another_digest_is_a_stale_recording(campaign_copy: Path) -> None:
    path = recording_paths(campaign_copy, "geo-file-rename")[0]
    path.rename(path.with_name("0" * 64 + ".json"))
    with pytest.raises(ReplayFailure) as caught:
        replay_corpus(
            CORPUS,
            campaign_copy,
            environ=environ(),
            only=("geo-file-rename",),
            thresholds=FIRST_THRESHOLD,
        )
    assert (caught.value.code, caught.value.case) == (c.REPLAY_STALE_RECORDING, "geo-file-rename")


def test_a_changed_question_text_is_a_stale_recording(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, local_mode: None
) -> None:
    monkeypatch.setattr(c, "QUESTION_JUDGMENT", c.QUESTION_JUDGMENT + " ")
    code, out, err = run_cli(capsys, "--corpus", str(CORPUS), "--case", "contributing-guide")
    assert (code, out) == (1, "")
    assert err == stale_message("contributing-guide")


def test_a_changed_expectation_is_a_result_mismatch(campaign_copy: Path) -> None:
    path = campaign_copy / "web-test-only" / EXPECTED_FILE
    expected = json.loads(path.read_text("utf-8"))
    expected["plans"]["0.05"]["tasks"]["web-tests"]["proposed_run"] = False
    path.write_text(json.dumps(expected), "utf-8")
    with pytest.raises(ReplayFailure) as caught:
        replay_corpus(CORPUS, campaign_copy, environ=environ(), only=("web-test-only",))
    assert (caught.value.code, caught.value.case) == (c.REPLAY_RESULT_MISMATCH, "web-test-only")


def test_live_needs_a_key_and_excludes_synthetic(
    capsys: pytest.CaptureFixture[str], local_mode: None
) -> None:
    code, out, err = run_cli(capsys, "--corpus", str(CORPUS), "--live")
    assert (code, out) == (1, "")
    assert err == c.REPLAY_FAILURE_TEMPLATE.format(code=c.REPLAY_LIVE_UNAVAILABLE) + "\n"
    code, _, err = run_cli(capsys, "--live", "--write-synthetic")
    assert code == 2
    assert err.startswith("usage: jev-select replay ")


# ---------------------------------------------------------------------------------------------
# Recording campaigns
# ---------------------------------------------------------------------------------------------


def test_write_synthetic_reproduces_the_committed_recordings(tmp_path: Path) -> None:
    case_id = "web-message-catalogue"
    replay_corpus(CORPUS, tmp_path, environ=environ(), only=(case_id,), record="synthetic")
    written = {path.name: path.read_bytes() for path in (tmp_path / case_id).iterdir()}
    committed = {path.name: path.read_bytes() for path in (CAMPAIGN / case_id).iterdir()}
    assert written == committed


@pytest.fixture
def https_jev(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeJev]:
    with FakeJev(tls=True, scores={"licenses": 0.6}) as server:
        assert server.ca_bundle is not None
        monkeypatch.setenv("REQUESTS_CA_BUNDLE", server.ca_bundle)
        yield server


def test_live_recording_keeps_no_key_and_replays_offline(
    https_jev: FakeJev, tmp_path: Path
) -> None:
    key = "live-key-SENTINEL-42"
    case_id = "text-dependency-bump"
    recorded = replay_corpus(
        CORPUS,
        tmp_path,
        environ=environ(),
        only=(case_id,),
        record="live",
        api_key=key,
        api_base_url=https_jev.base_url,
        thresholds=FIRST_THRESHOLD,
    )
    assert https_jev.requests[0].header("Authorization") == f"Bearer {key}"
    assert len(https_jev.requests) == 1  # one request per distinct body
    assert recorded.synthetic_answers == 0
    files = list((tmp_path / case_id).iterdir())
    for path in files:
        text = path.read_text("utf-8")
        assert key not in text
        assert "Authorization" not in text
    recordings = [json.loads(p.read_text("utf-8")) for p in recording_paths(tmp_path, case_id)]
    assert [recording["synthetic"] for recording in recordings] == [False]
    replayed = replay_corpus(
        CORPUS, tmp_path, environ=environ(), only=(case_id,), thresholds=FIRST_THRESHOLD
    )
    proposals: dict[str, Any] = replayed.outcomes[0].proposals(0.05)
    assert proposals == {"geo": False, "integration": False, "licenses": True, "render": False}
