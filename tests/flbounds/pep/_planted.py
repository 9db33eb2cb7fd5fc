"""Helpers shared by the certificate tests: a planted bug (every LMI ``T(G) >= 0`` sent to
the solver as ``T(G) = 0``, so its multipliers are free, not PSD, and a certificate must
refuse them), a spy on the star certificate, and the bracket a certified bound must keep."""

from flbounds import pep
from flbounds.pep import certify
from flbounds.pep.certify import bracket_tolerance


def lmis_as_equalities(monkeypatch) -> None:
    """Make PEPit's cvxpy wrapper send each LMI as an equality, for this test only."""
    from PEPit.wrappers.cvxpy_wrapper import CvxpyWrapper

    def send(self, psd):
        import cvxpy as cp

        self._list_of_constraints_sent_to_solver.append(psd)
        m = cp.Variable(psd.shape, symmetric=True)
        self._list_of_solver_constraints += [m == 0] + [
            m[i, j] == self._expression_to_solver(psd[i, j])
            for i in range(psd.shape[0]) for j in range(psd.shape[1])]

    monkeypatch.setattr(CvxpyWrapper, "send_lmi_constraint_to_solver", send)


def spy_certified_star(monkeypatch) -> list:
    """The labels of the measures :func:`certify.certified_star` is called with, as it is."""
    calls = []
    real = certify.certified_star

    def spy(build, L, measure):
        calls.append(measure.label)
        return real(build, L, measure)

    monkeypatch.setattr(certify, "certified_star", spy)
    return calls


def assert_bracketed(bound, accurate) -> None:
    """``bound`` is a certified value at or above the accurate one, within its bracket."""
    assert accurate.status == "optimal"
    assert bound.status.startswith("certified"), bound.status
    assert bound.worst >= accurate.worst - pep.gap_tolerance(accurate.worst)
    assert bound.worst - accurate.worst <= bracket_tolerance(bound.worst)


def forced(monkeypatch) -> None:
    """Every solve reported inaccurate, for this test only: what a certificate must survive."""
    from flbounds.pep import sdp

    monkeypatch.setattr(sdp, "accurate", lambda *a: False)


def scaled_margin_lmi(problem, metric, growth, factor=0.9):
    """The margin certificate of a solved ``problem`` (:func:`.certify_lmi.
    margin_certificate_lmi`) from its multipliers, scalar and LMI, all scaled by ``factor``:
    the planted bug of multipliers that are not the solver's."""
    import numpy as np

    from flbounds.pep.certify_lmi import margin_certificate_lmi, solver_lmi_duals

    lam = np.array([float(c.eval_dual()) for c in problem._list_of_prepared_constraints])
    return margin_certificate_lmi(problem, metric, growth, factor * lam,
                                  [factor * z for z in solver_lmi_duals(problem)])
