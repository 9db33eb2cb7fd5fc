r"""Facility location with a valid offset, and the SubTrunc and UnionFL objectives built on it.

DivFL's objective (eq. (10) of SubTrunc) is :math:`G(S) = \bar G(\emptyset) - \bar G(S)` with
:math:`\bar G(S) = \sum_i \min_{j \in S} d_{ij}`; :math:`\bar G(\emptyset)` is undefined as
printed. The default offset is a phantom client at distance :math:`C_i = \max_j d_{ij}` from
row :math:`i`:

.. math:: G(S) = \sum_i \bigl(C_i - \min(C_i, \min_{j \in S} d_{ij})\bigr), \qquad G(\emptyset) = 0,

which is facility location with nonnegative similarities :math:`C_i - d_{ij}`: normalized,
monotone and submodular. A scalar ``offset`` C instead gives
:math:`G(S) = C - \bar G(S)` for nonempty S (DivFL's code uses ``2 max_j sum_i d_ij``); it is
monotone submodular only for C large enough, which the claims test.
"""

from __future__ import annotations

import functools

import numpy as np

from flbounds.kernels.submodular_gains import fl_gains, fl_update, fl_values, weight_sums
from flbounds.validation import as_float_array, as_index_array, check_nonnegative, check_positive

from .base import SetFunction, check_dissim

PHI = {"log1p": np.log1p, "identity": lambda x: np.asarray(x, dtype=float), "sqrt": np.sqrt}


class FLState:
    """Incremental state: chosen set, per-row coverage ``cur`` and the value so far."""

    __slots__ = ("selected", "cur", "value", "modular")

    def __init__(self, cur: np.ndarray):
        self.selected: list[int] = []
        self.cur = cur
        self.value = 0.0
        self.modular = 0.0  # running sum of a modular side term (SubTrunc's F, UnionFL's g)


class FacilityLocation(SetFunction):
    r"""Facility location on a dissimilarity matrix (rows: clients, columns: representatives).

    Parameters
    ----------
    dissim : (n, n) array
        Nonnegative, finite distances :math:`d_{ij}`.
    offset : "phantom" or float
        ``"phantom"`` (default): per-row offsets :math:`C_i = \max_j d_{ij}`. A float C: the
        scalar offset :math:`G(S) = C - \sum_i \min_{j\in S} d_{ij}` on nonempty S.
    """

    def __init__(self, dissim, offset="phantom"):
        self.dissim = check_dissim(dissim)
        self.n = self.dissim.shape[0]
        self.dissim_t = np.ascontiguousarray(self.dissim.T)  # kernels read rows of d^T
        self.row_offsets = np.ascontiguousarray(self.dissim.max(axis=1))
        if isinstance(offset, str):
            if offset != "phantom":
                raise ValueError(f"offset must be 'phantom' or a float, got {offset!r}")
            self.shift = 0.0
        else:
            total = check_nonnegative(offset, "offset")
            # G_C(S) = G_phantom(S) + (C - sum_i C_i) on nonempty S (C_i >= d_ij).
            self.shift = total - float(self.row_offsets.sum())
        self.offset = offset

    # --- plain evaluation ---------------------------------------------------------------
    def _value(self, idx):
        if idx.size == 0:
            return 0.0
        covered = np.minimum(self.row_offsets, self.dissim[:, idx].min(axis=1))
        return float(np.sum(self.row_offsets - covered)) + self.shift

    def values(self, index_sets, sizes):
        index_sets = np.ascontiguousarray(index_sets, dtype=np.int64)
        sizes = np.ascontiguousarray(sizes, dtype=np.int64)
        out = np.empty(index_sets.shape[0])
        fl_values(self.dissim_t, self.row_offsets, index_sets, sizes, out)
        return out + self.shift * (sizes > 0)

    # --- incremental interface ----------------------------------------------------------
    def start(self):
        return FLState(self.row_offsets.copy())

    def _g_gains(self, state, candidates):
        cand = np.ascontiguousarray(candidates, dtype=np.int64)
        out = np.empty(cand.size)
        fl_gains(self.dissim_t, state.cur, cand, out)
        if not state.selected:
            out += self.shift
        return out

    def _g_push(self, state, e):
        gain = self._g_gains(state, [e])[0]
        fl_update(self.dissim_t, state.cur, int(e))
        state.selected.append(int(e))
        return gain

    def gains(self, state, candidates):
        return self._g_gains(state, candidates)

    def push(self, state, e):
        state.value += self._g_push(state, e)


def phi_values(losses, phi) -> np.ndarray:
    r""":math:`\phi(f_i)` for ``phi`` in {"log1p", "identity", "sqrt"} or a callable.

    Parameters
    ----------
    losses : array_like, shape (n,)
        The clients' losses :math:`f_i`.
    phi : {"log1p", "identity", "sqrt"} or callable
        :math:`\phi`.

    Returns
    -------
    numpy.ndarray, shape (n,)
    """
    func = PHI.get(phi) if isinstance(phi, str) else phi
    if func is None:
        raise ValueError(f"phi must be one of {sorted(PHI)} or a callable, got {phi!r}")
    return np.asarray(func(losses), dtype=float)


class SubTruncObjective(FacilityLocation):
    r"""SubTrunc's :math:`W(S) = G(S) + \lambda \min(b, \sum_{i \in S} \phi(f_i))`, eq. (13).

    Build it with :func:`subtrunc`, which requires the weights to be nonnegative
    (Proposition 3 needs it).

    Parameters
    ----------
    dissim : (n, n) array
        Nonnegative, finite dissimilarities.
    weights : (n,) array
        The values :math:`\phi(f_i)`.
    lam : float
        :math:`\lambda \ge 0`.
    b : float
        The truncation level, positive.
    offset : "phantom" or float
        As in :class:`FacilityLocation`.

    References
    ----------
    .. [1] A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi. Submodular Maximization
       Approaches for Equitable Client Selection in Federated Learning. arXiv:2408.13683
       (2024), eq. (13).
    """

    def __init__(self, dissim, weights, *, lam, b, offset="phantom"):
        super().__init__(dissim, offset)
        self.weights = as_float_array(weights, "phi(losses)", shape=(self.n,))
        self.lam = check_nonnegative(lam, "lam")
        self.b = check_positive(b, "b")

    def _value(self, idx):
        trunc = min(self.b, float(self.weights[idx].sum())) if idx.size else 0.0
        return super()._value(idx) + self.lam * trunc

    def values(self, index_sets, sizes):
        # the weights of each set's first sizes[m] entries, summed over the padded row in
        # NumPy's order (the numbers of np.where(valid, weights[sets], 0).sum(axis=1))
        index_sets = np.ascontiguousarray(index_sets, dtype=np.int64)
        sizes = np.ascontiguousarray(sizes, dtype=np.int64)
        if index_sets.shape[1] <= 128:
            total = np.empty(index_sets.shape[0])
            weight_sums(np.ascontiguousarray(self.weights), index_sets, sizes, total)
        else:
            valid = np.arange(index_sets.shape[1])[None, :] < sizes[:, None]
            total = np.where(valid, self.weights[index_sets], 0.0).sum(axis=1)
        trunc = np.where(sizes > 0, np.minimum(self.b, total), 0.0)
        return super().values(index_sets, sizes) + self.lam * trunc

    def _h_gains(self, state, candidates):
        cand = np.asarray(candidates, dtype=np.int64)
        before = min(self.b, state.modular) if state.selected else 0.0
        after = np.minimum(self.b, state.modular + self.weights[cand])
        return self.lam * (after - before)

    def gains(self, state, candidates):
        return self._g_gains(state, candidates) + self._h_gains(state, candidates)

    def push(self, state, e):
        h_gain = self._h_gains(state, [e])[0]
        state.value += self._g_push(state, e) + h_gain
        state.modular += self.weights[int(e)]


class UnionFLObjective(FacilityLocation):
    r"""UnionFL's :math:`h_t(S) = G(S) - \mu |U_t \cap S|`, eq. (14) with :math:`f_t = G`.

    ``recent`` is :math:`U_t` (clients selected inside the look-back window): a boolean mask
    of shape (n,) or client indices. :attr:`cost` is the modular penalty per element, used by
    distorted greedy. Build it with :func:`unionfl`.

    Parameters
    ----------
    dissim : (n, n) array
        Nonnegative, finite dissimilarities.
    recent : (n,) bool array or iterable of indices
        :math:`U_t`.
    mu : float
        :math:`\mu \ge 0`.
    offset : "phantom" or float
        As in :class:`FacilityLocation`.

    References
    ----------
    .. [1] A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi. Submodular Maximization
       Approaches for Equitable Client Selection in Federated Learning. arXiv:2408.13683
       (2024), eq. (14).
    """

    def __init__(self, dissim, recent, *, mu, offset="phantom"):
        super().__init__(dissim, offset)
        self.recent = _recent_mask(recent, self.n)
        self.mu = check_nonnegative(mu, "mu")
        self.cost = self.mu * self.recent.astype(float)

    @functools.cached_property
    def submodular_part(self) -> FacilityLocation:
        """g = G, the monotone submodular part of :math:`h = g - c` (distorted greedy's)."""
        return FacilityLocation(self.dissim, self.offset)

    def _value(self, idx):
        return super()._value(idx) - float(self.cost[idx].sum())

    def values(self, index_sets, sizes):
        valid = np.arange(index_sets.shape[1])[None, :] < np.asarray(sizes)[:, None]
        penalty = np.where(valid, self.cost[index_sets], 0.0).sum(axis=1)
        return super().values(index_sets, sizes) - penalty

    def gains(self, state, candidates):
        cand = np.asarray(candidates, dtype=np.int64)
        return self._g_gains(state, cand) - self.cost[cand]

    def push(self, state, e):
        state.value += self._g_push(state, e) - self.cost[int(e)]
        state.modular += self.cost[int(e)]


def _recent_mask(recent, n: int) -> np.ndarray:
    """A boolean mask of shape (n,) from a mask or from client indices (repeats allowed)."""
    arr = np.asarray(recent)
    if arr.dtype == bool:
        if arr.shape != (n,):
            raise ValueError(f"recent must be a boolean mask of shape ({n},), got {arr.shape}")
        return arr
    mask = np.zeros(n, dtype=bool)
    mask[as_index_array(arr.ravel(), "recent", n)] = True
    return mask


# --- the public constructors (the architecture's names) -------------------------------------
def facility_location(dissim) -> FacilityLocation:
    """DivFL's G with the phantom-client offset :math:`C_i = \\max_j d_{ij}` (spec 004 s.1.3).

    Parameters
    ----------
    dissim : (n, n) array
        Square, finite, nonnegative dissimilarities (e.g. gradient distances).

    Returns
    -------
    FacilityLocation
        :math:`G(S) = \\sum_i (C_i - \\min_{j \\in S} d_{ij})`, :math:`G(\\emptyset) = 0`.
    """
    return FacilityLocation(dissim)


def subtrunc(dissim, losses, *, lam, b, phi="log1p") -> SubTruncObjective:
    r"""SubTrunc's objective :math:`W(S) = G(S) + \lambda\min(b, \sum_{i\in S}\phi(f_i))`.

    Parameters
    ----------
    dissim : (n, n) array
    losses : (n,) array
        Client losses :math:`f_i(w) \ge 0` (Assumption 2).
    lam : float, ``>= 0``
    b : float, ``> 0``
        Truncation level.
    phi : "log1p", "identity", "sqrt" or callable
        Must map the losses to finite nonnegative values (Prop 3's monotone submodularity
        needs :math:`\phi(f_i) \ge 0`; :class:`SubTruncObjective` itself accepts any sign).

    Returns
    -------
    SubTruncObjective

    References
    ----------
    .. [1] A. C. Castillo J., E. C. Kaya, L. Ye, A. Hashemi. Submodular Maximization
       Approaches for Equitable Client Selection in Federated Learning. arXiv:2408.13683
       (2024), eq. (13), Proposition 3.
    """
    d = check_dissim(dissim)
    f = as_float_array(losses, "losses", shape=(d.shape[0],), nonnegative=True)
    weights = as_float_array(phi_values(f, phi), "phi(losses)", shape=f.shape, nonnegative=True)
    return SubTruncObjective(d, weights, lam=lam, b=b)


def unionfl(dissim, recent, *, mu) -> UnionFLObjective:
    r"""UnionFL's objective :math:`h_t(S) = G(S) - \mu |U_t \cap S|`, eq. (14).

    Parameters
    ----------
    dissim : (n, n) array
    recent : (n,) bool array or iterable of indices
        :math:`U_t`, the clients selected within the look-back window.
    mu : float, ``>= 0``

    Returns
    -------
    UnionFLObjective
    """
    return UnionFLObjective(dissim, recent, mu=mu)
