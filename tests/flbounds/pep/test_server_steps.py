"""SAFARI's worst-case SDPs (flbounds.pep.server_steps) as a library: closed forms, the state
constraint, witnesses and bad input, every step and constraint given explicitly (what SAFARI's
Theorems 4-5 ask of them is tested in tests/verify/safari/test_pep_conditions.py)."""

import numpy as np
import pytest

from flbounds.pep import gap_tolerance, gd_contraction
from flbounds.pep.server_steps import safari_nonconvex_rate, safari_rate
from flbounds.pep.server_steps_witness import safari_witness

MU, L = 1.0, 2.0


def _client_step(K, step):
    """A client step tied to the server step (4 L eta_s/(K(L + mu))), for the grids below."""
    return 4 * L * step / (K * (L + MU))


@pytest.mark.parametrize("step", [0.02, 0.1, 2 / 3])
@pytest.mark.parametrize("K", [1, 3])
def test_server_only_round_is_gradient_descent(step, K):
    res = safari_rate(MU, L, 0.0, K, _client_step(K, step), step)
    assert res.worst == pytest.approx(gd_contraction(MU, L, step), abs=gap_tolerance(1.0))


@pytest.mark.parametrize("step", [0.02, 0.1])
@pytest.mark.parametrize("K", [1, 3])
def test_client_only_round_is_gd_to_the_K(step, K):
    eta_c = _client_step(K, step)
    res = safari_rate(MU, L, 1.0, K, eta_c, step)
    assert res.worst == pytest.approx(gd_contraction(MU, L, eta_c) ** K, abs=gap_tolerance(1.0))


def test_client_step_is_independent_of_the_server_step():
    """q = 1: only the client step matters; q = 0: only the server step."""
    a = safari_rate(MU, L, 1.0, 2, 0.1, 0.3).worst
    b = safari_rate(MU, L, 1.0, 2, 0.1, 0.05).worst
    assert a == pytest.approx(b, abs=gap_tolerance(1.0))
    assert a == pytest.approx(gd_contraction(MU, L, 0.1) ** 2, abs=gap_tolerance(1.0))
    c = safari_rate(MU, L, 0.0, 2, 0.3, 0.1).worst
    assert c == pytest.approx(gd_contraction(MU, L, 0.1), abs=gap_tolerance(1.0))


def test_printed_is_the_callers_and_tight_for_server_gd():
    step = 2 / (L + MU)
    printed = gd_contraction(MU, L, step)
    res = safari_rate(MU, L, 0.0, 1, _client_step(1, step), step, printed=printed)
    assert res.printed == printed
    assert res.tight
    assert res.params["state_constraint"] is None


@pytest.mark.parametrize("q, K, step", [(0.5, 3, 0.02), (0.5, 1, 2 / 3), (0.8, 5, 0.1)])
def test_one_dimensional_witness_replays_the_worst_case(q, K, step):
    """Mixed rounds of gradient steps: the SDP's worst case is a 1-D quadratic, which the
    project's SAFARI replays (a lower bound that here meets the upper one)."""
    eta_c = _client_step(K, step)
    res = safari_rate(MU, L, q, K, eta_c, step)
    wit = safari_witness(MU, L, q, K, eta_c, step, n_grid=401)
    assert wit.replayed <= res.worst + gap_tolerance(res.worst)
    assert wit.replayed == pytest.approx(res.worst, rel=1e-5)
    assert wit.meets_state_constraint


def test_state_constraint_excludes_the_expanding_client_round():
    """eta_c = 16/9 > 2/L: without a constraint the round expands; with
    ||grad F||^2 <= F(x) - F* (a = b = 1; F - F* <= ||grad F||^2/(2 mu) on the class) only x*
    remains, and no 1-D quadratic state other than x* meets it."""
    free = safari_rate(MU, L, 0.5, 1, 16 / 9, 2 / 3)
    assert free.worst > 1
    res = safari_rate(MU, L, 0.5, 1, 16 / 9, 2 / 3, state_constraint=(1.0, 1.0))
    assert res.worst <= gap_tolerance(1.0)
    assert res.params["state_constraint"] == (1.0, 1.0)
    assert not safari_witness(MU, L, 0.5, 1, 16 / 9, 2 / 3, state_constraint=(1.0, 1.0),
                              n_grid=11).meets_state_constraint


def test_a_slack_state_constraint_changes_nothing():
    """a ||g||^2 <= b (F - F*) with a/b below 1/(2L) holds on the whole class."""
    free = safari_rate(MU, L, 0.5, 3, 0.05, 0.02).worst
    slack = safari_rate(MU, L, 0.5, 3, 0.05, 0.02, state_constraint=(0.1, 1.0)).worst
    assert slack == pytest.approx(free, abs=gap_tolerance(1.0))


def test_nonconvex_client_round_with_K1_is_a_server_step_of_the_client_step():
    """One local step with eta_c is a server step with eta_c."""
    client = safari_nonconvex_rate(L, 1.0, 1, 0.02, 0.01, 2)
    server = safari_nonconvex_rate(L, 0.0, 1, 0.05, 0.02, 2)
    assert client.worst == pytest.approx(server.worst, rel=1e-5)


def test_nonconvex_worst_case_reports_both_steps():
    step = 1 / (8 * np.sqrt(30) * L)
    res = safari_nonconvex_rate(L, 0.5, 3, 2 * step / 3, step, 2, printed=1.0)
    assert 0 < res.worst
    assert res.printed == 1.0
    assert res.params["step_client"] == 2 * step / 3 and res.params["step_server"] == step


@pytest.mark.parametrize("call, name", [
    (lambda: safari_rate(MU, L, 1.5, 2, 0.1, 0.1), "q"),
    (lambda: safari_rate(MU, L, 0.5, 0, 0.1, 0.1), "local_steps"),
    (lambda: safari_rate(MU, L, 0.5, 2, 0.1, -0.1), "step_server"),
    (lambda: safari_rate(MU, L, 0.5, 2, 0.0, 0.1), "step_client"),
    (lambda: safari_rate(MU, L, 0.5, 2, 0.1, 0.1, state_constraint="x"), "state_constraint"),
    (lambda: safari_rate(MU, L, 0.5, 2, 0.1, 0.1, state_constraint=(1.0,)),
     "state_constraint"),
    (lambda: safari_rate(MU, L, 0.5, 2, 0.1, 0.1, state_constraint=(np.nan, 1.0)),
     "state_constraint"),
    (lambda: safari_witness(MU, L, 0.5, 2, 0.1, 0.1, state_constraint=(1.0, np.inf)),
     "state_constraint"),
    (lambda: safari_rate(3.0, L, 0.5, 2, 0.1, 0.1), "L"),
    (lambda: safari_nonconvex_rate(L, 0.5, 2, 0.01, 0.01, 0), "n_rounds"),
    (lambda: safari_nonconvex_rate(L, 0.5, 2, -0.01, 0.01, 1), "step_client"),
    (lambda: safari_nonconvex_rate(-1.0, 0.5, 2, 0.01, 0.01, 1), "L"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
