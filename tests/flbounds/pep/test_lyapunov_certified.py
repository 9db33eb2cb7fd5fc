"""The Lyapunov search's ``certified`` is a rigorous upper bound (flbounds.pep.lyapunov_check):
at or above the replayed witness on the guide's blocks and the atlas's quick cells, the lifted
check certified with every solve forced inaccurate, and planted bugs caught (the accepted value
reported as the certificate, the class's inequalities dropped from the start bounds)."""

import pytest

from flbounds import pep
from flbounds.participation import Bernoulli, UniformWithoutReplacement
from flbounds.pep import lyapunov_check, sdp
from flbounds.pep import lyapunov_search as lyap
from flbounds.pep.certify import bracket_tolerance
from flbounds.pep.sdp import PEPSolveError, SolveInfo

#: the witness is a float64 eigenvalue of a small matrix (or a closed form): its own rounding
WITNESS_ROUNDING = 1e-12


def _heavy_ball():
    """The guide's FedAvg with three heavy-ball steps per client."""
    def local(f, pulled, state):
        x = pulled["x"]
        z, z_prev = x, x
        for _ in range(3):
            z, z_prev = z - 0.1 * f.gradient(z) + 0.5 * (z - z_prev), z
        return {}, {"delta": z - x}

    return pep.Round("FedAvg, heavy-ball clients", pep.local_custom(local, "3 heavy-ball steps"),
                     push={"delta": "uniform"}, server=pep.server_model_step(global_step=1.0))


SHARED = pep.Setting(2, 1.0, 4.0, common_minimizer=True)
#: the guide's blocks (measured: the accepted value sat below the witness on the first and
#: the third, 0.376995996 < 0.376996 and 0.742074991 < 0.742075)
BLOCKS = {
    "heavy ball": lambda: (_heavy_ball(), pep.Setting(3, 1.0, 2.0, common_minimizer=True),
                           UniformWithoutReplacement(3, 2), False),
    "FOCUS": lambda: (pep.focus_round(2, 0.05), SHARED, Bernoulli([0.5, 0.5]), False),
    "FedAvg lifted": lambda: (pep.fedavg_round(2, 0.1), SHARED, Bernoulli([0.5, 0.5]), True),
}


def _sound(rate):
    """certified >= witness (up to the witness's rounding)."""
    return rate.certified >= rate.witness - WITNESS_ROUNDING


def _run(name):
    round_, setting, law, values = BLOCKS[name]()
    return lyap.lyapunov_rate(round_, setting, law, values=values)


@pytest.mark.parametrize("name", sorted(BLOCKS))
def test_certified_is_above_the_witness_on_the_guides_blocks(no_store, name):
    rate = _run(name)
    assert _sound(rate), (rate.witness, rate.certified)
    assert rate.worst_case.status == "certified (optimal)"
    assert rate.accurate is not None
    assert 0.0 <= rate.certified - rate.accurate <= bracket_tolerance(rate.certified)
    assert rate.worst_case.gap <= bracket_tolerance(rate.certified)


def test_the_accepted_value_as_the_certificate_is_caught(no_store):
    """Planted bug: the check reports the accurate solve's value. On the heavy-ball block it
    sits below the witness, which the soundness test refuses."""
    real = lyapunov_check.certified_value

    def accepted(build, L):
        info, accurate = real(build, L)
        return SolveInfo(**dict(info.__dict__, worst=accurate)), accurate

    no_store.setattr(lyapunov_check, "certified_value", accepted)
    assert not _sound(_run("heavy ball"))


def test_the_atlas_quick_cells_are_sound(no_store):
    """Every certified cell of the quick atlas (printed rows included) is at or above its
    witness, and the lifted cells' certificates are within their bracket."""
    from flbounds.ledger.api.bounds import get
    from flbounds.ledger.api.registry import load_all
    from flbounds.pep.atlas import compute_atlas

    load_all()
    atlas = compute_atlas(profile="quick", printed=get)
    checked = 0
    for name, cells in atlas["series"].items():
        for cell in cells:
            if cell["certified"] is None:
                continue
            assert cell["certified"] >= cell["witness"] - WITNESS_ROUNDING, (name, cell)
            assert cell["status"].startswith("certified"), (name, cell)
            checked += 1
    assert checked >= 30


FOCUS_LIFTED = (pep.focus_round(2, 1 / 32), SHARED, Bernoulli([0.2, 0.2]))


@pytest.mark.parametrize("case", ["FedAvg", "FOCUS"])
def test_the_lifted_check_forced_inaccurate_is_certified(no_store, case):
    """values=True with every solve forced inaccurate: the certificate alone (status
    ``certified (<solver status>)``, no accurate value), at or above the accurate check and
    the witness, within the bracket tolerance of the accurate value."""
    round_, setting, law = (BLOCKS["FedAvg lifted"]()[:3] if case == "FedAvg"
                            else FOCUS_LIFTED)
    accurate = lyap.lyapunov_rate(round_, setting, law, values=True)
    no_store.setattr(sdp, "accurate", lambda *a: False)
    forced = lyap.lyapunov_rate(round_, setting, law, values=True)
    assert forced.accurate is None and forced.params["shift"] == 0.0
    assert forced.worst_case.status.startswith("certified (")
    assert forced.certified >= accurate.accurate - pep.gap_tolerance(accurate.accurate)
    assert abs(forced.certified - accurate.accurate) <= bracket_tolerance(forced.certified)
    assert forced.worst_case.gap <= bracket_tolerance(forced.certified)
    assert _sound(forced)


def test_the_lifted_check_names_the_free_leaves_without_the_class(no_store):
    """Planted bug: the class's inequalities at x* left out of the start bounds. FOCUS's
    lifted P is singular along the clients' tilt (z_0, g_0, z_1, g_1) ~ (a, -b, -a, b), so V
    <= 1 alone leaves the clients' points free: no certificate, the points named."""
    no_store.setattr(lyapunov_check, "class_forms", lambda *a: [])
    no_store.setattr(lyap, "SHIFTS", (0.0,))   # no shifted V to fall back on
    with pytest.raises(PEPSolveError, match="z of client"):
        lyap.lyapunov_rate(*FOCUS_LIFTED, values=True, witness=False)


def test_the_lifted_checks_primal_value_as_the_certificate_is_caught(no_store):
    """Planted bug: forced inaccurate, the lifted check reports its bracket's lower end (the
    solver's primal value) instead of the certificate: below the witness on lifted FedAvg."""
    real = lyapunov_check.certified_value

    def primal(build, L):
        info, accurate = real(build, L)
        return SolveInfo(**dict(info.__dict__, worst=info.primal)), accurate

    no_store.setattr(sdp, "accurate", lambda *a: False)
    no_store.setattr(lyapunov_check, "certified_value", primal)
    assert not _sound(_run("FedAvg lifted"))
