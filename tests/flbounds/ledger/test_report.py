"""The ledger reports: JSON rows behind the HTML page, self-containment, figures, Markdown."""

import json
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from flbounds.ledger.reports import report_data  # noqa: E402
from flbounds.ledger.reports.report import html_page, markdown, write_reports  # noqa: E402
from tests.ledger_rows import make_result, synthetic_results  # noqa: E402


def embedded_data(page: str) -> dict:
    blob = re.search(r'<script type="application/json" id="ledger-data">(.*?)</script>', page,
                     re.S)
    return json.loads(blob.group(1))


def test_attack_rows_join_their_claim():
    data = report_data.payload(synthetic_results(10), [])
    ids = [r["id"] for r in data["rows"]]
    assert not any(i.startswith("attack:") for i in ids)
    row = next(r for r in data["rows"] if r["id"] == "safari.marked.attacked")
    assert row["attack"]["best_ratio"] == 0.93
    assert row["attack_state"] == "no counterexample" and row["tight_state"] == "not tight"


def test_row_states():
    assert report_data.hypotheses_state({}) == ""
    assert report_data.hypotheses_state({"a": True, "b": True}) == "all met"
    assert report_data.hypotheses_state({"a": True, "b": "left on purpose"}) == "some left"
    assert report_data.tightness_state("tightness", {}, {}) == "computed"
    assert report_data.tightness_state("statement", {"tight": True}, {}) == "tight"
    assert report_data.tightness_state("statement", {}, {}) == ""


def test_rows_carry_full_arrays_and_provenance():
    long = list(np.linspace(0, 1, 50))
    data = report_data.payload([make_result("focus.a.b", measured=long,
                                            git_commit="abc123")], [])
    row = data["rows"][0]
    assert row["measured"] == long and "50 values" in row["measured_short"]
    assert row["git_commit"] == "abc123" and row["task_key"] and row["versions"]
    assert row["tolerance"]["derivation"] == "closed forms"


def test_rows_render_without_optional_fields():
    from flbounds.ledger.api.result import CheckResult

    plain = CheckResult.from_dict(make_result("focus.a.b").to_dict())
    row = report_data.payload([plain], [])["rows"][0]
    assert row["hypotheses"] == {} and row["attack_state"] == "" and row["git_commit"] == ""


def test_script_json_cannot_close_the_script():
    value = {"s": "</script><script>alert(1)</script> & <!--"}
    text = report_data.script_json(value)
    assert "<" not in text and ">" not in text and json.loads(text) == value


def test_page_is_self_contained_and_escaped():
    page = html_page(synthetic_results(40))
    assert page.count("</script>") == 2  # the data blob and the inline script, nothing else
    for remote in ("src=\"http", "href=\"http", "<link", "<script src", "@import", "url(http"):
        assert remote not in page
    assert "{%" not in page and "{{" not in page  # the template rendered completely
    rows = embedded_data(page)["rows"]
    assert len(rows) == 40 and any("</script>" in r["statement"] for r in rows)


@pytest.fixture
def drawn_figure(tmp_path):
    fig, ax = plt.subplots(figsize=(12, 4), dpi=120)
    ax.plot([0, 1], [0, 1])
    png = tmp_path / "demo.png"
    fig.savefig(png)
    plt.close(fig)
    meta = {"name": "demo", "title": "a demo figure", "claims": ["focus.marked"]}
    (tmp_path / "demo.json").write_text(json.dumps(meta))
    return png


def test_figures_sit_beside_their_claims_and_are_downscaled(drawn_figure):
    from PIL import Image

    figure = report_data.load_figure(drawn_figure)
    assert figure.claims == ("focus.marked",) and figure.src.startswith("data:image/png;base64,")
    import base64
    import io

    image = Image.open(io.BytesIO(base64.b64decode(figure.src.split(",", 1)[1])))
    assert image.width == report_data.FIGURE_WIDTH
    page = html_page(synthetic_results(10), [drawn_figure])
    rows = {r["id"]: r for r in embedded_data(page)["rows"]}
    assert rows["focus.marked.needle"]["figures"] == ["demo"]
    assert rows["kvib.marked.script"]["figures"] == []
    assert 'id="fig-demo"' in page  # the gallery


def test_markdown_notes_and_files(tmp_path):
    results = synthetic_results(10)
    text = markdown(results)
    assert "| attack:" not in text
    assert "`safari.marked.attacked` attack: best_ratio: 0.93" in text
    assert "`focus.marked.needle` hypotheses: step <= 1/(8L): True" in text
    md, page = write_reports(results, tmp_path)
    assert md.read_text().startswith("# flbounds ledger") and page.stat().st_size > 0


def test_report_command_counts_claims_and_attacks_apart(tmp_path, capsys):
    from flbounds.cli import main
    from flbounds.ledger import ResultStore

    results = synthetic_results(10)
    store = ResultStore(tmp_path)
    run = store.begin_run("quick", 0, len(results))
    for r in results:
        store.append(r, run_id=run)
    store.end_run(run, "finished")
    n_attacks = sum(r.id.startswith("attack:") for r in results)
    assert n_attacks >= 1
    assert main(["report", "--results", str(tmp_path), "--out", str(tmp_path / "out")]) == 0
    out = capsys.readouterr().out
    assert f"({len(results) - n_attacks} claims, {n_attacks} attacks," in out
