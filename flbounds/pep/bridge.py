r"""One description of a FedAvg-family round for the simulation and the worst case.

A :class:`LocalRule` names a built-in local update, its :math:`\tau` local steps of size
:math:`\eta` and the server's global step :math:`\eta_g` (the participants' updates are
averaged over the participating set :math:`S`, :math:`x^+ = x + \eta_g |S|^{-1}\sum_S
(z_{\tau,i} - x)`):

- :func:`gradient_steps`: :math:`z \leftarrow z - \eta \nabla f_i(z)` (FedAvg);
- :func:`proximal_steps`: :math:`z \leftarrow z - \eta(\nabla f_i(z) + \lambda(z - x))`,
  gradient steps on FedProx's proximal objective;
- :func:`control_variates`: :math:`z \leftarrow z - \eta(\nabla f_i(z) - c_i + c)`, then
  :math:`c_i^+ = c_i - c + (x - z_\tau)/(\tau\eta)` and :math:`c^+ = c + N^{-1}\sum_S
  (c_i^+ - c_i)` (SCAFFOLD, option II).

From one rule, :func:`simulate` runs the algorithm on a problem and a participation plan
(``flbounds.algorithms.fedavg_family`` with :func:`local_update`'s step; SCAFFOLD's controls
are its client and server states), and :func:`pep_round` gives the
:class:`~flbounds.pep.describe.Round` that :func:`flbounds.pep.worst_case` solves and
:mod:`flbounds.pep.replay` runs on arrays. Both are built from the rule's fields only, so an
algorithm written as a rule is written once.
"""

from __future__ import annotations

from dataclasses import dataclass

from flbounds.algorithms import custom, local_updates
from flbounds.validation import check_int, check_positive

from .describe import Round
from .described import fedavg_round, scaffold_round
from .steps import local_gd, server_model_step

KINDS = ("gradient", "proximal", "control variate")


@dataclass(frozen=True)
class LocalRule:
    r"""A built-in local update with its steps (module docstring); made by
    :func:`gradient_steps`, :func:`proximal_steps` or :func:`control_variates`.

    Attributes
    ----------
    kind : {"gradient", "proximal", "control variate"}
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`.
    prox : float
        :math:`\lambda > 0` for ``"proximal"``, 0 otherwise.
    global_step : float
        :math:`\eta_g > 0`.
    """

    kind: str
    local_steps: int
    step: float
    prox: float = 0.0
    global_step: float = 1.0

    def __post_init__(self):
        if self.kind not in KINDS:
            raise ValueError(f"kind must be one of {KINDS}, got {self.kind!r}")
        object.__setattr__(self, "local_steps", check_int(self.local_steps, "local_steps",
                                                          minimum=1))
        object.__setattr__(self, "step", check_positive(self.step, "step"))
        object.__setattr__(self, "global_step", check_positive(self.global_step,
                                                               "global_step"))
        if self.kind == "proximal":
            object.__setattr__(self, "prox", check_positive(self.prox, "prox"))
        elif self.prox != 0.0:
            raise ValueError(f"prox must be 0 for kind {self.kind!r}, got {self.prox!r}")


def gradient_steps(local_steps, step, *, global_step=1.0) -> LocalRule:
    r"""FedAvg's local update, :math:`\tau` steps :math:`z \leftarrow z - \eta\nabla f_i(z)`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`.
    global_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    LocalRule
    """
    return LocalRule("gradient", local_steps, step, global_step=global_step)


def proximal_steps(local_steps, step, prox, *, global_step=1.0) -> LocalRule:
    r"""FedProx's local update, :math:`\tau` gradient steps on
    :math:`f_i(z) + \frac\lambda2\lVert z - x\rVert^2`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`.
    prox : float
        :math:`\lambda > 0` (:math:`\lambda = 0` is :func:`gradient_steps`).
    global_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    LocalRule

    References
    ----------
    T. Li et al., Federated optimization in heterogeneous networks (FedProx), MLSys 2020.
    """
    return LocalRule("proximal", local_steps, step, prox, global_step)


def control_variates(local_steps, step, *, global_step=1.0) -> LocalRule:
    r"""SCAFFOLD's corrected local steps and control updates (option II).

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        :math:`\eta > 0`.
    global_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    LocalRule

    References
    ----------
    S. P. Karimireddy et al., SCAFFOLD: stochastic controlled averaging for federated
    learning, ICML 2020.
    """
    return LocalRule("control variate", local_steps, step, global_step=global_step)


def _check(rule):
    if not isinstance(rule, LocalRule):
        raise ValueError(f"rule must be a LocalRule (gradient_steps, proximal_steps, "
                         f"control_variates), got {rule!r}")
    return rule


def local_update(rule, dim=None) -> custom.LocalUpdate:
    """The simulation's local step of ``rule`` (for ``flbounds.algorithms.fedavg_family``).

    Parameters
    ----------
    rule : LocalRule
    dim : int, optional
        The problem's dimension d: needed by a ``"control variate"`` rule (the controls'
        length).

    Returns
    -------
    flbounds.algorithms.LocalUpdate

    Raises
    ------
    ValueError
        For a ``"control variate"`` rule without ``dim``.
    """
    rule = _check(rule)
    if rule.kind == "gradient":
        return local_updates.local_gd()
    if rule.kind == "proximal":
        return local_updates.local_prox(rule.prox)
    if dim is None:
        raise ValueError("dim: a control-variate rule needs the problem's dimension (the "
                         "controls' length)")
    return local_updates.local_scaffold(dim)


def pep_round(rule, n_clients) -> Round:
    """The worst-case engine's round of ``rule``.

    Parameters
    ----------
    rule : LocalRule
    n_clients : int
        N (SCAFFOLD aggregates the control updates with weight :math:`1/N`).

    Returns
    -------
    Round
        :func:`~flbounds.pep.described.fedavg_round` (``prox`` in its gradient steps) or
        :func:`~flbounds.pep.described.scaffold_round`, averaging over S.
    """
    rule = _check(rule)
    n_clients = check_int(n_clients, "n_clients", minimum=1)
    if rule.kind == "control variate":
        return scaffold_round(rule.local_steps, rule.step, n_clients,
                              global_step=rule.global_step)
    if rule.kind == "gradient":
        return fedavg_round(rule.local_steps, rule.step, global_step=rule.global_step)
    return Round("FedProx", local_gd(rule.local_steps, rule.step, prox=rule.prox),
                 {"delta": "uniform"}, server_model_step(rule.global_step))


def simulate(rule, problem, plan, *, x0=None):
    """Run ``rule`` on ``problem`` with the participation masks of ``plan``.

    Parameters
    ----------
    rule : LocalRule
    problem : flbounds.problems problem
    plan : array_like of bool, shape (n_rounds, n_clients)
    x0 : array_like, shape (d,), optional
        Start (default 0; SCAFFOLD's controls start at 0).

    Returns
    -------
    flbounds.algorithms.CustomTrace
        ``x`` (n_rounds + 1, d) and the algorithm's state (SCAFFOLD: ``state`` the client
        controls :math:`c_i`, ``server`` the control :math:`c`).
    """
    rule = _check(rule)
    return custom.fedavg_family(problem, plan, local_update(rule, problem.dim),
                                step=rule.step, local_steps=rule.local_steps, x0=x0,
                                server_step=rule.global_step)


__all__ = ["KINDS", "LocalRule", "control_variates", "gradient_steps", "local_update",
           "pep_round", "proximal_steps", "simulate"]
