"""One FedAvg round's descent SDP (flbounds.pep.descent): closed form, weights, bad input."""

import pytest

from flbounds.pep import gap_tolerance
from flbounds.pep.descent import fedavg_descent_rate


@pytest.mark.parametrize("step", [0.0625, 0.125, 0.25])
def test_one_local_step_matches_the_descent_lemma(step):
    """R = 1: f(x) - f(x+) >= eta (1 - L eta/2)||g||^2, attained by f = -L x^2/2 locally, so
    sup ||g||^2 / (f(x) - f(x+)) = 1/(eta (1 - L eta/2))."""
    res = fedavg_descent_rate(1.0, 1, step)
    expected = 1 / (step * (1 - step / 2))
    assert res.worst == pytest.approx(expected, rel=1e-5)
    assert res.printed is None


def test_weights_scale_the_value():
    base = fedavg_descent_rate(1.0, 2, 0.1).worst
    scaled = fedavg_descent_rate(1.0, 2, 0.1, gradient_weight=0.5, descent_weight=4.0,
                                 printed=1.0)
    assert scaled.worst == pytest.approx(base * 0.5 / 4.0, abs=gap_tolerance(1.0))
    assert scaled.printed == 1.0


def test_global_step_one_and_local_steps_compose():
    """eta_g = 2 with eta_l: the server moves twice the local change."""
    a = fedavg_descent_rate(1.0, 1, 0.05, step_global=2.0).worst
    b = fedavg_descent_rate(1.0, 1, 0.1).worst
    assert a == pytest.approx(b, rel=1e-5)


@pytest.mark.parametrize("call, name", [
    (lambda: fedavg_descent_rate(0.0, 1, 0.1), "L"),
    (lambda: fedavg_descent_rate(1.0, 0, 0.1), "local_steps"),
    (lambda: fedavg_descent_rate(1.0, 1, -0.1), "step_local"),
    (lambda: fedavg_descent_rate(1.0, 1, 0.1, step_global=0.0), "step_global"),
    (lambda: fedavg_descent_rate(1.0, 1, 0.1, gradient_weight=float("nan")), "gradient_weight"),
    (lambda: fedavg_descent_rate(1.0, 1, 0.1, descent_weight=0.0), "descent_weight"),
])
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()
