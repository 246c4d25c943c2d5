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

from conftest import EXAMPLES

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


def manifest(tmp_path: Path, procurement: str | None = None, *edits: tuple[str, str], name: str = "m.hw.yaml") -> Path:
    text = PRETRAIN.read_text(encoding="utf-8")
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
    assert "| vendor-a (chosen) | buy | 9,490,000 USD | 40,227 USD | 550,000 USD | 18.6 months | 2027-02-25 | none |" in section
    assert "| vendor-b | buy | 9,320,000 USD |" in section and "| BUY005 |" in section
    assert "| cloud | rent | 0 USD | 550,000 USD |" in section


def test_a_rented_chosen_option_skips_the_facility(hwlint, tmp_path):
    doc = report(hwlint, manifest(tmp_path, OPTIONS.replace("chosen: vendor-a", "chosen: cloud")))
    assert by_rule(doc)["PWR001"]["status"] == "skipped" and doc["money"]["opex_per_month"] == 550_000
    out = hwlint("check", "--format", "markdown", manifest(tmp_path, OPTIONS.replace("chosen: vendor-a", "chosen: cloud"),
                                                         name="c.hw.yaml")).out
    assert "**Buy or rent: Buy instead.** Option vendor-a pays back after 18.6 months" in out


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
    assert "| Opex per month (owning) | 40,227 USD (electricity at the PUE) | rent for the same capacity: 550,000 USD |  |" in out
    assert "| Payback against renting | 28.8 months | 36-month project | ✅ |" in out
