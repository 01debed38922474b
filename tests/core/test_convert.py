"""The one strict converter: what it refuses, and that a document round-trips unchanged."""

from __future__ import annotations

import json
from enum import StrEnum

import attrs
import pytest
from hypothesis import given
from hypothesis import strategies as st

from jev_select.core.convert import DocumentError, register_document, structure, unstructure
from jev_select.errors import JevSelectError


class Colour(StrEnum):
    RED = "red"
    BLUE = "blue"


@attrs.frozen
class Item:
    name: str
    score: float | None
    count: int = 0


@attrs.frozen
class Sample:
    colour: Colour
    items: tuple[Item, ...]
    totals: dict[str, int]
    flag: bool


GOOD = {
    "colour": "red",
    "items": [{"name": "a", "score": 1, "count": 2}, {"name": "b", "score": 0.25, "count": 0}],
    "totals": {"x": 1},
    "flag": False,
}


def _with(path: tuple[object, ...], value: object) -> object:
    document = json.loads(json.dumps(GOOD))
    target = document
    for step in path[:-1]:
        target = target[step]
    target[path[-1]] = value
    return document


def test_good_document_is_typed_and_round_trips_unchanged() -> None:
    sample = structure(GOOD, Sample)
    assert sample.colour is Colour.RED
    assert sample.items[0] == Item("a", 1, 2)
    assert type(sample.items[0].score) is int  # an integral number is kept as it was read
    assert unstructure(sample) == GOOD
    assert json.dumps(unstructure(sample)) == json.dumps(GOOD)
    assert type(unstructure(sample)["colour"]) is str


SECRET = "sk-do-not-echo"


@pytest.mark.parametrize(
    ("path", "value", "where", "constraint"),
    [
        (("colour",), SECRET, "$.colour", "a string of its vocabulary"),
        (("colour",), 1, "$.colour", "a string of its vocabulary"),
        (("items", 0, "name"), 7, "$.items[0].name", "a string"),
        (("items", 1, "score"), SECRET, "$.items[1].score", "a finite number"),
        (("items", 1, "score"), float("nan"), "$.items[1].score", "a finite number"),
        (("items", 1, "score"), float("inf"), "$.items[1].score", "a finite number"),
        (("items", 1, "score"), True, "$.items[1].score", "a finite number"),
        (("items", 1, "score"), 10**400, "$.items[1].score", "a finite number"),
        (("items", 0, "count"), True, "$.items[0].count", "an integer"),
        (("items", 0, "count"), 2.0, "$.items[0].count", "an integer"),
        (("items", 0, "count"), "2", "$.items[0].count", "an integer"),
        (("items",), SECRET, "$.items", "an array"),
        (("items",), {"0": {}}, "$.items", "an array"),
        (("totals",), [["x", 1]], "$.totals", "an object"),
        (("totals", "x"), SECRET, "$.totals[*]", "an integer"),
        (("flag",), 0, "$.flag", "a boolean"),
        (("flag",), "false", "$.flag", "a boolean"),
    ],
)
def test_refusals_name_the_field_and_never_the_value(
    path: tuple[object, ...], value: object, where: str, constraint: str
) -> None:
    with pytest.raises(DocumentError) as caught:
        structure(_with(path, value), Sample)
    assert caught.value.path == where
    assert caught.value.constraint == constraint
    assert SECRET not in str(caught.value)
    assert repr(value) not in str(caught.value) or repr(value) in where
    assert isinstance(caught.value, JevSelectError)


def test_unknown_key_is_refused_without_naming_it() -> None:
    document = _with(("items", 0, SECRET), 1)
    with pytest.raises(DocumentError) as caught:
        structure(document, Sample)
    assert caught.value.path == "$.items[0]"
    assert SECRET not in str(caught.value)


def test_missing_key_is_refused() -> None:
    document = json.loads(json.dumps(GOOD))
    del document["items"][0]["name"]
    with pytest.raises(DocumentError, match="a required key"):
        structure(document, Sample)


@pytest.mark.parametrize("value", [None, "text", [], 3])
def test_a_document_that_is_not_an_object_is_refused(value: object) -> None:
    with pytest.raises(DocumentError):
        structure(value, Sample)


@given(
    st.builds(
        Sample,
        colour=st.sampled_from(Colour),
        items=st.lists(
            st.builds(
                Item,
                name=st.text(),
                score=st.none() | st.integers() | st.floats(allow_nan=False, allow_infinity=False),
                count=st.integers(),
            ),
            max_size=4,
        ).map(tuple),
        totals=st.dictionaries(st.text(), st.integers(), max_size=3),
        flag=st.booleans(),
    )
)
def test_any_document_survives_json_and_back(sample: Sample) -> None:
    text = json.dumps(unstructure(sample))
    assert structure(json.loads(text), Sample) == sample
    assert json.dumps(unstructure(structure(json.loads(text), Sample))) == text


@attrs.frozen(kw_only=True)
class Renamed:
    first_name: str
    nick_name: str | None = None


register_document(Renamed, keys={"first_name": "firstName"}, optional=("nick_name",))


def test_a_registered_document_is_spelt_by_its_keys_in_failures_too() -> None:
    assert structure({"firstName": "a"}, Renamed) == Renamed(first_name="a")
    assert unstructure(Renamed(first_name="a")) == {"firstName": "a"}
    with pytest.raises(DocumentError) as caught:
        structure({"firstName": 3}, Renamed)
    assert caught.value.path == "$.firstName"
    with pytest.raises(DocumentError) as caught:
        structure({"firstName": "a", "nick_name": None}, Renamed)
    assert caught.value.path == "$.nick_name"
