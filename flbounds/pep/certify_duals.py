r"""The solver's multipliers of a PEP's extra LMIs (PEPit's quadratic class) and the dual
residual they leave (:func:`.sdp.dual_residual`), apart from the certificates that use them
(:mod:`.certify_lmi`) so that :mod:`.sdp` reads them without importing a certificate.

cvxpy receives each LMI :math:`T \succeq 0` as a symmetric variable :math:`S \succeq 0` with
the equalities :math:`S_{ij} = T_{ij}`; their multipliers :math:`\mu_{ij}` weigh :math:`T` in
the Lagrangian (:func:`solver_lmi_duals`). PEPit's ``eval_dual`` keeps only their symmetric
part, and its proof reconstruction then does not close (1.3 left over on an exact FOCUS
instance whose dual and primal agree to 3e-9): the antisymmetric part pays for the symmetry
equalities. With the entry-wise multipliers the proof closes to the solver's accuracy, so
:func:`lmi_residual` is the same test as for the problems without LMIs.
"""

from __future__ import annotations

import numpy as np


def solver_lmi_duals(problem):
    r"""The solver's multipliers of the LMIs' entries, one matrix per LMI sent.

    cvxpy receives :math:`T \succeq 0` as a symmetric variable :math:`S \succeq 0` and the
    equalities :math:`S_{ij} = T_{ij}`; the multipliers :math:`\mu_{ij}` of those equalities
    weigh :math:`T` in the Lagrangian. Their antisymmetric part multiplies :math:`T_{ij} -
    T_{ji}`, which vanishes on the feasible set (:math:`T = S` is symmetric there), so any
    antisymmetric part is allowed; PEPit's ``eval_dual`` keeps only the symmetric part
    :math:`Z = \operatorname{sym}(\mu)` (the dual of :math:`S \succeq 0`), whose proof does
    not close (0.28 left over on a FedAvg round whose solve is accurate to 3e-10). Without
    cvxpy's constraints (another wrapper), :math:`Z`.
    """
    from PEPit import PSDMatrix

    wrapper = problem.wrapper
    sent = getattr(wrapper, "_list_of_constraints_sent_to_solver", None)
    prob = getattr(wrapper, "prob", None)
    if sent is None or prob is None or not hasattr(prob, "constraints"):
        return [p.eval_dual() for p in problem._list_of_psd_sent_to_wrapper]
    cons, k, out = prob.constraints, 1, []         # cons[0]: the Gram matrix's own G >> 0
    for c in sent:
        if isinstance(c, PSDMatrix):
            n, m = c.shape
            mu = [cons[k + 1 + t].dual_value for t in range(n * m)]
            out.append(c.eval_dual() if any(v is None for v in mu) else
                       np.array([float(v) for v in mu]).reshape(n, m))
            k += 1 + n * m
        else:
            k += 1
    return out


class _Gram:
    """Leftover coefficients of an affine expression of the leaves: ``M`` on the Gram matrix
    (symmetric), ``d`` on the leaf values (constants dropped)."""

    def __init__(self, n, index):
        self.M, self.d, self.index = np.zeros((n, n)), {}, index

    def add(self, terms, weight):
        for key, coef in terms.items():
            c = weight * float(coef)
            if isinstance(key, tuple):
                a, b = self.index[id(key[0])], self.index[id(key[1])]
                self.M[a, b] += 0.5 * c
                self.M[b, a] += 0.5 * c
            elif not isinstance(key, int | float):
                self.d[id(key)] = self.d.get(id(key), 0.0) + c


def lmi_residual(problem, lmi_duals=None) -> float:
    r""":func:`.sdp.dual_residual` of a solved problem with extra LMIs (module docstring).

    PEPit's proof reconstruction with the LMI terms: :math:`o - \sum_i \lambda_i e_i +
    \langle S, G\rangle + \sum_f \langle Z_f, T_f(G)\rangle` must be constant in
    :math:`(G, F)`, with :math:`Z_f` the solver's multipliers of the LMIs' entries
    (:func:`solver_lmi_duals`, antisymmetric part included: the symmetric part alone leaves
    the symmetry equalities' share unpaid). Returned, at the solver's primal point: the
    leftover coefficients times the Gram entries and values they multiply, the negative
    eigenvalue of :math:`S` times :math:`\operatorname{tr} G`, the negative inequality
    multipliers times their constraints, and the negative eigenvalue of each
    :math:`\operatorname{sym}(Z_f)` times :math:`\operatorname{tr} T_f(G)` (the proof uses
    :math:`\langle Z_f, T_f\rangle \ge 0`, off by at most that when :math:`T_f \succeq 0`).

    Parameters
    ----------
    problem : PEPit.PEP
        Solved (values and multipliers set).
    lmi_duals : sequence of array_like, optional
        One matrix per LMI sent (default: the solver's).

    Returns
    -------
    float
    """
    from PEPit import Expression, Point

    leaves = Point.list_of_leaf_points
    acc = _Gram(len(leaves), {id(p): k for k, p in enumerate(leaves)})
    acc.add(problem.objective.decomposition_dict, 1.0)
    negative = 0.0
    for c in problem._list_of_prepared_constraints:
        lam = float(c.eval_dual())
        acc.add(c.expression.decomposition_dict, -lam)
        if c.equality_or_inequality == "inequality" and lam < 0:
            negative += -lam * abs(float(c.eval()))
    slack = np.asarray(problem.residual, dtype=float)
    acc.M += 0.5 * (slack + slack.T)
    duals = solver_lmi_duals(problem) if lmi_duals is None else list(lmi_duals)
    for psd, z in zip(problem._list_of_psd_sent_to_wrapper, duals, strict=True):
        z = np.asarray(z, dtype=float)
        entries = psd.matrix_of_expressions
        for (i, j), w in np.ndenumerate(z):
            if w != 0.0 and hasattr(entries[i, j], "decomposition_dict"):
                acc.add(entries[i, j].decomposition_dict, float(w))
        low = float(np.linalg.eigvalsh(0.5 * (z + z.T))[0]) if z.size else 0.0
        at = np.array([[float(e.eval()) if hasattr(e, "eval") else float(e) for e in row]
                       for row in entries])
        negative += max(0.0, -low) * abs(float(np.trace(at)))
    points = np.array([p.eval() for p in leaves]).reshape(len(leaves), -1)
    gram = points @ points.T
    leftover = float(np.sum(np.abs(acc.M) * np.abs(gram)))
    values = {id(e): e for e in Expression.list_of_leaf_expressions}
    leftover += sum(abs(c) * abs(float(values[k].eval())) for k, c in acc.d.items())
    low = float(np.linalg.eigvalsh(slack)[0]) if slack.size else 0.0
    return leftover + max(0.0, -low) * float(np.trace(problem.G_value)) + negative


__all__ = ["lmi_residual", "solver_lmi_duals"]
