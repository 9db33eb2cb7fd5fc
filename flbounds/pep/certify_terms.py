"""The pieces the certificates of :mod:`.certify`, :mod:`.certify_margin`,
:mod:`.certify_tworuns` and :mod:`.certify_lmi` share: the rounding factor, the margins'
loop, the two certificate records, the
accumulators of :math:`k + \\langle M, G\\rangle + d \\cdot F` from PEPit's decomposition
dicts, and the bounds they use (their derivations are in those modules' docstrings)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .sdp import PEPSolveError

#: safety factor on the float64 rounding estimate of the rebuilt bound
ROUNDING = 64.0


def margins(sigmas):
    """``sigmas`` as a tuple of floats, each a margin of the certificates of
    :mod:`.certify_margin` and :mod:`.certify_tworuns`.

    Raises
    ------
    ValueError
        Naming ``sigmas`` when it is empty or has a value that is not finite and > 0.
    """
    sigmas = tuple(float(s) for s in sigmas)
    if not sigmas or not all(np.isfinite(s) and s > 0 for s in sigmas):
        raise ValueError(f"sigmas must be a non-empty sequence of finite numbers > 0, "
                         f"got {sigmas}")
    return sigmas


def first_margin(sigmas, attempt):
    """``attempt(sigma)`` for each margin of ``sigmas`` (:func:`margins`) in turn, the first
    result returned.

    Raises
    ------
    ValueError
        Naming ``sigmas`` (:func:`margins`).
    PEPSolveError
        When every attempt raises it (each failure listed).
    """
    failures = []
    for sigma in margins(sigmas):
        try:
            return attempt(sigma)
        except PEPSolveError as exc:
            failures.append(f"sigma {sigma:g}: {exc}")
    raise PEPSolveError("no certified solve: " + "; ".join(failures))


class Certificate(NamedTuple):
    """A rigorous upper bound on a PEP's value and how it was obtained.

    Attributes
    ----------
    upper : float
        Valid upper bound on the optimal value (module docstring).
    dual : float
        The constant :math:`k` (the dual value the multipliers prove, before the corrections).
    eig_excess : float
        Bound on :math:`\\langle M, G\\rangle` from the positive eigenpairs of :math:`M` (how
        far the rebuilt dual slack is from PSD, times the norm bounds: :func:`_excess`).
    trace_bound : float
        :math:`T`, the a-priori bound on :math:`\\operatorname{tr} G`.
    value_leftover : float
        :math:`\\sum_k |d_k| \\Phi_k`.
    primal : float
        The objective at the solver's primal point (not rigorous).
    """

    upper: float
    dual: float
    eig_excess: float
    trace_bound: float
    value_leftover: float
    primal: float


class MarginCertificate(NamedTuple):
    """A rigorous upper bound from multipliers with a margin (module docstring).

    Attributes
    ----------
    upper : float
        The bound :math:`k + \\sum_k |d_k| C_k + \\varrho_0`, or ``inf`` when the slope is
        positive (no certificate from these multipliers).
    dual : float
        :math:`k`.
    top_eigenvalue : float
        :math:`\\lambda_{\\max}(M)` as computed (before its rounding allowance).
    slope : float
        :math:`\\lambda_{\\max}(M) + \\sum_k |d_k| \\phi_k + \\varrho_1` (must be <= 0).
    value_leftover : float
        :math:`\\sum_k |d_k| C_k`.
    rounding : float
        :math:`\\varrho_0`.
    primal : float
        The objective at the solver's primal point (not rigorous).
    """

    upper: float
    dual: float
    top_eigenvalue: float
    slope: float
    value_leftover: float
    rounding: float
    primal: float


def _gamma(m):
    eps = np.finfo(float).eps
    return m * eps / (1.0 - m * eps)


def _norm_bound(point, bounds):
    total = 0.0
    for leaf, coef in point.decomposition_dict.items():
        if id(leaf) not in bounds:
            raise ValueError("initial: a point depends on a leaf with no bound yet")
        total += abs(float(coef)) * bounds[id(leaf)]
    return total


def _excess(M, bounds):
    """Bound on <M, G> over PSD G whose leaves have norms <= bounds: the positive eigenpairs
    (lam_k, v_k) of M give <M, G> <= sum_k lam_k v_k' G v_k and v_k' G v_k = ||sum_j v_kj
    l_j||^2 <= (sum_j |v_kj| B_j)^2 (<= sum_j B_j^2 = T by Cauchy-Schwarz)."""
    if not M.size:
        return 0.0
    lam, vec = np.linalg.eigh(M)
    pos = lam > 0
    return float(np.sum(lam[pos] * (np.abs(vec[:, pos]).T @ bounds) ** 2))


class _Affine:
    """Accumulates k + <M, G> + d.F from decomposition dicts, with a rounding scale."""

    def __init__(self, n, index):
        self.const, self.index = 0.0, index
        self.M = np.zeros((n, n))
        self.d, self.scale = {}, 0.0

    def add(self, terms, weight):
        for key, coef in terms.items():
            c = weight * float(coef)
            self.scale += abs(c)
            if isinstance(key, tuple):
                a, b = self.index[id(key[0])], self.index[id(key[1])]
                self.M[a, b] += 0.5 * c
                self.M[b, a] += 0.5 * c
            elif isinstance(key, int | float):
                self.const += c * float(key)
            else:
                self.d[id(key)] = self.d.get(id(key), 0.0) + c

    def bound(self, point_bounds, value_bounds, leaves, primal):
        eps = np.finfo(float).eps
        n = len(leaves)
        trace = float(sum(point_bounds[id(p)] ** 2 for p in leaves))
        excess = _excess(self.M, np.array([point_bounds[id(p)] for p in leaves]))
        leftover = 0.0
        for k, coef in self.d.items():
            if k not in value_bounds:
                raise ValueError("value_bounds: a leaf function value has no bound")
            leftover += abs(coef) * value_bounds[k]
        rounding = ROUNDING * eps * (n * np.linalg.norm(self.M) * trace + self.scale
                                     * (1.0 + trace + max(value_bounds.values(), default=0.0)))
        upper = self.const + excess + leftover + rounding
        return Certificate(upper=float(upper), dual=self.const, eig_excess=excess,
                           trace_bound=trace, value_leftover=leftover, primal=primal)


class _Sums:
    """k + <M, G> + d.F accumulated from decomposition dicts, with per-entry absolute sums
    and term counts (the rounding bounds of the module docstring)."""

    def __init__(self, n, index):
        self.index, self.n = index, n
        self.const, self.const_abs, self.const_cnt = 0.0, 0.0, 0
        self.M, self.M_abs, self.M_cnt = np.zeros((n, n)), np.zeros((n, n)), np.zeros((n, n))
        self.d, self.d_abs, self.d_cnt = {}, {}, {}
        self.model_gram, self.model_value = 0.0, {}

    def add(self, terms, weight, model=False):
        for key, coef in terms.items():
            c = weight * float(coef)
            if isinstance(key, tuple):
                a, b = self.index[id(key[0])], self.index[id(key[1])]
                for i, j in ((a, b), (b, a)):
                    self.M[i, j] += 0.5 * c
                    self.M_abs[i, j] += 0.5 * abs(c)
                    self.M_cnt[i, j] += 1
                if model:
                    self.model_gram += abs(c)
            elif isinstance(key, int | float):
                self.const += c * float(key)
                self.const_abs += abs(c * float(key))
                self.const_cnt += 1
            else:
                k = id(key)
                self.d[k] = self.d.get(k, 0.0) + c
                self.d_abs[k] = self.d_abs.get(k, 0.0) + abs(c)
                self.d_cnt[k] = self.d_cnt.get(k, 0) + 1
                if model:
                    self.model_value[k] = self.model_value.get(k, 0.0) + abs(c)

    def bound(self, growth, primal):
        eps = np.finfo(float).eps
        missing = set(self.d) - set(growth)
        if missing:
            raise ValueError("growth: a leaf function value has no growth bound")
        top = float(np.linalg.eigvalsh(self.M)[-1]) if self.n else 0.0
        entry_err = _gamma(self.M_cnt + 1) * self.M_abs
        slope = top + ROUNDING * self.n * eps * float(np.linalg.norm(self.M)) \
            + float(np.linalg.norm(entry_err)) + ROUNDING * eps * self.model_gram
        leftover = 0.0
        rounding = _gamma(self.const_cnt + 1) * self.const_abs
        for k, d in self.d.items():
            c, phi = growth[k]
            size = abs(d) + _gamma(self.d_cnt[k] + 1) * self.d_abs[k] \
                + ROUNDING * eps * self.model_value.get(k, 0.0)
            leftover += abs(d) * c
            rounding += (size - abs(d)) * c
            slope += size * phi
        upper = self.const + leftover + rounding if slope <= 0 else float("inf")
        return MarginCertificate(upper=float(upper), dual=self.const, top_eigenvalue=top,
                                 slope=float(slope), value_leftover=leftover,
                                 rounding=float(rounding), primal=primal)
