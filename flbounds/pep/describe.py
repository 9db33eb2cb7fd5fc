r"""An FL round as a description: state, local update, push, aggregation, server step.

A round of a federated algorithm is written here as data, not as a hand-built SDP:

- **state**: the server's points (``server_state``, e.g. the model ``x``, a tracker ``y``, a
  control variate ``c``, a momentum ``m``) and each client's (``client_state``, e.g. its last
  model ``z``, a stored gradient ``g``, its control variate ``c``). At the start of the round
  every state point is free (any point) unless :attr:`Round.initial` derives it: a stored
  gradient :func:`gradient_at` a state point, a server point :func:`client_sum` /
  :func:`client_mean` of client points (an invariant of the algorithm).
- **pull**: the server points a participating client receives (:attr:`Round.pull`).
- **local update** (:class:`Local`): a function ``run(f, pulled, state) -> (new_state,
  messages)`` over points, for one client with function ``f`` (``f.gradient(z)``). Built-in:
  :func:`local_gd` (gradient steps, optionally on FedProx's proximal objective),
  :func:`local_tracking` (gradient tracking, FOCUS), :func:`local_control_variate`
  (SCAFFOLD), :func:`local_prox` (an exact proximal step); :func:`local_custom` wraps a
  user-written one.
- **push and aggregation**: :attr:`Round.push` maps each message to an aggregation rule; the
  server receives :math:`\sum_i w_i(S)\, m_i` with :math:`w_i(S) = 0` for :math:`i \notin S`:
  :class:`Uniform` (:math:`1/|S|`, the mean over S), :class:`Sum` (1), :class:`Unbiased`
  (:math:`p_i/\pi_i`, :math:`p_i = 1/N` by default: inverse-probability weighting),
  :class:`FixedWeights` (:math:`p_i` times a scale, e.g. Scheme II's :math:`N/K`),
  :class:`Normalized` (:math:`p_i / \sum_{j \in S} p_j`, sample-count weights). An empty
  round aggregates 0, so a server step of the form :math:`x^+ = x + \eta_g \Delta` keeps
  :math:`x`, as the simulated algorithms do.
- **server step** (:class:`Server`): ``update(state, aggregated) -> new server points``;
  built-in :func:`server_model_step` (global step :math:`\eta_g`), :func:`server_tracking`,
  :func:`server_control_variate`, :func:`server_momentum`.
- **participation**: any process of ``flbounds.participation`` (or an ``"isp"`` / ``"subset"``
  sampler of ``flbounds.sampling``), a fixed set, or None (everyone); the expectation over
  it is exact (:mod:`flbounds.pep.expect`).

Clients that do not participate keep their state. A :class:`Setting` says over what the
supremum runs (N clients, their function class, identical or not, a shared minimizer or
not), a :class:`Measure` what is measured (:func:`lyapunov`: :math:`E[V(X^+)] / V(X)` for a
quadratic :math:`V`; :func:`two_runs`: the contraction of two runs that share the clients and
the participation). :func:`flbounds.pep.engine.worst_case` turns the three into a PEPit
problem and solves it. Every function here works on PEPit points; the local updates and server
steps only use ``+``, ``-``, scaling and ``f.gradient``, so the same functions run on
arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from flbounds.validation import check_int, check_positive

from .aggregation import (  # noqa: F401  (the rules are part of the vocabulary)
    RULES,
    FixedWeights,
    Normalized,
    Sum,
    Unbiased,
    Uniform,
    aggregation,
)

# --------------------------------------------------------------------------- local updates


@dataclass(frozen=True)
class Local:
    """A client's round (module docstring).

    Attributes
    ----------
    run, label : callable, str
        ``run(f, pulled, state) -> (new_state, messages)`` (dicts of points; ``new_state``
        may omit a client variable that does not change); a name for reports.
    """

    run: Callable
    label: str


def local_gd(local_steps, step, *, prox=0.0) -> Local:
    r""":math:`\tau` gradient steps from the pulled model, :math:`z_{t+1} = z_t - \eta
    (\nabla f(z_t) + \lambda (z_t - x))` (:math:`\lambda` = ``prox``: FedProx's proximal
    term, 0 for FedAvg); pushes ``delta`` :math:`= z_\tau - x`."""
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")
    prox = float(prox)
    if not prox >= 0:
        raise ValueError(f"prox must be >= 0, got {prox}")

    def run(f, pulled, state):
        x = pulled["x"]
        z = x
        for _ in range(tau):
            g = f.gradient(z)
            z = z - step * (g + prox * (z - x)) if prox else z - step * g
        return {}, {"delta": z - x}

    return Local(run, f"{tau} gradient steps, step {step:g}" + (f", prox {prox:g}"
                                                                 if prox else ""))


def local_tracking(local_steps, step) -> Local:
    r"""Gradient tracking (FOCUS): from the pulled :math:`x`, :math:`h_t = \nabla f(z_t)`,
    :math:`z_{t+1} = z_t - \eta (h_t - g)` with the stored gradient :math:`g`, for
    :math:`t < \tau` (:math:`\tau - 1` moves); the client keeps ``z`` :math:`= z_{\tau-1}`
    and ``g`` :math:`= h_{\tau-1}` and pushes ``v`` :math:`= h_{\tau-1} - g^{old}`."""
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")

    def run(f, pulled, state):
        z, g_old, v = pulled["x"], state["g"], None
        for t in range(tau):
            if t > 0:
                z = z - step * v
            v = f.gradient(z) - g_old
        return {"z": z, "g": g_old + v}, {"v": v}

    return Local(run, f"tracking, {tau} gradients, step {step:g}")


def local_control_variate(local_steps, step) -> Local:
    r"""SCAFFOLD (option II): :math:`z_{t+1} = z_t - \eta (\nabla f(z_t) - c_i + c)` for
    :math:`\tau` steps from the pulled :math:`x`, then :math:`c_i^+ = c_i - c + (x -
    z_\tau)/(\tau\eta)`; pushes ``delta`` :math:`= z_\tau - x` and ``dc`` :math:`= c_i^+ -
    c_i`. The client's control is its state point ``ci``, the server's ``c`` is pulled."""
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")

    def run(f, pulled, state):
        x, c, ci = pulled["x"], pulled["c"], state["ci"]
        z = x
        for _ in range(tau):
            z = z - step * (f.gradient(z) - ci + c)
        c_new = ci - c + (1.0 / (tau * step)) * (x - z)
        return {"ci": c_new}, {"delta": z - x, "dc": c_new - ci}

    return Local(run, f"control variates, {tau} steps, step {step:g}")


def local_prox(step) -> Local:
    r"""One exact proximal step :math:`z = \operatorname{prox}_{\gamma f}(x) = x - \gamma
    \nabla f(z)` from the pulled model; pushes ``delta`` :math:`= z - x`."""
    gamma = check_positive(step, "step")

    def run(f, pulled, state):
        from PEPit.primitive_steps import proximal_step

        x = pulled["x"]
        z, _, _ = proximal_step(x, f, gamma)
        return {}, {"delta": z - x}

    return Local(run, f"proximal step, gamma {gamma:g}")


def local_custom(run, label="custom local update") -> Local:
    """A user-written local update ``run(f, pulled, state) -> (new_state, messages)``."""
    if not callable(run):
        raise ValueError("run must be callable: run(f, pulled, state) -> (new_state, messages)")
    return Local(run, str(label))


# --------------------------------------------------------------------------- server steps


@dataclass(frozen=True)
class Server:
    """The server's step (module docstring).

    Attributes
    ----------
    update, label : callable, str
        ``update(state, aggregated) -> new server points`` (a dict; server variables left
        out keep their value); a name for reports.
    """

    update: Callable
    label: str


def server_model_step(global_step=1.0, message="delta") -> Server:
    r""":math:`x^+ = x + \eta_g \Delta` with :math:`\Delta` the aggregated ``message``."""
    eta = check_positive(global_step, "global_step")
    return Server(lambda state, agg: {"x": state["x"] + eta * agg[message]},
                  f"x += {eta:g} * aggregated {message}")


def server_tracking(step) -> Server:
    r"""FOCUS: :math:`y^+ = y + \sum_{i \in S} v_i`, :math:`x^+ = x - \eta y^+` (push ``v``
    aggregated by :class:`Sum`)."""
    step = check_positive(step, "step")

    def update(state, agg):
        y = state["y"] + agg["v"]
        return {"y": y, "x": state["x"] - step * y}

    return Server(update, f"y += sum v, x -= {step:g} y")


def server_control_variate(global_step=1.0) -> Server:
    r"""SCAFFOLD: :math:`x^+ = x + \eta_g \Delta`, :math:`c^+ = c + \Delta c` (push ``dc``
    aggregated by :math:`1/N` over S: ``FixedWeights`` of :math:`1/N`)."""
    eta = check_positive(global_step, "global_step")
    return Server(lambda state, agg: {"x": state["x"] + eta * agg["delta"],
                                      "c": state["c"] + agg["dc"]},
                  f"x += {eta:g} * aggregated delta, c += aggregated dc")


def server_momentum(beta, global_step=1.0) -> Server:
    r"""Server momentum (FedAvgM): :math:`m^+ = \beta m + \Delta`, :math:`x^+ = x + \eta_g
    m^+`."""
    beta = float(beta)
    if not 0 <= beta < 1:
        raise ValueError(f"beta must be in [0, 1), got {beta}")
    eta = check_positive(global_step, "global_step")

    def update(state, agg):
        m = beta * state["m"] + agg["delta"]
        return {"m": m, "x": state["x"] + eta * m}

    return Server(update, f"m = {beta:g} m + delta, x += {eta:g} m")


# --------------------------------------------------------------------------- initial state


@dataclass(frozen=True)
class Derived:
    """How a state point is formed at the start of the round (see :func:`gradient_at`,
    :func:`client_sum`, :func:`client_mean`)."""

    kind: str
    of: str
    scale: float = 1.0


def gradient_at(name) -> Derived:
    """A client point: the client's gradient at its state point ``name`` (a stored
    gradient)."""
    return Derived("gradient", str(name))


def client_sum(name) -> Derived:
    """A server point: the sum of the clients' points ``name`` (FOCUS: :math:`y = \\sum_i
    g_i`)."""
    return Derived("sum", str(name))


def client_mean(name) -> Derived:
    """A server point: the mean of the clients' points ``name`` (SCAFFOLD: :math:`c =
    \\sum_i c_i / N`)."""
    return Derived("mean", str(name))


@dataclass(frozen=True)
class Round:
    """One round of an FL algorithm (module docstring).

    Attributes
    ----------
    name : str
    local : Local
    push : mapping
        Message name -> aggregation rule (name or rule object).
    server : Server
    server_state, client_state : tuple of str
        The state's points; ``"x"`` (the model) must be a server point.
    pull : tuple of str
        Server points the participants receive.
    initial : mapping
        State point name -> :class:`Derived` (omitted: free).
    """

    name: str
    local: Local
    push: Mapping
    server: Server
    server_state: tuple = ("x",)
    client_state: tuple = ()
    pull: tuple = ("x",)
    initial: Mapping = field(default_factory=dict)

    def __post_init__(self):
        object.__setattr__(self, "push", {str(k): aggregation(v) for k, v in self.push.items()})
        if "x" not in self.server_state:
            raise ValueError("server_state must hold the model 'x'")
        for name in self.pull:
            if name not in self.server_state:
                raise ValueError(f"pull: {name!r} is not a server state point")
        both = set(self.server_state) & set(self.client_state)
        if both:
            raise ValueError(f"server_state and client_state share names {sorted(both)}")
        for name, how in self.initial.items():
            if not isinstance(how, Derived):
                raise ValueError(f"initial[{name!r}] must be gradient_at/client_sum/client_mean")
            own = self.client_state if how.kind == "gradient" else self.server_state
            if name not in own or how.of not in self.client_state:
                raise ValueError(f"initial[{name!r}]: {how.kind} of {how.of!r} does not match "
                                 "the state's points")


# --------------------------------------------------------------------------- setting, measure

CLASSES = ("smooth-strongly-convex", "quadratic")


@dataclass(frozen=True)
class Setting:
    """What the supremum runs over.

    Attributes
    ----------
    n_clients, mu, L : int, float, float
        N >= 1 clients, each ``L``-smooth and ``mu``-strongly convex, 0 <= mu <= L.
    function_class : {"smooth-strongly-convex", "quadratic"}
        The clients' class (quadratics: of the same constants).
    identical, common_minimizer : bool, default False
        All clients one function; all stationary at one :math:`x^\\star` (else
        :math:`x^\\star` is the minimizer of their mean).
    """

    n_clients: int
    mu: float
    L: float
    function_class: str = "smooth-strongly-convex"
    identical: bool = False
    common_minimizer: bool = False

    def __post_init__(self):
        from .gd import check_class

        object.__setattr__(self, "n_clients", check_int(self.n_clients, "n_clients", minimum=1))
        mu, L = check_class(self.mu, self.L)
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "L", L)
        if self.function_class not in CLASSES:
            raise ValueError(f"function_class must be one of {CLASSES}, got "
                             f"{self.function_class!r}")


@dataclass(frozen=True)
class Measure:
    r"""What is measured: the worst case is :math:`\sup E[V(X^+)]` over :math:`V(X) \le 1`
    (``runs = 1``) or, with ``runs = 2``, :math:`\sup E[V(X^+ - \tilde X^+)]` for two runs with
    the same clients and participation, :math:`V(X - \tilde X) \le 1` (``star`` then None).

    Attributes
    ----------
    value, label : callable, str
        :math:`V` = ``value(state, star)``, a quadratic function of the state's points (a PEPit
        expression; ``star`` has ``x`` and the clients' ``gradients`` at :math:`x^\star`).
    runs : {1, 2}, default 1
    bounds : callable, optional
        ``bounds(state) -> {free start point: bound on its norm}`` implied by :math:`V \le 1`
        when every client is stationary at :math:`x^\star = 0`: what a certified solve
        (:mod:`flbounds.pep.certify`, ``worst_case(..., certified=True)``) needs.
    """

    value: Callable
    label: str
    runs: int = 1
    bounds: Callable | None = None


def lyapunov(value, label, bounds=None) -> Measure:
    r""":math:`E[V(X^+)] / V(X)` for the caller's quadratic :math:`V` = ``value(state, star)``
    (``bounds``: see :class:`Measure`)."""
    if not callable(value):
        raise ValueError("value must be callable: value(state, star) -> expression")
    if bounds is not None and not callable(bounds):
        raise ValueError("bounds must be callable: bounds(state) -> {point: norm bound}")
    return Measure(value, str(label), bounds=bounds)


def distance() -> Measure:
    r""":math:`E\|x^+ - x^\star\|^2 / \|x - x^\star\|^2` (:math:`\|x\| \le 1` at
    :math:`x^\star = 0`).

    Returns
    -------
    Measure
    """
    return Measure(lambda state, star: (state["x"] - star.x) ** 2,
                   "E||x+ - x*||^2 / ||x - x*||^2", bounds=lambda state: {state["x"]: 1.0})


def two_runs(value=None, label=None) -> Measure:
    r"""Contraction of two runs (same clients, same participation): default
    :math:`E\|x^+ - \tilde x^+\|^2 / \|x - \tilde x\|^2`."""
    if value is None:
        return Measure(lambda diff, star: diff["x"] ** 2,
                       "E||x+ - x~+||^2 / ||x - x~||^2 (two runs, same clients and "
                       "participation)", runs=2)
    return Measure(value, str(label or "two runs"), runs=2)


__all__ = ["CLASSES", "RULES", "Derived", "FixedWeights", "Local", "Measure", "Normalized",
           "Round", "Server", "Setting", "Sum", "Unbiased", "Uniform", "aggregation",
           "client_mean", "client_sum", "distance", "gradient_at", "local_control_variate",
           "local_custom", "local_gd", "local_prox", "local_tracking", "lyapunov",
           "server_control_variate", "server_model_step", "server_momentum",
           "server_tracking", "two_runs"]
