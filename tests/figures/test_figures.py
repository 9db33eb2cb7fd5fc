"""Every figure script imports and has the compute / plot / main interface."""

import importlib
import pkgutil

import pytest

import figures

NAMES = sorted(m.name for m in pkgutil.iter_modules(figures.__path__) if not m.name.startswith("_"))


@pytest.mark.parametrize("name", NAMES)
def test_figure_module_interface(name):
    module = importlib.import_module(f"figures.{name}")
    for attr in ("compute", "plot", "main"):
        assert callable(getattr(module, attr, None)), f"figures.{name} lacks {attr}()"


def test_there_are_figures():
    assert len(NAMES) >= 5


@pytest.mark.parametrize("name", NAMES)
def test_figure_declares_the_claims_it_illustrates(name):
    from flbounds.ledger import load_all
    from flbounds.ledger.api.registry import matches

    claims = getattr(importlib.import_module(f"figures.{name}"), "CLAIMS", None)
    assert isinstance(claims, tuple) and claims, f"figures.{name} lacks a CLAIMS tuple"
    ids = list(load_all())
    for pattern in claims:
        assert any(matches(i, pattern) for i in ids), f"{name}: {pattern!r} matches no claim"


def _fake_figure(fail: bool = False):
    """A figure module that draws instantly (or raises), for the runner and the CLI."""
    import logging
    import types

    from figures._common import plt, run_figure

    module = types.ModuleType("figures.fake_demo")
    module.__doc__ = "A fake figure for the tests.\n\nMore text."
    module.__file__ = "fake_demo.py"
    module.NAME = "fake_demo" if not fail else "fake_broken"
    module.CLAIMS = ("focus.matrices",)

    def compute(profile, seed):
        if fail:
            raise RuntimeError("planted failure")
        logging.getLogger("figures.fake_demo").debug("computing the fake figure")
        return {"x": [0.0, 1.0], "y": [seed, seed + 1.0], "n_clients": 4}

    def plot(data):
        fig, ax = plt.subplots()
        ax.plot(data["x"], data["y"])
        return fig

    module.compute, module.plot = compute, plot
    module.main = lambda argv=None: run_figure(module, argv)
    return module


def test_run_figure_writes_plot_data_and_record(tmp_path):
    import json

    import numpy as np

    paths = _fake_figure().main(["--out", str(tmp_path), "--seed", "3"])
    assert [p.suffix for p in paths] == [".png", ".pdf", ".npz", ".json"]
    assert all(p.stat().st_size > 0 for p in paths)
    assert np.load(paths[2])["y"].tolist() == [3.0, 4.0]
    meta = json.loads(paths[3].read_text())
    assert meta["claims"] == ["focus.matrices"] and meta["seed"] == 3
    assert meta["profile"] == "quick" and meta["parameters"]["n_clients"] == 4
    # the caption cites the paper of the figure's claims (no "[002]")
    assert meta["title"] == ("A fake figure for the tests. Bicheng Ying, Zhe Li, Haibo Yang, "
                             "NeurIPS 2025, arXiv:2503.20117.") and meta["elapsed_s"] >= 0
    assert {"flbounds", "numpy", "matplotlib"} <= set(meta["versions"])


def test_figures_command_progress_logging_and_failures(tmp_path, monkeypatch, capsys):
    from flbounds.cli import figures as command
    from flbounds.cli import main
    from flbounds.cli.figures import stored_durations

    good, bad = _fake_figure(), _fake_figure(fail=True)
    monkeypatch.setattr(command, "select_figures",
                        lambda names: {"fake_broken": bad, "fake_demo": good})
    assert main(["figures", "--out", str(tmp_path), "-v"]) == 1  # one figure failed
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "fake_demo: " + ", ".join(str(tmp_path / f"fake_demo{s}")
                                  for s in (".png", ".pdf", ".npz", ".json"))]
    assert "[2/2]" in captured.err and "planted failure" in captured.err
    assert "computing the fake figure" in captured.err  # -v: the figures' debug log
    assert set(stored_durations(tmp_path, "quick")) == {"fake_demo"}
    assert stored_durations(tmp_path, "full") == {}
    monkeypatch.setattr(command, "select_figures", lambda names: {"fake_demo": good})
    assert main(["figures", "--out", str(tmp_path), "--quiet"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "" and "computing" not in captured.out


def test_figures_are_300_dpi_png_and_vector_pdf_in_one_style(tmp_path):
    from PIL import Image

    from figures._style import DPI, RC

    png, pdf, _, _ = _fake_figure().main(["--out", str(tmp_path)])
    assert DPI == 300
    with Image.open(png) as image:
        assert [round(v) for v in image.info["dpi"]] == [300, 300]
    text = pdf.read_bytes()
    assert b"/Subtype /Image" not in text          # vector: no raster inside
    assert b"/FontFile2" in text                   # TrueType fonts (pdf.fonttype 42)
    assert RC["legend.fontsize"] >= 9 and RC["axes.labelsize"] >= 11


@pytest.mark.parametrize("name", NAMES)
def test_figure_sources_leave_fonts_to_the_style_and_cite_no_file(name):
    """No script sets its own (small) font size; no caption names a paper by its file
    number ('[002]'); no title or label writes an ASCII '<=' (the math symbol instead)."""
    import inspect
    import re

    source = inspect.getsource(importlib.import_module(f"figures.{name}"))
    assert "fontsize=" not in source
    assert not re.search(r"\[00[0-4]\]", source)
    for call in re.findall(r"(?:set_title|suptitle|set_[xy]label|label=|title=)\(?([^\n]*)",
                           source):
        quoted = re.findall(r"\"([^\"]*)\"", call)
        assert not any("<=" in q or ">=" in q for q in quoted), (name, call)


def test_focus_contraction_panels_both_have_a_y_label_and_a_legend():
    import numpy as np

    import figures.focus_contraction as figure
    from figures._style import figure_style

    shape = (2, 2, 3)
    data = {"taus": np.array([1, 3, 10]), "p_mins": np.array([0.1, 0.2]),
            "multipliers": np.array([1, 30]), "measured": np.full(shape, 0.99),
            "theoretical": np.full(shape, 0.995), "gd": np.full(shape, 0.98)}
    with figure_style():
        fig = figure.plot(data)
    for ax in fig.axes:
        assert "1 - \\rho" in ax.get_ylabel() and ax.get_legend() is not None
        assert "<=" not in ax.get_title()
