r"""Client-selection rules of SubTrunc for FedAvg: random, DivFL, SubTrunc, UnionFL, PoC.

Every rule is a pure function of the round's information (all clients' gradients and losses
at the current model, past selections) and an explicit random plan ``keys`` of shape
(k + 1, n) uniforms drawn by the caller:

- ``random``: the k clients with the smallest ``keys[0]`` (uniform without replacement);
- ``divfl``: stochastic greedy (r = ``sample_size``) on the facility location G of the
  gradient distances :math:`d_{ij} = \|\nabla f_i(w) - \nabla f_j(w)\|`;
- ``subtrunc``: the same on :math:`W = G + \lambda\min(b, \sum_S \phi(f_i))`;
- ``unionfl``: the same on :math:`h_t = G - \mu|U_t \cap S|`, :math:`U_t` the union of the
  last ``window`` selections;
- ``poc`` (Cho et al. 2020): ``d`` candidates drawn without replacement with probability
  proportional to the data fractions (Efraimidis-Spirakis keys from ``keys[0]``), then the k
  candidates with the largest loss. The paper does not give d; 2k is the default.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from flbounds.validation import as_float_array

from .base import check_k
from .facility import FacilityLocation, SubTruncObjective, UnionFLObjective, phi_values
from .maximize import stochastic_greedy

RULES = ("random", "divfl", "subtrunc", "unionfl", "poc")


class SelectionRule(NamedTuple):
    """A selection rule and its hyper-parameters (paper defaults: b = 1.1, mu = 1, r = 10).

    Attributes
    ----------
    name : str
        One of :data:`RULES`: random, DivFL, SubTrunc, UnionFL, Power-of-Choice.
    lam, b, phi : float, float, str
        SubTrunc's weight, truncation level and loss transform.
    mu : float
        UnionFL's penalty.
    window : int
        UnionFL's look-back window, in rounds.
    sample_size : int
        r, the elements stochastic greedy scores per step.
    poc_candidates : int
        Power-of-Choice's candidate count (0: 2k).
    """

    name: str
    lam: float = 0.0
    b: float = 1.1
    phi: str = "log1p"
    mu: float = 1.0
    window: int = 5
    sample_size: int = 10
    poc_candidates: int = 0  # 0 -> 2k

    def label(self) -> str:
        if self.name == "subtrunc":
            return f"SubTrunc (lam={self.lam:g}, phi={self.phi})"
        if self.name == "unionfl":
            return f"UnionFL (window={self.window}, mu={self.mu:g})"
        return {"random": "Random", "divfl": "DivFL", "poc": "Power-of-Choice"}[self.name]


def gradient_distances(grads: np.ndarray) -> np.ndarray:
    """Pairwise Euclidean distances of the rows of ``grads``.

    Parameters
    ----------
    grads : numpy.ndarray, shape (n, p)
        One gradient per client.

    Returns
    -------
    numpy.ndarray, shape (n, n)
        float64, zero diagonal.
    """
    sq = (grads ** 2).sum(axis=1)
    d2 = sq[:, None] + sq[None, :] - 2.0 * grads @ grads.T
    d = np.sqrt(np.maximum(d2, 0.0))
    np.fill_diagonal(d, 0.0)
    return d


def window_union(history: list, n: int, window: int) -> np.ndarray:
    """Boolean mask of the clients selected in the last ``window`` rounds.

    Parameters
    ----------
    history : list of index arrays
        Past selections, oldest first.
    n : int
        The number of clients.
    window : int
        The rounds looked back (0: none).

    Returns
    -------
    numpy.ndarray of bool, shape (n,)
    """
    recent = np.zeros(n, dtype=bool)
    for sel in history[len(history) - window:] if window > 0 else []:
        recent[sel] = True
    return recent


def select_clients(rule: SelectionRule, *, k: int, grads, losses, data_fractions,
                   history: list, keys: np.ndarray) -> list[int]:
    """The k clients of this round under ``rule``.

    Parameters
    ----------
    rule : SelectionRule
        The rule and its hyper-parameters.
    k : int
        The clients to select.
    grads : (n, p) array
        Every client's full gradient at the current model (fresh information).
    losses : (n,) array
        Every client's training loss at the current model (nonnegative).
    data_fractions : (n,) array
        p_i, used by Power-of-Choice.
    history : list of index arrays
        Past selections, oldest first (UnionFL's window).
    keys : (k + 1, n) array
        Uniform random plan of this round.

    Returns
    -------
    list of int
        The k selected clients.
    """
    grads = as_float_array(grads, "grads", ndim=2)
    n = grads.shape[0]
    k = check_k(k, n)
    if rule.name not in RULES:
        raise ValueError(f"rule.name must be one of {RULES}, got {rule.name!r}")
    keys = as_float_array(keys, "keys", shape=(k + 1, n))
    losses = as_float_array(losses, "losses", shape=(n,), nonnegative=True)
    if rule.name == "random":
        return np.argsort(keys[0], kind="stable")[:k].tolist()
    if rule.name == "poc":
        d = rule.poc_candidates or min(n, 2 * k)
        p = as_float_array(data_fractions, "data_fractions", shape=(n,), nonnegative=True)
        cand = np.argsort(-np.log(keys[0]) / p, kind="stable")[:d]  # ES sampling
        return cand[np.argsort(-losses[cand], kind="stable")[:k]].tolist()
    dissim = gradient_distances(grads)
    if rule.name == "divfl":
        f = FacilityLocation(dissim)
    elif rule.name == "subtrunc":
        f = SubTruncObjective(dissim, phi_values(losses, rule.phi), lam=rule.lam, b=rule.b)
    else:
        f = UnionFLObjective(dissim, window_union(history, n, rule.window), mu=rule.mu)
    return stochastic_greedy(f, k, sample_size=min(rule.sample_size, n), keys=keys[1:])
