r"""The arguments of a described worst case, checked before any SDP is built.

:func:`check_inputs` says which of ``round_``, ``setting`` and ``measure`` has the wrong type,
then runs the round once on a probe (:func:`probe`): every state point a random vector
(:class:`flbounds.pep.replay.Vector`), every client the quadratic
:math:`f(z) = \|z\|^2` (gradient :math:`2z`, proximal step :math:`z/(1 + 2\gamma)`). The probe
costs microseconds and catches, with the names a user needs, what the PEP would otherwise
report as a bare ``KeyError`` or a PEPit ``AttributeError`` deep in the build:

- a local update or server step that reads a point the state does not have, a local update
  that does not send a pushed message or sets a point outside ``client_state``, a server step
  that sets a point outside ``server_state``;
- a measure that reads a point the state does not have, or returns something other than a
  quadratic expression of the state's points (a constant, a bool, a point).

User code that the probe cannot run (written with PEPit calls other than ``+``, ``-``,
scaling, ``f.gradient`` and ``proximal_step``) is left to the build, which reports its own
errors.
"""

from __future__ import annotations

import numpy as np

from .describe import Measure, Mixture, Round, Setting
from .replay import Vector

#: the probe's dimension (a random vector in it is in general position for the checks)
DIM = 3


class ProbeError(ValueError):
    """A described round or measure that fails on the probe (a ``ValueError``)."""


class _Missing(Exception):
    """A probe state read a point it does not have (turned into a :class:`ProbeError`)."""

    def __init__(self, name, where):
        super().__init__(name)
        self.name, self.where = name, where


class _Points(dict):
    """A dict of probe points whose missing key raises :class:`_Missing` (``where`` names
    the points offered)."""

    def __init__(self, points, where):
        super().__init__(points)
        self.where = where

    def __missing__(self, name):
        raise _Missing(name, self.where)


class _Client:
    r""":math:`f(z) = \|z\|^2` on probe vectors."""

    @staticmethod
    def gradient(z):
        return 2.0 * z

    @staticmethod
    def proximal_step(x, gamma):
        return x / (1.0 + 2.0 * float(gamma))


class _Star:
    def __init__(self, rng, n):
        self.x = Vector(rng.standard_normal(DIM))
        self.gradients = [Vector(rng.standard_normal(DIM)) for _ in range(n)]


class _State:
    """A probe state read like :class:`flbounds.pep.engine.State`."""

    def __init__(self, round_, rng, n):
        self.names = (tuple(round_.server_state), tuple(round_.client_state))
        where = _offered(round_)
        self.server = _Points({k: Vector(rng.standard_normal(DIM))
                               for k in round_.server_state}, where)
        self.clients = [_Points({k: Vector(rng.standard_normal(DIM))
                                 for k in round_.client_state}, where) for _ in range(n)]

    def __getitem__(self, name):
        return self.server[name]

    def client(self, name):
        return [c[name] for c in self.clients]


def _offered(round_):
    return (f"server points {list(round_.server_state)}, client points "
            f"{list(round_.client_state)}")


#: what :func:`_run_user` returns when user code cannot run on the probe
SKIPPED = object()


def _run_user(call):
    """``call()``, or :data:`SKIPPED` when it fails on the probe for a reason other than a
    missing point (the build then reports it)."""
    try:
        return call()
    except _Missing:
        raise
    except Exception:   # noqa: BLE001  (user code written for PEPit points only)
        return SKIPPED


def _probe_round(round_, rng):
    name = round_.name
    state = _State(round_, rng, 1)
    pulled = _Points({k: state.server[k] for k in round_.pull},
                     f"pulled points {list(round_.pull)}")
    own = _Points(dict(state.clients[0]), f"client points {list(round_.client_state)}")
    try:
        out = _run_user(lambda: round_.local.run(_Client(), pulled, own))
    except _Missing as err:
        raise ProbeError(f"local update {round_.local.label!r} of {name!r} reads {err.name!r}, "
                         f"which it is not given: it reads the {err.where}") from None
    if isinstance(out, tuple) and len(out) == 2 and all(isinstance(d, dict) for d in out):
        new, sent = out
        missing = [m for m in round_.push if m not in sent]
        if missing:
            raise ProbeError(f"push of {name!r}: messages {missing} not sent by the local "
                             f"update {round_.local.label!r}, which sends {sorted(sent)}")
        unknown = sorted(set(new) - set(round_.client_state))
        if unknown:
            raise ProbeError(f"local update {round_.local.label!r} of {name!r} sets "
                             f"{unknown}, not in client_state {list(round_.client_state)}")
    aggregated = _Points({m: Vector(rng.standard_normal(DIM)) for m in round_.push},
                         f"pushed messages {list(round_.push)}")
    try:
        update = _run_user(lambda: round_.server.update(
            _Points(state.server, f"server points {list(round_.server_state)}"), aggregated))
    except _Missing as err:
        raise ProbeError(f"server step {round_.server.label!r} of {name!r} reads {err.name!r}, "
                         f"which it is not given: it reads the server points "
                         f"{list(round_.server_state)} and the pushed messages "
                         f"{list(round_.push)}") from None
    if update is not SKIPPED:
        unknown = sorted(set(update) - set(round_.server_state))
        if unknown:
            raise ProbeError(f"server step {round_.server.label!r} of {name!r} sets {unknown}, "
                             f"not in server_state {list(round_.server_state)}")


def _value(measure, state, star):
    try:
        return _run_user(lambda: measure.value(state, star))
    except _Missing as err:
        raise ProbeError(f"measure {measure.label!r} reads the point {err.name!r}, not in the "
                         f"round's state: {err.where}") from None


def _probe_measure(measure, round_, n, rng):
    def at(seed):
        local = np.random.default_rng(seed)
        state = _State(round_, local, n)
        return _value(measure, state, None if measure.runs == 2 else _Star(local, n))

    first = at(rng.integers(2**32))
    if first is SKIPPED:
        return
    expected = ("a quadratic expression of the state's points (squared norms and inner "
                "products of points, e.g. (s['x'] - star.x) ** 2)")
    if isinstance(first, bool | np.bool_) or not isinstance(first, int | float | np.floating):
        kind = "a point (a linear expression: square it)" if isinstance(first, Vector) \
            else f"{type(first).__name__} {first!r}"
        raise ProbeError(f"measure {measure.label!r} must return {expected}; it returned "
                         f"{kind}")
    if at(rng.integers(2**32)) == first:
        raise ProbeError(f"measure {measure.label!r} must return {expected}; it returned the "
                         f"constant {first!r} on two different states")


def probe(round_: Round, measure: Measure, n_clients: int, *, seed=0) -> None:
    """Run ``round_`` and ``measure`` once on random vectors (module docstring).

    Parameters
    ----------
    round_ : Round
    measure : Measure
    n_clients : int
        The number of clients of the measure's state.
    seed : int, default 0
        Seeds the probe's vectors.

    Raises
    ------
    ProbeError
        A ``ValueError`` naming the point read, the points offered, and the step or measure.
    """
    rng = np.random.default_rng(seed)
    _probe_round(round_, rng)
    _probe_measure(measure, round_, int(n_clients), rng)


def check_inputs(round_, setting, measure, *, rounds=(Round,)) -> None:
    """``ValueError`` naming the argument at fault unless ``round_`` is one of ``rounds``,
    ``setting`` a :class:`~.describe.Setting` and ``measure`` a :class:`~.describe.Measure`;
    then :func:`probe` of each round (a :class:`~.describe.Mixture`'s branches).

    Parameters
    ----------
    round_ : Round or Mixture
    setting : Setting
    measure : Measure
    rounds : tuple of type, default (Round,)
        The accepted types of ``round_`` (``(Round, Mixture)`` at the package's entry).

    Raises
    ------
    ValueError
        Which argument is wrong, what it should be and what it is.
    """
    names = " or ".join(f"a {t.__name__}" for t in rounds) + \
        ("" if Mixture in rounds else " (a Mixture goes to flbounds.pep.worst_case)")
    checks = (("round_", round_, rounds, names), ("setting", setting, (Setting,), "a Setting"),
              ("measure", measure, (Measure,), "a Measure (flbounds.pep.lyapunov, distance or "
               "two_runs)"))
    for arg, value, types, expected in checks:
        if not isinstance(value, types):
            raise ValueError(f"{arg} must be {expected}, got "
                             f"{type(value).__name__}")
    parts = [b.round for b in round_.branches] if isinstance(round_, Mixture) else [round_]
    for part in parts:
        probe(part, measure, setting.n_clients)


def check_certified(certified) -> None:
    """``ValueError`` naming ``certified`` unless it is a bool (``"yes"`` is refused)."""
    if not isinstance(certified, bool | np.bool_):
        raise ValueError(f"certified must be a bool, got {certified!r}")


__all__ = ["ProbeError", "check_certified", "check_inputs", "probe"]
