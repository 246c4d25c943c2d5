"""Rule files are untrusted input: a hostile rule is refused with a clear error, in bounded
time, and never stops the other rules.

Each case writes one rule into a temporary rule folder and runs `hwlint check --rules DIR`
on an example. Problems visible in the rule text are refused when the pack loads (exit 2,
`rule error: FILE:LINE:COL`); the rest are stopped while the rule runs, reported as that
rule's error (exit 2), and every built-in rule still gets its result.
"""

from __future__ import annotations

import json
import re
import time

import pytest

from conftest import EXAMPLES, hwlint_process

MANIFEST = EXAMPLES / "multi-node-pretrain.hw.yaml"


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("HWLINT_CACHE_DIR", str(tmp_path / "cache"))


def rule_folder(tmp_path, require="true", message="plain words", when="true"):
    folder = tmp_path / "rules"
    folder.mkdir()
    (folder / "hostile.yaml").write_text(
        "rules:\n"
        "  - id: GPU900\n"
        "    title: A hostile rule\n"
        "    severity: error\n"
        "    tiers: all\n"
        f"    when: {json.dumps(when)}\n"
        f"    require: {json.dumps(require)}\n"
        f"    message: {json.dumps(message)}\n"
        "    fix: nothing\n"
        "    cite: [seed-hardware-layers]\n"
        "    at: plan.goal\n"
    )
    return folder


REFUSED_AT_LOAD = [
    ("class attribute", dict(require="manifest.__class__"), "reads the attribute __class__"),
    ("class by key", dict(require="manifest['__class__']"), "reads the attribute __class__"),
    ("subclasses walk", dict(require="''.__class__.__mro__[1].__subclasses__()"), "reads the attribute __subclasses__"),
    ("function globals", dict(require="range.__globals__"), "reads the attribute __globals__"),
    ("mro on data", dict(require="manifest.plan.mro()"), "reads manifest.plan.mro, which is not in the manifest schema"),
    ("python import", dict(require="__import__('os').system('true')"), "uses the name __import__, which is not defined"),
    ("template import", dict(require="false", message="{% import 'os' as os %}{{ os }}"), "uses import"),
    ("include a file", dict(require="false", message="{% include '/etc/passwd' %}"), "uses include"),
    ("extends", dict(require="false", message="{% extends 'x' %}"), "uses extends"),
    ("recursive macro", dict(require="false", message="{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(1) }}"), "uses macros"),
    ("block set doubling", dict(require="false", message="{% set a %}{{ 'x' * 9999 }}{% endset %}{{ a }}"), "uses block set"),
    ("concatenation", dict(require="('x' ~ 'y') == 'xy'"), "uses the ~ operator"),
    ("unbounded filter", dict(require="('x' | center(10**9)) != ''"), "No filter named 'center'"),
    ("misspelled root", dict(require="manifets.plan.goal == 'pretrain'"), "uses the name manifets, which is not defined"),
    ("nested too deep to parse", dict(require="(" * 3000 + "1" + ")" * 3000), "is nested too deeply to compile"),
    ("call block", dict(message="{% macro f() %}{{ caller() }}{% endmacro %}{% call f() %}x{% endcall %}"), "uses call blocks"),
    ("import from", dict(message="{% from 'os' import path %}{{ path }}"), "uses import"),
    ("template block", dict(message="{% block b %}x{% endblock %}"), "uses blocks"),
    ("filter block", dict(message="{% filter upper %}x{% endfilter %}"), "uses filter blocks"),
    ("with block", dict(message="{% with a = 1 %}{{ a }}{% endwith %}"), "uses {% with %}"),
    ("recursive loop", dict(message="{% for x in [1] recursive %}{{ loop(x) }}{% endfor %}"), "uses recursive loops"),
    ("extension tag", dict(message="{% do manifest.plan.update({}) %}"), "message is not a valid template: Encountered unknown tag 'do'"),
    ("template syntax", dict(message="{% if manifest.name %}x"), "message is not a valid template: Unexpected end of template"),
    # Python compiles a message when it is first rendered: what it could not compile is refused first
    ("message nested deeper than Python compiles", dict(message="{{ " + "not " * 250 + "manifest.name }}"),
     "message is nested 254 deep; rules may nest at most 50 deep"),
    ("loops nested deeper than Python compiles", dict(message="{% for a in [1] %}" * 21 + "{% endfor %}" * 21),
     "message nests 21 loops; rules may nest at most 10"),
]


@pytest.mark.parametrize("case, fields, fragment", REFUSED_AT_LOAD, ids=[c[0] for c in REFUSED_AT_LOAD])
def test_hostile_rule_is_refused_when_the_pack_loads(hwlint, tmp_path, case, fields, fragment):
    folder = rule_folder(tmp_path, **fields)
    run = hwlint("check", "--rules", folder, MANIFEST)
    assert run.code == 2 and "Traceback" not in run.err and "internal error" not in run.err
    assert re.search(rf"^hwlint: rule error: {re.escape(str(folder / 'hostile.yaml'))}:\d+:\d+: rule GPU900: .*{re.escape(fragment)}",
                     run.err, re.M), run.err
    assert run.out == ""  # nothing was reviewed with a pack that cannot be trusted


STOPPED_WHILE_RUNNING = [
    ("huge range", dict(require="range(10**9) | length > 0"), "range of 1,000,000,000 items is over the limit"),
    ("string times a billion", dict(require="('x' * 10**9) | length > 0"), "a sequence of 1,000,000,000 items is over the limit"),
    ("power tower", dict(require="10**(10**10) > 0"), "a number of about 40,000,000,000 bits is over the limit of 4,096"),
    ("chained powers", dict(require="10**10**10**10**10 > 0"), "bits is over the limit of 4,096"),
    ("product of big numbers", dict(require="(10**60)**60 * (10**60)**60 > 0"), "bits is over the limit of 4,096"),
    ("text method with huge width", dict(require="'x'.center(10**9) != ''"), "center() cannot be called in a rule"),
    ("format width", dict(require="('%999999999d' % 1) != ''"), "format width or precision of 999999999 is over the limit"),
    ("format filter width", dict(require="('%0999999d' | format(1)) != ''"), "format width or precision of 999999 is over the limit"),
    ("num with a billion digits", dict(require="(1.5 | num(10**9)) != ''"), "format width or precision of 1000000000 is over the limit"),
    ("join bomb", dict(require="(range(10000) | join('x' * 10000)) != ''"), "joined text would be over the limit"),
    ("replace bomb", dict(require="(('x' * 10000) | replace('x', 'y' * 10000)) != ''"), "replaced text would be over the limit"),
    ("doubling by plus", dict(require="false", message="{% set a = 'x' * 10000 %}{% set b = a + a %}{% set c = b + b %}"
                                                        "{% set d = c + c %}{% set e = d + d %}{% set f = e + e %}"
                                                        "{% set g = f + f %}{% set h = g + g %}{{ h }}"), "a sequence of 1,280,000 items"),
    ("list mutation", dict(require="false", message="{% set l = [1] %}{% for i in range(10) %}{{ l.append(i) }}{% endfor %}"),
     "list.append is not available to rules"),
    ("huge rendered text", dict(require="false", message="{% for i in range(10000) %}{{ 'x' * 9999 }}{% endfor %}"),
     "rendered text is over the limit of 1,000,000 characters"),
    ("python call", dict(require="(manifest.name | list | first).encode() != ''"), "encode() cannot be called in a rule"),
]


@pytest.mark.parametrize("case, fields, fragment", STOPPED_WHILE_RUNNING, ids=[c[0] for c in STOPPED_WHILE_RUNNING])
def test_hostile_rule_is_stopped_and_the_other_rules_still_run(hwlint, tmp_path, case, fields, fragment):
    folder = rule_folder(tmp_path, **fields)
    run = hwlint("check", "--rules", folder, MANIFEST)
    assert run.code == 2 and "Traceback" not in run.out + run.err and "internal error" not in run.err
    assert re.search(rf"^{re.escape(str(folder / 'hostile.yaml'))}:\d+: rule GPU900: rule error: .*{re.escape(fragment)}",
                     run.out, re.M), run.out
    assert_builtin_rules_ran(run.out)


def assert_builtin_rules_ran(out: str) -> None:
    summary = re.search(r"(\d+) passed", out.splitlines()[-1])
    assert summary and int(summary.group(1)) >= 30, out  # the example passes most built-in rules


def test_endless_nested_loops_are_stopped_by_the_time_budget(tmp_path):
    """10,000 x 10,000 x 10,000 iterations would take hours; the budget stops them after 2 s."""
    folder = rule_folder(tmp_path, require="false", message=(
        "{% for i in range(10000) %}{% for j in range(10000) %}{% for k in range(10000) %}"
        "{% endfor %}{% endfor %}{% endfor %}"))
    started = time.monotonic()
    run = hwlint_process("check", "--rules", folder, MANIFEST, env={"HWLINT_CACHE": "off"})
    assert time.monotonic() - started < 30
    assert run.code == 2 and "Traceback" not in run.err
    assert "rule GPU900: rule error: RuleTimeout: the rule used more than 2 s of CPU time and was stopped" in run.out
    assert_builtin_rules_ran(run.out)


def test_left_associative_power_is_harmless_and_allowed(hwlint, tmp_path):
    """Jinja reads 10**10**10 as (10**10)**10 = 10**100: small, so the rule just runs."""
    run = hwlint("check", "--rules", rule_folder(tmp_path, require="10**10**10 == 10**100"), MANIFEST)
    assert run.code == 0 and "GPU900" not in run.out


def test_a_rule_may_still_use_the_allowed_tools(hwlint, tmp_path):
    """The limits leave room for real rules: filters, loops, formats, methods and globals."""
    message = ("{% for pool in manifest.node_pools %}{{ pool.name | upper }} x{{ pool.count }}; {% endfor %}"
               "{{ '%.1e' | format(facts.gpus_total) }} {{ 'atlas 70b'.split(' ') | first | title }} "
               "{{ [1, 2, 3] | map('string') | join('+') }} = {{ ceil(5.5) + 10**2 }} {{ 'a-b' | replace('-', '/') }}")
    run = hwlint("check", "--rules", rule_folder(tmp_path, require="false", message=message), MANIFEST)
    assert run.code == 1, run.out + run.err
    assert "GPU900 error DGX x32; MGMT x2; 2.6e+02 Atlas 1+2+3 = 106 a/b" in run.out


def test_the_pack_cache_sees_an_edited_rule_and_survives_a_damaged_file(hwlint, tmp_path):
    """The cache is keyed by content: an edit of the same length in the same second is
    seen; a cache file that cannot be read is rebuilt, not trusted."""
    folder = rule_folder(tmp_path, require="false", message="alpha words")
    assert "GPU900 error alpha words" in hwlint("check", "--rules", folder, MANIFEST).out
    rule = folder / "hostile.yaml"
    rule.write_text(rule.read_text().replace("alpha words", "omega words"))
    assert "GPU900 error omega words" in hwlint("check", "--rules", folder, MANIFEST).out
    cached = list((tmp_path / "cache").glob("pack-*.pickle"))
    assert len(cached) == 2
    for path in cached:
        path.write_bytes(b"not a pickle")
    again = hwlint("check", "--rules", folder, MANIFEST)
    assert again.code == 1 and "GPU900 error omega words" in again.out


def test_the_pack_cache_sees_an_edited_built_in_catalog(tmp_path):
    """The cached pack carries the built-in catalog as loaded: a catalog edit must be seen
    on the next run, not served from the cache."""
    import shutil

    from conftest import ROOT

    for name in ("linter", "rules", "schemas", "templates", "catalog"):
        if (ROOT / name).is_dir():
            shutil.copytree(ROOT / name, tmp_path / name, ignore=shutil.ignore_patterns("__pycache__"))
    env = {"HWLINT_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(tmp_path)}
    first = hwlint_process("check", MANIFEST, cwd=tmp_path, env=env)
    assert first.code == 0, first.out + first.err
    systems = tmp_path / "catalog" / "systems.yaml"
    systems.write_text(systems.read_text().replace("name: DGX-H100\n", "name: DGX-H100-renamed\n"))
    second = hwlint_process("check", MANIFEST, cwd=tmp_path, env=env)
    assert second.code != 0 and "DGX-H100" in second.out, second.out + second.err
    assert len(list((tmp_path / "cache").glob("pack-*.pickle"))) == 2
