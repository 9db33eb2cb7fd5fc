"""A planted bug shared by the certificate tests: every LMI ``T(G) >= 0`` sent to the solver
as ``T(G) = 0``, so its multipliers are free (not PSD); a certificate must refuse them."""


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
