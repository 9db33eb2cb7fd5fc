r"""Step-size schedules: the ``step=`` of every algorithm with a step.

A step is a positive number (constant), or a :class:`Schedule`:

- :func:`constant` ``(eta)``: :math:`\eta_r = \eta`;
- :func:`inverse_time` ``(beta, gamma)``: :math:`\eta_t = \beta / (\gamma + t)`, with ``t`` the
  round :math:`r` (``per="round"``) or the index of the local step over the whole run,
  :math:`t = r\tau + k` for local step :math:`k` of round :math:`r` (``per="local_step"``,
  the schedule :math:`\eta_t = 2 / (\mu(\gamma + t))` of Li et al., ICLR 2020, Theorems 1-3);
- :func:`piecewise` ``(values, boundaries)``: ``values[j]`` from round ``boundaries[j - 1]``
  on (``boundaries`` increasing, one fewer than ``values``);
- :func:`per_round` ``(steps)``: an array of steps, one per round (shape (R,)) or one per local
  step (shape (R, tau)); a schedule may be longer than the run (its first rounds are used),
  not shorter.

Algorithms also accept such an array directly (``step=np.array([...])``). A schedule that is
constant over the run runs on the same compiled path as a number. Every step must be positive
and finite; a bad schedule, or one shorter than the run, is a ``ValueError`` naming the
algorithm's argument (``step``, ``step_client``, ...) before any work.
"""

from __future__ import annotations

import numbers

import numpy as np

from flbounds.validation import as_float_array, check_int, check_positive

__all__ = ["Schedule", "as_schedule", "constant", "inverse_time", "per_round", "piecewise",
           "resolve"]

PER = ("round", "local_step")


class Schedule:
    """Steps of a run: :meth:`steps` gives them per round, or per local step."""

    def __init__(self, kind: str, describe: str, steps_fn, per: str = "round", value=None):
        self.kind = kind
        self.value = value      # the step of a constant schedule, else None
        self._describe = describe
        self._steps_fn = steps_fn
        self.per = per

    def __repr__(self) -> str:
        return f"{self.kind}({self._describe})"

    def steps(self, n_rounds: int, local_steps: int = 1, *, name: str = "step") -> np.ndarray:
        """Float64 (n_rounds, 1) for a per-round schedule (row r: round r's step), or
        (n_rounds, local_steps) for one that changes within a round; ``ValueError`` naming
        ``name`` if a step is not positive and finite, or the schedule is shorter than the
        run."""
        n_rounds = check_int(n_rounds, "n_rounds", minimum=0)
        local_steps = check_int(local_steps, "local_steps", minimum=1)
        out = np.asarray(self._steps_fn(n_rounds, local_steps, name), dtype=np.float64)
        if out.ndim == 1:
            out = out[:, None]
        if not (np.isfinite(out).all() and np.all(out > 0.0)):
            raise ValueError(f"{name} must be positive and finite at every round, got "
                             f"min {out.min() if out.size else 'none'}")
        return np.ascontiguousarray(out)


def constant(step) -> Schedule:
    r""":math:`\eta_r = \eta` for every round (``step`` > 0)."""
    step = check_positive(step, "step")
    return Schedule("constant", repr(step), lambda r, tau, name: np.full(r, step), value=step)


def inverse_time(beta, gamma, *, per: str = "round") -> Schedule:
    r""":math:`\eta_t = \beta / (\gamma + t)`; ``t`` is the round (``per="round"``) or the
    index :math:`r\tau + k` of the local step over the run (``per="local_step"``).

    Parameters
    ----------
    beta : float, > 0
    gamma : float, > 0 (the first step is :math:`\beta/\gamma`)
    per : {"round", "local_step"}
    """
    beta, gamma = check_positive(beta, "beta"), check_positive(gamma, "gamma")
    if per not in PER:
        raise ValueError(f"per must be one of {PER}, got {per!r}")

    def steps(n_rounds, tau, name):
        if per == "round":
            return beta / (gamma + np.arange(n_rounds, dtype=np.float64))
        t = np.arange(n_rounds * tau, dtype=np.float64).reshape(n_rounds, tau)
        return beta / (gamma + t)

    return Schedule("inverse_time", f"beta={beta!r}, gamma={gamma!r}, per={per!r}", steps,
                    per)


def piecewise(values, boundaries) -> Schedule:
    """``values[0]`` for rounds ``0 .. boundaries[0] - 1``, ``values[j]`` from round
    ``boundaries[j - 1]`` on; ``boundaries`` strictly increasing positive integers, one fewer
    than ``values``."""
    values = as_float_array(values, "values", ndim=1, copy=True)
    if values.size == 0 or not np.all(values > 0.0):
        raise ValueError("values must be a non-empty list of positive steps")
    bounds = np.asarray(boundaries)
    if bounds.ndim != 1 or bounds.size != values.size - 1 or (
            bounds.size and (bounds.dtype.kind not in "iu" or bounds[0] < 1
                             or np.any(np.diff(bounds) <= 0))):
        raise ValueError("boundaries must be strictly increasing positive integers, one fewer "
                         f"than values ({values.size - 1}), got {boundaries!r}")
    bounds = bounds.astype(np.int64)

    def steps(n_rounds, tau, name):
        return values[np.searchsorted(bounds, np.arange(n_rounds), side="right")]

    return Schedule("piecewise", f"values={values.tolist()}, boundaries={bounds.tolist()}",
                    steps)


def per_round(steps) -> Schedule:
    """Given steps: shape (R,) or (R, 1) one per round, or (R, tau) one per local step; the
    run may be shorter than R rounds (its first rows are used), not longer."""
    arr = np.array(steps, dtype=np.float64, copy=True)
    if arr.ndim not in (1, 2) or arr.size == 0:
        raise ValueError(f"steps must be a non-empty array of shape (R,) or (R, tau), got "
                         f"shape {arr.shape}")
    per = "local_step" if arr.ndim == 2 and arr.shape[1] > 1 else "round"

    def take(n_rounds, tau, name):
        if arr.shape[0] < n_rounds:
            raise ValueError(f"{name}: the schedule has {arr.shape[0]} rounds, shorter than "
                             f"the run ({n_rounds} rounds)")
        if arr.ndim == 2 and arr.shape[1] not in (1, tau):
            raise ValueError(f"{name}: the schedule has {arr.shape[1]} steps per round, the "
                             f"run {tau} local steps")
        return arr[:n_rounds]

    return Schedule("per_round", f"shape={arr.shape}", take, per)


def as_schedule(step, name: str = "step") -> Schedule:
    """A number (constant), a :class:`Schedule`, or an array of steps (:func:`per_round`)."""
    if isinstance(step, Schedule):
        return step
    if isinstance(step, numbers.Real) and not isinstance(step, bool):
        return constant(check_positive(step, name))
    arr = np.asarray(step)
    if arr.ndim == 0 and arr.dtype.kind in "iuf":
        return constant(check_positive(float(arr), name))
    if arr.dtype.kind not in "iuf":
        raise ValueError(f"{name} must be a positive number, a Schedule or an array of steps, "
                         f"got {step!r}")
    try:
        return per_round(arr)
    except ValueError as err:
        raise ValueError(f"{name}: {err}") from None


def resolve(step, n_rounds: int, local_steps: int, *, name: str = "step",
            per_local_step: bool = True):
    """``(scalar, steps)``: ``scalar`` is the one step of a run whose steps are all equal
    (then the algorithm keeps its constant-step path), else None; ``steps`` the (R, 1) or
    (R, tau) array (rows that are constant within the round come as (R, 1)).
    ``per_local_step=False``: a schedule that changes within a round is a ``ValueError``
    naming ``name`` (the algorithm has one step per round)."""
    if isinstance(step, numbers.Real) and not isinstance(step, bool):
        value = check_positive(step, name)
        return value, np.full((n_rounds, 1), value)
    sched = as_schedule(step, name)
    steps = sched.steps(n_rounds, local_steps, name=name)
    if steps.shape[1] > 1 and np.all(steps == steps[:, :1]):
        steps = np.ascontiguousarray(steps[:, :1])
    if steps.shape[1] > 1 and not per_local_step:
        raise ValueError(f"{name}: this algorithm takes one step per round, the schedule "
                         "changes within rounds (per='local_step')")
    if sched.value is not None:
        return sched.value, steps
    if steps.size and np.all(steps == steps[0, 0]):
        return float(steps[0, 0]), steps
    return None, steps
