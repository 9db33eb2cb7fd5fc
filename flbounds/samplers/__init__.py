"""Former home of the adaptive samplers, now :mod:`flbounds.sampling` (kept as a re-export)."""

from flbounds.sampling import (  # noqa: F401
    Avare,
    Draw,
    Feedback,
    KVib,
    Mabs,
    OracleISP,
    UniformISP,
    UniformRSP,
    Vrb,
    isp_draw,
    kvib_theta,
    multinomial_draw,
)
