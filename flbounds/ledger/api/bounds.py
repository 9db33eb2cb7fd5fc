r"""Printed bounds as functions of their constants, judged by their result's hypotheses.

A paper package declares, beside the result (:func:`~flbounds.ledger.result`) whose bound
it is, under the result's id or ``<result id>.<name>``::

    @bound("focus.thm1a", ref="Thm 1(a), eq. (23)", quantity="contraction of Psi per round",
           constants=(positive("mu"), positive("L"), probabilities("p"), integer("tau")),
           steps=thm1a_step_conditions)
    def thm1a(*, mu, L, p, tau, step):
        return 1 - step * mu * len(p) / 2

``steps(**constants)`` returns the printed step-size conditions as ``{name: largest step}``;
the admissible step is their minimum and the binding condition the one attaining it.
:meth:`PrintedBound.evaluate` validates the constants (``ValueError`` naming the constant),
evaluates the hypotheses of the bound's result on the constants and the step, and returns
a :class:`BoundValue`. Claims, attacks, tightness checks and the ``flbounds bound``
calculator all call the same function.

The ``bounds`` modules live in the claim plugins, so loading the plugins (the claim registry's
``load_all``) registers them.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from .plugins import provide

_BOUNDS: dict[str, PrintedBound] = {}
#: relative slack of a step against a printed step condition (a step computed at the limit)
_STEP_RTOL = 1e-12


@dataclass(frozen=True)
class Constant:
    """A constant a bound depends on: ``kind`` is ``positive``, ``nonnegative``, ``integer``
    (>= ``low``), ``probability`` (in (0, 1]), ``probabilities`` (a vector of them) or
    ``vector`` (numbers >= 0)."""

    name: str
    kind: str
    description: str = ""
    low: float = 0.0

    def parse(self, text: str):
        """The constant's value from command-line text (``0.3,0.5`` for a vector)."""
        try:
            if self.kind in ("probabilities", "vector"):
                return np.array([float(v) for v in text.split(",")])
            if self.kind == "integer":
                return int(text)
            return float(text)
        except ValueError:
            raise ValueError(f"{self.name} must be {self.describe()}, got {text!r}") from None

    def check(self, value):
        """Return ``value`` validated, else ``ValueError`` naming the constant."""
        shown = np.asarray(value).tolist() if isinstance(value, np.ndarray) else value
        bad = ValueError(f"{self.name} must be {self.describe()}, got {shown!r}")
        if self.kind in ("probabilities", "vector"):
            arr = np.asarray(value, dtype=float)
            ok = (arr > 0) & (arr <= 1) if self.kind == "probabilities" else arr >= 0
            if arr.ndim != 1 or arr.size == 0 or not np.all(ok):
                raise bad
            return arr
        if self.kind == "integer":
            if isinstance(value, bool) or int(value) != value or value < self.low:
                raise bad
            return int(value)
        x = float(value)
        ok = {"positive": x > 0, "nonnegative": x >= 0,
              "probability": 0 < x <= 1}[self.kind] and math.isfinite(x)
        if not ok:
            raise bad
        return x

    def describe(self) -> str:
        return {"positive": "a number > 0", "nonnegative": "a number >= 0",
                "probability": "a probability in (0, 1]",
                "probabilities": "comma-separated probabilities in (0, 1]",
                "vector": "comma-separated numbers >= 0",
                "integer": f"an integer >= {self.low:g}"}[self.kind]


_CONSTANT_DOC = """A constant of a printed bound that must be {what}.

    Parameters
    ----------
    name : str
        The keyword the bound's function takes (and ``flbounds bound`` reads as
        ``name=value``).
    description : str
        What the constant is, shown by ``flbounds bound --list``.

    Returns
    -------
    Constant
        The declaration, for ``@bound(..., constants=(...))``.
    """


def positive(name, description=""):
    return Constant(name, "positive", description)


def nonnegative(name, description=""):
    return Constant(name, "nonnegative", description)


def probability(name, description=""):
    return Constant(name, "probability", description)


def probabilities(name, description=""):
    return Constant(name, "probabilities", description)


def vector(name, description=""):
    return Constant(name, "vector", description)


def integer(name, description="", low=1):
    """A constant of a printed bound that must be an integer >= ``low``.

    Parameters
    ----------
    name : str
        The keyword the bound's function takes (and ``flbounds bound`` reads as
        ``name=value``).
    description : str
        What the constant is, shown by ``flbounds bound --list``.
    low : int
        The smallest value allowed.

    Returns
    -------
    Constant
        The declaration, for ``@bound(..., constants=(...))``.
    """
    return Constant(name, "integer", description, low)


for _declare, _what in ((positive, "a number > 0"), (nonnegative, "a number >= 0"),
                        (probability, "a probability in (0, 1]"),
                        (probabilities, "a vector of probabilities in (0, 1]"),
                        (vector, "a vector of numbers >= 0")):
    _declare.__doc__ = _CONSTANT_DOC.format(what=_what)


@dataclass(frozen=True)
class BoundValue:
    """A printed bound evaluated at given constants.

    ``step`` is the step used (the admissible one unless given), ``admissible_step`` the
    largest step meeting every printed condition and ``binding`` the condition attaining it;
    ``within_conditions`` says whether ``step`` meets them all. ``corrected`` is the value of
    the project's corrected statement, where it has one.
    """

    id: str
    constants: dict
    value: float
    step: float | None = None
    admissible_step: float | None = None
    binding: str | None = None
    conditions: dict = field(default_factory=dict)
    within_conditions: bool = True
    corrected: float | None = None
    quantity: str = ""
    ref: str = ""
    result: str = ""
    result_ref: str = ""
    hypotheses: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        from .result import to_jsonable

        return to_jsonable(dict(self.__dict__, warnings=self.warnings))

    @property
    def failed_conditions(self) -> list[str]:
        """The printed step conditions ``step`` does not meet."""
        return [name for name, top in self.conditions.items()
                if self.step is not None and not self.step <= top * (1 + _STEP_RTOL)]

    @property
    def warnings(self) -> list[str]:
        """Plain sentences for a value outside the statement: a step above a printed step
        condition, a hypothesis of the bound's result false on the constants."""
        where = self.result_ref or self.ref or self.id
        out = []
        failed = self.failed_conditions
        if failed:
            out.append(f"step {self.step:g} is outside the step condition of {where}: "
                       + " and ".join(f"step <= {name}" for name in failed)
                       + (" fails" if len(failed) == 1 else " fail")
                       + f" (admissible step {self.admissible_step:.6g}); the printed value "
                       "is not a bound there")
        failed = [label.split(": ", 1)[0] for label, ok in self.hypotheses.items()
                  if ok is False]
        if failed:
            out.append(f"outside the hypotheses of {where}: {', '.join(failed)} "
                       f"{'fails' if len(failed) == 1 else 'fail'} on these constants; the "
                       "printed value is not a bound there")
        return out


@dataclass(frozen=True)
class PrintedBound:
    """A registered printed bound (see the module docstring)."""

    id: str
    ref: str
    quantity: str
    constants: tuple
    func: Callable
    steps: Callable | None = None
    corrected: Callable | None = None
    check: Callable | None = None

    @property
    def uses_step(self) -> bool:
        return self.steps is not None

    def result(self):
        """The declared result this bound is the printed bound of: the one whose id is the
        bound's id or its longest dotted prefix (``None`` while none is declared)."""
        from .results import declared_results

        table = declared_results()
        ids = [rid for rid in table if self.id == rid or self.id.startswith(rid + ".")]
        return table[max(ids, key=len)] if ids else None

    def judge(self, instance: dict) -> tuple:
        """(the bound's result, its hypotheses on ``instance``: label -> True / False / a
        text saying why it is not evaluated, as in a result row's ``hypotheses``)."""
        res = self.result()
        if res is None:
            return None, {}
        table = {}
        for h in res.hypotheses:
            try:
                ok = h.evaluate(instance)
            except Exception as exc:  # a calculator reports it, beside the printed value
                ok = f"not evaluated: {type(exc).__name__}: {exc}"
            table[h.label] = (f"not evaluated: the constants lack "
                              f"{', '.join(h.missing(instance))}" if ok is None else ok)
        return res, table

    def validate(self, values: dict) -> dict:
        """Check every constant (missing, unknown, out of range) before any work."""
        names = [c.name for c in self.constants]
        unknown = sorted(set(values) - set(names) - {"step"})
        if unknown:
            raise ValueError(f"unknown constant {unknown[0]!r} for {self.id} "
                             f"(constants: {', '.join(names)})")
        out = {}
        for const in self.constants:
            if const.name not in values:
                raise ValueError(f"missing constant {const.name!r} for {self.id} "
                                 f"({const.description or const.describe()})")
            out[const.name] = const.check(values[const.name])
        if self.check is not None:
            self.check(**out)
        return out

    def admissible(self, **constants) -> tuple[float, str, dict]:
        """(largest step meeting every condition, the binding condition, all conditions)."""
        conditions = {k: float(v) for k, v in self.steps(**constants).items()}
        binding = min(conditions, key=conditions.get)
        return conditions[binding], binding, conditions

    def evaluate(self, step=None, **values) -> BoundValue:
        """The bound at ``values`` (and ``step``; default the admissible step)."""
        constants = self.validate(values)
        extra = {}
        if self.uses_step:
            top, binding, conditions = self.admissible(**constants)
            if step is None:
                step = top
            elif not (float(step) > 0 and math.isfinite(float(step))):
                raise ValueError(f"step must be a number > 0, got {step!r}")
            step = float(step)
            extra = dict(step=step, admissible_step=top, binding=binding, conditions=conditions,
                         within_conditions=bool(step <= top * (1 + _STEP_RTOL)))
            args = dict(constants, step=step)
        else:
            if step is not None:
                raise ValueError(f"{self.id} has no step size; drop step=")
            args = constants
        corrected = None if self.corrected is None else float(self.corrected(**args))
        res, hypotheses = self.judge(args)
        return BoundValue(id=self.id, constants=constants, value=float(self.func(**args)),
                          corrected=corrected, quantity=self.quantity, ref=self.ref,
                          result=res.id if res else "", result_ref=res.ref if res else "",
                          hypotheses=hypotheses, **extra)


def bound(id: str, *, ref: str, quantity: str, constants, steps=None, corrected=None,
          check=None):
    """Register the decorated function as printed bound ``id`` (module docstring); its
    hypotheses are the predicates of the result it belongs to (:meth:`PrintedBound.result`).

    Parameters
    ----------
    id : str
        The result's id or ``<result id>.<name>`` (``focus.thm1a``).
    ref : str
        The paper's numbering of the bound (``"Thm 1(a), eq. (23)"``).
    quantity : str
        What the bound bounds, in words.
    constants : iterable of Constant
        The constants it depends on (:func:`positive`, :func:`integer`, ...), validated
        before every evaluation.
    steps : callable, optional
        ``steps(**constants) -> {condition: largest step}``: the printed step-size
        conditions; the admissible step is their minimum.
    corrected : callable, optional
        The corrected bound where the printed one fails, same keywords.
    check : callable, optional
        Further validation of the constants together (``ValueError`` naming the problem).

    Returns
    -------
    callable
        The decorator; it registers the function and returns it unchanged.
    """
    def register(func):
        if id in _BOUNDS and _BOUNDS[id].func.__qualname__ != func.__qualname__:
            raise ValueError(f"bound id {id!r} registered twice")
        _BOUNDS[id] = PrintedBound(id=id, ref=ref, quantity=quantity,
                                   constants=tuple(constants), func=func, steps=steps,
                                   corrected=corrected, check=check)
        return func
    return register


def load_all() -> dict[str, PrintedBound]:
    """Load the claim plugins (their ``bounds`` modules register here); return the table."""
    from .plugins import load_claims

    load_claims()
    return dict(sorted(_BOUNDS.items()))


provide("bounds", lambda: load_all())   # results lists a result's bounds through it


def get(bound_id: str) -> PrintedBound:
    """The registered bound ``bound_id`` (``ValueError`` if unknown)."""
    table = load_all()
    if bound_id not in table:
        raise ValueError(f"unknown bound {bound_id!r} (see 'flbounds bound --list')")
    return table[bound_id]
