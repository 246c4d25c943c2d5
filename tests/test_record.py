"""linter.record makes classes as dataclasses does: each case defines one class both ways
and compares what they do."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from linter import record as rec


def part(decorate, field, frozen: bool, name: str = "Part") -> type:
    """One class body, made by `decorate` (dataclasses.dataclass or record.record)."""
    class Part:
        name: str
        count: int = 1
        tags: list = field(default_factory=list)
        label: str = field(init=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "label", f"{self.count}x {self.name}")

    Part.__qualname__ = Part.__name__ = name
    return decorate(frozen=frozen)(Part)


def both(frozen: bool = False) -> tuple[type, type]:
    """The same class as a dataclass and as a record."""
    return part(dataclasses.dataclass, dataclasses.field, frozen), part(rec.record, rec.field, frozen)


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_is_built_repr_and_compared_as_a_dataclass(frozen):
    data, made = both(frozen)
    for args, kwargs in [(("gpu",), {}), (("nic", 4), {}), (("ssd",), {"tags": ["nvme"], "count": 2})]:
        a, b = data(*args, **kwargs), made(*args, **kwargs)
        assert repr(a) == repr(b)
        assert (a.name, a.count, a.tags, a.label) == (b.name, b.count, b.tags, b.label)
        assert b == made(*args, **kwargs) and b != made("other") and (b == a) is False
    assert made("x").tags is not made("x").tags  # a factory's default is made per instance
    with pytest.raises(TypeError):
        made()  # a field without a default must be given
    with pytest.raises(TypeError):
        made("x", label="y")  # an init=False field is not a parameter


def test_a_frozen_record_cannot_change_and_is_hashable_by_value():
    _, made = both(frozen=True)
    part = made("gpu", 8)
    with pytest.raises(AttributeError):
        part.count = 9
    with pytest.raises(AttributeError):
        del part.name
    with pytest.raises(TypeError):
        hash(part)  # a list field: unhashable, as a frozen dataclass with one
    _, plain = both(frozen=False)
    with pytest.raises(TypeError):
        hash(plain("gpu"))  # equal by value and mutable: not hashable, as a dataclass

    @rec.record(frozen=True)
    class Unknown:
        needs: tuple

    assert hash(Unknown(("a",))) == hash(Unknown(("a",))) and {Unknown(("a",)): 1}[Unknown(("a",))] == 1


@pytest.mark.parametrize("frozen", [False, True])
def test_replace_and_pickle_keep_a_record_what_it_is(frozen):
    made = globals()[f"Kept{'Frozen' if frozen else ''}"]
    part = made("gpu", 8, ["hbm"])
    again = rec.replace(part, count=4)
    assert (again.name, again.count, again.tags, again.label) == ("gpu", 4, ["hbm"], "4x gpu")  # __post_init__ ran
    assert part.count == 8
    assert pickle.loads(pickle.dumps(part)) == part
    assert rec.fields(part) == ("name", "count", "tags", "label")


def test_a_field_without_a_default_after_one_with_a_default_is_refused():
    with pytest.raises(TypeError, match="without a default follows"):
        @rec.record
        class Wrong:
            a: int = 1
            b: int


# module-level, so that pickle finds them by name
Kept, KeptFrozen = part(rec.record, rec.field, False, "Kept"), part(rec.record, rec.field, True, "KeptFrozen")
