"""One entry point for the worst case of any described algorithm.

``flbounds.pep.worst_case`` takes a :class:`~.describe.Round` (one round, solved by
:func:`.engine.worst_case`) or a :class:`~.describe.Mixture` (a round drawn at random, such as
SAFARI's coin between a client round and a server step, solved by
:func:`.scenarios.mixture_worst_case` over its branches). The dispatch lives here, above both,
so that the scenarios module can build on the engine without the engine importing it back.
"""

from __future__ import annotations

from . import engine
from .describe import Measure, Mixture, Round, Setting
from .inputs import check_certified, check_inputs
from .result import WorstCase
from .scenarios import mixture_worst_case


def worst_case(round_: Round | Mixture, setting: Setting, measure: Measure, participation=None,
               *, printed=None, certified=False, classes=None) -> WorstCase:
    check_certified(certified)
    check_inputs(round_, setting, measure, rounds=(Round, Mixture))
    if isinstance(round_, Mixture):
        if participation is not None:
            raise ValueError("participation: a Mixture carries each branch's participation "
                             "law; pass None")
        if classes is not None:
            raise ValueError("classes: not offered for a Mixture")
        return mixture_worst_case(round_, setting, measure, printed=printed,
                                  certified=certified)
    return engine.worst_case(round_, setting, measure, participation, printed=printed,
                             certified=certified, classes=classes)


#: the engine's docstring, less its sentence on where Mixtures go (they go here)
worst_case.__doc__ = engine.worst_case.__doc__.replace(engine.MIXTURE_NOTE, "")
