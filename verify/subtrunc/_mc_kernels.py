r"""Compiled reductions of Lemma 1's Monte Carlo round (:func:`verify.subtrunc.lemma1.rule_rounds`),
with NumPy's rounding.

The selected clients' mean update ``(u * mask[..., None]).sum(axis=1) / k`` costs NumPy a
masked copy of the paths' updates per rule and a reduction over a middle axis; here every
rule reads ``u`` once. NumPy sums that axis client by client in order, starting from 0.0
(the masked copy is path-major), and the kernel adds the same products
(``u * 1.0`` or ``u * 0.0``) in the same order, without ``fastmath``: the same numbers bit
for bit (``tests/verify/subtrunc/test_fast_paths.py`` compares with the NumPy form).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, fastmath=False, error_model="numpy")
def selected_means(u, masks, k, out):
    """``out[r] = (u * masks[r][..., None]).sum(axis=1) / k`` for every rule r.

    ``u`` (paths, n, d) in any layout, ``masks`` (rules, paths, n) bool, ``out``
    (rules, paths, d) float64, overwritten and returned.
    """
    rules, paths, n = masks.shape
    d = u.shape[2]
    for r in range(rules):
        for p in range(paths):
            for j in range(d):
                out[r, p, j] = 0.0
            for i in range(n):
                weight = 1.0 if masks[r, p, i] else 0.0
                for j in range(d):
                    out[r, p, j] += u[p, i, j] * weight
            for j in range(d):
                out[r, p, j] = out[r, p, j] / k
    return out
