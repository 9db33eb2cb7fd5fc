"""How often the released solver's off-by-one fires: a deterministic count at a fixed seed,
zero for the paper's solver (a planted correct solver), and the same at every call."""

from flbounds.sampling import optimal_isp_probabilities
from verify.kvib.released_code import solver_firing


def test_the_count_is_deterministic_and_the_paper_solver_never_fires():
    first, again = solver_firing(50), solver_firing(50)
    assert first == again and first["instances_with_a_capped_client"] == 50
    assert first["fires_p_above_1"] > 0 and first["largest_p_returned"] > 1
    fixed = solver_firing(50, solver=optimal_isp_probabilities)
    assert fixed["fires_p_above_1"] == fixed["fires_sum_not_K"] == 0
