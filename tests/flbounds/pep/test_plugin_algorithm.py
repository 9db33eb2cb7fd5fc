r"""A plugin describes an algorithm the library does not have and gets its worst case.

The plugin below (a claim module loaded through a ``flbounds.claims`` entry point, as
``tests/flbounds/ledger/test_plugins.py`` does for a half-registered one) writes gradient
descent with heavy-ball momentum on one client with the public vocabulary of
``flbounds.pep`` only: a user-written local update (the gradient at the pulled model) and a
user-written server step, and compares its one-step worst case with an analytic value.

The analytic value. Heavy ball, :math:`x^+ = x - \alpha \nabla f(x) + \beta (x - x^-)`,
measured by :math:`V = \|x - x^\star\|^2 + c \|x - x^-\|^2`. On :math:`f = \lambda
\|x - x^\star\|^2 / 2` with :math:`u = x - x^\star`, :math:`d = x - x^-`: :math:`u^+ = (1 -
\alpha\lambda) u + \beta d`, :math:`d^+ = u^+ - u = -\alpha\lambda u + \beta d`, so
:math:`(u, \sqrt c\, d)` is multiplied by :math:`T(\lambda) = [[1 - \alpha\lambda,
\beta/\sqrt c], [-\sqrt c\, \alpha\lambda, \beta]]` and the worst :math:`V^+/V` over
quadratics with curvatures in :math:`[\mu, L]` is :math:`\max_\lambda
\sigma_{\max}(T(\lambda))^2`, attained at :math:`\lambda \in \{\mu, L\}` (the spectral norm
of a matrix affine in :math:`\lambda` is convex in :math:`\lambda`). The step evaluates one
gradient, at one point besides :math:`x^\star`; by two-point interpolation the smooth strongly
convex class allows exactly the gradients :math:`Q(x - x^\star)`, :math:`\mu I \preceq Q
\preceq L I`, so the PEP over that class has the same value.
"""


import pytest

from tests.flbounds.ledger.test_plugins import loaded_plugin

PLUGIN = r'''
"""Claims of 'Heavy ball in one step' (A. Author, 2026): an algorithm described in a plugin."""

import numpy as np

from flbounds import pep
from flbounds.ledger import Evidence, Tolerance, claim, paper, result

paper("hbnote", title="Heavy ball in one step", source="arXiv:2601.00002",
      reference="A. Author, 2026")
LEMMA1 = result("hbnote.lemma1", ref="Lemma 1", title="one heavy-ball step",
                parts={"rate": "V+ <= rho V, V = |x - x*|^2 + c |x - x_prev|^2"})


def heavy_ball(alpha, beta):
    """x+ = x - alpha grad f(x) + beta (x - x_prev), written with flbounds.pep's vocabulary."""
    def local(f, pulled, state):
        return {}, {"g": f.gradient(pulled["x"])}

    def server(state, aggregated):
        x, x_prev = state["x"], state["x_prev"]
        return {"x": x - alpha * aggregated["g"] + beta * (x - x_prev), "x_prev": x}

    return pep.Round("heavy ball", pep.local_custom(local, "gradient at the pulled model"),
                     {"g": "sum"}, pep.Server(server, "heavy-ball step"),
                     server_state=("x", "x_prev"))


def rate(mu, L, alpha, beta, c):
    """max over lambda in {mu, L} of sigma_max(T(lambda))^2 (the module docstring's T)."""
    return max(np.linalg.norm([[1 - alpha * lam, beta / c**0.5],
                               [-(c**0.5) * alpha * lam, beta]], 2) ** 2 for lam in (mu, L))


@claim("hbnote.lemma1.rate", ref="Lemma 1", kind="statement", result=LEMMA1, parts="rate",
       statement="One heavy-ball step's worst V+/V over L-smooth mu-strongly convex f is rho.",
       expected="holds")
def one_step(*, rng, mu=1.0, L=4.0, alpha=0.3, beta=0.15, c=0.25):
    measure = pep.lyapunov(lambda s, star: (s["x"] - star.x) ** 2
                           + c * (s["x"] - s["x_prev"]) ** 2, "V+ / V")
    res = pep.worst_case(heavy_ball(alpha, beta), pep.Setting(1, mu, L), measure)
    exact = rate(mu, L, alpha, beta, c)
    return Evidence(measured=res.worst, theoretical=exact, relation="==",
                    tolerance=Tolerance(2 * pep.gap_tolerance(exact), "SDP acceptance bound",
                                        "the solve is accepted within gap_tolerance"),
                    worst_case=res.as_dict())
'''


@pytest.fixture
def plugin(monkeypatch, tmp_path):
    """The plugin module, loaded through a fake entry point into an empty registry."""
    import sys

    yield loaded_plugin(monkeypatch, tmp_path, "hbnote", "hb_plugin", PLUGIN)
    sys.modules.pop("hb_plugin", None)


def test_plugin_algorithm_meets_its_analytic_rate(plugin):
    table, module = plugin
    assert list(table) == ["hbnote.lemma1.rate"]
    row = table["hbnote.lemma1.rate"].check(seed=0, profile="quick")
    assert row.verdict == "holds", row
    assert row.measured == pytest.approx(module.rate(1.0, 4.0, 0.3, 0.15, 0.25), abs=1e-6)
    assert row.measured < 1  # a contraction of V at these constants


def test_plugin_with_a_wrong_algorithm_is_violated(plugin, monkeypatch):
    """A planted bug in the described algorithm (the server forgets to move x_prev) moves
    the verdict."""
    import dataclasses

    from flbounds import pep

    table, module = plugin
    right = module.heavy_ball

    def wrong(alpha, beta):
        step = pep.Server(lambda s, agg: {"x": s["x"] - alpha * agg["g"]
                                          + beta * (s["x"] - s["x_prev"])}, "x_prev stays")
        return dataclasses.replace(right(alpha, beta), server=step)

    monkeypatch.setattr(module, "heavy_ball", wrong)
    row = table["hbnote.lemma1.rate"].check(seed=0, profile="quick")
    assert row.verdict == "violated"
