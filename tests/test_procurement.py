"""Procurement a finance partner can sign: alternative offers judged side by side, quotes bound
to what they price, money and delivery in every output, bad input a clear error at the key.

Every test goes through the command line on real manifest files built from the examples.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest

from conftest import EXAMPLES, ROOT

PRETRAIN = EXAMPLES / "multi-node-pretrain.hw.yaml"

OPTIONS = """procurement:
  mode: buy
  project_duration_months: 36
  operations_team: true
  order_date: 2026-11-09
  chosen: vendor-a
  quotes:
    - {item: 256x H100 reserved cloud capacity, vendor: Example Cloud, kind: rental, price: 550000, currency: USD,
       quote_date: 2026-11-01, lead_time_weeks: 4, capacity: {gpus: 256, gpu_model: H100-SXM5-80GB}, term_months: 36}
  options:
    - name: vendor-a
      quotes:
        - {item: 32x DGX H100, vendor: Example Systems, price: 7590000, currency: USD, quote_date: 2026-10-20,
           lead_time_weeks: 12, pool: dgx, quantity: 32}
        - {item: InfiniBand fabric, vendor: Example Systems, price: 1900000, currency: USD, quote_date: 2026-10-20,
           lead_time_weeks: 10, fabric: compute-ib, quantity: 12}
    - name: vendor-b
      quotes:
        - {item: 32x DGX H100, vendor: Other Integrator, price: 7420000, currency: USD, quote_date: 2026-10-25,
           lead_time_weeks: 20, pool: dgx, quantity: 32}
        - {item: InfiniBand fabric, vendor: Other Integrator, price: 1900000, currency: USD, quote_date: 2026-10-25,
           lead_time_weeks: 10, fabric: compute-ib, quantity: 12}
    - name: h200
      quotes:
        - {item: 32x DGX H200, vendor: Example Systems, price: 9900000, currency: USD, quote_date: 2026-10-20,
           lead_time_weeks: 12, pool: dgx, quantity: 32}
      node_pools: [{name: dgx, system: DGX-H200}]
    - name: cloud
      mode: rent
      provider: Example Cloud

"""


def manifest(tmp_path: Path, procurement: str | None = None, *edits: tuple[str, str], name: str = "m.hw.yaml",
             base: Path = PRETRAIN) -> Path:
    text = base.read_text(encoding="utf-8")
    if procurement is not None:
        start, end = text.index("procurement:\n"), text.index("node_pools:\n")
        text = text[:start] + procurement + text[end:]
    for old, new in edits:
        assert old in text, old
        text = text.replace(old, new, 1)
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def report(hwlint, path: Path) -> dict:
    run = hwlint("check", "--format", "json", path)
    assert run.code in (0, 1), run.out + run.err
    return json.loads(run.out)["manifests"][0]


def by_rule(doc: dict) -> dict:
    return {r["rule_id"]: r for r in doc["results"]}


def test_competing_quotes_are_options_not_a_sum(hwlint, tmp_path):
    doc = report(hwlint, manifest(tmp_path, OPTIONS))
    money = doc["money"]
    assert money["capex"] == 9_490_000  # vendor-a only: 7.59M + 1.9M, not both vendors' servers
    assert money["payback_months"] == pytest.approx(18.6)
    assert by_rule(doc)["BUY001"]["status"] == "pass"
    rows = {o["name"]: o for o in money["options"]}
    assert list(rows) == ["vendor-a", "vendor-b", "h200", "cloud"] and rows["vendor-a"]["chosen"]
    assert rows["vendor-b"]["capex"] == 9_320_000 and rows["vendor-b"]["failing"] == ["BUY005"]  # 20 weeks: late
    assert rows["vendor-b"]["ready_date"] == "2027-04-22"
    # the option's own pool change (DGX H200) is judged: the H100 rental is no longer the same capacity
    assert "BUY007" in rows["h200"]["failing"] and rows["h200"]["payback_months"] is None
    assert rows["cloud"]["mode"] == "rent" and rows["cloud"]["capex"] == 0
    assert rows["cloud"]["opex_per_month"] == 550_000 and rows["cloud"]["ready_date"] == "2026-12-21"


def test_the_review_compares_every_option_in_one_table_after_the_verdict(hwlint, tmp_path):
    out = hwlint("check", "--format", "markdown", manifest(tmp_path, OPTIONS)).out
    section = out[out.index("## Procurement"):out.index("## ", out.index("## Procurement") + 3)]
    first = section.split("\n\n")[1]
    assert first.startswith("**Buy or rent: Buy.** Buying for 9,490,000 USD pays back after 18.6 months")
    order = [m.group(1) for m in re.finditer(r"^\d\. \*\*(.+?):\*\*", section, re.M)]
    assert order == ["Goal", "Parallelism", "Buy or rent", "Card"]
    assert "基础模型的训练需要哪些硬件设施的支持" in section
    table = _table(section, "Option")
    assert list(table["Option"]) == ["vendor-a (chosen)", "vendor-b", "h200", "cloud"]
    assert table["Capex"][:2] == ["9,490,000 USD", "9,320,000 USD"] and table["Capex"][3] == "0 USD"
    assert table["Payback against renting"][:2] == ["18.6 months", "18.3 months"]
    assert table["Ready to train"] == ["2027-02-25", "2027-04-22", "2027-02-25", "2026-12-21"]
    assert "1 fail: BUY005 (warning)" in table["Rules (the whole pack)"][1]
    assert table["Recommendation"][1] == "ready on 2027-04-22, 52 days after the start on 2027-03-01"


def _table(text: str, first: str) -> dict[str, list[str]]:
    """The Markdown table whose head starts with `first`, as {row label: cells} (the head row too)."""
    lines = text[text.index(f"| {first} |"):].split("\n\n")[0].splitlines()
    rows = [[cell.strip() for cell in line.strip("|").split(" | ")] for line in lines if not line.startswith("| ---")]
    return {row[0]: row[1:] for row in rows}


def test_a_rented_chosen_option_skips_the_facility(hwlint, tmp_path):
    doc = report(hwlint, manifest(tmp_path, OPTIONS.replace("chosen: vendor-a", "chosen: cloud")))
    assert by_rule(doc)["PWR001"]["status"] == "skipped" and doc["money"]["opex_per_month"] == 550_000
    out = hwlint("check", "--format", "markdown", manifest(tmp_path, OPTIONS.replace("chosen: vendor-a", "chosen: cloud"),
                                                         name="c.hw.yaml")).out
    assert "**Buy or rent: Buy instead.** Option vendor-a costs 10,938,172 USD over the 36-month project; renting costs " \
        "19,800,000 USD." in out


def test_a_quote_for_fewer_servers_than_the_pool_is_a_finding(hwlint, tmp_path):
    path = manifest(tmp_path, None, ("lead_time_weeks: 12, pool: dgx, quantity: 32", "lead_time_weeks: 12, pool: dgx, quantity: 30"))
    result = by_rule(report(hwlint, path))["BUY006"]
    assert result["status"] == "fail" and result["path"] == "procurement.quotes[0]"
    assert "prices 30 nodes of node pool dgx, but the manifest has 32" in result["message"]


def test_opex_counts_electricity_colocation_support_and_staff(hwlint, tmp_path):
    path = manifest(tmp_path, None,
                    ("  order_date: 2026-11-09", "  order_date: 2026-11-09\n  staff_per_month: 40000"),
                    ("  pue: 1.3\n", "  pue: 1.3\n  colocation_per_kw_month: 150\n"),
                    ("  quotes:\n", "  quotes:\n    - {item: support, kind: support, price: 20000, currency: USD, pool: dgx, quantity: 32}\n"))
    doc = report(hwlint, path)
    money, it_kw = doc["money"], doc["budget"]["it_power_kw"]
    assert money["colocation_per_month"] == round(it_kw * 150)
    assert money["electricity_per_month"] == round(it_kw * 1.3 * 730 * 0.12)
    assert money["owned_opex_per_month"] == money["electricity_per_month"] + round(it_kw * 150) + 20_000 + 40_000
    assert money["opex_counted"] == "electricity at the PUE, colocation, support, staff"
    assert money["payback_months"] == pytest.approx(14_700_000 / (550_000 - money["owned_opex_per_month"]), abs=0.05)


def test_quotes_in_another_currency_are_converted_at_the_given_rate(hwlint, tmp_path):
    path = manifest(tmp_path, None,
                    ("  order_date: 2026-11-09", "  order_date: 2026-11-09\n  currency: USD\n  exchange_rates: {EUR: 1.1}"),
                    ("price: 1900000, currency: USD", "price: 1000000, currency: EUR"))
    assert report(hwlint, path)["money"]["capex"] == 12_800_000 + 1_100_000


def test_delivery_counts_from_the_order_date_or_today(hwlint, tmp_path):
    ordered = report(hwlint, manifest(tmp_path, None))["money"]
    assert ordered["order_date"] == "2026-11-09" and ordered["ready_date"] == "2027-02-25"  # +12 weeks +10 +14 days
    today = report(hwlint, manifest(tmp_path, None, ("  order_date: 2026-11-09      # purchase order planned after the board meeting\n", ""),
                                    name="today.hw.yaml"))
    assert today["money"]["order_date"] == "2026-11-30" and today["money"]["ready_date"] == "2027-03-18"
    assert by_rule(today)["BUY005"]["status"] == "fail"
    assert "today: the manifest gives no order date" in by_rule(today)["BUY005"]["message"]


def test_a_price_change_shows_as_money_in_diff_and_json(hwlint, tmp_path):
    old = manifest(tmp_path, None, name="old.hw.yaml")
    new = manifest(tmp_path, None, ("price: 12800000", "price: 14300000"), name="new.hw.yaml")
    text = hwlint("diff", old, new).out
    assert "budget: Capex (purchases): 14,700,000 USD -> 16,200,000 USD (+1,500,000 USD)" in text
    assert re.search(r"budget: Payback against renting: 28\.8 months -> 31\.8 months \(\+3 months\)", text), text
    changes = json.loads(hwlint("diff", old, new, "--format", "json").out)["manifests"][0]["changes"]
    capex = next(d for d in changes["budget"] if d["key"] == "capex")
    assert capex == {"key": "capex", "label": "Capex (purchases)", "unit": "USD", "old": 14_700_000, "new": 16_200_000,
                     "change": 1_500_000, "from_settings": None}  # none of it came from a policy or tier change
    later = manifest(tmp_path, None, ("lead_time_weeks: 12,", "lead_time_weeks: 14,"), name="later.hw.yaml")
    assert "budget: Ready to train (delivery, installation, burn-in): 2027-02-25 -> 2027-03-11 (+14 days)" \
        in hwlint("diff", old, later).out


def test_check_base_shows_the_money_delta_from_git(hwlint, tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.com", "HOME": str(root), "PATH": "/usr/bin:/bin"}
    path = manifest(root, None, name="a.hw.yaml")
    for args in (("init", "-q", "-b", "main"), ("add", "."), ("commit", "-q", "-m", "base")):
        subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=env)
    path.write_text(path.read_text().replace("price: 550000", "price: 500000"))
    out = hwlint("check", path, "--base", "HEAD").out
    assert "budget: Rent per month for the same capacity: 550,000 USD -> 500,000 USD (-50,000 USD)" in out


def test_checklist_evidence_is_in_words_with_the_currency(hwlint):
    out = hwlint("checklist", PRETRAIN).out
    line = next(x for x in out.splitlines() if x.strip().startswith("- Evidence: Buying for"))
    assert "Buying for 14,700,000 USD pays back after 28.8 months" in line and "550,000 USD a month" in line
    assert "facts.procurement" not in out


def test_the_budget_table_has_money_rows(hwlint):
    out = hwlint("check", "--format", "markdown", PRETRAIN).out
    assert "| Capex (purchases) | 14,700,000 USD | 2 purchase quotes |  |" in out
    assert "| Opex per month (owning) | 40,227 USD (electricity at the PUE 40,227) | rent for the same capacity: 550,000 USD |  |" in out
    assert "| Total cost over the 36-month project | 16,148,172 USD | capex + 36 x opex per month |  |" in out
    assert "| Payback against renting | 28.8 months | 36-month project | ✅ |" in out


# --- buy or rent, and which offer: every option judged, one recommended ------------------

CHOICE = EXAMPLES / "two-vendors-or-cloud.hw.yaml"


def choice(tmp_path: Path, *edits: tuple[str, str], name: str = "choice.hw.yaml") -> Path:
    return manifest(tmp_path, None, *edits, name=name, base=CHOICE)


def options(doc: dict) -> dict[str, dict]:
    return {o["name"]: o for o in doc["money"]["options"]}


def test_a_rental_given_only_as_an_option_is_compared_with_each_purchase(hwlint, tmp_path):
    doc = report(hwlint, CHOICE)
    rows = options(doc)
    # payback of each purchase against the renting option, without a shared rental quote
    assert rows["vendor-a"]["rent_compared"] == rows["vendor-b"]["rent_compared"] == "cloud"
    assert rows["vendor-b"]["payback_months"] == pytest.approx(7_080_000 / (290_000 - rows["vendor-b"]["opex_per_month"]), abs=0.05)
    assert by_rule(doc)["BUY001"]["status"] == "pass"
    out = hwlint("check", "--format", "markdown", CHOICE).out
    assert "**Buy or rent: Buy.** Buying for 7,080,000 USD pays back after 33.1 months against renting the same capacity " \
        "(128 H100-SXM5-80GB, option cloud) for 290,000 USD a month" in out
    assert "Not decided yet" not in out


def test_every_option_gets_the_whole_rule_pack_and_its_own_figures(hwlint, tmp_path):
    # vendor-a's servers need more power than the site has: an error of that option alone
    path = choice(tmp_path, ("      quotes:\n        - {item: 16x DGX H100, vendor: Example Systems",
                             "      node_pools: [{name: dgx, count: 32}]\n      quotes:\n        - {item: 16x DGX H100, vendor: Example Systems"))
    doc = report(hwlint, path)
    rows = options(doc)
    for row in rows.values():  # every rule but the comparison itself (BUY009) has a result in every option
        assert sum(row["counts"].values()) == len(doc["results"]) - 1
    assert "PWR001" in rows["vendor-a"]["errors"] and rows["vendor-b"]["errors"] == [] == rows["cloud"]["errors"]
    assert rows["cloud"]["counts"]["skipped"] > rows["vendor-b"]["counts"]["skipped"]  # the provider's facility
    b = rows["vendor-b"]
    assert b["opex_per_month"] == b["electricity_per_month"] + b["colocation_per_month"] + b["staff_per_month"] + b["support_per_month"]
    assert b["total_cost"] == b["capex"] + 36 * b["opex_per_month"]
    assert (rows["vendor-a"]["ready_date"], b["ready_date"], rows["cloud"]["ready_date"]) == ("2027-04-01", "2027-04-15", "2027-01-25")


def test_staff_and_the_facility_count_only_for_owned_capacity(hwlint):
    rows = options(report(hwlint, CHOICE))
    cloud, owned = rows["cloud"], rows["vendor-b"]
    assert owned["staff_per_month"] == 20_000 and owned["colocation_per_month"] > 0 and owned["electricity_per_month"] > 0
    assert (cloud["staff_per_month"], cloud["colocation_per_month"], cloud["electricity_per_month"]) == (0, 0, 0)
    assert cloud["opex_per_month"] == 290_000 and cloud["total_cost"] == 36 * 290_000
    rented = report(hwlint, EXAMPLES / "rented-h100-cluster.hw.yaml")["money"]
    assert rented["opex_per_month"] == rented["rent_per_month"] == 620_000


def test_the_recommendation_names_the_cheapest_option_over_the_project_and_the_margin(hwlint):
    doc = report(hwlint, CHOICE)
    found, rows = doc["money"]["recommendation"], options(doc)
    assert found["name"] == "vendor-b" and found["eligible"] == ["vendor-b", "vendor-a", "cloud"]
    assert found["runner_up"]["name"] == "vendor-a"
    assert found["margin"] == rows["vendor-a"]["total_cost"] - rows["vendor-b"]["total_cost"] == 91_920
    assert by_rule(doc)["BUY009"]["status"] == "pass"
    out = hwlint("check", "--format", "markdown", CHOICE).out
    assert "**Recommendation: vendor-b (buy).** It costs least over the 36-month project, 9,808,368 USD, among the options " \
        "that pass with no error and are ready by 2027-05-03; the runner-up, vendor-a (buy), costs 9,900,288 USD, " \
        "91,920 USD (0.9%) more." in out
    table = _table(out, "Option")
    assert table["Total over 36 months"] == ["9,900,288 USD", "9,808,368 USD", "10,440,000 USD"]
    assert table["Recommendation"] == ["runner-up", "recommended", "passes, costs more"]


def test_a_chosen_option_that_is_not_the_recommended_one_is_an_info_finding(hwlint, tmp_path):
    path = choice(tmp_path, ("chosen: vendor-b", "chosen: vendor-a"))
    run = hwlint("check", path)
    assert run.code == 0  # info by default
    line = next(x for x in run.out.splitlines() if " BUY009 " in x)
    assert line.startswith(f"{path}:49:3: BUY009 info The manifest chooses vendor-a (9,900,288 USD over the project), but "
                           "vendor-b (buy) costs least over the 36-month project")
    assert "91,920 USD (0.9%) less than the runner-up, vendor-a" in line


def test_the_organisation_config_may_raise_the_severity_and_never_lower_it(hwlint, tmp_path):
    path = choice(tmp_path, ("chosen: vendor-b", "chosen: vendor-a"))
    config = tmp_path / ".hwlint.yaml"
    config.write_text("severity:\n  BUY009: error\n")
    run = hwlint("check", path)
    assert run.code == 1 and f"{path}:49:3: BUY009 error The manifest chooses vendor-a" in run.out
    assert by_rule(report(hwlint, path))["BUY009"]["severity"] == "error"
    config.write_text("severity:\n  BUY001: info\n")
    run = hwlint("check", path)
    assert run.code == 2 and "severity.BUY001: info is lower than the rule's own severity (warning)" in run.err
    config.write_text("severity:\n  BUY0009: error\n")
    assert 'severity.BUY0009: no rule is named "BUY0009"; did you mean "BUY009"?' in hwlint("check", path).err


def test_an_option_with_a_failing_error_or_late_is_not_recommended_however_cheap(hwlint, tmp_path):
    # vendor-b becomes the cheapest by far, but arrives after the start
    late = choice(tmp_path, ("price: 6300000, currency: USD", "price: 5000000, currency: USD"),
                  ("lead_time_weeks: 14, pool: dgx", "lead_time_weeks: 20, pool: dgx"))
    found = report(hwlint, late)["money"]["recommendation"]
    assert found["name"] == "vendor-a" and found["lacking"] == [
        {"name": "vendor-b", "lacks": "ready on 2027-05-27, 24 days after the start on 2027-05-03"}]
    assert found["chosen"] == {"name": "vendor-b", "total_cost": 5_000_000 + 780_000 + 36 * 75_788, "lacks": found["lacking"][0]["lacks"]}


def test_when_no_option_passes_the_review_says_what_each_lacks(hwlint, tmp_path):
    path = choice(tmp_path, ("start_date: 2027-05-03", "start_date: 2027-01-04"),
                  ("      quotes:\n        - {item: 16x DGX H100, vendor: Example Systems",
                   "      node_pools: [{name: dgx, count: 32}]\n      quotes:\n        - {item: 16x DGX H100, vendor: Example Systems"))
    doc = report(hwlint, path)
    result = by_rule(doc)["BUY009"]
    assert result["status"] == "fail"
    assert result["message"].startswith("None of the 3 options passes with no error and is ready to train by the start on 2027-01-04:")
    lacks = {o["name"]: o["lacks"] for o in doc["money"]["recommendation"]["lacking"]}
    assert lacks["vendor-a"].startswith("fails ") and "PWR001" in lacks["vendor-a"]
    assert lacks["vendor-a"].endswith("(error); ready on 2027-04-01, 87 days after the start on 2027-01-04")
    assert lacks["cloud"] == "ready on 2027-01-25, 21 days after the start on 2027-01-04"
    out = hwlint("check", "--format", "markdown", path).out
    assert "**Recommendation: none.** No option passes with no error and is ready to train by the start on 2027-01-04: " \
        f"vendor-a: {lacks['vendor-a']}; vendor-b: {lacks['vendor-b']}; cloud: {lacks['cloud']}." in out


def test_every_converted_amount_shows_its_source_currency_amount_and_rate(hwlint, tmp_path):
    doc = report(hwlint, choice(tmp_path, ("chosen: vendor-b", "chosen: vendor-a")))
    assert doc["money"]["conversions"][0] == {
        "what": "16x DGX H100", "path": "procurement.options[0].quotes[0].price", "amount": 5_900_000, "currency": "EUR",
        "rate": 1.08, "into": "USD", "value": pytest.approx(6_372_000)}
    out = hwlint("check", "--format", "markdown", choice(tmp_path, ("chosen: vendor-b", "chosen: vendor-a"), name="a.hw.yaml")).out
    assert "| Capex (purchases) | 7,182,000 USD | 2 purchase quotes; converted: 5,900,000 EUR at 1.08 USD per EUR = " \
        "6,372,000 USD; 750,000 EUR at 1.08 USD per EUR = 810,000 USD; 9,000 EUR at 1.08 USD per EUR = 9,720 USD |" in out
    assert "| vendor-a | 16x DGX H100 | purchase | 5,900,000 EUR | 1.08 USD per EUR | 6,372,000 USD |" in out
    # the facility's prices in another currency: converted, and shown with their rate
    eur_site = choice(tmp_path, ("  currency: USD\n  ab_feeds", "  currency: EUR\n  ab_feeds"), name="eur.hw.yaml")
    out = hwlint("check", "--format", "markdown", eur_site).out
    assert "converted: 0.12 EUR at 1.08 USD per EUR = 0.1296 USD; 150 EUR at 1.08 USD per EUR = 162 USD |" in out
    assert "| owned capacity | electricity price per kWh | facility | 0.12 EUR | 1.08 USD per EUR | 0.1296 USD |" in out


def test_the_finance_checklist_has_the_options_table_and_the_recommendation(hwlint):
    out = hwlint("checklist", "--role", "finance", CHOICE).out
    finance = out[out.index("## For finance"):out.index("No item of finance's layers is open.")]
    assert "| Total cost over the project | 9,808,368 USD |" in finance
    assert "**Recommendation: vendor-b (buy).**" in finance
    assert _table(finance, "Option")["Total over 36 months"] == ["9,900,288 USD", "9,808,368 USD", "10,440,000 USD"]
    assert "| vendor-a | 16x DGX H100 | purchase | 5,900,000 EUR | 1.08 USD per EUR | 6,372,000 USD |" in finance
    assert "Recommendation:" not in hwlint("checklist", "--role", "facilities", CHOICE).out


def test_the_bundled_example_passes_in_every_option(hwlint):
    doc = report(hwlint, CHOICE)
    assert [r["rule_id"] for r in doc["results"] if r["status"] in ("fail", "pending")] == []
    assert all(o["counts"]["fail"] == o["counts"]["pending"] == 0 for o in doc["money"]["options"])
    assert "illustrative" in CHOICE.read_text(encoding="utf-8").lower()


def test_the_procurement_keys_are_documented():
    """docs/procurement.md explains every key of procurement, of an option and of a quote."""
    from linter.manifest.model import Option, Procurement, Quote

    text = (ROOT / "docs" / "procurement.md").read_text(encoding="utf-8")
    missing = [f"{model.__name__}.{key}" for model in (Procurement, Option, Quote) for key in model.model_fields
               if f"`{key}`" not in text]
    assert not missing, missing
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "docs/procurement.md" in readme and "examples/two-vendors-or-cloud.hw.yaml" in readme


def test_an_option_quote_with_a_value_left_out_is_null_in_the_json(hwlint, tmp_path):
    path = choice(tmp_path, ("lead_time_weeks: 14, pool: dgx, quantity: 16}", "lead_time_weeks: 14, pool: dgx}"))
    quote = options(report(hwlint, path))["vendor-b"]["quotes"][0]
    assert quote["quantity"] is None and quote["names"] == "node pool dgx" and quote["price"] == 6_300_000


def test_a_warning_does_not_rule_an_option_out_but_the_recommendation_names_it(hwlint, tmp_path):
    # a second, cheaper rental (in GBP) whose 12-month term is shorter than the project (BUY007, a warning)
    path = choice(tmp_path, ("exchange_rates: {EUR: 1.08}", "exchange_rates: {EUR: 1.08, GBP: 1.27}"),
                  ("      fabrics: [{name: compute-ib, managed_by: provider}]\n",
                   "      fabrics: [{name: compute-ib, managed_by: provider}]\n"
                   "    - name: cloud-2\n      mode: rent\n      provider: Other Cloud\n      quotes:\n"
                   "        - {item: spot, vendor: Other Cloud, kind: rental, price: 200000, currency: GBP, quote_date: 2026-11-14,\n"
                   "           lead_time_weeks: 2, capacity: {gpus: 128, gpu_model: H100-SXM5-80GB}, term_months: 12}\n"
                   "      fabrics: [{name: compute-ib, managed_by: provider}]\n"))
    doc = report(hwlint, path)
    rows = options(doc)
    assert rows["cloud-2"]["failing_severity"] == {"BUY007": "warning"} and rows["cloud-2"]["opex_per_month"] == 254_000
    assert rows["vendor-b"]["rent_compared"] == "cloud-2"  # payback against the cheapest rental of the same GPUs
    assert doc["money"]["recommendation"]["name"] == "cloud-2"
    out = hwlint("check", "--format", "markdown", path).out
    assert "It fails BUY007 (warning), which does not rule it out." in out
    assert "| cloud-2 | spot | rental | 200,000 GBP | 1.27 USD per GBP | 254,000 USD |" in out
