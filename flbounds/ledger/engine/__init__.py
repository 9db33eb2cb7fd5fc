"""The ledger's engine, its middle layer: running tasks and keeping their results.

The runner (:mod:`.runner`) takes a task's lease (:mod:`.leases`), runs it in this process,
on the local worker pool (:mod:`.workers`) or on Dask (:mod:`.executors`), and commits each
row to the SQLite results store (:mod:`.store`, :mod:`.rows`) as it finishes; :mod:`.tasks`
resolves a task id (a claim or an attack) and runs it; :mod:`.outputs` checks and writes the
files a command produces. It imports the plugin API, never the reports.
"""
