"""What the pydantic round trip of a valid manifest gives, without pydantic.

The review works on `Manifest.model_validate(data).model_dump(mode="json", by_alias=True,
exclude_none=True)`: keys in the models' field order, defaults filled in, numbers as the
field's type (an `int` given for a float field becomes a float, `8.0` for a whole-number
field becomes 8), dates as `YYYY-MM-DD` text, no None values. For a valid manifest that is
all pydantic does, and importing it and building the models costs more than the rest of a
one-manifest check; only an invalid manifest needs its error messages.

So `model_shape()` reads, once, from the models (they stay the single source) what each field
expects and its dumped default; `dump(shape, data)` applies it in plain Python. The shape is
generated into `schemas/manifest.shape.json` with the schemas (`python -m linter.schema`; a
test fails when it differs from the models), and `shape()` reads that file, so building a
rule pack needs neither pydantic nor the models. It is sound,
never complete: whenever a value is not plainly what the field expects (a date that does
not parse, a float where a literal whole number is expected, a key the model does not have,
anything the shape does not know), it answers None and the caller asks pydantic, which
then gives exactly the result or the error it always gave. The shape is plain tuples, so
the rule-pack cache stores it and a warm check never imports pydantic.
"""

from __future__ import annotations

import datetime as dt
import math
import re
from functools import lru_cache

TYPE_CHECKING = False  # typing only for readers and type checkers: a check does not import it
if TYPE_CHECKING:
    from typing import Any

from linter.manifest.loader import plain_copy

Shape = tuple  # ("model", fields) | ("list", shape) | ("dict", shape) | (kind,) | ("literal", values)
_OMIT = "omit"  # a field with no default, or a None default: left out of the dump
_DATE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


class _Unsure(Exception):
    """This value is for pydantic to judge."""


SHAPE_FILE = "manifest.shape.json"  # in schemas/, beside the JSON Schemas it is generated with


@lru_cache(maxsize=1)
def shape() -> Shape:
    """The manifest models as a plain shape, read once from schemas/manifest.shape.json."""
    import json

    from linter.paths import data_dir

    return shape_from_json(json.loads((data_dir("schemas") / SHAPE_FILE).read_text(encoding="utf-8")))


def shape_from_json(node: Any) -> Shape:
    """A shape written as JSON (lists for tuples) as the tuples `model_shape()` gives; a
    default value stays as written (a default list is a list)."""
    kind = node[0]
    if kind == "model":
        return ("model", tuple((key, other, optional, _default_from_json(default), shape_from_json(inner))
                               for key, other, optional, default, inner in node[1]))
    if kind in ("list", "dict"):
        return (kind, shape_from_json(node[1]))
    if kind == "literal":
        return ("literal", tuple(node[1]))
    return (kind,)


def _default_from_json(default: Any) -> Any:
    if default == _OMIT:
        return _OMIT
    if default == ["required"]:
        return ("required",)
    return ("value", default[1])


def model_shape() -> Shape:
    """The manifest models as a plain shape (imports pydantic and the models): what
    linter.schema writes to schemas/manifest.shape.json."""
    import warnings

    from linter.manifest.model import Manifest

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # serialising a default such as 0 for a float field warns
        return _model_shape(Manifest)


def _model_shape(model: Any) -> Shape:
    from pydantic import TypeAdapter

    fields = []
    for name, info in model.model_fields.items():
        key = info.alias or name
        other = name if name != key and model.model_config.get("populate_by_name") else None
        optional = _optional(info.annotation)
        if info.is_required():
            default: Any = ("required",)
        else:
            value = info.get_default(call_default_factory=True)
            default = _OMIT if value is None else (
                "value", TypeAdapter(info.annotation).dump_python(value, mode="json", by_alias=True, exclude_none=True))
        fields.append((key, other, optional, default, _shape(info.annotation)))
    return ("model", tuple(fields))


def _optional(annotation: Any) -> bool:
    import types
    import typing

    return typing.get_origin(annotation) in (typing.Union, types.UnionType) and type(None) in typing.get_args(annotation)


def _shape(annotation: Any) -> Shape:
    import types
    import typing

    from pydantic import BaseModel

    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return _shape(args[0])  # the bounds are the schema's too, checked before this
    if origin in (typing.Union, types.UnionType):
        options = [_shape(a) for a in args if a is not type(None)]
        if len(options) == 1:
            return options[0]
        if all(o[0] == "literal" for o in options):
            return ("literal", tuple(v for o in options for v in o[1]))
        return ("unknown",)
    if origin is typing.Literal:
        return ("literal", args)
    if origin is list:
        return ("list", _shape(args[0]))
    if origin is dict and args and _shape(args[0]) == ("str",):  # str keys, bounded or not (exchange_rates: Currency)
        return ("dict", _shape(args[1]))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return _model_shape(annotation)
    return {float: ("float",), int: ("int",), str: ("str",), bool: ("bool",), dt.date: ("date",)}.get(annotation, ("unknown",))


def dump(manifest_shape: Shape, data: Any) -> dict[str, Any] | None:
    """The pydantic dump of `data` (valid under the schema), or None: ask pydantic."""
    found = _COMPILED.get(id(manifest_shape))
    if found is None or found[0] is not manifest_shape:
        if len(_COMPILED) >= 8:
            _COMPILED.clear()
        found = _COMPILED[id(manifest_shape)] = (manifest_shape, _compiled(manifest_shape))
    try:
        return found[1](data)
    except _Unsure:
        return None


# each shape's functions, built once per process: id(shape) -> (shape, function)
_COMPILED: dict[int, tuple[Shape, Any]] = {}
_REQUIRED, _DEFAULT, _NO_COPY = 0, 1, 2  # a field's default: none (required), a value to copy, one that needs no copy


def _compiled(node: Shape) -> Any:
    """A function from a value to its dump under `node` (raising _Unsure), read from the
    shape once instead of for every value."""
    kind = node[0]
    if kind == "model":
        return _model([(key, other, optional, _OMIT if default == _OMIT else (_REQUIRED, None) if default == ("required",)
                        else (_NO_COPY if type(default[1]) in (str, int, float, bool) else _DEFAULT, default[1]),
                        _compiled(inner)) for key, other, optional, default, inner in node[1]])
    if kind == "float":
        def number(value: Any) -> Any:
            kind_of = type(value)
            if kind_of is int:
                return float(value)
            if kind_of is float and math.isfinite(value):
                return value
            raise _Unsure

        return number
    if kind == "int":
        def whole(value: Any) -> Any:
            kind_of = type(value)
            if kind_of is int:
                return value
            if kind_of is float and math.isfinite(value) and value.is_integer():
                return int(value)
            raise _Unsure

        return whole
    if kind in ("str", "bool"):
        wanted = str if kind == "str" else bool

        def same(value: Any) -> Any:
            if type(value) is wanted:
                return value
            raise _Unsure

        return same
    if kind == "date":
        def date(value: Any) -> Any:
            if type(value) is str and _DATE.fullmatch(value):
                try:
                    dt.date.fromisoformat(value)
                except ValueError:
                    raise _Unsure from None
                return value
            raise _Unsure

        return date
    if kind == "literal":
        options = node[1]
        try:
            keyed = frozenset((type(option), option) for option in options)  # 1, 1.0 and True differ here
        except TypeError:  # an option that is a list or a mapping: compare one by one
            keyed = None

        def literal(value: Any) -> Any:
            kind_of = type(value)
            if keyed is not None:
                try:
                    if (kind_of, value) in keyed:
                        return value
                except TypeError:  # unhashable: no option (all hashable) has its type
                    pass
                raise _Unsure
            if any(type(option) is kind_of and option == value for option in options):
                return value
            raise _Unsure

        return literal
    if kind == "list":
        item = _compiled(node[1])

        def items(value: Any) -> Any:
            if type(value) is not list:
                raise _Unsure
            out = []
            for one in value:
                if one is None:
                    raise _Unsure
                out.append(item(one))
            return out

        return items
    if kind == "dict":
        entry = _compiled(node[1])

        def mapping(value: Any) -> Any:
            if type(value) is not dict or not all(type(k) is str for k in value):
                raise _Unsure
            out = {}
            for k, v in value.items():
                if v is None:
                    raise _Unsure
                out[k] = entry(v)
            return out

        return mapping

    def unknown(value: Any) -> Any:
        raise _Unsure

    return unknown


def _model(fields: list[tuple[str, str | None, bool, Any, Any]]) -> Any:
    def model(value: Any) -> Any:
        if type(value) is not dict:
            raise _Unsure
        out: dict[str, Any] = {}
        used = 0
        for key, other, optional, default, inner in fields:
            if key in value:
                used += 1
                given = value[key]
                if given is None:
                    if not optional:
                        raise _Unsure
                    continue  # exclude_none
                out[key] = inner(given)
            elif other is not None and other in value:
                raise _Unsure  # the field's own name instead of its alias
            elif default is not _OMIT:
                how, default_value = default
                if how == _REQUIRED:
                    raise _Unsure
                out[key] = default_value if how == _NO_COPY else plain_copy(default_value)
        if used != len(value):
            raise _Unsure  # a key no field has
        return out

    return model
