"""
The ledger on a Dask cluster
============================

The claims of a run are independent tasks, so the ledger can hand them to a Dask distributed
cluster instead of its local process pool: ``flbounds check --scheduler tcp://host:8786`` on a
real cluster, or, as here, a ``LocalCluster`` of two single-threaded worker processes on this
machine. A task carries only the claim's id, profile and seed; each worker imports the claims
from its own installation and sends back the result row. Seeds derive from the root seed and
the claim's id, so the rows are the same as a run in this process (checked below).
"""

import time

import matplotlib.pyplot as plt
from dask.distributed import Client, LocalCluster

from flbounds.ledger import run_claims, select

PATTERNS = ["kvib.lemma2_2.*", "focus.lemma4.*"]


def run_on_local_cluster(claims, n_workers=2):
    """The claims' results from a fresh local cluster, and the run's wall time (s)."""
    with LocalCluster(n_workers=n_workers, threads_per_worker=1, processes=True,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        start = time.perf_counter()
        rows = run_claims(claims, profile="quick", seed=0, scheduler=client)
        return rows, time.perf_counter() - start


def plot_elapsed(rows):
    """Where each claim's time went: the elapsed seconds its worker recorded."""
    fig, ax = plt.subplots(figsize=(6, 0.35 * len(rows) + 1))
    ax.barh([row.id for row in rows], [row.elapsed_s for row in rows])
    ax.set_xlabel("elapsed per claim on its worker (s)")
    ax.invert_yaxis()
    fig.tight_layout()
    return fig


# %%
# The worker processes start by importing this file again, so the run itself sits under the
# ``__main__`` guard (as any script that starts processes must). ``run_claims`` takes the
# client; an address such as ``tcp://127.0.0.1:8786`` works the same way.
if __name__ == "__main__":
    claims = select(PATTERNS)
    on_dask, seconds = run_on_local_cluster(claims)
    local = run_claims(claims, profile="quick", seed=0)
    for row in on_dask:
        print(f"{row.verdict:9} (expected {row.expected:9}) {row.id}")
    same = all(a.verdict == b.verdict and a.measured == b.measured
               for a, b in zip(on_dask, local, strict=True))
    print(f"{len(on_dask)} claims in {seconds:.1f} s on 2 workers; the same numbers as the "
          f"run in this process: {same}")
    plot_elapsed(on_dask)
