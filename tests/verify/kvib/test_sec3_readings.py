"""Fig. 1's caption read 'for every set of updates' is no claim (a caption of an experiment);
where it fails is recorded in kvib.sec3.isp_vs_best_rsp_exact's details, with RSP as the
paper defines it (without replacement) and a budget K = 2 > 1."""

import numpy as np
import pytest

import verify.kvib.sec3 as sec3
from flbounds.ledger import get
from flbounds.sampling import rsp_uniform_variance


def test_the_universal_reading_is_not_a_claim():
    with pytest.raises(ValueError, match="unknown claim"):
        get("kvib.sec3.isp_below_rsp_every_instance")


def test_aligned_updates_at_k2_favour_rsp_orthogonal_do_not():
    w = sec3.aligned_witness()
    assert (w["N"], w["K"]) == (3, 2)
    assert w["isp_optimal_variance"] == pytest.approx(1.5, abs=1e-12)
    assert w["rsp_without_replacement_variance"] == pytest.approx(0.0, abs=1e-12)
    assert not w["isp_below_rsp"]
    # planted: orthogonal updates of equal norm make ISP the better one
    assert sec3.aligned_witness(np.eye(3))["isp_below_rsp"]


def test_enumeration_matches_the_closed_form():
    z = np.random.default_rng(0).standard_normal((5, 3))
    for k in range(1, 6):
        assert sec3.rsp_without_replacement_variance(z, k) == pytest.approx(
            rsp_uniform_variance(z, k), rel=1e-12, abs=1e-12)


def test_the_witness_is_in_the_remark_details():
    out = get("kvib.sec3.isp_vs_best_rsp_exact").check(seed=0)
    assert out.verdict == "holds"
    assert out.details["every_updates_reading_fails_at"]["K"] == 2
