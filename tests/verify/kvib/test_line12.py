"""kvib.def2_1.unbiased_exact runs Algorithm 1 line 12 as the library implements it: a water
level off by 2% in the samplers' probabilities, or estimator weights that are not the inverse
of the drawing probabilities, turn it."""

import numpy as np
import pytest

from flbounds.ledger import get

CID = "kvib.def2_1.unbiased_exact"


def test_holds_on_the_library():
    res = get(CID).check(seed=0, n_instances=1)
    assert res.verdict == "holds", res.details


def _high_water(real):
    def planted(a, k, **kw):
        return np.minimum(real(a, k, **kw) * 1.02, 1.0)
    return planted


def _biased_weights(real):
    def planted(p, uniforms):
        draw = real(p, uniforms)
        return draw._replace(weights=draw.weights * 1.02)
    return planted


@pytest.mark.parametrize("where, name, make", [
    ("flbounds.sampling.ftrl", "optimal_isp_probabilities", _high_water),
    ("flbounds.sampling.fixed", "optimal_isp_probabilities", _high_water),
    ("flbounds.sampling.ftrl", "isp_draw", _biased_weights),
])
def test_fails_on_a_planted_bug(monkeypatch, where, name, make):
    import importlib
    module = importlib.import_module(where)
    monkeypatch.setattr(module, name, make(getattr(module, name)))
    res = get(CID).check(seed=0, n_instances=1)
    assert res.verdict == "violated", res.details
