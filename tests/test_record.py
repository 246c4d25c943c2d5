"""linter.record makes classes as dataclasses does, for every use a caller can make of them:
each case defines one class body both ways and compares what they do, through the
dataclasses module's own functions too (fields, asdict, astuple, replace, is_dataclass), and
pickling, copying, pattern matching and subclassing by a dataclass."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import subprocess
import sys

import pytest

from conftest import EXAMPLES, ROOT
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


def both(frozen: bool = False, name: str = "Part") -> tuple[type, type]:
    """The same class as a dataclass and as a record."""
    return part(dataclasses.dataclass, dataclasses.field, frozen, name), part(rec.record, rec.field, frozen, name)


# module-level, so that pickle finds them by name
Kept, KeptFrozen = part(rec.record, rec.field, False, "Kept"), part(rec.record, rec.field, True, "KeptFrozen")
KEPT = {False: Kept, True: KeptFrozen}
ARGUMENTS = [(("gpu",), {}), (("nic", 4), {}), (("ssd",), {"tags": ["nvme"], "count": 2})]


def fields_of(kind) -> list[tuple]:
    return [(f.name, f.type, f.default, f.default_factory, f.init, f.repr, f.compare, f.hash, f.kw_only)
            for f in dataclasses.fields(kind)]


@pytest.mark.parametrize("frozen", [False, True])
def test_a_record_is_built_repr_and_compared_as_a_dataclass(frozen):
    data, made = both(frozen)
    for args, kwargs in ARGUMENTS:
        a, b = data(*args, **kwargs), made(*args, **kwargs)
        assert repr(a) == repr(b)
        assert (a.name, a.count, a.tags, a.label) == (b.name, b.count, b.tags, b.label)
        assert b == made(*args, **kwargs) and b != made("other") and (b == a) is False
    assert made("x").tags is not made("x").tags  # a factory's default is made per instance
    with pytest.raises(TypeError):
        made()  # a field without a default must be given
    with pytest.raises(TypeError):
        made("x", label="y")  # an init=False field is not a parameter


@pytest.mark.parametrize("frozen", [False, True])
def test_the_dataclasses_module_reads_a_record_as_one_of_its_own(frozen):
    data, made = both(frozen)
    assert dataclasses.is_dataclass(made) and dataclasses.is_dataclass(made("gpu"))
    assert fields_of(made) == fields_of(data) and fields_of(made("gpu")) == fields_of(data("gpu"))
    assert made.__dataclass_params__.frozen is frozen
    for args, kwargs in ARGUMENTS:
        a, b = data(*args, **kwargs), made(*args, **kwargs)
        assert dataclasses.asdict(b) == dataclasses.asdict(a) and dataclasses.astuple(b) == dataclasses.astuple(a)
        for replace in (dataclasses.replace, rec.replace):
            again = replace(b, count=4)
            assert type(again) is made and repr(again) == repr(dataclasses.replace(a, count=4))  # __post_init__ ran
            with pytest.raises(ValueError, match="init=False"):
                replace(b, label="z")
            with pytest.raises(TypeError):
                replace(b, colour="red")
    with pytest.raises(TypeError):
        rec.replace(object())


def test_a_record_within_a_record_is_a_dataclass_within_a_dataclass():
    (data, made), (box_data, box_made) = both(), both(name="Box")
    assert dataclasses.asdict(made("gpu", tags=[made("hbm")])) == dataclasses.asdict(data("gpu", tags=[data("hbm")]))
    looped, looped_data = made("loop"), data("loop")
    looped.tags.append(looped)
    looped_data.tags.append(looped_data)
    assert repr(looped) == repr(looped_data)  # "Part(name='loop', count=1, tags=[...], label=...)"
    assert box_made.__dataclass_fields__.keys() == box_data.__dataclass_fields__.keys()


@pytest.mark.parametrize("frozen", [False, True])
def test_a_dataclass_may_subclass_a_record(frozen):
    data, made = both(frozen)

    def sub(base):
        @dataclasses.dataclass(frozen=frozen)
        class Sub(base):
            extra: int = 0
        return Sub

    a, b = sub(data)("gpu", 2, extra=5), sub(made)("gpu", 2, extra=5)
    assert dataclasses.asdict(a) == dataclasses.asdict(b) and (b.label, b.extra) == ("2x gpu", 5)
    assert [f.name for f in dataclasses.fields(b)] == ["name", "count", "tags", "label", "extra"]


def test_a_record_matches_a_class_pattern_by_position():
    _, made = both()
    match made("gpu", 8):
        case made(name, count):
            assert (name, count) == ("gpu", 8)
        case _:
            pytest.fail("no match")
    assert made.__match_args__ == both()[0].__match_args__ == ("name", "count", "tags")


def test_a_frozen_record_cannot_change_and_is_hashable_by_value():
    data, made = both(frozen=True)
    part, other = made("gpu", 8), data("gpu", 8)
    for target in (part, other):
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot assign to field 'count'"):
            target.count = 9
        with pytest.raises(dataclasses.FrozenInstanceError, match="cannot delete field 'name'"):
            del target.name
        with pytest.raises(TypeError):
            hash(target)  # a list field: unhashable, as a frozen dataclass with one
    _, plain = both(frozen=False)
    with pytest.raises(TypeError):
        hash(plain("gpu"))  # equal by value and mutable: not hashable, as a dataclass

    class Unknown:
        needs: tuple

    data = dataclasses.dataclass(frozen=True)(type("Unknown", (), {"__annotations__": {"needs": "tuple"}}))
    made = rec.record(frozen=True)(Unknown)
    assert hash(made(("a",))) == hash(data(("a",))) and {made(("a",)): 1}[made(("a",))] == 1


@pytest.mark.parametrize("frozen", [False, True])
def test_pickle_and_copy_keep_a_record_what_it_is(frozen):
    part = KEPT[frozen]("gpu", 8, ["hbm"])
    for again in (pickle.loads(pickle.dumps(part)), copy.copy(part), copy.deepcopy(part)):
        assert again == part and type(again) is KEPT[frozen] and (again.label, again.tags) == ("8x gpu", ["hbm"])
    assert copy.deepcopy(part).tags is not part.tags


def test_a_field_without_a_default_after_one_with_a_default_is_refused():
    with pytest.raises(TypeError, match="without a default follows"):
        @rec.record
        class Wrong:
            a: int = 1
            b: int


def test_hwlints_own_records_are_dataclasses_to_a_caller():
    """The results of a real review, as a caller of the package gets them."""
    from linter.engine.review import review_file
    from linter.engine.rules import load_pack

    review = review_file(str(EXAMPLES / "flawed-cluster.hw.yaml"), load_pack())
    assert dataclasses.is_dataclass(review)
    failing = next(r for r in review.results if r.status == "fail")
    assert dataclasses.asdict(failing)["rule_id"] == failing.rule_id
    assert dataclasses.replace(failing, message="other").message == "other"
    assert pickle.loads(pickle.dumps(failing)) == failing


def test_a_record_class_imports_no_dataclasses_until_asked():
    code = ("import sys; from linter.record import record\n"
            "@record(frozen=True)\nclass A:\n    x: int = 1\n"
            "a = A(); repr(a); hash(a); a == A()\n"
            "print('dataclasses' in sys.modules)")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert run.stdout.strip() == "False", run.stdout + run.stderr
