"""The one strict converter between parsed JSON values and the typed documents of the product.

Every document jev-select writes and reads back (report v5, the plan block, results files,
recordings, rollout data, the analysis, calibration and history views) is a tree of frozen attrs
classes. This module turns a parsed JSON value into such a tree and back; the readers add only
the checks JSON Schema and the contract make beyond shape (patterns, versions, invariants).

The converter is strict where JSON Schema is strict, so that a document is never half-understood:
- an object with a key its class does not declare is refused (``forbid_extra_keys``);
- nothing is coerced: a string stays a string, a boolean is never a number, an integer field takes
  only an exact integer, a number field only a finite int or float (kept as it was read, so that a
  document written back is byte-identical), and NaN, Infinity and integers beyond the range of a
  double are refused;
- a failure names the path of the field and the constraint it broke, never the value it found.

JSON Schema remains the contract check at the edges; the converter is what makes the value typed.
"""

from __future__ import annotations

import math
import typing
from collections.abc import Callable, Collection, Mapping
from enum import StrEnum
from typing import TypeVar

import attrs
import cattrs
from cattrs.cols import (
    homogenous_tuple_structure_factory,
    is_mapping,
    is_sequence,
    list_structure_factory,
    mapping_structure_factory,
)
from cattrs.dispatch import StructureHook
from cattrs.errors import ForbiddenExtraKeysError
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

from ..errors import JevSelectError

__all__ = [
    "CONVERTER",
    "DocumentError",
    "register_document",
    "structure",
    "unstructure",
]

T = TypeVar("T")
D = TypeVar("D", bound=attrs.AttrsInstance)
HookFactory = Callable[[type, cattrs.Converter], StructureHook]


class DocumentError(JevSelectError, ValueError):
    """A document does not have the shape of its class.

    ``path`` names the field (``$.tasks[2].score``) and ``constraint`` what it must be; neither ever
    carries a value from the document.
    """

    def __init__(self, path: str, constraint: str) -> None:
        super().__init__(path, constraint)
        self.path = path
        self.constraint = constraint

    def __str__(self) -> str:
        return f"{self.path}: {self.constraint}"


class _Refused(JevSelectError, ValueError):
    """Raised by a primitive hook; carries only the constraint."""

    def __init__(self, constraint: str) -> None:
        super().__init__(constraint)
        self.constraint = constraint


def _exact(kind: type[T], constraint: str) -> Callable[[object, type[T]], T]:
    def hook(value: object, _: type[T]) -> T:
        if type(value) is not kind:
            raise _Refused(constraint)
        return value

    return hook


def _string(value: object, _: type[str]) -> str:
    # A vocabulary member is its string (a document built in memory holds them); nothing else
    # that is not a string becomes one.
    if type(value) is str:
        return value
    if isinstance(value, StrEnum):
        return value.value
    raise _Refused("a string")


def _number(value: object, _: type[float]) -> float:
    # JSON has one number type: an integral score reads as an int and must be written back as one.
    if type(value) is int:
        # A JSON reader holds numbers as doubles: an integer beyond their range is infinite.
        try:
            float(value)
        except OverflowError:
            raise _Refused("a finite number") from None
        return value
    if type(value) is float and math.isfinite(value):
        return value
    raise _Refused("a finite number")


def _enum(value: object, kind: type[StrEnum]) -> StrEnum:
    if not isinstance(value, str):
        raise _Refused("a string of its vocabulary")
    try:
        return kind(value)
    except ValueError:
        raise _Refused("a string of its vocabulary") from None


def _only(json_type: type, constraint: str, make: HookFactory) -> HookFactory:
    """A container hook that first insists on the JSON type: a string is not a list of letters."""

    def factory(kind: type, converter: cattrs.Converter) -> StructureHook:
        inner = make(kind, converter)

        def hook(value: object, target: object) -> object:
            if type(value) is not json_type:
                raise _Refused(constraint)
            return inner(value, target)

        return hook

    return factory


def _sequence_factory(kind: type, converter: cattrs.Converter) -> StructureHook:
    if typing.get_origin(kind) is tuple:
        return homogenous_tuple_structure_factory(kind, converter)
    return list_structure_factory(kind, converter)


def _mapping_factory(kind: type, converter: cattrs.Converter) -> StructureHook:
    return mapping_structure_factory(kind, converter)


def _make_converter() -> cattrs.Converter:
    converter = cattrs.Converter(forbid_extra_keys=True, detailed_validation=True)
    converter.register_structure_hook(str, _string)
    converter.register_structure_hook(bool, _exact(bool, "a boolean"))
    converter.register_structure_hook(int, _exact(int, "an integer"))
    converter.register_structure_hook(float, _number)
    # StrEnum precedes str in a vocabulary's MRO, so this hook, not the string one, reads it.
    converter.register_structure_hook(StrEnum, _enum)
    converter.register_unstructure_hook(StrEnum, lambda member: member.value)
    converter.register_structure_hook_factory(
        is_sequence, _only(list, "an array", _sequence_factory)
    )
    converter.register_structure_hook_factory(
        is_mapping, _only(dict, "an object", _mapping_factory)
    )
    return converter


CONVERTER = _make_converter()


# A registered document's JSON key of each renamed attribute, so a failure names the key the
# document spells, not the attribute.
_JSON_KEYS: dict[type, dict[str, str]] = {}


def _first_failure(error: BaseException, path: str) -> DocumentError:
    """The first leaf failure of cattrs' exception tree, as a path and a constraint."""
    if isinstance(error, ForbiddenExtraKeysError):
        return DocumentError(path, "no keys beyond those of the schema")
    if isinstance(error, cattrs.ClassValidationError | cattrs.IterableValidationError):
        for child in error.exceptions:
            notes = getattr(child, "__notes__", ())
            step = ""
            for note in notes:
                name = getattr(note, "name", None)
                index = getattr(note, "index", None)
                if isinstance(name, str):
                    renamed = _JSON_KEYS.get(getattr(error, "cl", object), {})
                    step = f".{renamed.get(name, name)}"
                    break
                if isinstance(index, int):
                    step = f"[{index}]"
                    break
                if index is not None:
                    # a mapping's key comes from the document: it is not repeated
                    step = "[*]"
                    break
            return _first_failure(child, path + step)
        return DocumentError(path, "a valid value")
    if isinstance(error, _Refused):
        return DocumentError(path, error.constraint)
    if isinstance(error, KeyError):
        return DocumentError(path, "a required key")
    if isinstance(error, TypeError | AttributeError):
        return DocumentError(path, "a value of the declared type")
    return DocumentError(path, "a valid value")


def structure(value: object, kind: type[T]) -> T:
    """The typed document of ``value``, or ``DocumentError`` naming the first field that is off."""
    try:
        return CONVERTER.structure(value, kind)
    except DocumentError:
        raise
    except Exception as error:  # cattrs wraps every leaf failure; reduce it to path + constraint
        raise _first_failure(error, "$") from None


def unstructure(document: object) -> object:
    """The JSON value of a typed document (plain dicts, lists, strings, numbers, booleans, None)."""
    return CONVERTER.unstructure(document)


def _not_null(kind: object) -> Callable[[object, object], object]:
    """Reads an optional key: absent is its default, but present it must hold a value."""
    (present,) = (arm for arm in typing.get_args(kind) if arm is not type(None))

    def hook(value: object, _: object) -> object:
        if value is None:
            raise _Refused("a value, not null")
        return CONVERTER.structure(value, present)

    return hook


def register_document(
    kind: type[D],
    *,
    keys: Mapping[str, str] | None = None,
    optional: Collection[str] = (),
    ignore_extra_keys: bool = False,
) -> None:
    """Teach the converter a document class whose JSON is not spelt as its attributes are.

    ``keys`` maps an attribute to its JSON key where the two differ. An attribute in ``optional``
    (declared ``X | None = None``) is a key a writer may leave out: absent from the JSON when None,
    and refused as null when present, as JSON Schema refuses it. ``ignore_extra_keys`` is for the
    one document whose schema tells readers to skip keys they do not know.
    """
    renamed = dict(keys or {})
    _JSON_KEYS[kind] = renamed

    # The hooks are generated on a document's first use, not at import: a run that never reads
    # or writes a kind of document (a bypass reads none) pays nothing for it.
    def is_kind(target: object) -> bool:
        return target is kind

    def structure_factory(_: type) -> StructureHook:
        hints = typing.get_type_hints(kind)
        reading = {
            field.name: override(
                rename=renamed.get(field.name),
                struct_hook=_not_null(hints[field.name]) if field.name in optional else None,
            )
            for field in attrs.fields(kind)
        }
        # Every option of the generator is spelt out, so that the overrides can only name fields.
        return make_dict_structure_fn(
            kind,
            CONVERTER,
            _cattrs_forbid_extra_keys=not ignore_extra_keys,
            _cattrs_use_linecache=True,
            _cattrs_prefer_attrib_converters="from_converter",
            _cattrs_detailed_validation="from_converter",
            _cattrs_use_alias="from_converter",
            _cattrs_include_init_false=False,
            **reading,
        )

    def unstructure_factory(_: type) -> Callable[[D], dict[str, object]]:
        names = [field.name for field in attrs.fields(kind)]
        writing = {
            name: override(rename=renamed.get(name), omit_if_default=name in optional or None)
            for name in names
        }
        generated = make_dict_unstructure_fn(
            kind,
            CONVERTER,
            _cattrs_omit_if_default=False,
            _cattrs_use_linecache=True,
            _cattrs_use_alias="from_converter",
            _cattrs_include_init_false=False,
            **writing,
        )
        order = tuple(renamed.get(name, name) for name in names)

        def write(document: D) -> dict[str, object]:
            # The generator puts the keys it may leave out last; a document keeps its order.
            written = generated(document)
            return {key: written[key] for key in order if key in written}

        return write

    CONVERTER.register_structure_hook_factory(is_kind, structure_factory)
    CONVERTER.register_unstructure_hook_factory(is_kind, unstructure_factory)
