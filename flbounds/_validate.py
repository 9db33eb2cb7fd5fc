"""Former name of :mod:`flbounds.validation`, kept for modules not yet updated."""

from flbounds.validation import *  # noqa: F403
from flbounds.validation import __all__  # noqa: F401
