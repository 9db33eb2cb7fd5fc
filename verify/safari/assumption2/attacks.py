r"""Attack surfaces of Assumption 2's 1-D example and of the SA-FL mixture (SAFARI): the ratios
call the functions the claims call; a search point is an instance of the attacked part's
hypothesis (the validator only drops masses below the ratio's resolution)."""

from __future__ import annotations

import numpy as np

from flbounds.falsify import Box, attack_surface
from flbounds.theory.thresholds import (
    excess_error,
    mixture_alpha,
    paper_alpha,
    sa_fl_mixture,
    uniform,
)

from . import example_instance


def _interval(lo, width, t_frac):
    """a' < t* < b' inside [0, 1]: a' = lo (1 - width), b' = a' + width."""
    ap = lo * (1 - width)
    return ap, ap + width, ap + t_frac * width


THRESHOLD_SPACE = {"lo": Box(0, 1), "width": Box(0.01, 0.99), "t_frac": Box(0.01, 0.99),
                   "t": Box(-0.5, 1.5)}


#: smallest eps_Q attacked: masses are cdf differences with absolute error ~1e-16, so a
#: ratio over alpha eps_Q >= 1e-2 x 1e-4 keeps a relative rounding error below 1e-9
EPS_Q_MIN = 1e-4


def _eps_q_resolved(**inst):
    ap, bp, ts = _interval(inst["lo"], inst["width"], inst["t_frac"])
    dist = sa_fl_mixture(0.0, 1.0, ap, bp, inst["weight"]) if "weight" in inst else \
        uniform(ap, bp)
    eps_q = excess_error(dist, np.array([inst["t"]]), ts)[0]
    return eps_q >= EPS_Q_MIN or "eps_Q < 1e-4 (below the resolution of the ratio)"


def _example_point(*, lo, width, t_frac, **_):
    ap, bp, ts = _interval(lo, width, t_frac)
    return example_instance((0.0, 1.0, ap, bp, ts))


@attack_surface("safari.assumption2.example_fails_outside", space=THRESHOLD_SPACE,
                # full budget: seeds 0 and 1 at 5000 evaluations reach 99 / 99,
                # within 1e-3 of it from evaluation 210 / 234; 500 >= twice that
                budget={"quick": 300, "full": 500},
                validator=_eps_q_resolved, instance=_example_point, tolerance=1e-9,
                tolerance_why="rounding: masses >= 1e-4 with ~1e-16 error, alpha >= 0.01",
                shrink=True,
                fixed=[{"lo": 0.4 / 0.9, "width": 0.1, "t_frac": 0.9, "t": 1.0}],
                note="P = U[0, 1], Q = U[a', b'], a' < t* < b' (t* strictly inside)")
def example_alpha(*, lo, width, t_frac, t):
    """|eps_P - eps_Q| / (alpha eps_Q) with the example's alpha = 1 - (b'-a')/(b-a)."""
    ap, bp, ts = _interval(lo, width, t_frac)
    tt = np.array([t])
    eps_p = excess_error(uniform(0.0, 1.0), tt, ts)[0]
    eps_q = excess_error(uniform(ap, bp), tt, ts)[0]
    return abs(eps_p - eps_q) / (paper_alpha(0.0, 1.0, ap, bp) * eps_q)


@attack_surface("safari.assumption2.mixture_alpha",
                # full budget: seeds 0 and 1 at 5000 evaluations reach 1 / 1,
                # within 1e-3 of it from evaluation 44 / 115; 250 >= twice that
                budget={"quick": 250, "full": 250},
                space={**THRESHOLD_SPACE, "weight": Box(0.01, 0.99),
                       "t_frac": Box(0.0, 1.0)},
                validator=_eps_q_resolved, tolerance=1e-9,
                instance=lambda *, weight, **_: {"server_weight": weight},
                tolerance_why="rounding: masses >= 1e-4 with ~1e-16 error; weight <= 0.99 "
                "keeps alpha >= 0.01 (at weight 1, Q = P and alpha = 0)",
                fixed=[{"lo": 0.4 / 0.9, "width": 0.1, "t_frac": 0.9, "t": 1.0,
                        "weight": 0.1}],
                note="Q = (1 - l2) U[a', b'] + l2 U[0, 1], t* anywhere in [a', b']")
def mixture(*, lo, width, t_frac, t, weight):
    """|eps_P - eps_Q| / eps_Q over the corrected alpha = max(1 - 1/r_max, 1/r_min - 1)."""
    ap, bp, ts = _interval(lo, width, t_frac)
    tt = np.array([t])
    eps_p = excess_error(uniform(0.0, 1.0), tt, ts)[0]
    eps_q = excess_error(sa_fl_mixture(0.0, 1.0, ap, bp, weight), tt, ts)[0]
    return abs(eps_p - eps_q) / eps_q / mixture_alpha(0.0, 1.0, ap, bp, weight)
