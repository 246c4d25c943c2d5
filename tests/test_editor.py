"""Editors: the manifest schema as the real yaml-language-server (VS Code's YAML extension,
and others) reads it. The starter that `hwlint init` writes, with its modeline and the schema
beside it, and every example open without a diagnostic, and hovering any key shows what it
means. A broken manifest does get diagnostics, so the check can fail."""

from __future__ import annotations

import json
import re
import subprocess
import threading
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT
from linter.schema import SCHEMA_ID, manifest_schema
from tools import npm_tool

pytestmark = pytest.mark.slow  # installs packages or starts outside tools: left out by -m "not slow"

KEY = re.compile(r"^(?P<indent>\s*(?:- )?)(?P<key>[a-z_][a-z0-9_]*):(?:\s|$)")


def properties(schema: dict):
    for name, node in [("(top level)", schema), *schema["$defs"].items()]:
        for key, prop in node.get("properties", {}).items():
            yield name, key, prop


def test_every_schema_property_has_a_description():
    # A new manifest field needs `description=` (with its unit) in linter/manifest/model.py,
    # or, for a policy key, an entry in rules/policy.yaml.
    missing = [f"{name}.{key}" for name, key, prop in properties(manifest_schema()) if not prop.get("description")]
    assert not missing, f"schema properties without a description: {', '.join(missing)}"


def test_quantities_say_their_unit():
    # keys named with a unit (_gb, _kw, _days, ...) repeat it in the description an editor shows
    units = {"_gb": "GB", "_tb": "TB", "_kw": "kW", "_w": "W", "_v": "V", "_a": "A", "_gbps": "Gb/s",
             "_gb_s": "GB/s", "_tb_s": "TB/s", "_days": "days", "_minutes": "minutes", "_weeks": "weeks",
             "_months": "months", "_kva": "kVA", "_pct": "%", "_billion": "billion"}
    wrong = []
    for name, key, prop in properties(manifest_schema()):
        suffix = next((s for s in sorted(units, key=len, reverse=True) if key.endswith(s)), None)
        if suffix and units[suffix] not in prop.get("description", ""):
            wrong.append(f"{name}.{key} ({units[suffix]})")
    assert not wrong, wrong


def test_blank_values_are_accepted_where_hwlint_accepts_them():
    from jsonschema import Draft202012Validator

    schema = manifest_schema()
    validator = Draft202012Validator(schema)
    blank_everywhere = {"manifest_version": 1, "name": "x", "owner": None, "plan": {"goal": "finetune", "precision": None, "model": None},
                        "node_pools": [{"name": "gpu", "count": 1, "gpu": None, "max_power_kw": None}], "facility": None}
    assert not list(validator.iter_errors(blank_everywhere))
    required_blank = {"manifest_version": 1, "name": None, "plan": {"goal": None}, "node_pools": [{"name": "gpu", "count": 1}]}
    # hwlint says these required keys are missing; the schema flags them too
    assert {tuple(e.absolute_path) for e in validator.iter_errors(required_blank)} == {("name",), ("plan", "goal")}


class LanguageServer:
    """A minimal LSP client over stdio: enough to open documents, read diagnostics, hover."""

    def __init__(self, binary: Path, root: Path, settings: dict):
        self.proc = subprocess.Popen([str(binary), "--stdio"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.DEVNULL, cwd=root)
        self.settings = settings
        self.next_id = 0
        self.responses: dict[int, dict] = {}
        self.diagnostics: dict[str, list] = {}
        self.changed = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        self.request("initialize", {"processId": None, "rootUri": root.as_uri(), "capabilities": {
            "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}, "publishDiagnostics": {}},
            "workspace": {"configuration": True}}})
        self.notify("initialized", {})
        self.notify("workspace/didChangeConfiguration", {"settings": settings})

    def _send(self, message: dict) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}).encode()
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        self.proc.stdin.flush()

    def _read(self) -> None:
        stream = self.proc.stdout
        while True:
            length = 0
            while (line := stream.readline()) not in (b"\r\n", b""):
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":")[1])
            if not line:
                return
            message = json.loads(stream.read(length))
            if "method" in message and "id" in message:  # a request from the server
                result = None
                if message["method"] == "workspace/configuration":
                    result = [self.settings.get(item.get("section", ""), None) for item in message["params"]["items"]]
                self._send({"id": message["id"], "result": result})
            elif message.get("method") == "textDocument/publishDiagnostics":
                with self.changed:
                    self.diagnostics[message["params"]["uri"]] = message["params"]["diagnostics"]
                    self.changed.notify_all()
            elif "id" in message:
                with self.changed:
                    self.responses[message["id"]] = message
                    self.changed.notify_all()

    def notify(self, method: str, params: dict) -> None:
        self._send({"method": method, "params": params})

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        wanted = self.next_id
        self._send({"id": wanted, "method": method, "params": params})
        with self.changed:
            assert self.changed.wait_for(lambda: wanted in self.responses, timeout=60), f"no answer to {method}"
            return self.responses.pop(wanted)

    def open(self, path: Path) -> list:
        """Open `path` and return the diagnostics the server publishes for it."""
        uri = path.as_uri()
        self.diagnostics.pop(uri, None)
        self.notify("textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1,
                                                              "text": path.read_text(encoding="utf-8")}})
        with self.changed:
            assert self.changed.wait_for(lambda: uri in self.diagnostics, timeout=60), f"no diagnostics for {path}"
            return self.diagnostics[uri]

    def hover(self, path: Path, line: int, character: int) -> str:
        answer = self.request("textDocument/hover", {"textDocument": {"uri": path.as_uri()},
                                                     "position": {"line": line, "character": character}})
        contents = (answer.get("result") or {}).get("contents", "")
        return contents.get("value", "") if isinstance(contents, dict) else str(contents)

    def close(self) -> None:
        self.request("shutdown", {})
        self.notify("exit", {})
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    binary = npm_tool("yaml-language-server", "yaml-language-server")
    root = tmp_path_factory.mktemp("editor")
    # examples are associated by file name, as a user's VS Code settings would (README)
    settings = {"yaml": {"validate": True, "hover": True, "completion": True, "schemaStore": {"enable": False},
                         "schemas": {(ROOT / "schemas" / "manifest.schema.json").as_uri(): ["*.hw.yaml"]}}}
    ls = LanguageServer(binary, root, settings)
    yield ls, root
    ls.close()


def hover_every_key(ls: LanguageServer, path: Path) -> list[str]:
    """Keys whose hover shows no description (empty, or a bare title such as "#### Pue")."""
    silent = []
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines()):
        match = KEY.match(text)
        if not match or text.lstrip().startswith("#"):
            continue
        shown = ls.hover(path, number, len(match["indent"]) + 1)
        words = [line for line in shown.splitlines() if line.strip() and not line.startswith("#") and "Source:" not in line]
        if not words:
            silent.append(f"{path.name}:{number + 1} {match['key']}")
    return silent


def test_starter_written_by_init_opens_clean_with_hover(server, tmp_path, hwlint):
    ls, root = server
    target = root / "team" / "cluster.hw.yaml"
    assert hwlint("init", target).code == 0
    assert (target.parent / SCHEMA_ID).exists()
    assert target.read_text().startswith(f"# yaml-language-server: $schema={SCHEMA_ID}\n")
    # the modeline alone must find the schema: this file's name is not associated in settings
    alone = target.with_name("cluster.yaml")
    alone.write_text(target.read_text())
    assert ls.open(alone) == []
    assert hover_every_key(ls, alone) == []
    assert "kW" in ls.hover(alone, next(i for i, t in enumerate(alone.read_text().splitlines()) if "it_capacity_kw:" in t), 4)


@pytest.mark.parametrize("example", sorted(EXAMPLES.glob("*.hw.yaml")), ids=lambda p: p.name)
def test_every_example_opens_clean_with_hover(server, example):
    ls, root = server
    copy = root / example.name
    copy.write_text(example.read_text(encoding="utf-8"), encoding="utf-8")
    assert ls.open(copy) == []
    assert hover_every_key(ls, copy) == []


def test_a_wrong_manifest_gets_diagnostics(server):
    ls, root = server
    wrong = root / "wrong.hw.yaml"
    wrong.write_text("manifest_version: 1\nname: x\nplan: {goal: finetun}\nnode_pools: [{name: gpu, count: 1, gpus: 8}]\n")
    messages = " | ".join(d["message"] for d in ls.open(wrong))
    assert "finetune" in messages and "gpus" in messages, messages


@pytest.mark.parametrize("name", ["yaml11-underscore-count.yaml", "yaml11-binary-count.yaml", "yaml11-hex-with-underscore.yaml"])
def test_a_number_the_editor_reads_as_text_hwlint_refuses_too(server, hwlint, name):
    """YAML 1.1 numbers (`1_6`, `0b101`, `0x_1F`) are text to YAML 1.2's core schema, which the
    editor reads: both say the count is not a whole number, and hwlint says how to write it."""
    ls, root = server
    copy = root / name.replace(".yaml", ".hw.yaml")
    copy.write_text((ROOT / "tests" / "bad_inputs" / name).read_text(encoding="utf-8"), encoding="utf-8")
    said = ls.open(copy)
    assert any(d["range"]["start"]["line"] == 10 and "integer" in d["message"].lower() for d in said), said
    run = hwlint("check", copy)
    assert run.code == 1 and f"{copy}:11:5: SCHEMA error node_pools[0].count must be a whole number" in run.out
    assert re.search(r"YAML 1\.2, which hwlint and editors read, has .*: write \d+$", run.out, re.M), run.out


def test_a_repository_of_two_teams_each_with_its_config_opens_clean_and_checks_per_team(server, hwlint, monkeypatch):
    """Two team folders under a root config, each with a config of its own (one tightens the
    power headroom): the editor reads each team's starter with its modeline, with no
    diagnostics and hover on every key, and one `hwlint check .` names each team's config chain."""
    ls, root = server
    repo = root / "two-teams"
    (repo / ".git").mkdir(parents=True)
    (repo / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 20}\n")
    for team, config in (("vision", "fail_on: warning\n"), ("speech", "policy: {power_headroom_pct: 30}\n")):
        (repo / team).mkdir()
        (repo / team / ".hwlint.yaml").write_text(config)
        target = repo / team / "cluster.hw.yaml"
        assert hwlint("init", target).code == 0
        alone = target.with_name("cluster.yaml")  # not associated by name in the settings: the modeline finds the schema
        alone.write_text(target.read_text())
        assert ls.open(alone) == []
        assert hover_every_key(ls, alone) == []
        alone.unlink()
    monkeypatch.chdir(repo)
    run = hwlint("check", ".")
    assert run.code in (0, 1) and "Traceback" not in run.err, run.err
    for team in ("vision", "speech"):
        assert re.search(rf"^{team}/cluster\.hw\.yaml: .*; configs \.hwlint\.yaml \(sha256:[0-9a-f]{{12}}\), then "
                         rf"{team}/\.hwlint\.yaml \(sha256:[0-9a-f]{{12}}\)$", run.out, re.M), run.out
