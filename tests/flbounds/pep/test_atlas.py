"""The rate atlas (flbounds.pep.atlas, ``flbounds atlas``): table, figure, hooks, usage."""

import json

import numpy as np
import pytest

from flbounds.cli import main
from flbounds.pep import atlas


@pytest.mark.parametrize("argv, word", [
    (["--p", "0,0.5"], "ps"),
    (["--p", "0.5,1.2"], "ps"),
    (["--p", "a,b"], "--p"),
    (["--mu", "2", "--L", "1"], "L"),
    (["--tau", "0"], "local_steps"),
    (["--clients", "9"], "n_clients"),
    (["--step", "-1"], "step"),
    (["--profile", "huge"], "profile"),
])
def test_bad_arguments_exit_2_with_a_message(argv, word, capsys, tmp_path):
    assert main(["atlas", "--out", str(tmp_path), *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith("flbounds: error:") and word in err
    assert not any(tmp_path.iterdir())  # nothing computed, nothing written


def test_a_small_atlas_writes_table_and_figure(tmp_path, capsys):
    assert main(["atlas", "--out", str(tmp_path), "--p", "0.5,1", "--clients", "1",
                 "--tau", "1"]) == 0
    names = {p.name for p in tmp_path.iterdir()}
    assert {"atlas.json", "atlas.md", "pep_atlas.png", "pep_atlas.pdf"} <= names
    table = json.loads((tmp_path / "atlas.json").read_text())
    assert set(atlas.ALGORITHMS) <= set(table["series"])
    assert any("Thm 1(a)" in k for k in table["series"])
    for name, cells in table["series"].items():
        assert len(cells) == 2
        for cell in cells:
            assert "error" not in cell, (name, cell)
            assert cell["witness"] <= cell["certified"] + 1e-5, (name, cell)
    text = (tmp_path / "atlas.md").read_text()
    assert "| 0.5 |" in text and "| 1 |" in text and "omega_i = 1/p" in text


def test_gradient_descent_cell():
    """One client, one step, p = 1: FedAvg is gradient descent at the atlas's step."""
    table = atlas.compute_atlas(ps=(1.0,), n_clients=1, local_steps=1, printed=False)
    step = table["constants"]["step"]
    known = max(abs(1 - step * 1.0), abs(1 - step * 4.0)) ** 2
    assert table["series"]["FedAvg"][0]["certified"] == pytest.approx(known, abs=1e-6)


def test_fedau_and_mifa_are_described_rounds():
    """FedAU at p uses its settled weights 1/p (unbiased, FedAvg at p = 1); MIFA is
    flbounds.pep.described_server's round, its memory in the searched state."""
    from flbounds.pep import described_server
    from flbounds.pep.describe import FixedWeights

    fedau = atlas.ALGORITHMS["FedAU"](2, 0.1, 3, 0.25)
    rule = fedau.push["delta"]
    assert isinstance(rule, FixedWeights) and rule.weights == pytest.approx((4.0,) * 3)
    mifa = atlas.ALGORITHMS["MIFA"](2, 0.1, 3, 0.25)
    assert mifa.name == described_server.mifa_round(2, 0.1, 3).name
    assert "u" in mifa.client_state


def test_fedau_is_fedavg_at_full_participation():
    """With every client in every round, omega = 1 and FedAU's cell is FedAvg's: a wrong
    weight (omega = p instead of 1/p) would move it."""
    table = atlas.compute_atlas(ps=(1.0,), n_clients=1, local_steps=1, printed=False)
    fedavg, fedau = table["series"]["FedAvg"][0], table["series"]["FedAU"][0]
    assert fedau["certified"] == pytest.approx(fedavg["certified"], abs=1e-6)


def test_arrays_and_markdown_of_a_failed_cell():
    table = dict(constants=dict(mu=1.0, L=4.0, local_steps=2, n_clients=2, step=0.1,
                                ps=[0.5], profile="quick"),
                 series={"FedAvg": [dict(certified=None, witness=None, error="no solve")],
                         "MIFA": [dict(certified=None, witness=1.2, error="no quadratic "
                                       "Lyapunov function certifies rho <= 1")]})
    text = atlas.markdown(table)
    assert "no certificate (no solve)" in text
    assert "unbounded: witness 1.200000 > 1; no quadratic Lyapunov function" in text
    assert np.isnan(atlas.arrays(table)["s0_certified"]).all()


def _rate(certified, witness):
    from types import SimpleNamespace

    return SimpleNamespace(certified=certified, witness=witness, search=(certified,) * 2,
                           worst_case=SimpleNamespace(status="optimal"), printed=None,
                           seconds=1.0)


def test_only_open_cells_are_re_searched_with_the_lifted_v():
    """A closed bracket keeps the quadratic of the state; an open one (wider than OPEN) or a
    failed one with a contracting witness takes the lifted search's certificate, the first
    kept as ``plain``; a diverging witness is not re-searched; a failed lift is said."""
    from flbounds.pep.sdp import PEPSolveError

    calls = []

    def lifted(warm):
        calls.append(warm)
        return _rate(0.93, None)

    def fails(*warm):
        raise PEPSolveError("no quadratic Lyapunov function certifies rho <= 1")

    closed = atlas._cell(lambda: _rate(0.9, 0.9 - atlas.OPEN / 2), lifted=lifted)
    assert "values" not in closed and not calls
    cell = atlas._cell(lambda: _rate(0.95, 0.92), lifted=lifted)
    assert cell["values"] and cell["certified"] == 0.93 and cell["plain"]["certified"] == 0.95
    assert cell["witness"] == 0.92 and cell["seconds"] == 2.0
    cell = atlas._cell(fails, lambda: (0.97, ()), lifted=lifted)
    assert cell["certified"] == 0.93 and "error" not in cell and "error" in cell["plain"]
    assert calls == [(0.92, 0.95), (0.97, 1.0)]
    diverging = atlas._cell(fails, lambda: (1.2, ()), lifted=lifted)
    assert diverging["certified"] is None and len(calls) == 2
    said = atlas._cell(lambda: _rate(0.95, 0.92), lifted=fails)
    assert said["certified"] == 0.95 and said["lifted_error"].startswith("no quadratic")
    assert "(lifted V)" in atlas.markdown(dict(
        constants=dict(mu=1.0, L=4.0, local_steps=2, n_clients=2, step=0.1, ps=[0.2],
                       profile="quick"), series={"FOCUS": [cell]}))


def test_focus_open_cell_narrows_with_the_lifted_v():
    """The quick profile's FOCUS at p = 0.2 (N = 2, tau = 2; measured [0.927753, 0.953630]
    with the quadratic of the state, [0.927753, 0.937246] lifted): re-searched, narrower,
    still above the witness; with ``values=False`` the cell is the plain one."""
    table = atlas.compute_atlas(ps=(0.2,), printed=False)
    focus = table["series"]["FOCUS"][0]
    assert focus["values"] and focus["status"] in ("optimal",) or \
        focus["status"].startswith("certified")
    assert focus["witness"] <= focus["certified"] + 1e-5
    assert focus["certified"] < focus["plain"]["certified"] - 1e-3
    assert table["series"]["FedAvg"][0].get("values") is None  # closed: not re-searched
