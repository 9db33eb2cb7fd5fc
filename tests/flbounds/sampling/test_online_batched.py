"""The batched online baselines (:func:`flbounds.sampling.online_batched.baseline_costs`)
equal the unbatched ``run_online`` runs bit for bit, seed by seed and budget by budget."""

import numpy as np
import pytest

from flbounds.sampling import Mabs, Vrb
from flbounds.sampling.online import Assumption51Feedback, run_online
from flbounds.sampling.online_batched import baseline_costs

KS = (2, 3, 8)


@pytest.fixture(scope="module")
def feedback():
    return Assumption51Feedback.generate(np.random.default_rng(0), 40)


@pytest.mark.parametrize("kind, cls", [("vrb", Vrb), ("mabs", Mabs)])
def test_batch_equals_run_online(feedback, kind, cls):
    costs = baseline_costs(kind, feedback, KS, 120, np.random.default_rng(1).spawn(3),
                           G=feedback.G)
    assert costs.shape == (3, len(KS), 120)
    for s, child in enumerate(np.random.default_rng(1).spawn(3)):
        for j, k in enumerate(KS):  # the budgets share the seed's stream, in order
            ref = run_online(cls(40, k, 120, G=feedback.G), feedback, 120, child).costs
            assert np.array_equal(costs[s, j], ref)


def test_batch_detects_another_stream(feedback):
    """The equality can fail: another seed's run differs."""
    costs = baseline_costs("vrb", feedback, (4,), 60, [np.random.default_rng(7)],
                           G=feedback.G)
    ref = run_online(Vrb(40, 4, 60, G=feedback.G), feedback, 60, np.random.default_rng(8))
    assert not np.array_equal(costs[0, 0], ref.costs)


@pytest.mark.parametrize("kwargs, name", [
    (dict(kind="avare"), "kind"), (dict(n_rounds=0), "n_rounds"),
    (dict(budgets=()), "budgets"), (dict(rngs=[1]), "rngs"), (dict(budgets=(50,)), "budget"),
])
def test_bad_input_names_the_argument(feedback, kwargs, name):
    args = dict(kind="vrb", feedback=feedback, budgets=(2,), n_rounds=5,
                rngs=[np.random.default_rng(0)])
    args.update(kwargs)
    with pytest.raises(ValueError, match=name):
        baseline_costs(args.pop("kind"), args.pop("feedback"), args.pop("budgets"),
                       args.pop("n_rounds"), args.pop("rngs"), G=feedback.G)
