"""Fuzzing the public API with bad input: a ``ValueError`` naming the argument, never
another exception, a NaN result or a hang.

Each case replaces one argument of a valid call by a drawn bad value (``fuzz_strategies``).
The number of examples run per function is counted; with ``FLBOUNDS_FUZZ_COUNTS=path`` the
counts are written there as JSON.
"""

import json
import os
import signal
from collections import Counter

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from flbounds import (
    algorithms,
    closed_forms,
    pac,
    participation,
    problems,
    sampling,
    stats,
    submodular,
)
from tests.fuzz_strategies import (
    HUGE,
    bad_counts,
    bad_nonnegative,
    bad_positive,
    bad_probability,
    bad_vectors,
)

EXAMPLES = int(os.environ.get("FLBOUNDS_FUZZ_EXAMPLES", "150"))
#: seconds one call may take before it counts as a hang (validation must come first)
HANG_S = 60
COUNTS: Counter = Counter()

A = np.stack([np.array([[2.0, 0.5], [0.5, 1.0]]), np.array([[1.0, 0.0], [0.0, 3.0]])])
B = np.array([[1.0, 0.0], [0.0, 1.0]])
PLAN = np.ones((3, 2), dtype=bool)
DISSIM = np.array([[0.0, 1.0, 2.0], [1.0, 0.0, 1.5], [2.0, 1.5, 0.0]])


def _problem():
    return problems.Quadratic(A, B)


def _objective():
    return submodular.facility_location(DISSIM)


def _case(func, good: dict, bad: dict):
    return func, good, bad


CASES = {
    "sampling.optimal_isp_probabilities": _case(
        sampling.optimal_isp_probabilities, dict(a=[1.0, 3.0, 6.0], k=2, p_min=0.0),
        dict(a=bad_vectors([1.0, 3.0, 6.0], nonneg=True), k=bad_counts(high=3, real=True),
             p_min=bad_probability())),
    "sampling.isp_variance": _case(
        sampling.isp_variance, dict(p=[0.5, 0.5, 1.0], a=[1.0, 2.0, 3.0]),
        dict(p=bad_vectors([0.5, 0.5, 1.0], positive=True, at_most_one=True),
             a=bad_vectors([1.0, 2.0, 3.0], sized=True))),
    "problems.Quadratic": _case(
        problems.Quadratic, dict(A=A, b=B),
        dict(A=bad_vectors(A), b=bad_vectors(B, sized=True))),
    "algorithms.fedavg": _case(
        algorithms.fedavg, dict(problem=None, plan=PLAN, step=0.1, local_steps=2, x0=None),
        dict(plan=bad_vectors(PLAN), step=bad_positive(), local_steps=bad_counts(),
             x0=bad_vectors([0.0, 0.0], sized=True, optional=True))),
    "algorithms.focus": _case(
        algorithms.focus, dict(problem=None, plan=PLAN, step=0.1, local_steps=2, x0=None),
        dict(plan=bad_vectors(PLAN), step=bad_positive(), local_steps=bad_counts(),
             x0=bad_vectors([0.0, 0.0], sized=True, optional=True))),
    "participation.Bernoulli": _case(
        participation.Bernoulli, dict(p=[0.5, 0.9]),
        dict(p=bad_vectors([0.5, 0.9], nonneg=True, at_most_one=True))),
    "closed_forms.fedavg_fixed_point": _case(
        closed_forms.fedavg_fixed_point, dict(A=A, b=B, q=[0.5, 0.5], step=0.1, local_steps=2),
        dict(A=bad_vectors(A), b=bad_vectors(B, sized=True),
             q=bad_vectors([0.5, 0.5], nonneg=True, sized=True), step=bad_positive(),
             local_steps=bad_counts())),
    "pac.impossibility_event_probability": _case(
        pac.impossibility_event_probability, dict(n_clients=10, n_participating=5, n_samples=1),
        dict(n_clients=bad_counts(), n_participating=bad_counts(low=0, high=9),
             n_samples=bad_counts())),
    "submodular.facility_location": _case(
        submodular.facility_location, dict(dissim=DISSIM),
        dict(dissim=bad_vectors(DISSIM, nonneg=True))),
    "submodular.subtrunc": _case(
        submodular.subtrunc, dict(dissim=DISSIM, losses=[1.0, 2.0, 3.0], lam=0.5, b=1.0),
        dict(dissim=bad_vectors(DISSIM, nonneg=True),
             losses=bad_vectors([1.0, 2.0, 3.0], nonneg=True, sized=True),
             lam=bad_nonnegative(),
             b=bad_positive())),
    "submodular.unionfl": _case(
        submodular.unionfl, dict(dissim=DISSIM, recent=[True, False, False], mu=0.5),
        dict(dissim=bad_vectors(DISSIM, nonneg=True), mu=bad_nonnegative(),
             recent=bad_vectors([1.0, 0.0, 0.0], sized=True, empty_ok=True))),
    "submodular.greedy": _case(
        submodular.greedy, dict(f=None, k=2), dict(k=bad_counts(low=0, high=3))),
    "submodular.brute_force_max": _case(
        submodular.brute_force_max, dict(f=None, k=2), dict(k=bad_counts(low=0, high=3))),
    "sampling.uniform_isp_variance": _case(
        sampling.uniform_isp_variance, dict(a=[1.0, 2.0, 3.0], k=2),
        dict(a=bad_vectors([1.0, 2.0, 3.0]), k=bad_counts(high=3, real=True))),
    "sampling.optimal_isp_variance": _case(
        sampling.optimal_isp_variance, dict(a=[1.0, 2.0, 3.0], k=2),
        dict(a=bad_vectors([1.0, 2.0, 3.0]), k=bad_counts(high=3, real=True))),
    "sampling.mix_uniform": _case(
        sampling.mix_uniform, dict(p=[0.5, 0.5, 1.0], theta=0.5),
        dict(p=bad_vectors([0.5, 0.5, 1.0], nonneg=True, at_most_one=True),
             theta=bad_probability())),
    "participation.UniformWithoutReplacement": _case(
        participation.UniformWithoutReplacement, dict(n_clients=5, m=2),
        dict(n_clients=bad_counts(), m=bad_counts(low=0, high=5))),
    "participation.WeightedWithoutReplacement": _case(
        participation.WeightedWithoutReplacement, dict(weights=[1.0, 2.0, 3.0], m=2),
        dict(weights=bad_vectors([1.0, 2.0, 3.0], nonneg=True),
             m=bad_counts(low=0, high=3))),
    "participation.Cyclic": _case(
        participation.Cyclic, dict(n_clients=5, per_round=2),
        dict(n_clients=bad_counts(), per_round=bad_counts(high=5))),
    "pac.impossibility_chernoff_bound": _case(
        pac.impossibility_chernoff_bound, dict(n_clients=10, n_participating=5, n_samples=1),
        dict(n_clients=bad_counts(), n_participating=bad_counts(low=0, high=9),
             n_samples=bad_counts())),
    "pac.two_point_distribution": _case(
        pac.two_point_distribution, dict(n_clients=10, n_participating=5),
        dict(n_clients=bad_counts(), n_participating=bad_counts(low=0, high=9))),
    "stats.clopper_pearson": _case(
        stats.clopper_pearson, dict(k=3, n=10, confidence=0.99),
        dict(k=bad_counts(low=0, high=10, huge=False), confidence=bad_probability())),
    "stats.mc_mean": _case(
        stats.mc_mean, dict(samples=[1.0, 2.0, 4.0]),
        dict(samples=bad_vectors([1.0, 2.0, 4.0], any_ndim=True))),
}
LAZY = {"problem": _problem, "f": _objective}


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang(f"no answer within {HANG_S} s")


def _call(func, kwargs):
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_S)
    try:
        return func(**kwargs)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def _finite(result) -> bool:
    try:
        return bool(np.all(np.isfinite(np.asarray(result, dtype=float))))
    except (TypeError, ValueError):
        return True     # not numeric (an object): nothing to be NaN


@pytest.mark.parametrize("name", sorted(CASES))
def test_bad_input_raises_value_error_naming_the_argument(name):
    func, good, bad = CASES[name]
    good = {k: (LAZY[k]() if v is None and k in LAZY else v) for k, v in good.items()}

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(arg=st.sampled_from(sorted(bad)), data=st.data())
    def fuzz(arg, data):
        value = data.draw(bad[arg], label=arg)
        COUNTS[name] += 1
        try:
            result = _call(func, {**good, arg: value})
        except ValueError as exc:
            assert arg in str(exc), f"{name}({arg}={value!r}): message {exc} lacks {arg!r}"
            return
        if value is HUGE and _finite(result):
            return      # a huge size answered (quickly, finitely) is fine
        pytest.fail(f"{name}({arg}={value!r}) accepted a bad value"
                    + ("" if _finite(result) else " and returned NaN/inf"))

    _call(func, good)   # the valid call itself works
    fuzz()
    assert COUNTS[name] >= min(EXAMPLES, 10)   # small spaces are exhausted early
    _save_counts()


def _save_counts():
    path = os.environ.get("FLBOUNDS_FUZZ_COUNTS")
    if path:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(dict(COUNTS), fh, indent=1, sort_keys=True)


def _bad_cli_argv(tmp: str):
    """A command line with one bad element: option value, option, path or claim pattern."""
    # a missing folder is not bad: --json, --results and --out make it (nothing is written
    # then, since the bad element stops the run before any work)
    a_file = os.path.join(tmp, "a-file")
    bad_paths = st.sampled_from([a_file + "/sub", tmp, "", tmp + "/nodir/"])
    bad_numbers = st.one_of(st.integers(-10**9, -1).map(str), st.sampled_from(
        ["nan", "inf", "-inf", "1e400", "x", "", "2.5", "0x1"]))
    check = st.sampled_from([["check", "focus.matrices.pull_row_stochastic"]])
    return st.one_of(
        st.tuples(check, st.sampled_from(["--seed", "--workers"]), bad_numbers),
        st.tuples(check, st.just("--timeout"),
                  st.one_of(st.integers(-10**9, -1).map(str),
                            st.sampled_from(["nan", "inf", "-inf", "x", ""]))),
        st.tuples(check, st.just("--profile"), st.text(max_size=8).filter(
            lambda t: t not in ("quick", "full"))),
        st.tuples(check, st.just("--json"), bad_paths),
        st.tuples(check, st.just("--results"), st.just(a_file)),
        st.tuples(st.sampled_from([["report", "--results", tmp]]), st.just("--out"),
                  st.just(a_file)),
        st.tuples(st.sampled_from([["check"], ["list"]]), st.just("--no-such-option"),
                  st.text(max_size=5)),
        st.tuples(st.sampled_from([["check"], ["list"], ["figures"]]),
                  # no claim id or figure name starts with x, y or z: nothing may run
                  st.text(alphabet="xyz.*[]?!", min_size=1, max_size=12).filter(
                      lambda t: t[0] in "xyz"),
                  st.just("--seed=0")),
    ).map(lambda parts: [*parts[0], parts[1], parts[2]])


def test_cli_bad_input_exits_2_with_one_line(tmp_path):
    import contextlib
    import io

    from flbounds.cli import main

    (tmp_path / "a-file").write_text("keep")
    before = sorted(p.name for p in tmp_path.iterdir())

    @settings(max_examples=EXAMPLES, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))
    @given(argv=_bad_cli_argv(str(tmp_path)))
    def fuzz(argv):
        COUNTS["flbounds (CLI)"] += 1
        err = io.StringIO()
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            code = _call(main, {"argv": argv})
        text = err.getvalue()
        assert code == 2, f"{argv}: exit {code}, stderr {text!r}"
        assert text.startswith("flbounds: error:") and text.strip().count("\n") == 0, \
            f"{argv}: {text!r}"
        assert sorted(p.name for p in tmp_path.iterdir()) == before, argv

    fuzz()
    assert COUNTS["flbounds (CLI)"] >= min(EXAMPLES, 20)
    _save_counts()
