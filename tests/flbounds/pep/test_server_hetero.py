"""SAFARI's heterogeneous one-round SDP (flbounds.pep.server_hetero) as a library: agreement
with the identical-client SDP, monotonicity in the heterogeneity, bad input and the replayed
witness, every step and state constraint given explicitly (SAFARI Theorem 5's tightness claim
is tested in tests/verify/safari/test_pep_conditions.py)."""

import numpy as np
import pytest

from flbounds.pep import gap_tolerance, safari_hetero_rate
from flbounds.pep.server_hetero import sampled_sets, solve_round
from flbounds.pep.server_hetero_witness import replay_round, safari_hetero_witness
from flbounds.pep.server_steps import safari_rate
from flbounds.pep.server_steps_witness import safari_witness

MU, L = 1.0, 2.0
Q, K, STEP = 0.5, 2, 0.1 / 3
STEP_C = 4 * L * STEP / (K * (L + MU))  # client step tied to the server step
#: a ||grad F(x)||^2 - b G(S) <= 0, about SAFARI's printed q-condition at these constants
CONSTRAINT = (0.21, 2.0)


def _general_sdp(n, s, q=Q, k=K, step=STEP):
    """The heterogeneous SDP itself (no shortcut at s = 0), full participation."""
    eta_c = 4 * L * step / (k * (L + MU))
    masks, probs = sampled_sets(n)
    return solve_round(MU, L, q, k, eta_c, step, n, masks, probs, s,
                       state_constraint=CONSTRAINT).worst


@pytest.mark.parametrize("n", [2, 3])
def test_zero_heterogeneity_is_the_identical_client_round(n):
    """With full participation, s = 0 forces equal gradients at every evaluated point and
    G_4 = F(x) - F*: the SDP's value is safari_rate's (to 1e-6)."""
    ref = safari_rate(MU, L, Q, K, STEP_C, STEP, state_constraint=CONSTRAINT).worst
    assert _general_sdp(n, 0.0) == pytest.approx(ref, abs=1e-6)
    assert safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, n, sigma_g2_ratio=0.0,
                              state_constraint=CONSTRAINT).worst == \
        pytest.approx(ref, abs=1e-6)


@pytest.mark.parametrize("s", [0.0, 1.0, 10.0])
def test_one_client_has_no_heterogeneity(s):
    ref = safari_rate(MU, L, Q, K, STEP_C, STEP, state_constraint=CONSTRAINT).worst
    res = safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 1, sigma_g2_ratio=s, printed=0.5,
                             state_constraint=CONSTRAINT)
    assert res.worst == pytest.approx(ref, abs=1e-6)
    assert res.printed == 0.5 and res.params["state_constraint"] == CONSTRAINT


def test_worst_case_grows_with_heterogeneity():
    values = []
    for s in (0.0, 0.1, 1.0, 10.0):
        res = safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, n_sampled=1, eligible=[0, 1],
                                 sigma_g2_ratio=s, state_constraint=CONSTRAINT)
        values.append(res.worst)
    tol = gap_tolerance(1.0)
    assert all(b >= a - tol for a, b in zip(values, values[1:], strict=False))
    assert values[-1] > values[0] + 1e-3  # biased sampling: heterogeneity matters


@pytest.mark.parametrize("call, name", [
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, sigma_g2_ratio=-1.0),
     "sigma_g2_ratio"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, sigma_g2_ratio=np.inf),
     "sigma_g2_ratio"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, sigma_g2_ratio="x"),
     "sigma_g2_ratio"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 0), "n_clients"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, n_sampled=4), "n_sampled"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, eligible=[0, 7]), "eligible"),
    (lambda: safari_hetero_rate(MU, L, 1.5, K, STEP_C, STEP, 3), "q"),
    (lambda: safari_hetero_rate(MU, L, Q, 0, STEP_C, STEP, 3), "local_steps"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, -1.0, 3), "step_server"),
    (lambda: safari_hetero_rate(MU, L, Q, K, -1.0, STEP, 3), "step_client"),
    (lambda: safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, state_constraint=(1.0, "x")),
     "state_constraint"),
    (lambda: safari_hetero_witness(MU, L, Q, K, STEP_C, STEP, 3, state_constraint="x"),
     "state_constraint"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


def test_replay_without_offsets_is_the_identical_client_replay():
    eta_c = STEP_C
    masks, probs = sampled_sets(3, 2)
    lam = 1.5
    value = replay_round(lam, np.zeros(3), masks, probs, q=Q, local_steps=K, step_client=eta_c,
                         step_server=STEP)
    one = safari_witness(MU, L, Q, K, STEP_C, STEP, n_grid=3)  # lam in {1, 1.5, 2}
    contraction = ((1 - eta_c * lam) ** (2 * K) * Q + (1 - STEP * lam) ** 2 * (1 - Q))
    assert value == pytest.approx(contraction, rel=1e-12)
    assert one.replayed >= value


def test_witness_is_a_replayed_lower_bound_above_the_homogeneous_worst_case():
    """The 1-D biased quadratic clients meet Assumption 5 with sigma_G^2 <= s and the
    state constraint; the project's SAFARI on them stays below the SDP (an upper bound) and above
    the identical-client worst case (heterogeneity is really felt)."""
    kw = dict(n_sampled=1, eligible=[0, 1], sigma_g2_ratio=1.0, state_constraint=CONSTRAINT)
    res = safari_hetero_rate(MU, L, Q, K, STEP_C, STEP, 3, **kw)
    wit = safari_hetero_witness(MU, L, Q, K, STEP_C, STEP, 3, **kw)
    assert wit.meets_state_constraint and wit.sigma_g2 <= 1.0 + 1e-12
    assert wit.replayed <= res.worst + gap_tolerance(res.worst)
    assert wit.replayed > safari_rate(MU, L, Q, K, STEP_C, STEP,
                                      state_constraint=CONSTRAINT).worst


def test_every_form_is_tried_with_clarabel_before_scs(monkeypatch):
    """solve_round tries its four forms with the interior-point settings first and only then
    with SCS (slow when it ends inaccurate), then the certificate."""
    from flbounds.pep import certify, sdp

    calls = []

    def fail(problem, *, scale=1.0, solvers=None, reuse=True):
        calls.append((scale, [name for name, _ in solvers]))
        raise sdp.PEPSolveError("planted")

    def no_certificate(*args, **kwargs):
        raise sdp.PEPSolveError("planted")

    monkeypatch.setattr(sdp, "solve", fail)
    monkeypatch.setattr(certify, "solve_certified", no_certificate)
    masks, probs = sampled_sets(2)
    with pytest.raises(sdp.PEPSolveError, match="certificate: planted"):
        solve_round(MU, L, Q, K, STEP_C, STEP, 2, masks, probs, 1.0)
    assert [scale for scale, _ in calls] == [1.0, 1.0, 0.1, 0.1] * 2
    assert all(names == ["CLARABEL", "CLARABEL"] for _, names in calls[:4])
    assert all(names == ["SCS"] for _, names in calls[4:])
