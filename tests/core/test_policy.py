"""The selection policy of docs/reference.md, "Selection policy": scores, forced state, mandatory
tasks, reasons and status."""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from jev_select import contracts as c
from jev_select.core.models import (
    ChangeFacts,
    ChunkRecord,
    Evaluation,
    Observation,
    Plan,
    RequestRecord,
    Task,
    TaskDecision,
    TaskTable,
)
from jev_select.core.policy import choose_bypass, decide, score_decisions

HASH = "0" * 64


def table(*tasks: Task) -> TaskTable:
    return TaskTable(tuple(sorted(tasks, key=lambda task: task.id.encode("utf-16-be"))))


def chunk(index: int, probabilities: Mapping[str, float] | None) -> ChunkRecord:
    status = c.GROUP_COMPLETED if probabilities is not None else c.GROUP_FAILED
    return ChunkRecord(
        index=index,
        start_byte=0,
        end_byte=0,
        paths=(),
        diff_hash=HASH,
        state_hash=HASH,
        diff_bytes=0,
        status=status,
        probabilities=probabilities,
        model=None,
        usage=None,
        duration_ms=None,
        error=None,
        requests=(RequestRecord(task_ids=("x",), status=status),),
    )


def observation(*groups: Mapping[str, float] | None) -> Observation:
    strategy = c.STRATEGY_WHOLE_DIFF if len(groups) == 1 else c.STRATEGY_CHUNKED_DIFF
    return Observation(
        strategy=strategy,
        status=c.OBSERVATION_COMPLETE,
        chunks=tuple(chunk(index, scores) for index, scores in enumerate(groups)),
    )


UNIT = Task(id="unit", description="Unit tests.")
DOCS = Task(id="docs", description="Docs.", force_paths=("docs/**",))
CORE = Task(id="core", description="Core.", always=True)
TABLE = table(UNIT, DOCS, CORE)


def run_decide(
    tasks: TaskTable = TABLE,
    *,
    mode: c.Mode = c.MODE_ENFORCE,
    bypass: c.Reason | None = None,
    changed_paths: Sequence[str] | None = ("src/a.py",),
    collection_error: str | None = None,
    grouping_error: str | None = None,
    decisions: Mapping[str, object] | None = None,
    first_failure: str | None = None,
    observed: bool = True,
    group_count: int = 1,
    metadata_incomplete: Collection[str] = (),
) -> Plan:
    # The policy reads only whether an observation exists and how many groups it has.
    observation = (
        Observation(
            strategy=c.STRATEGY_WHOLE_DIFF if group_count == 1 else c.STRATEGY_CHUNKED_DIFF,
            status=c.OBSERVATION_COMPLETE,
            chunks=tuple(_placeholder_chunk(index) for index in range(group_count)),
        )
        if observed
        else None
    )
    return decide(
        tasks,
        mode=mode,
        bypass=bypass,
        change=ChangeFacts(
            changed_paths=tuple(changed_paths) if changed_paths is not None else None,
            collection_error=collection_error,
            metadata_incomplete=frozenset(metadata_incomplete),
        ),
        evaluation=Evaluation(
            observation=observation,
            decisions=decisions,
            grouping_error=grouping_error,
            first_failure=first_failure,
        ),
    )


def _placeholder_chunk(index: int) -> ChunkRecord:
    return ChunkRecord(
        index=index,
        start_byte=0,
        end_byte=0,
        paths=(),
        diff_hash="0" * 64,
        state_hash="0" * 64,
        diff_bytes=0,
        status=c.GROUP_COMPLETED,
        probabilities={},
        model=None,
        usage=None,
        duration_ms=None,
        error=None,
        requests=(),
    )


# --------------------------------------------------------------------------------------------
# docs/reference.md, "Decision from scores" score decisions
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("groups", "expected"),
    [
        pytest.param([{"t": 0.04}], False, id="one-group-below"),
        pytest.param([{"t": 0.05}], True, id="equality-retains"),
        pytest.param([{"t": 0.9}], True, id="above"),
        pytest.param([{"t": 0.01}, {"t": 0.02}], False, id="all-groups-below"),
        pytest.param([{"t": 0.01}, {"t": 0.5}], True, id="one-group-above"),
        pytest.param([{"t": 0.01}, {}], None, id="missing-score"),
        pytest.param([{"t": 0.01}, None], None, id="failed-group-no-answers"),
        pytest.param([{"t": 0.7}, None], True, id="above-beats-missing"),
        pytest.param([{}], None, id="no-score-at-all"),
    ],
)
def test_score_decision_rules(groups: list[Mapping[str, float] | None], expected: object) -> None:
    assert score_decisions(observation(*groups), ["t"], 0.05) == {"t": expected}


def test_threshold_zero_never_excludes() -> None:
    assert score_decisions(observation({"t": 0.0}), ["t"], 0.0) == {"t": True}


def test_threshold_one_keeps_only_certain_scores() -> None:
    decisions = score_decisions(observation({"a": 0.999, "b": 1.0}), ["a", "b"], 1.0)
    assert decisions == {"a": False, "b": True}


def test_no_groups_gives_no_decision() -> None:
    empty = Observation(strategy=c.STRATEGY_WHOLE_DIFF, status=c.OBSERVATION_COMPLETE, chunks=())
    assert score_decisions(empty, ["t"], 0.5) == {"t": None}


def test_score_decisions_are_in_code_unit_order() -> None:
    decisions = score_decisions(observation({"b": 0.1, "B": 0.1, "_": 0.1}), ["b", "_", "B"], 0.5)
    assert list(decisions) == ["B", "_", "b"]


# --------------------------------------------------------------------------------------------
# One test per reason code (all 26)
# --------------------------------------------------------------------------------------------


def reasons_of(plan: Plan, task_id: str) -> tuple[str, ...]:
    return plan.decisions[task_id].reasons


REASON_CASES: list[tuple[str, dict[str, Any], str, tuple[str, ...]]] = [
    (c.REASON_ALWAYS, {"decisions": {"unit": True, "docs": False}}, "core", ("always",)),
    (
        c.REASON_PATH_MATCH,
        {"changed_paths": ("docs/a.md",), "decisions": {"unit": True, "docs": False}},
        "docs",
        ("path-match",),
    ),
    (
        c.REASON_JEV_BELOW_THRESHOLD,
        {"decisions": {"unit": False, "docs": True}},
        "unit",
        ("jev-below-threshold",),
    ),
    (
        c.REASON_JEV_AT_OR_ABOVE_THRESHOLD,
        {"decisions": {"unit": True, "docs": True}},
        "unit",
        ("jev-at-or-above-threshold",),
    ),
    (
        c.REASON_SHADOW_MODE,
        {"mode": c.MODE_SHADOW, "decisions": {"unit": False, "docs": False}},
        "unit",
        ("jev-below-threshold", "shadow-mode"),
    ),
    *[
        (code, {"bypass": code, "changed_paths": None, "observed": False}, "unit", (code,))
        for code in c.BYPASS_REASONS
    ],
    (
        c.REASON_PROTECTED_PATH,
        {"changed_paths": (".github/workflows/ci.yml",), "observed": False},
        "unit",
        ("protected-path",),
    ),
    *[
        (code, {"collection_error": code, "observed": False}, "unit", (code,))
        for code in c.COLLECTION_ERRORS
    ],
    (
        c.REASON_CONTEXT_TOO_LARGE,
        {"grouping_error": c.REASON_CONTEXT_TOO_LARGE, "observed": False, "group_count": 0},
        "unit",
        ("context-too-large",),
    ),
    *[
        (
            code,
            {"decisions": {"unit": None, "docs": True}, "first_failure": code},
            "unit",
            (code,),
        )
        for code in c.REQUEST_ERRORS
    ],
    (
        c.REASON_CHUNKED_OBSERVATION,
        {"decisions": {"unit": False, "docs": False}, "group_count": 2},
        "unit",
        ("jev-below-threshold", "chunked-observation"),
    ),
    (
        c.REASON_OBSERVATION_ONLY,
        {
            "changed_paths": (".github/workflows/ci.yml",),
            "decisions": {"unit": False, "docs": False},
        },
        "unit",
        ("protected-path", "observation-only"),
    ),
    (
        c.REASON_METADATA_UNAVAILABLE,
        {"decisions": {"unit": False, "docs": False}, "metadata_incomplete": {"unit"}},
        "unit",
        ("metadata-unavailable",),
    ),
    (
        c.REASON_OBSERVATION_INCOMPLETE,
        {"decisions": {"unit": None, "docs": True}},
        "unit",
        ("observation-incomplete",),
    ),
]


@pytest.mark.parametrize(
    ("code", "arguments", "task_id", "expected"),
    REASON_CASES,
    ids=[f"{case[0]}-{position}" for position, case in enumerate(REASON_CASES)],
)
def test_reason_code(
    code: str, arguments: dict[str, Any], task_id: str, expected: tuple[str, ...]
) -> None:
    plan = run_decide(**arguments)
    assert reasons_of(plan, task_id) == expected
    assert code in expected


def test_every_reason_code_has_a_case() -> None:
    assert {case[0] for case in REASON_CASES} == set(c.REASONS)


# --------------------------------------------------------------------------------------------
# Statuses and forced state
# --------------------------------------------------------------------------------------------


def test_planned_applies_the_selection() -> None:
    plan = run_decide(decisions={"unit": False, "docs": True})
    assert plan.status == c.STATUS_PLANNED
    assert plan.decisions["unit"] == TaskDecision(False, False, ("jev-below-threshold",))
    assert plan.decisions["docs"] == TaskDecision(True, True, ("jev-at-or-above-threshold",))
    assert plan.decisions["core"] == TaskDecision(True, True, ("always",))
    assert plan.selected == ("core", "docs")
    assert list(plan.decisions) == ["core", "docs", "unit"]


@pytest.mark.parametrize("bypass", c.BYPASS_REASONS)
def test_bypass_keeps_every_task_without_a_proposal(bypass: c.Reason) -> None:
    plan = run_decide(bypass=bypass, changed_paths=None, observed=False, group_count=0)
    assert plan.status == c.STATUS_BYPASSED
    assert plan.selected == ("core", "docs", "unit")
    assert all(decision.proposed_run is None for decision in plan.decisions.values())
    assert reasons_of(plan, "core") == ("always", bypass)


def test_bypass_precedes_protected_path_and_errors() -> None:
    plan = run_decide(
        bypass=c.REASON_FORK,
        changed_paths=(".github/workflows/ci.yml",),
        collection_error=c.REASON_BINARY_CHANGE,
        grouping_error=c.REASON_DIFF_TOO_LARGE,
    )
    assert plan.status == c.STATUS_BYPASSED
    assert reasons_of(plan, "unit")[0] == c.REASON_FORK


def test_protected_path_from_a_collection_error_that_knew_paths() -> None:
    plan = run_decide(
        changed_paths=(".github/workflows/ci.yml", "logo.png"),
        collection_error=c.REASON_BINARY_CHANGE,
        observed=False,
        group_count=0,
    )
    assert plan.status == c.STATUS_BYPASSED
    assert reasons_of(plan, "unit") == ("protected-path",)
    assert all(decision.run for decision in plan.decisions.values())


def test_collection_error_with_paths_still_reports_path_matches() -> None:
    plan = run_decide(
        changed_paths=("docs/logo.png",),
        collection_error=c.REASON_BINARY_CHANGE,
        observed=False,
        group_count=0,
    )
    assert plan.status == c.STATUS_FALLBACK
    assert reasons_of(plan, "docs") == ("path-match", "binary-change")
    assert reasons_of(plan, "unit") == ("binary-change",)


def test_other_github_paths_are_not_protected() -> None:
    plan = run_decide(
        changed_paths=(".github/dependabot.yml",), decisions={"unit": False, "docs": False}
    )
    assert plan.status == c.STATUS_PLANNED
    assert plan.decisions["unit"].run is False


def test_protected_prefix_is_case_sensitive() -> None:
    plan = run_decide(
        changed_paths=(".GitHub/workflows/ci.yml",), decisions={"unit": False, "docs": False}
    )
    assert plan.status == c.STATUS_PLANNED


def test_protected_path_keeps_observation_and_marks_it_observation_only() -> None:
    plan = run_decide(
        changed_paths=(".github/workflows/ci.yml",),
        decisions={"unit": False, "docs": False},
        group_count=3,
    )
    assert plan.status == c.STATUS_BYPASSED
    assert reasons_of(plan, "core") == (
        "always",
        "protected-path",
        "chunked-observation",
        "observation-only",
    )
    assert plan.decisions["unit"] == TaskDecision(
        None, True, ("protected-path", "chunked-observation", "observation-only")
    )


def test_grouping_error_under_protected_path_stays_bypassed() -> None:
    plan = run_decide(
        changed_paths=(".github/workflows/ci.yml",),
        grouping_error=c.REASON_CONTEXT_TOO_LARGE,
        observed=False,
        group_count=0,
    )
    assert plan.status == c.STATUS_BYPASSED
    assert reasons_of(plan, "unit") == ("protected-path",)


@pytest.mark.parametrize("code", c.GROUPING_ERRORS)
def test_grouping_error_falls_back(code: str) -> None:
    plan = run_decide(grouping_error=code, observed=False, group_count=0)
    assert plan.status == c.STATUS_FALLBACK
    assert plan.selected == ("core", "docs", "unit")
    assert reasons_of(plan, "core") == ("always", code)
    assert plan.decisions["unit"].proposed_run is None


def test_collection_error_precedes_grouping_error() -> None:
    plan = run_decide(
        collection_error=c.REASON_SUBMODULE_CHANGE, grouping_error=c.REASON_DIFF_TOO_LARGE
    )
    assert reasons_of(plan, "unit") == ("submodule-change",)


@pytest.mark.parametrize(
    "decisions",
    [
        pytest.param({"unit": False, "ghost": False}, id="unknown-id"),
        pytest.param({"unit": 0}, id="integer-not-boolean"),
        pytest.param({"unit": "false"}, id="string-not-boolean"),
        pytest.param({"unit": 0.01}, id="score-not-decision"),
    ],
)
def test_malformed_decisions_fall_back_with_invalid_response(
    decisions: Mapping[str, object],
) -> None:
    plan = run_decide(decisions=decisions)
    assert plan.status == c.STATUS_FALLBACK
    assert all(decision.run for decision in plan.decisions.values())
    assert all(decision.proposed_run is None for decision in plan.decisions.values())
    assert reasons_of(plan, "unit") == ("invalid-response",)
    assert reasons_of(plan, "core") == ("always", "invalid-response")


def test_global_fallback_when_one_candidate_lacks_a_decision() -> None:
    plan = run_decide(decisions={"unit": None, "docs": False}, first_failure=c.REASON_JEV_TIMEOUT)
    assert plan.status == c.STATUS_FALLBACK
    assert plan.decisions["unit"] == TaskDecision(None, True, ("jev-timeout",))
    # The scored candidate keeps its proposal, but nothing is excluded any more.
    assert plan.decisions["docs"] == TaskDecision(False, True, ("jev-below-threshold",))
    assert plan.decisions["core"] == TaskDecision(True, True, ("always",))


def test_missing_decision_key_counts_as_null() -> None:
    plan = run_decide(decisions={"docs": False})
    assert plan.status == c.STATUS_FALLBACK
    assert reasons_of(plan, "unit") == ("observation-incomplete",)


def test_no_observation_at_all_falls_back() -> None:
    plan = run_decide(decisions=None, observed=False, group_count=0)
    assert plan.status == c.STATUS_FALLBACK
    assert reasons_of(plan, "unit") == ("observation-incomplete",)


def test_a_null_decision_of_a_mandatory_task_is_harmless() -> None:
    plan = run_decide(decisions={"core": None, "unit": False, "docs": False})
    assert plan.status == c.STATUS_PLANNED
    assert plan.decisions["core"] == TaskDecision(True, True, ("always",))
    assert plan.decisions["unit"].run is False


def test_failed_request_while_every_candidate_still_decided_stays_planned() -> None:
    plan = run_decide(decisions={"unit": True, "docs": True}, first_failure=c.REASON_JEV_ERROR)
    assert plan.status == c.STATUS_PLANNED
    assert reasons_of(plan, "unit") == ("jev-at-or-above-threshold",)


def test_shadow_mode_runs_everything_and_keeps_proposals() -> None:
    plan = run_decide(mode=c.MODE_SHADOW, decisions={"unit": False, "docs": True})
    assert plan.status == c.STATUS_PLANNED
    assert plan.mode == c.MODE_SHADOW
    assert plan.decisions["unit"] == TaskDecision(
        False, True, ("jev-below-threshold", "shadow-mode")
    )
    assert plan.decisions["docs"] == TaskDecision(
        True, True, ("jev-at-or-above-threshold", "shadow-mode")
    )
    assert plan.decisions["core"] == TaskDecision(True, True, ("always", "shadow-mode"))


def test_shadow_mode_fallback_keeps_shadow_reason_after_forced_code() -> None:
    plan = run_decide(mode=c.MODE_SHADOW, collection_error=c.REASON_GIT_FETCH_FAILED)
    assert plan.status == c.STATUS_FALLBACK
    assert reasons_of(plan, "unit") == ("git-fetch-failed", "shadow-mode")


def test_chunked_observation_with_full_reason_order() -> None:
    plan = run_decide(
        mode=c.MODE_SHADOW,
        changed_paths=("docs/index.md",),
        decisions={"unit": False, "docs": False},
        group_count=4,
        metadata_incomplete={"docs"},
    )
    assert reasons_of(plan, "docs") == (
        "path-match",
        "shadow-mode",
        "metadata-unavailable",
        "chunked-observation",
    )


def test_metadata_unavailable_without_configured_always_is_mandatory() -> None:
    plan = run_decide(decisions={"unit": False, "docs": False}, metadata_incomplete={"unit"})
    assert plan.status == c.STATUS_PLANNED
    assert plan.decisions["unit"] == TaskDecision(True, True, ("metadata-unavailable",))


def test_metadata_unavailable_with_configured_always_keeps_both() -> None:
    plan = run_decide(decisions={"unit": False, "docs": False}, metadata_incomplete={"core"})
    assert plan.decisions["core"] == TaskDecision(True, True, ("always", "metadata-unavailable"))


def test_metadata_unavailable_task_with_null_decision_does_not_trigger_fallback() -> None:
    plan = run_decide(decisions={"unit": None, "docs": False}, metadata_incomplete={"unit"})
    assert plan.status == c.STATUS_PLANNED
    assert plan.selected == ("core", "unit")


def test_empty_table_is_planned_with_no_decisions() -> None:
    plan = run_decide(TaskTable(), decisions=None, observed=False, group_count=0)
    assert plan.status == c.STATUS_PLANNED
    assert dict(plan.decisions) == {}
    assert plan.selected == ()


def test_empty_table_under_bypass_is_bypassed() -> None:
    plan = run_decide(TaskTable(), bypass=c.REASON_FORCE_ALL, changed_paths=None, observed=False)
    assert plan.status == c.STATUS_BYPASSED


def test_decisions_are_read_only() -> None:
    plan = run_decide(decisions={"unit": False, "docs": False})
    with pytest.raises(TypeError):
        plan.decisions["unit"] = TaskDecision(True, True, ("always",))  # type: ignore[index]


def test_end_to_end_with_scores_equal_to_threshold() -> None:
    scores = observation({"unit": 0.05, "docs": 0.0499})
    decisions = score_decisions(scores, TABLE.ids, 0.05)
    plan = run_decide(decisions=decisions)
    assert plan.decisions["unit"].run is True
    assert plan.decisions["docs"].run is False


# --------------------------------------------------------------------------------------------
# Properties that hold for every input
# --------------------------------------------------------------------------------------------

IDS = ["a", "b", "c", "d"]


@st.composite
def policy_inputs(draw: st.DrawFn) -> dict[str, Any]:
    tasks = table(
        *[
            Task(
                id=task_id,
                description="d",
                always=draw(st.booleans()),
                force_paths=("hit/**",) if draw(st.booleans()) else None,
            )
            for task_id in draw(st.lists(st.sampled_from(IDS), unique=True))
        ]
    )
    paths = draw(
        st.one_of(
            st.none(),
            st.lists(st.sampled_from(["hit/x", "src/y", ".github/workflows/w.yml"]), max_size=2),
        )
    )
    return {
        "tasks": tasks,
        "mode": draw(st.sampled_from(c.MODES)),
        "bypass": draw(st.one_of(st.none(), st.sampled_from(c.BYPASS_REASONS))),
        "changed_paths": paths,
        "collection_error": draw(st.one_of(st.none(), st.sampled_from(c.COLLECTION_ERRORS))),
        "grouping_error": draw(st.one_of(st.none(), st.sampled_from(c.GROUPING_ERRORS))),
        "decisions": draw(
            st.one_of(
                st.none(),
                st.dictionaries(
                    st.sampled_from(tasks.ids or ("a",)), st.sampled_from([True, False, None])
                ),
            )
        ),
        "first_failure": draw(st.one_of(st.none(), st.sampled_from(c.REQUEST_ERRORS))),
        "observed": draw(st.booleans()),
        "group_count": draw(st.integers(0, 3)),
        "metadata_incomplete": draw(st.sets(st.sampled_from(IDS))),
    }


@settings(max_examples=300, deadline=None)
@given(policy_inputs())
def test_policy_invariants(arguments: dict[str, Any]) -> None:
    plan = run_decide(**arguments)
    assert list(plan.decisions) == sorted(arguments["tasks"].ids)
    for decision in plan.decisions.values():
        assert decision.reasons
        assert len(set(decision.reasons)) == len(decision.reasons)
        assert set(decision.reasons) <= set(c.REASONS)
        if plan.status != c.STATUS_PLANNED or plan.mode == c.MODE_SHADOW:
            assert decision.run
        if plan.status == c.STATUS_PLANNED:
            assert decision.proposed_run is not None
            if plan.mode == c.MODE_ENFORCE:
                assert decision.run == decision.proposed_run
        if not decision.run:
            # A skip needs a complete, strictly-below decision and nothing forcing the task.
            assert decision.reasons[0] == c.REASON_JEV_BELOW_THRESHOLD
    if arguments["bypass"] is not None:
        assert plan.status == c.STATUS_BYPASSED


def test_bypass_order() -> None:
    everything = {
        "pull_request": False,
        "force_all": True,
        "fork": True,
        "api_key": "",
        "allow_external_context": False,
    }
    expected = [
        c.REASON_NON_PULL_REQUEST,
        c.REASON_FORCE_ALL,
        c.REASON_FORK,
        c.REASON_MISSING_API_KEY,
        c.REASON_EXTERNAL_CONTEXT_DISABLED,
    ]
    assert tuple(expected) == c.BYPASS_REASONS
    fixes = [
        ("pull_request", True),
        ("force_all", False),
        ("fork", False),
        ("api_key", "key"),
        ("allow_external_context", True),
    ]
    for reason, (name, value) in zip(expected, fixes, strict=True):
        assert choose_bypass(**everything) == reason  # type: ignore[arg-type]
        everything[name] = value
    assert choose_bypass(**everything) is None  # type: ignore[arg-type]
