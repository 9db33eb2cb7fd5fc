"""Adversarial search over instance spaces: find the instance that strains a bound most.

``search(ratio, space, *, budget, seed)`` maximises measured/bound with CMA-ES (restarts) or
differential evolution; ``attack_surface`` declares how a claim is attacked; an attack runs
as the ledger task ``attack:<claim id>``; ``shrink`` simplifies a violating witness.
"""

from .search import Attack, search
from .shrink import Shrunk, shrink
from .spaces import SPD, Box, Integers, Simplex, Space, Transform
from .surfaces import Surface, attack_surface, get_surface, no_attack, surfaces, unattacked

__all__ = ["SPD", "Attack", "Box", "Integers", "Shrunk", "Simplex", "Space", "Surface",
           "Transform", "attack_surface", "get_surface", "no_attack", "search", "shrink",
           "surfaces", "unattacked"]
