r"""An FL round as a description: state, local update, push, aggregation, server step.

A round of a federated algorithm is written here as data, not as a hand-built SDP:

- **state**: the server's points (``server_state``, e.g. the model ``x``, a tracker ``y``, a
  control variate ``c``, a momentum ``m``) and each client's (``client_state``, e.g. its last
  model ``z``, a stored gradient ``g``, its control variate ``ci``). At the start of the round
  every state point is free (any point) unless :attr:`Round.initial` derives it: a stored
  gradient :func:`gradient_at` a state point, a server point :func:`client_sum` /
  :func:`client_mean` of client points (an invariant of the algorithm).
- **pull**: the server points a participating client receives (:attr:`Round.pull`).
- **local update** (:class:`Local`): a function ``run(f, pulled, state) -> (new_state,
  messages)`` over points, for one client with function ``f`` (``f.gradient(z)``). Built-in,
  in :mod:`flbounds.pep.steps` (like the server steps): ``local_gd`` (gradient steps,
  optionally on FedProx's proximal objective), ``local_tracking`` (gradient tracking, FOCUS),
  ``local_control_variate`` (SCAFFOLD), ``local_prox`` (an exact proximal step);
  ``local_custom`` wraps a user-written one.
- **push and aggregation**: :attr:`Round.push` maps each message to an aggregation rule; the
  server receives :math:`\sum_i w_i(S)\, m_i` with :math:`w_i(S) = 0` for :math:`i \notin S`:
  :class:`Uniform` (:math:`1/|S|`, the mean over S), :class:`Sum` (1), :class:`Unbiased`
  (:math:`p_i/\pi_i`, :math:`p_i = 1/N` by default: inverse-probability weighting),
  :class:`FixedWeights` (:math:`p_i` times a scale, e.g. Scheme II's :math:`N/K`),
  :class:`Normalized` (:math:`p_i / \sum_{j \in S} p_j`, sample-count weights). An empty
  round aggregates 0, so a server step of the form :math:`x^+ = x + \eta_g \Delta` keeps
  :math:`x`, as the simulated algorithms do.
- **server step** (:class:`Server`): ``update(state, aggregated) -> new server points``;
  built-in (:mod:`flbounds.pep.steps`) ``server_model_step`` (global step :math:`\eta_g`),
  ``server_tracking``, ``server_control_variate``, ``server_momentum``.
- **participation**: any process of ``flbounds.participation`` (or an ``"isp"`` / ``"subset"``
  sampler of ``flbounds.sampling``), a fixed set, or None (everyone); the expectation over
  it is exact (:mod:`flbounds.pep.expect`).

Clients that do not participate keep their state. A :class:`Setting` says over what the
supremum runs (N clients, their function class, identical or not, a shared minimizer or
not), a :class:`Measure` what is measured (:func:`lyapunov`: :math:`E[V(X^+)] / V(X)` for a
quadratic :math:`V`; :func:`two_runs`: the contraction of two runs that share the clients and
the participation). :func:`flbounds.pep.worst_case` checks the three (:mod:`.inputs`) and
turns them into a PEPit problem and solves it. Every function here works on PEPit points; the
built-in server steps and local updates (but ``local_prox``) only use ``+``, ``-``, scaling
and ``f.gradient``, so the same functions run on arrays (:mod:`flbounds.pep.replay`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from flbounds.validation import check_int

from .aggregation import (  # noqa: F401  (the rules are part of the vocabulary)
    RULES,
    FixedWeights,
    Normalized,
    Sum,
    Unbiased,
    Uniform,
    aggregation,
)
from .measures import Measure, distance, lyapunov, two_runs  # noqa: E402,F401 (vocabulary)

# ------------------------------------------- local update, server step (built-in ones: steps.py)


@dataclass(frozen=True)
class Local:
    """A client's round (module docstring; built-in ones in :mod:`flbounds.pep.steps`).

    Attributes
    ----------
    run, label : callable, str
        ``run(f, pulled, state) -> (new_state, messages)`` (dicts of points; ``new_state``
        may omit a client variable that does not change); a name for reports.
    """

    run: Callable
    label: str


@dataclass(frozen=True)
class Server:
    """The server's step (module docstring; built-in ones in :mod:`flbounds.pep.steps`).

    Attributes
    ----------
    update, label : callable, str
        ``update(state, aggregated) -> new server points`` (a dict; server variables left
        out keep their value); a name for reports.
    """

    update: Callable
    label: str


# --------------------------------------------------------------------------- initial state


@dataclass(frozen=True)
class Derived:
    """How a state point is formed at the start of the round (see :func:`gradient_at`,
    :func:`client_sum`, :func:`client_mean`)."""

    kind: str
    of: str
    scale: float = 1.0


def gradient_at(name) -> Derived:
    """A client point: the client's gradient at its state point ``name`` (a stored gradient,
    FOCUS: :math:`g_i = \\nabla f_i(z_i)`).

    Parameters
    ----------
    name : str
        A client state point.

    Returns
    -------
    Derived
        For :attr:`Round.initial`, under a client state point's name:
        ``initial={"g": gradient_at("z")}``.
    """
    return Derived("gradient", str(name))


def client_sum(name) -> Derived:
    """A server point: the sum of the clients' points ``name`` over all N clients (FOCUS:
    :math:`y = \\sum_i g_i`).

    Parameters
    ----------
    name : str
        A client state point.

    Returns
    -------
    Derived
        For :attr:`Round.initial`, under a server state point's name:
        ``initial={"y": client_sum("g")}``.
    """
    return Derived("sum", str(name))


def model_copy(name="x") -> Derived:
    """A client point: equal to the server point ``name`` at the start (every client at the
    model, a proof's initialisation: :math:`z_i = x_0`).

    Parameters
    ----------
    name : str, default "x"
        A server state point.

    Returns
    -------
    Derived
        For :attr:`Round.initial`, under a client state point's name:
        ``initial={"z": model_copy("x"), "g": gradient_at("z")}``.
    """
    return Derived("copy", str(name))


def client_mean(name) -> Derived:
    """A server point: the mean of the clients' points ``name`` over all N clients
    (SCAFFOLD: :math:`c = \\sum_i c_i / N`).

    Parameters
    ----------
    name : str
        A client state point.

    Returns
    -------
    Derived
        For :attr:`Round.initial`, under a server state point's name:
        ``initial={"c": client_mean("ci")}``.
    """
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
                raise ValueError(f"initial[{name!r}] must be gradient_at/client_sum/client_mean/"
                                 "model_copy")
            own = self.client_state if how.kind in ("gradient", "copy") else self.server_state
            source = self.server_state if how.kind == "copy" else self.client_state
            if name not in own or how.of not in source:
                raise ValueError(f"initial[{name!r}]: {how.kind} of {how.of!r} does not match "
                                 "the state's points")


# --------------------------------------------------------------------------- a random round


@dataclass(frozen=True)
class Branch:
    """One branch of a :class:`Mixture`.

    Attributes
    ----------
    probability : float
        The branch's probability, in [0, 1].
    round : Round
        The round run on this branch.
    participation : optional
        Its participation law (:func:`flbounds.pep.expect.law_of`); None: every client.
    """

    probability: float
    round: Round
    participation: object = None


@dataclass(frozen=True)
class Mixture:
    r"""A round drawn at random each time, independently of the participation: with
    probability :math:`q_b` the round of branch :math:`b` under its own participation law
    (SAFARI: a client round with probability :math:`q`, else a server step). The expectation
    of a measure is :math:`\sum_b q_b E_b[\cdot]`, each :math:`E_b` exact
    (:mod:`flbounds.pep.expect`); :mod:`flbounds.pep.scenarios` builds it.

    Attributes
    ----------
    name : str
    branches : tuple of Branch
        Probabilities in [0, 1] summing to 1; every round has the same state points.
    """

    name: str
    branches: tuple

    def __post_init__(self):
        branches = tuple(b if isinstance(b, Branch) else Branch(*b) for b in self.branches)
        if not branches or not all(isinstance(b.round, Round) for b in branches):
            raise ValueError("branches must be (probability, Round, participation) triples")
        probs = [float(b.probability) for b in branches]
        if not all(0.0 <= p <= 1.0 for p in probs) or abs(sum(probs) - 1.0) > 1e-12:
            raise ValueError(f"branches: probabilities must be in [0, 1] and sum to 1, got "
                             f"{probs}")
        first = branches[0].round
        for b in branches[1:]:
            if (b.round.server_state, b.round.client_state) != (first.server_state,
                                                                first.client_state):
                raise ValueError("every branch's round must have the same state points")
        object.__setattr__(self, "branches", branches)


def single(round_, participation=None) -> Mixture:
    """``round_`` under ``participation`` as a one-branch :class:`Mixture`.

    Parameters
    ----------
    round_ : Round
    participation : optional
        As :attr:`Branch.participation`.

    Returns
    -------
    Mixture
        One branch of probability 1.
    """
    return Mixture(round_.name, (Branch(1.0, round_, participation),))


# --------------------------------------------------------------------------- setting, measure

CLASSES = ("smooth-strongly-convex", "quadratic", "smooth")


@dataclass(frozen=True)
class Setting:
    """What the supremum runs over.

    Attributes
    ----------
    n_clients : int
        N >= 1 clients.
    mu, L : float or sequence of float
        Each client ``L``-smooth and ``mu``-strongly convex, 0 <= mu <= L: one value for all
        clients, or one value per client (a sequence of length N; the other argument may stay
        one value). Per-client constants are stored as tuples of N floats
        (:attr:`per_client`, :meth:`constants`).
    function_class : {"smooth-strongly-convex", "quadratic", "smooth"}
        The clients' class (quadratics: of the same constants; ``"smooth"``: L-smooth, not
        necessarily convex, ``mu`` ignored).
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

        n = check_int(self.n_clients, "n_clients", minimum=1)
        object.__setattr__(self, "n_clients", n)
        scalar = [np.ndim(v) == 0 for v in (self.mu, self.L)]
        if all(scalar):
            try:
                mu, L = check_class(self.mu, self.L)
            except TypeError:
                raise ValueError("mu and L must be numbers or one number per client") from None
        else:
            per = []
            for name, v, one in (("mu", self.mu, scalar[0]), ("L", self.L, scalar[1])):
                try:
                    values = [float(v)] * n if one else [float(x) for x in v]
                except (TypeError, ValueError):
                    raise ValueError(f"{name} must be a number or one number per client") \
                        from None
                if len(values) != n:
                    raise ValueError(f"{name}: {len(values)} values for n_clients={n} clients")
                per.append(values)
            pairs = []
            for i, (m, ell) in enumerate(zip(*per, strict=True)):
                try:
                    pairs.append(check_class(m, ell))
                except ValueError as err:
                    raise ValueError(f"mu, L of client {i}: {err}") from None
            mu, L = tuple(m for m, _ in pairs), tuple(ell for _, ell in pairs)
            if self.identical and len(set(pairs)) > 1:
                raise ValueError("mu, L: identical clients (one function) need one mu and one L")
        object.__setattr__(self, "mu", mu)
        object.__setattr__(self, "L", L)
        if self.function_class not in CLASSES:
            raise ValueError(f"function_class must be one of {CLASSES}, got "
                             f"{self.function_class!r}")

    @property
    def per_client(self) -> bool:
        """Whether ``mu`` and ``L`` hold one value per client (tuples)."""
        return isinstance(self.L, tuple)

    def constants(self, i) -> tuple:
        """``(mu_i, L_i)`` of client ``i``.

        Parameters
        ----------
        i : int
            A client, 0 <= i < N.

        Returns
        -------
        (float, float)
        """
        return (self.mu[i], self.L[i]) if self.per_client else (self.mu, self.L)


__all__ = ["CLASSES", "RULES", "Branch", "Derived", "FixedWeights", "Local", "Measure",
           "Mixture", "Normalized", "Round", "Server", "Setting", "Sum", "Unbiased", "Uniform",
           "aggregation", "client_mean", "client_sum", "distance", "gradient_at", "lyapunov",
           "model_copy", "single", "two_runs"]
