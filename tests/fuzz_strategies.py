"""Bad inputs for the fuzz tests: each strategy draws values that violate one constraint.

Every value drawn here is invalid for the argument kind it is named after, so a public
function must reject it with a ``ValueError`` naming the argument.
"""

import numpy as np
from hypothesis import strategies as st

NON_FINITE = st.sampled_from([np.nan, np.inf, -np.inf])
NOT_NUMBERS = st.sampled_from(["1", None, ["a", "b"], {"a": 1}, 1 + 2j, object()])
NOT_NUMBERS_OR_NONE = st.sampled_from(["1", ["a", "b"], {"a": 1}, 1 + 2j, object()])
#: a vector where a scalar belongs
NOT_SCALAR = st.just([1.0, 2.0])


def _with_bad_entry(base: np.ndarray, bad):
    @st.composite
    def draw(d):
        arr = np.array(base, dtype=float, copy=True)
        if arr.size == 0:
            return arr
        arr.flat[d(st.integers(0, arr.size - 1))] = d(bad)
        return arr
    return draw()


def bad_vectors(good, *, nonneg=False, positive=False, at_most_one=False, sized=False,
                empty_ok=False, optional=False, any_ndim=False):
    """Vectors shaped like ``good`` that break it: non-finite entries, wrong shapes, wrong
    dtypes, emptiness, and (where the constraint applies) negative or too large entries,
    or one entry too many when the size is tied to another argument (``sized``)."""
    good = np.asarray(good, dtype=float)
    options = [_with_bad_entry(good, NON_FINITE),
               st.just(good.ravel()[:1].reshape(())) if good.ndim else st.just(good[None]),
               st.just(good.astype(complex) + 1j),
               st.just(np.array(["x"] * max(good.size, 1))),
               NOT_NUMBERS_OR_NONE if optional else NOT_NUMBERS]
    if not any_ndim:
        options.append(st.just(np.stack([good, good])))      # one dimension too many
    if not empty_ok:
        options.append(st.just(np.empty((0,) * good.ndim)))
    if sized:
        options.append(st.just(np.resize(good, tuple(s + 1 for s in good.shape))))
    if nonneg or positive:
        options.append(_with_bad_entry(good, st.floats(-1e6, -1e-9)))
    if positive:
        options.append(_with_bad_entry(good, st.just(0.0)))
    if at_most_one:
        options.append(_with_bad_entry(good, st.floats(1.0 + 1e-9, 1e6)))
    return st.one_of(options)


#: sizes far beyond any machine: a function must refuse them (naming the argument) or
#: answer quickly with a finite number, never try to allocate or loop over them
HUGE = 10**18


def bad_counts(*, low=1, high=None, huge=True, real=False):
    """Integers outside ``[low, high]``, non-integers (unless the count may be ``real``, a
    budget) and (with ``huge``) huge sizes."""
    options = [st.integers(-10**6, low - 1), NON_FINITE, st.just(True), NOT_NUMBERS,
               NOT_SCALAR]
    if not real:
        options.append(st.floats(0.5, 1e3).filter(lambda x: x % 1))
    if huge:
        options.append(st.just(HUGE))
    if high is not None:
        options.append(st.integers(high + 1, high + 10**6))
    return st.one_of(options)


def bad_positive():
    """Scalars that are not finite positive numbers."""
    return st.one_of(st.floats(-1e6, 0.0), NON_FINITE, NOT_NUMBERS, NOT_SCALAR)


def bad_nonnegative():
    """Scalars that are not finite numbers >= 0."""
    return st.one_of(st.floats(-1e6, -1e-9), NON_FINITE, NOT_NUMBERS, NOT_SCALAR)


def bad_probability():
    """Scalars outside [0, 1] or not numbers."""
    return st.one_of(st.floats(-1e6, -1e-9), st.floats(1 + 1e-9, 1e6), NON_FINITE,
                     NOT_NUMBERS, NOT_SCALAR)
