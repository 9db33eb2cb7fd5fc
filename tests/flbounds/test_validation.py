"""flbounds.validation and flbounds.tolerances, and the faces that rely on them."""

import numpy as np
import pytest

from flbounds import selection, tolerances, validation
from flbounds.sampling import UniformISP, isp_variance, rsp_uniform_variance


def test_as_vector_and_probabilities():
    np.testing.assert_array_equal(validation.as_vector([1, 2], "a"), [1.0, 2.0])
    with pytest.raises(ValueError, match="a must be a non-empty"):
        validation.as_vector([], "a")
    with pytest.raises(ValueError, match="a must have length 3"):
        validation.as_vector([1.0, 2.0], "a", n=3)
    with pytest.raises(ValueError, match="a must be nonnegative"):
        validation.as_vector([1.0, -2.0], "a", nonnegative=True)
    with pytest.raises(ValueError, match=r"p must lie in \(0, 1\]"):
        validation.as_inclusion_probabilities([0.0, 0.5])


def test_index_sets_and_budgets():
    np.testing.assert_array_equal(validation.as_index_set(range(3), "S", 3), [0, 1, 2])
    with pytest.raises(ValueError, match="S must not repeat"):
        validation.as_index_set([1, 1], "S", 3)
    with pytest.raises(ValueError, match="S must hold integers"):
        validation.as_index_set([1.0], "S", 3)
    assert validation.check_budget(2, 5) == 2.0
    for bad in (0, 6, np.nan, True):
        with pytest.raises(ValueError, match="^k "):
            validation.check_budget(bad, 5)


def test_row_vectors():
    assert validation.as_row_vectors([1.0, 2.0], "z", 2).shape == (2, 1)
    with pytest.raises(ValueError, match=r"z must have shape \(3, d\)"):
        validation.as_row_vectors(np.ones((2, 4)), "z", 3)


def test_probability_sum_tolerance_is_the_rounding_rule():
    assert tolerances.probability_sum_tolerance(1) == tolerances.PROBABILITY_SUM_ATOL
    assert tolerances.probability_sum_tolerance(10**6) == 4 * 10**6 * tolerances.EPS
    assert tolerances.summation_bound(10, 2.0) == 20 * tolerances.EPS


@pytest.mark.parametrize("bad", [np.ones((3, 4)), -np.ones((2, 2)), [[0.0, np.inf], [1, 0]]])
def test_set_function_classes_validate_like_their_constructors(bad):
    for make in (selection.FacilityLocation, selection.facility_location,
                 lambda d: selection.UnionFLObjective(d, [0], mu=1.0)):
        with pytest.raises(ValueError, match="dissim"):
            make(bad)


def test_selection_rules_validate_round_information():
    rng = np.random.default_rng(0)
    args = dict(k=2, grads=rng.normal(size=(6, 3)), losses=rng.random(6),
                data_fractions=np.full(6, 1 / 6), history=[], keys=rng.random((3, 6)))
    with pytest.raises(ValueError, match="losses must be nonnegative"):
        selection.select_clients(selection.SelectionRule("subtrunc"),
                                 **{**args, "losses": -args["losses"]})
    grads = args["grads"].copy()
    grads[0, 0] = np.nan
    with pytest.raises(ValueError, match="grads must be finite"):
        selection.select_clients(selection.SelectionRule("divfl"), **{**args, "grads": grads})


def test_sampling_faces_name_the_argument():
    with pytest.raises(ValueError, match="budget"):
        UniformISP(3, 0)
    with pytest.raises(ValueError, match="^p "):
        isp_variance([0.5, 1.5], [1.0, 1.0])
    with pytest.raises(ValueError, match="^k "):
        rsp_uniform_variance(np.ones((4, 2)), 5)
