"""Fig. 1's caption, read for every set of updates: aligned updates break it, orthogonal ones
do not (the claim can hold)."""

import numpy as np

import verify.kvib.sec3 as sec3


def test_aligned_breaks_orthogonal_does_not(monkeypatch):
    assert sec3.isp_below_rsp_every_instance(rng=None).verdict() == "violated"
    monkeypatch.setattr(sec3, "ALIGNED_Z", np.array([[1.0, 0.0], [0.0, 1.0]]))
    assert sec3.isp_below_rsp_every_instance(rng=None).verdict() == "holds"
