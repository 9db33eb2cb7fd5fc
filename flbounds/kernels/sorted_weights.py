r"""App. G of K-Vib: updates of weights kept in ascending order, each placed by binary search
(the loop of :meth:`flbounds.sampling.incremental.SortedWeights.add_many`: the same
comparisons, moves and additions in the same order). No RNG, no validation."""

from numba import njit


@njit(cache=True)
def add_sorted(values, clients, slot, who, increments):
    """``omega[who[j]] += increments[j]`` for j in order, keeping ``values`` ascending (ties:
    earlier insertions first), ``clients`` its client ids and ``slot`` their inverse, all
    updated in place. Returns (comparisons in total, the most one update took)."""
    n = values.shape[0]
    total, most = 0, 0
    for j in range(who.shape[0]):
        client = who[j]
        old = slot[client]
        value = values[old] + increments[j]
        lo, hi, count = old + 1, n, 0      # first index in values[old + 1:] above value
        while lo < hi:
            mid = (lo + hi) // 2
            count += 1
            if values[mid] <= value:
                lo = mid + 1
            else:
                hi = mid
        total += count
        most = max(most, count)
        new = lo - 1        # an update only moves its entry right
        for i in range(old, new):
            values[i] = values[i + 1]
            clients[i] = clients[i + 1]
            slot[clients[i]] = i
        values[new] = value
        clients[new] = client
        slot[client] = new
    return total, most
