"""
An adversarial search
=====================

:func:`flbounds.falsify.search` maximises a ratio of measured to printed value over a box of
instances with CMA-ES. Here the "bound" is the AM-GM inequality ``sqrt(x y) <= (x + y)/2``,
which holds: the search drives the ratio to 1 (the equality case ``x = y``) and no further.
"""

import math

from flbounds.falsify import Box, search


def ratio(*, x, y):
    return math.sqrt(x * y) / ((x + y) / 2)


attack = search(ratio, {"x": Box(0.01, 100, log=True), "y": Box(0.01, 100, log=True)},
                budget=400, seed=0)
print(f"best ratio {attack.best_ratio:.9f} after {attack.evaluations} evaluations")
print("witness:", {k: round(v, 4) for k, v in attack.witness.items()})
