"""The composite GitHub Action (action.yml) and the example pull-request workflow.

Besides their structure, the action's review step runs here for real: its bash script, with
the environment the runner would give it (inputs through env, GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY), in a throwaway repository. The workflow's comment script runs in node
against a stand-in for the GitHub API, to show it updates its comment instead of adding one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from ruamel.yaml import YAML

from conftest import EXAMPLES, ROOT, TODAY

ACTION = ROOT / "action.yml"
WORKFLOW = ROOT / "docs" / "workflows" / "hwlint-review.yml"
EXPRESSION = re.compile(r"\$\{\{\s*(.*?)\s*\}\}")


def load(path: Path) -> dict:
    return YAML(typ="safe").load(path.read_text())


def step(document_steps: list[dict], name: str) -> dict:
    return next(s for s in document_steps if s.get("name") == name or s.get("id") == name)


# --- action.yml structure --------------------------------------------------------------


def test_action_is_a_composite_with_documented_inputs_and_outputs():
    action = load(ACTION)
    assert action["name"] and action["description"]
    assert action["runs"]["using"] == "composite"
    steps = action["runs"]["steps"]
    for s in steps:
        assert ("run" in s) != ("uses" in s), s
        if "run" in s:
            assert s["shell"] == "bash", s  # composite run steps must name their shell
    for name, spec in action["inputs"].items():
        assert spec.get("description"), name
        assert isinstance(spec.get("default", ""), str), name
    ids = {s.get("id") for s in steps}
    for name, spec in action["outputs"].items():
        assert spec["description"] and spec["value"]
        (ref,) = EXPRESSION.findall(spec["value"])
        assert ref.split(".")[1] in ids, (name, ref)
    uploads = [s for s in steps if str(s.get("uses", "")).startswith("github/codeql-action/upload-sarif@")]
    assert len(uploads) == 1 and "inputs.upload-sarif == 'true'" in uploads[0]["if"]


def test_action_never_pastes_expressions_into_shell_scripts():
    # ${{ }} inside `run:` is substituted before bash parses it: a crafted input or branch
    # name would become code. Inputs must travel through `env:` instead.
    for s in load(ACTION)["runs"]["steps"]:
        assert "${{" not in s.get("run", ""), s["name"]


# --- the review step, run for real -----------------------------------------------------


def evaluate(value: str, inputs: dict[str, str]) -> str:
    def one(match: re.Match) -> str:
        expression = match.group(1)
        if expression == "github.action_path":
            return str(ROOT)
        kind, _, name = expression.partition(".")
        assert kind == "inputs", f"the test does not know how to evaluate {expression}"
        return inputs[name]

    return EXPRESSION.sub(one, str(value))


def bash(script: str, cwd: Path, env: dict) -> subprocess.CompletedProcess:
    """As a runner runs a composite step with `shell: bash`: a script file, -e and pipefail on."""
    path = cwd.parent / f"step-{abs(hash(script))}.sh"
    path.write_text(script)
    return subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", str(path)], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=300)


def run_step(name: str, workdir: Path, runner_temp: Path, **given: str) -> tuple[subprocess.CompletedProcess, dict, str]:
    action = load(ACTION)
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()}
    unknown = set(given) - set(inputs)
    assert not unknown, unknown
    inputs.update(given)
    s = step(action["runs"]["steps"], name)
    output, summary = runner_temp / "output.txt", runner_temp / "summary.md"
    output.write_text("")
    summary.write_text("")
    env = {
        **os.environ,
        **{k: evaluate(v, inputs) for k, v in (s.get("env") or {}).items()},
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",  # hwlint as installed
        "RUNNER_TEMP": str(runner_temp), "GITHUB_OUTPUT": str(output), "GITHUB_STEP_SUMMARY": str(summary),
        "HWLINT_TODAY": TODAY,
    }
    proc = bash(s["run"], workdir, env)
    outputs = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
    return proc, outputs, summary.read_text()


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "clusters" / "eu").mkdir(parents=True)
    (root / "k8s").mkdir()
    shutil.copy(EXAMPLES / "multi-node-pretrain.hw.yaml", root / "clusters" / "good.hw.yaml")
    shutil.copy(EXAMPLES / "flawed-cluster.hw.yaml", root / "clusters" / "eu" / "bad.hw.yaml")
    (root / "k8s" / "deploy.yaml").write_text("kind: Deployment\n")
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    for args in (["init", "-q"], ["add", "."], ["commit", "-q", "-m", "base"]):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    return root


def test_review_step_reviews_tracked_manifests(project, tmp_path):
    proc, outputs, summary = run_step("review", project, tmp_path)
    assert proc.returncode == 0, proc.stderr  # the step reports; a later step decides to fail
    assert outputs["exit-code"] == "1"
    assert summary.count("# hwlint review:") == 2 and "deploy.yaml" not in summary
    assert Path(outputs["review"]).read_text() == summary  # the full review
    comment = Path(outputs["comment"]).read_text()
    assert comment.startswith("<!-- hwlint-review -->\n## hwlint: ❌ changes needed")
    assert len(comment.encode("utf-16-le")) // 2 <= 65_536
    assert sorted(p.name for p in Path(outputs["reports"]).iterdir()) == ["comment.md", "hwlint.json", "hwlint.sarif",
                                                                          "review.md"]  # the artifact's files
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    uris = {r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in sarif["runs"][0]["results"]}
    assert "clusters/eu/bad.hw.yaml" in uris
    assert re.search(r"^::error file=clusters/eu/bad\.hw\.yaml,line=\d+,col=\d+,", proc.stdout, re.M)


def test_review_step_with_globs_base_and_no_annotations(project, tmp_path):
    manifest = project / "clusters" / "eu" / "bad.hw.yaml"
    manifest.write_text(manifest.read_text().replace("precision: bf16", "precision: fp16"))
    proc, outputs, summary = run_step("review", project, tmp_path, manifests="clusters/**/bad.hw.yaml",
                                      base="HEAD", annotations="false")
    assert proc.returncode == 0, proc.stderr
    assert "::" not in proc.stdout
    assert summary.startswith("## What this change does: clusters/eu/bad.hw.yaml") and summary.count("# hwlint review:") == 1
    assert re.search(r"\d+ introduced, 1 resolved", summary)


def test_review_step_without_manifests(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    subprocess.run(["git", "init", "-q"], cwd=empty, check=True)
    proc, outputs, summary = run_step("review", empty, tmp_path)
    assert proc.returncode == 0 and outputs == {"review": "", "comment": "", "sarif": "", "exit-code": "0"}
    assert "no manifests" in summary


def test_review_step_treats_inputs_as_data(project, tmp_path):
    proc, outputs, summary = run_step("review", project, tmp_path, manifests='x$(touch PWNED)`touch PWNED2`.hw.yaml')
    assert not (project / "PWNED").exists() and not (project / "PWNED2").exists()
    assert outputs["exit-code"] == "2" and "no such file" in proc.stdout + proc.stderr + summary


def test_fail_step_fails_with_hwlints_exit_code(project, tmp_path):
    action = load(ACTION)
    s = step(action["runs"]["steps"], "Fail on findings")
    assert "steps.review.outputs.exit-code != '0'" in s["if"] and "inputs.fail-on-findings == 'true'" in s["if"]
    proc = bash(s["run"], project, {**os.environ, "HWLINT_EXIT": "1"})
    assert proc.returncode == 1 and "exit code 1" in proc.stdout


# --- the example workflow ---------------------------------------------------------------


def test_example_workflow_structure():
    workflow = load(WORKFLOW)
    assert "pull_request" in workflow["on"]
    assert any(p.endswith("*.hw.yaml") for p in workflow["on"]["pull_request"]["paths"])
    assert workflow["permissions"]["pull-requests"] == "write"
    assert workflow["permissions"]["security-events"] == "write"
    (job,) = workflow["jobs"].values()
    assert job["runs-on"]
    steps = job["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # --base needs the base commit
    review = next(s for s in steps if re.search(r"/hwlint@", str(s.get("uses", ""))))
    assert review["id"] == "hwlint"
    assert set(review["with"]) <= set(load(ACTION)["inputs"])  # only inputs the action has
    assert "pull_request.base.sha" in review["with"]["base"]
    comment = next(s for s in steps if str(s.get("uses", "")).startswith("actions/github-script@"))
    assert "steps.hwlint.outputs.comment" in comment["env"]["COMMENT"] and "!cancelled()" in comment["if"]
    assert "steps.hwlint.outputs.exit-code" in steps[-1]["if"]


COMMENT_HARNESS = r"""
const fs = require('fs');
const [script, state] = [fs.readFileSync(process.argv[2], 'utf8'), JSON.parse(fs.readFileSync(process.argv[3], 'utf8'))];
const calls = [];
const github = {
  paginate: async (method, params) => { calls.push(['list', params]); return state.comments; },
  rest: { issues: {
    listComments: 'listComments',
    updateComment: async (params) => { calls.push(['update', params]); },
    createComment: async (params) => { calls.push(['create', params]); },
  } },
};
const context = { repo: { owner: 'acme', repo: 'clusters' }, issue: { number: 7 } };
if (state.status) {  // the API refuses writes, as it does for a fork's read-only token
  for (const name of ['updateComment', 'createComment']) {
    github.rest.issues[name] = async () => { const e = new Error('Resource not accessible by integration'); e.status = state.status; throw e; };
  }
}
const core = {
  notice: (text) => calls.push(['notice', text]),
  summary: { addRaw(text) { calls.push(['summary', text]); return this; }, write: async () => {} },
};
const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
new AsyncFunction('github', 'context', 'core', 'require', script)(github, context, core, require)
  .then(() => console.log(JSON.stringify(calls)))
  .catch((error) => { console.error(error); process.exit(1); });
"""


@pytest.mark.parametrize("existing, expected", [
    ([], "create"),
    ([{"id": 11, "user": {"type": "User"}, "body": "<!-- hwlint-review -->\nquoted by a person"},
      {"id": 12, "user": {"type": "Bot"}, "body": "<!-- hwlint-review -->\nold review"}], "update"),
])
def test_comment_script_updates_its_own_comment_in_place(tmp_path, existing, expected):
    calls = run_comment_script(tmp_path, {"comments": existing})
    writes = [c for c in calls if c[0] in ("create", "update")]
    assert len(writes) == 1 and writes[0][0] == expected
    params = writes[0][1]
    assert params["body"] == "<!-- hwlint-review -->\n# hwlint review: x\n"
    if expected == "update":
        assert params["comment_id"] == 12  # the bot's comment, not the person's
    else:
        assert params["issue_number"] == 7


def run_comment_script(tmp_path, state: dict) -> list:
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the comment script runs on GitHub's runners in node")
    comment = next(s for s in load(WORKFLOW)["jobs"]["review"]["steps"] if "github-script" in str(s.get("uses", "")))
    (tmp_path / "script.js").write_text(comment["with"]["script"])
    (tmp_path / "state.json").write_text(json.dumps(state))
    (tmp_path / "harness.js").write_text(COMMENT_HARNESS)
    review = tmp_path / "comment.md"
    review.write_text("<!-- hwlint-review -->\n# hwlint review: x\n")
    proc = subprocess.run([node, str(tmp_path / "harness.js"), str(tmp_path / "script.js"), str(tmp_path / "state.json")],
                          capture_output=True, text=True, env={**os.environ, "COMMENT": str(review)}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_a_comment_posted_with_a_personal_token_is_found_by_its_marker(tmp_path):
    calls = run_comment_script(tmp_path, {"comments": [
        {"id": 21, "user": {"type": "User"}, "body": "> <!-- hwlint-review -->\nquoted"},
        {"id": 22, "user": {"type": "User"}, "body": "<!-- hwlint-review -->\nold review"}]})
    (write,) = [c for c in calls if c[0] in ("create", "update")]
    assert write[0] == "update" and write[1]["comment_id"] == 22


def test_a_read_only_token_falls_back_to_the_job_summary(tmp_path):
    calls = run_comment_script(tmp_path, {"comments": [], "status": 403})
    kinds = [c[0] for c in calls]
    assert "notice" in kinds and "summary" in kinds  # and the script itself succeeds
    assert next(c for c in calls if c[0] == "summary")[1].startswith("<!-- hwlint-review -->")


def test_one_run_per_pull_request_at_a_time():
    group = load(WORKFLOW)["concurrency"]
    assert "pull_request.number" in group["group"] and group["cancel-in-progress"] is True


# --- every action pinned by commit --------------------------------------------------------

PINNED_USES = re.compile(r"^[\w.-]+/[\w./-]+@[0-9a-f]{40} # v\d+(\.\d+)*$")
OWN = "your-org/hwlint@"  # hwlint itself, at the address the reader replaces (the workflow's comment says how to pin it)


def uses_lines(path: Path) -> list[str]:
    return [line.split("uses:", 1)[1].strip() for line in path.read_text().splitlines()
            if re.match(r"^\s*(- )?uses:", line)]


@pytest.mark.parametrize("path", [ACTION, *sorted((ROOT / "docs" / "workflows").glob("*.yml"))], ids=lambda p: p.name)
def test_every_action_is_pinned_by_a_full_commit_sha_with_its_tag(path):
    found = uses_lines(path)
    assert found  # the pattern still sees the steps
    parsed = [s["uses"] for s in (load(path).get("runs", {}).get("steps") or
                                  [s for job in load(path).get("jobs", {}).values() for s in job["steps"]]) if "uses" in s]
    assert len(parsed) == len(found)  # no `uses:` written in a form the line pattern misses
    for value in found:
        if value.startswith(OWN):
            continue
        assert PINNED_USES.match(value), f"{path.name}: {value} is not pinned as owner/action@<40-hex sha> # vX.Y.Z"
