"""Rule sources are parsed by Jinja2's own parser when a pack is built, then checked and
translated into Python by linter.engine.compiler. Whatever a team writes, the pack build
(`rules.translated`, as `hwlint check --rules DIR` runs it) either gives Python that
compiles, or refuses the source with its problems in words: never an exception, and never
Python that fails later, when a message is first rendered (messages, fixes and evidence
are compiled by Python only then).

Sources: every expression and template of the built-in pack, every string of the hostile
rule tests, nesting of every kind up to far beyond compiler.MAX_DEPTH, and generated ones
(expressions and templates from a small grammar with random spacing, and the built-in
sources cut and spliced). For a longer generated run:
HWLINT_FUZZ_EXAMPLES=5000 python -m pytest tests/test_parse.py
"""

from __future__ import annotations

import ast
import os

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import ROOT
from linter.engine.compiler import MAX_DEPTH, MAX_LOOPS, SourceError, nesting, parse
from linter.engine.rules import SOURCES, TEST_SOURCES, translated

EXAMPLES_N = int(os.environ.get("HWLINT_FUZZ_EXAMPLES", "300"))
FUZZ = settings(max_examples=EXAMPLES_N, deadline=None, derandomize="HWLINT_FUZZ_EXAMPLES" not in os.environ,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much])


def problem(kind: str, source: str) -> str | None:
    """What is wrong with how the pack build treats `source`, or None."""
    try:
        text, problems = translated(source, kind, look_up=False)
    except Exception as exc:  # noqa: BLE001 - any exception is a failure of the build
        return f"{kind} {source[:200]!r} raised {type(exc).__name__}: {exc}"
    if text is None:
        return None if problems and all(isinstance(p, str) and p for p in problems) else \
            f"{kind} {source[:200]!r} refused without saying why: {problems!r}"
    if problems:
        return f"{kind} {source[:200]!r} translated despite {problems!r}"
    try:
        compile(text, "<rule>", "exec", dont_inherit=True)
    except (SyntaxError, RecursionError, MemoryError) as exc:
        return f"{kind} {source[:200]!r} was accepted, but its Python does not compile: {exc}"
    return None


def rule_sources(paths) -> list[tuple[str, str, str]]:
    """(where, kind, source) of every rule expression and template in the YAML files `paths`."""
    found = []
    for path in paths:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            continue
        for section, keys in (("rules", SOURCES), ("tiers", TEST_SOURCES), ("conditions", TEST_SOURCES)):
            for index, record in enumerate(data.get(section) or []):
                for key, kind in keys:
                    if isinstance(record, dict) and isinstance(record.get(key), str):
                        found.append((f"{path.name}:{section}[{index}].{key}", kind, record[key]))
    return found


BUILT_IN = rule_sources(sorted((ROOT / "rules").glob("*.yaml")))


def test_the_built_in_pack_translates_without_a_problem_and_nests_well_within_the_limit():
    assert len(BUILT_IN) > 300  # every rule's when/require/message/fix/at/evidence, tiers, conditions
    problems = [f"{where}: {found}" for where, kind, source in BUILT_IN
                if (found := problem(kind, source) or translated(source, kind, look_up=False)[1])]
    assert not problems, "\n".join(problems)
    deepest = [nesting(parse(source, kind)) for _, kind, source in BUILT_IN]
    assert max(d for d, _ in deepest) <= MAX_DEPTH // 4 and max(loops for _, loops in deepest) <= MAX_LOOPS // 4


# (kind, source made from n) nested n deep by each construct that nests
NESTINGS = [
    ("expr", lambda n: "(" * n + "1" + ")" * n), ("expr", lambda n: "not " * n + "manifest.name"),
    ("expr", lambda n: "-" * n + "1"), ("expr", lambda n: "[" * n + "]" * n), ("expr", lambda n: "{'a': " * n + "1" + "}" * n),
    ("expr", lambda n: " + ".join(["manifest.name"] * n)), ("expr", lambda n: "manifest.name" + " | int" * n),
    ("expr", lambda n: "range(1)" + ".real" * n), ("expr", lambda n: "manifest.name" + "[0]" * n),
    ("expr", lambda n: "range(" * n + "1" + ")" * n), ("expr", lambda n: "(1 if true else " * n + "0" + ")" * n),
    ("tmpl", lambda n: "{{ " + "not " * n + "manifest.name }}"), ("tmpl", lambda n: "{{ " + "(" * n + "1" + ")" * n + " }}"),
    ("tmpl", lambda n: "{% if manifest.name %}" * n + "x" + "{% endif %}" * n),
    ("tmpl", lambda n: "{% for a in range(1) %}" * n + "{{ loop.index }}" + "{% endfor %}" * n),
    ("tmpl", lambda n: "{% if true %}{% else %}" * n + "x" + "{% endif %}" * n),
]


@pytest.mark.parametrize("kind, make", NESTINGS, ids=lambda v: v if isinstance(v, str) else "")
def test_a_tree_nested_beyond_the_limits_is_refused_and_one_within_them_compiles(kind, make):
    """Beyond MAX_DEPTH or MAX_LOOPS the source is refused when the pack is built, never left
    for Python to refuse when a message is first rendered; within them the Python compiles."""
    for n in (5, MAX_LOOPS + 1, MAX_DEPTH // 2, MAX_DEPTH - 5, MAX_DEPTH + 1, 120, 250, 600, 3000):
        source = make(n)
        assert problem(kind, source) is None, problem(kind, source)
        text, problems = translated(source, kind, look_up=False)
        try:
            deepest, loops = nesting(parse(source, kind))
        except (SourceError, RecursionError):  # Jinja's parser refused it: the problems say why
            assert text is None and problems
            continue
        beyond = deepest > MAX_DEPTH or loops > MAX_LOOPS
        assert beyond == (text is None), (n, problems)
        if beyond:
            assert any(" nest" in p for p in problems), (n, problems)


def test_every_string_of_the_hostile_rule_tests():
    tree = ast.parse((ROOT / "tests" / "test_hostile_rules.py").read_text(encoding="utf-8"))
    strings = {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant) and isinstance(node.value, str)}
    problems = [found for source in sorted(strings) for kind in ("expr", "tmpl") if (found := problem(kind, source))]
    assert not problems, "\n".join(problems)


# --- generated sources ----------------------------------------------------------------------

SPACE = st.sampled_from(["", " ", " ", "  ", "\n", " \n  ", "\t"])
NAMES = st.sampled_from(["x", "manifest", "facts", "pool", "loop", "_x", "true", "False", "none", "range",
                         "if", "in", "not", "is", "and", "or", "else", "e3"])
NUMBERS = st.sampled_from(["0", "1", "42", "1_000", "1e3", "1.5", "2.5e-3", "0x1F", "0b11", "0o7", "00", "1.", "1_", "0_0"])
STRINGS = st.sampled_from(["'a'", '"b"', "''", r"'\n'", r"'\x41'", "'é'", r"'a\'b'", "'}}'", "'%}'", "'{{'", "'#}'"])
FILTERS = st.sampled_from(["length", "default(0)", "round(1, 'floor')", "map(attribute='x')", "join(', ')", "int", "f.g",
                           "center(9)", "num"])
TESTS = st.sampled_from(["defined", "not defined", "none", "divisibleby 3", "sameas false", "eq(1)", "in [1]", "number"])
BINARY = st.sampled_from(["+", "-", "*", "/", "//", "%", "**", "~", "==", "!=", "<", "<=", ">", ">=", "in", "not in",
                          "and", "or"])


def spaced(*parts):
    return st.tuples(*(p if isinstance(p, st.SearchStrategy) else st.just(p) for p in parts), *(SPACE for _ in parts)).map(
        lambda t: "".join(a + b for a, b in zip(t[:len(parts)], t[len(parts):])))


ATOMS = st.one_of(NAMES, NUMBERS, STRINGS, st.just("[]"), st.just("{}"), st.just("()"))


def _extend(inner):
    return st.one_of(
        spaced(inner, BINARY, inner), spaced(st.sampled_from(["-", "+", "not "]), inner), spaced(inner, "|", FILTERS),
        spaced(inner, " is ", TESTS), spaced(inner, " if ", inner), spaced(inner, " if ", inner, " else ", inner),
        spaced("(", inner, ")"), spaced("[", inner, ",", inner, "]"), spaced("{", inner, ":", inner, "}"),
        spaced(inner, ".", NAMES), spaced(inner, "[", inner, "]"), spaced(inner, "[", inner, ":", "]"),
        spaced(inner, "(", inner, ", k=", inner, ")"), spaced("(", inner, ",", inner, ")"), spaced(inner, ".", "0"),
    )


EXPRESSIONS = st.recursive(ATOMS, _extend, max_leaves=12)
TEXT = st.text(alphabet="ab {}%#-+\n\r ", max_size=12)
SIGN = st.sampled_from(["", "", "-", "+"])


def _blocks(inner):
    return st.one_of(
        st.lists(inner, max_size=3).map("".join),
        st.tuples(SIGN, EXPRESSIONS, inner, SIGN, inner).map(
            lambda t: f"{{%{t[0]} if {t[1]} %}}{t[2]}{{% else {t[3]}%}}{t[4]}{{% endif %}}"),
        st.tuples(EXPRESSIONS, inner, EXPRESSIONS, inner).map(
            lambda t: f"{{% if {t[0]} %}}{t[1]}{{% elif {t[2]} %}}{t[3]}{{% endif %}}"),
        st.tuples(st.sampled_from(["x", "a, b", "(a, b)", "x,"]), EXPRESSIONS, st.sampled_from(["", " if x", " recursive"]), inner,
                  st.sampled_from(["", "{% else %}", "{%- else -%}\n"])).map(
            lambda t: f"{{% for {t[0]} in {t[1]}{t[2]} %}}{t[3]}{t[4]}{{% endfor %}}"),
    )


PIECES = st.one_of(
    TEXT, st.tuples(SIGN, EXPRESSIONS, SIGN).map(lambda t: f"{{{{{t[0]} {t[1]} {t[2]}}}}}"),
    st.tuples(SIGN, TEXT, SIGN).map(lambda t: f"{{#{t[0]}{t[1]}{t[2]}#}}"),
    st.tuples(st.sampled_from(["x", "a, b", "ns.x", "(a, b)"]), EXPRESSIONS).map(lambda t: f"{{% set {t[0]} = {t[1]} %}}"),
    st.tuples(EXPRESSIONS, EXPRESSIONS).map(lambda t: f"{{% print {t[0]}, {t[1]} %}}"),
    st.sampled_from(["{% macro f() %}{% endmacro %}", "{% include 'x' %}", "{% set a %}x{% endset %}", "{% raw %}{{ x }}{% endraw %}",
                     "{% filter upper %}x{% endfilter %}", "{% with a = 1 %}{{ a }}{% endwith %}", "{% block b %}{% endblock %}"]),
)
TEMPLATES = st.recursive(PIECES, _blocks, max_leaves=8)


@FUZZ
@given(EXPRESSIONS)
def test_generated_expressions(source):
    for kind, text in (("expr", source), ("tmpl", "{{ " + source + " }}")):
        assert problem(kind, text) is None, problem(kind, text)


@FUZZ
@given(TEMPLATES)
def test_generated_templates(source):
    assert problem("tmpl", source) is None, problem("tmpl", source)


@FUZZ
@given(st.sampled_from(BUILT_IN), st.integers(0, 10_000), st.integers(0, 6),
       st.sampled_from(["", " ", "(", ")", "[", "]", "{", "}", "}}", "%}", "{{", "{%", "-", "'", "\"", "|", ".", ",", "if",
                        " not ", " is ", "\n", "\\", "1.", "=", ":", "#}", "{#", "\0", "é", "_", "__class__"]))
def test_built_in_sources_cut_and_spliced(record, at, cut, insert):
    _, kind, source = record
    at %= len(source) + 1
    mutated = source[:at] + insert + source[at + cut:]
    assert problem(kind, mutated) is None, problem(kind, mutated)
