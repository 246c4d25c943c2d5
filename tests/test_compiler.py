"""Rules are written in Jinja2's language and run as hwlint's own compiled Python: the two must
agree. Each case runs through linter.engine.compiler and through Jinja2 itself (its sandbox,
strict undefined values, the same `num` filter), and the text or value must be the same, or
both must fail."""

from __future__ import annotations

import pytest

from linter.engine.compiler import Refused, SourceError, compile_source
from linter.engine.sandbox import MissingData, Recorder, wrap
from linter.numbers import num

DATA = {
    "name": "Atlas 70B", "pools": [{"name": "dgx", "count": 32, "gpus": 8, "tags": ["a", "B"]},
                                   {"name": "mgmt", "count": 2, "gpus": 0, "tags": []},
                                   {"name": "Dgx", "count": 4, "gpus": 8, "tags": ["c"]}],
    "plan": {"tp": 8, "pp": 4, "ratio": 0.375, "goal": "pretrain", "tokens": 15e12, "none": None},
    "words": "a-b (c) d[e", "empty": [],
}

EXPRESSIONS = [
    "manifest.plan.tp * manifest.plan.pp", "manifest.plan.tp / 3", "manifest.plan.tp // 3", "manifest.plan.tp % 3",
    "-manifest.plan.tp + 2", "2 ** 10 - 1", "10**10**2 == 10**20", "1 < manifest.plan.tp <= 8 < 9",
    "manifest.plan.goal in ['pretrain', 'finetune']", "'x' not in manifest.plan.goal",
    "manifest.pools | length", "manifest.pools | map(attribute='count') | sum",
    "manifest.pools | selectattr('gpus') | map(attribute='name') | list",
    "manifest.pools | rejectattr('gpus', 'gt', 4) | map(attribute='name') | join(', ')",
    "manifest.pools | sort(attribute='name') | map(attribute='name') | list",
    "manifest.pools | sort(attribute='gpus,name', reverse=true) | map(attribute='name') | join('/')",
    "manifest.pools | map(attribute='name') | unique | list", "manifest.pools | map(attribute='name') | unique(true) | list",
    "manifest.pools | map(attribute='count') | max", "manifest.pools | min(attribute='count') | string",
    "manifest.pools | groupby('gpus') | map(attribute='grouper') | list",
    "(manifest.pools | groupby('name') | first).list | length",
    "manifest.plan | dictsort | map('first') | join(',')", "manifest.plan.ratio | round(2)",
    "manifest.plan.ratio | round(1, 'floor')", "'42.7' | int", "'x' | int(7)", "'2.5' | float * 2",
    "manifest.plan.tokens | num", "manifest.plan.ratio | num(3)", "manifest.name | lower | title",
    "manifest.words | title", "manifest.words | wordcount", "manifest.name | truncate(5)",
    "manifest.name | truncate(6, true, '..', 0)", "manifest.name | reverse", "manifest.pools | reverse | first",
    "manifest.name | replace('7', 'x')", "'%05.1f|%s' | format(3.14159, 'y')", "'%d items' % 3",
    "manifest.empty | first is defined", "manifest.nothing is defined", "manifest.plan.none is none",
    "manifest.nothing | default('fallback')", "manifest.plan.none | default('x', true)",
    "manifest.plan.tp is divisibleby 4", "manifest.plan.tp is even", "manifest.name is string",
    "manifest.plan is mapping", "manifest.pools is sequence", "3 is in [1, 2, 3]",
    "manifest.pools | map(attribute='count') | select('gt', 3) | list",
    "[1, 2, 3] | map('string') | join('+')", "{'a': 1, 'b': 2}.b", "{'a': 1}['a']", "(1, 2)[1]",
    "manifest.name[0:5]", "manifest.name[::-1]", "manifest.pools[1].name", "manifest.pools[-1].count",
    "manifest.name.split(' ') | last", "manifest.name.lower().startswith('atlas')", "'a,b'.split(',') | length",
    "{'x': 1}.items() | list", "{'x': 1, 'y': 2}.keys() | list | length",
    "ceil(manifest.plan.ratio * 10) + floor(2.5) + sqrt(16)", "days_between('2026-01-01', '2026-12-01')",
    "add_days('2026-01-30', 3)", "range(3) | list", "manifest.plan.tp if manifest.plan.pp > 1 else 0",
    "(manifest.plan.tp if false) | length", "'yes' if manifest.nothing is defined", "not manifest.empty and true",
    "manifest.empty or 'fallback'", "manifest.pools | items | list" , "manifest.plan | items | list | length",
    "[manifest.plan.tp, manifest.plan.pp] | sum(start=1)", "manifest.pools | sum(attribute='gpus')",
    "manifest.pools | map('default', 0) | list | length", "true and manifest.plan.tp",
]

TEMPLATES = [
    "{{ manifest.name }} has {{ manifest.pools | length }} pools",
    "{% for p in manifest.pools %}{{ loop.index }}/{{ loop.length }}:{{ p.name }}{% if not loop.last %}, {% endif %}{% endfor %}",
    "{% for p in manifest.pools if p.gpus %}{{ loop.index0 }}{{ p.name }}{{ loop.revindex }}{% endfor %}",
    "{% for p in manifest.empty %}x{% else %}none{% endfor %}",
    "{% set total = 0 %}{% for p in manifest.pools %}{% set total = total + p.count %}{{ total }} {% endfor %}{{ total }}",
    "{% set x = 1 %}{% if true %}{% set x = 2 %}{% endif %}{{ x }}",
    "{% if manifest.plan.tp > 8 %}big{% elif manifest.plan.tp == 8 %}eight{% else %}small{% endif %}",
    "{% for k, v in manifest.plan | dictsort %}{{ k }}={{ v }};{% endfor %}",
    "{% for p in manifest.pools %}{% for t in p.tags %}{{ loop.index }}{{ t }}{% endfor %}|{{ loop.index }}{% endfor %}",
    "{% for p in manifest.pools %}{{ loop.previtem.name if not loop.first }}>{{ p.name }}{% endfor %}",
    "{{- ' padded ' -}}  {{ manifest.plan.ratio }} {# a comment #} end\n",
    "{% set a, b = 1, 2 %}{{ a + b }} {{ [a, b] }} {{ {'k': b} }} {{ (a, b) }}",
    "{{ manifest.plan.none }} {{ true }} {{ 1.5e3 }} {{ 10 ** 20 }} {{ 7 / 2 }}",
    "{{ manifest.pools | map(attribute='name') | join(', ') }} and {{ manifest.nothing | default('-') }}",
    "{% for p in manifest.pools %}{% set seen = p.name %}{% endfor %}{{ seen is defined }}",
    "{{ 'x' if false }}|{{ manifest.nothing | d('d') }}",
]


def jinja_value(source: str, kind: str, context: dict):
    from jinja2 import StrictUndefined
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    from linter.engine.sandbox import GLOBALS

    env = ImmutableSandboxedEnvironment(undefined=StrictUndefined)
    env.filters["num"] = num
    env.globals.update(GLOBALS)
    if kind == "expr":
        return env.compile_expression(source, undefined_to_none=False)(**context)
    return env.from_string(source).render(**context)


def outcome(run):
    try:
        value = run()
    except Exception:  # noqa: BLE001 - failing is an outcome to compare
        return ("error",)
    if hasattr(value, "__next__"):
        value = list(value)
    return ("value", repr(value) if not isinstance(value, (str, int, float, bool, list)) else value)


@pytest.mark.parametrize("kind, source", [("expr", e) for e in EXPRESSIONS] + [("tmpl", t) for t in TEMPLATES])
def test_a_rule_runs_as_jinja2_would_run_it(kind, source):
    ours = compile_source(source, kind)

    def mine():
        scope = {"manifest": wrap(DATA, "", Recorder())}
        return ours(**scope) if kind == "expr" else ours.render(**scope)

    def theirs():
        return jinja_value(source, kind, {"manifest": DATA})

    got, expected = outcome(mine), outcome(theirs)
    if got[0] == expected[0] == "value" and str(got[1]).startswith("<") and str(expected[1])[:1] in "{[":
        return  # a manifest view prints as its path here, as the dict it views there
    assert got == expected, source


def test_reading_what_the_manifest_lacks_names_the_path():
    rule = compile_source("manifest.plan.tp * manifest.pools[7].count", "expr")
    with pytest.raises(MissingData) as raised:
        rule(manifest=wrap(DATA, "", Recorder()))
    assert raised.value.needs == ("pools[7]",)


def test_the_values_a_rule_read_are_recorded():
    recorder = Recorder()
    compile_source("manifest.plan.tp * manifest.pools[0].count > 100", "expr")(manifest=wrap(DATA, "", recorder))
    assert recorder == {"plan.tp": 8, "pools[0].count": 32}


@pytest.mark.parametrize("source, kind, error", [
    ("manifest | center(9)", "expr", SourceError), ("x is frobnicated", "expr", SourceError),
    ("manifest.plan.", "expr", SourceError), ("1 2", "expr", SourceError),
    ("{% with a = 1 %}{{ a }}{% endwith %}", "tmpl", Refused),
    ("{% for x in [1] recursive %}{{ loop(x) }}{% endfor %}", "tmpl", Refused),
])
def test_what_cannot_be_compiled_is_refused_in_words(source, kind, error):
    with pytest.raises(error):
        compile_source(source, kind)


def test_the_compiled_code_reaches_no_builtins():
    from linter.engine.sandbox import NAMESPACE

    assert NAMESPACE["__builtins__"] == {}
    rule = compile_source("manifest.name", "expr")
    assert all(not name.startswith("__") or name == "__builtins__" for name in rule.hwlint_code.co_names)


def test_the_table_of_built_in_translations_is_current():
    """rules/compiled.json is what the compiler makes of the built-in sources now: regenerate it
    with `python -m linter.schema` after changing a rule or the compiler."""
    from linter.engine.compiler import TABLE
    from linter.engine.rules import compiled_table
    from linter.paths import data_dir

    assert (data_dir("rules") / TABLE).read_text(encoding="utf-8") == compiled_table()


def test_a_source_in_the_table_builds_as_the_compiler_builds_it(tmp_path):
    """A team rule whose text equals a built-in source is looked up, and a source the table does
    not hold is translated: both give the same code as translating afresh."""
    from linter.engine.compiler import known
    from linter.engine.rules import translated

    source = "manifest.facility.pue is defined"
    held = known("'object' in manifest.storage.tiers | map(attribute='kind') | list", "expr")
    assert held == translated("'object' in manifest.storage.tiers | map(attribute='kind') | list", "expr", look_up=False)[0]
    assert known(source, "expr") is None and translated(source, "expr") == translated(source, "expr", look_up=False)
