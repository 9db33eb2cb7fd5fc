"""
A figure of the papers, from its script
=======================================

Every figure is a script under ``figures/`` with ``compute()``, ``plot()`` and ``main()``;
``flbounds figures NAME`` draws it and saves the plotted numbers beside the image. Here the
exact aggregation weights of several participation processes, computed and drawn in-process.
"""

from figures import participation_weights

data = participation_weights.compute()
fig = participation_weights.plot(data)
