"""``flbounds bound ID key=value ... [--json]``: a printed bound at given constants.

Prints the admissible step (the largest step meeting every printed condition, and which
condition binds), the printed value at that step (or at ``step=``), the corrected
statement's value where the project has one, and each hypothesis of the bound's result on
the constants (holds / FAILS / not evaluated). A step above a printed condition or a failed
hypothesis is said in a warning line; the exit code stays 0 (a calculator).
``flbounds bound --list`` shows every bound and its constants. A missing, unknown or
out-of-range constant is a one-line usage error.
"""

from __future__ import annotations

import json

from ._common import UsageError, aligned

HELP = "a printed bound or rate at given constants (--list: every bound)"
EXAMPLES = """examples:
  flbounds bound --list                                 every bound and its constants
  flbounds bound focus.thm1a mu=1 L=2 p=0.3,0.5 tau=3    the admissible step and the rate
  flbounds bound focus.thm1a mu=1 L=2 p=0.3,0.5 tau=3 step=0.01 --json"""


def add_arguments(p) -> None:
    p.add_argument("id", nargs="?", metavar="ID", help="bound id, e.g. focus.thm1a")
    p.add_argument("constants", nargs="*", metavar="KEY=VALUE",
                   help="constants, e.g. mu=1 L=2 p=0.3,0.5,0.7,0.9 tau=3 [step=...]")
    p.add_argument("--list", action="store_true", help="list every bound and its constants")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


def _parse(thm, items):
    by_name = {c.name: c for c in thm.constants}
    values = {}
    for item in items:
        key, sep, text = item.partition("=")
        if not sep or not key:
            raise UsageError(f"constants are KEY=VALUE, got {item!r}")
        if key == "step":
            try:
                values["step"] = float(text)
            except ValueError:
                raise UsageError(f"step must be a number, got {text!r}") from None
            continue
        if key not in by_name:
            raise UsageError(f"unknown constant {key!r} for {thm.id} "
                             f"(constants: {', '.join(by_name)})")
        try:
            values[key] = by_name[key].parse(text)
        except ValueError as exc:
            raise UsageError(str(exc)) from None
    return values


def _list(bounds) -> int:
    rows = [(bid, thm.ref, " ".join(c.name for c in thm.constants)
             + (" [step]" if thm.uses_step else ""))
            for bid, thm in bounds.load_all().items()]
    print("\n".join(aligned(("bound", "ref", "constants"), rows)))
    return 0


def _show(thm, value) -> None:
    print(f"{thm.id}  ({thm.ref})")
    print(f"  quantity:    {thm.quantity}")
    print("  constants:   " + " ".join(f"{k}={_fmt(v)}" for k, v in value.constants.items()))
    if value.admissible_step is not None:
        print(f"  admissible step: {value.admissible_step:.6g}  (binding: {value.binding})")
        for name, top in value.conditions.items():
            print(f"    step <= {name:<40} = {top:.6g}")
        flag = "" if value.within_conditions else "  (ABOVE the admissible step)"
        print(f"  step:        {value.step:.6g}{flag}")
    print(f"  printed:     {value.value:.10g}")
    if value.corrected is not None:
        print(f"  corrected:   {value.corrected:.10g}")
    if value.result:
        print(f"  hypotheses of {value.result_ref} ({value.result}):"
              + ("" if value.hypotheses else " none declared"))
        for label, ok in value.hypotheses.items():
            print(f"    {_state(ok):<14} {label}" + (
                "" if isinstance(ok, bool) else f"  ({ok.removeprefix('not evaluated: ')})"))
    else:
        print("  hypotheses:  not evaluated (no result declared for this bound)")
    for line in value.warnings:
        print(f"  WARNING:     {line}")


def _state(ok) -> str:
    """holds / FAILS / not evaluated, for one hypothesis of the bound's result."""
    return "holds" if ok is True else "FAILS" if ok is False else "not evaluated"


def _fmt(v):
    if hasattr(v, "tolist"):
        return ",".join(f"{x:g}" for x in v.tolist())
    return f"{v:g}"


def run(args) -> int:
    from flbounds.ledger import bounds

    if args.list:
        if args.id or args.constants:
            raise UsageError("--list takes no ID or constants")
        return _list(bounds)
    if not args.id:
        raise UsageError("give a bound ID (see 'flbounds bound --list')")
    try:
        thm = bounds.get(args.id)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    values = _parse(thm, args.constants)
    try:
        value = thm.evaluate(**values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if args.json:
        print(json.dumps(value.as_dict()))
    else:
        _show(thm, value)
    return 0
