"""Former name of :mod:`flbounds.sampling.adaptive` (kept as a re-export)."""

from flbounds.sampling.adaptive import (  # noqa: F401
    Draw,
    Feedback,
    SamplerBase,
    check_feedback,
    check_sizes,
    isp_draw,
    multinomial_draw,
)
