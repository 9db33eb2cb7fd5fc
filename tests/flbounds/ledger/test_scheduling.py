"""Task order of a ledger run: longest first by the durations stored from earlier runs."""

from types import SimpleNamespace

from flbounds.ledger.api.registry import select
from flbounds.ledger.engine import runner
from flbounds.ledger.engine.history import History


def _row(claim_id, elapsed, profile="quick"):
    return SimpleNamespace(id=claim_id, elapsed_s=elapsed, profile=profile, verdict="holds",
                           task_key=f"{claim_id}-key")


def _claims(*ids):
    return [SimpleNamespace(id=i) for i in ids]


def test_longest_first_by_the_last_stored_duration():
    history = [_row("a", 1.0), _row("b", 9.0), _row("c", 3.0), _row("a", 20.0),
               _row("c", 50.0, profile="full")]
    order = runner.longest_first(_claims("a", "b", "c"), history, "quick")
    assert [c.id for c in order] == ["a", "b", "c"]      # a's last quick time is 20 s


def test_claims_never_run_start_first_and_ties_keep_their_order():
    history = [_row("a", 1.0), _row("b", 1.0), _row("d", 5.0)]
    order = runner.longest_first(_claims("a", "b", "new1", "d", "new2"), history, "quick")
    assert [c.id for c in order] == ["new1", "new2", "d", "a", "b"]
    assert [c.id for c in runner.longest_first(_claims("x", "y"), [], "quick")] == ["x", "y"]


def test_claims_never_run_take_turns_by_paper():
    """A first run: the papers' claims interleaved (each paper's in the given order), so two
    workers rarely start claims that need the same kernels compiled."""
    ids = ("p.a1", "p.a2", "p.a3", "q.b1", "r.c1", "r.c2", "s.done")
    order = runner.longest_first(_claims(*ids), [_row("s.done", 2.0)], "quick")
    assert [c.id for c in order] == ["p.a1", "q.b1", "r.c1", "p.a2", "r.c2", "p.a3",
                                     "s.done"]


def test_run_claims_starts_tasks_in_that_order(store, monkeypatch):
    claims = select(["kvib.lemma2_2"])
    assert len(claims) >= 2
    fake = {c.id: float(k) for k, c in enumerate(claims)}   # the last one is longest
    monkeypatch.setattr(runner, "stored_history",
                        lambda store, profile: History(fake, set()))
    started = []

    def drive(tasks, executor, finished, *, lease, on_cell=None, plan=None):
        started.extend(t[0] for t in [*tasks, *(plan() if plan is not None else [])])
        executor.close()
        raise KeyboardInterrupt   # stop before any work: only the order matters here

    monkeypatch.setattr(runner, "_drive", drive)
    try:
        runner.run_claims(claims, store=store)
    except KeyboardInterrupt:
        pass
    assert started == [c.id for c in reversed(claims)]


class _Recorder:
    """A fake executor that logs submits; ``wait`` returns one reply per busy task."""

    def __init__(self, log, size, inline=False):
        self.log, self.size, self.running = log, size, []
        if inline:
            self.runs_inline = True

    def capacity(self):
        return self.size - len(self.running)

    def busy(self):
        return len(self.running)

    def submit(self, task):
        self.log.append(("submit", task[0]))
        self.running.append(task)
        return []

    def wait(self, timeout):
        task = self.running.pop(0)
        return [(task, {"row": {"id": task[0]}})]

    def close(self, *, kill=False):
        pass

    def inherits(self):
        return True


def _drive_log(monkeypatch, size, inline):
    log = []
    monkeypatch.setattr(runner.CheckResult, "from_dict", staticmethod(lambda row: row["id"]))
    tasks = [(name, "quick", 0) for name in "abcd"]
    runner._drive(tasks, _Recorder(log, size, inline),
                  lambda result, row: log.append(("finished", result)), lease=None)
    return log


def test_a_freed_worker_gets_its_next_task_before_the_reply_is_stored(monkeypatch):
    log = _drive_log(monkeypatch, size=2, inline=False)
    assert log.index(("submit", "c")) < log.index(("finished", "a"))
    assert log.index(("submit", "d")) < log.index(("finished", "b"))
    assert [e for e in log if e[0] == "finished"] == [("finished", n) for n in "abcd"]


def test_a_task_run_in_this_process_is_stored_before_the_next_one_runs(monkeypatch):
    assert runner.InlineExecutor.runs_inline     # the executor of one-worker runs
    log = _drive_log(monkeypatch, size=1, inline=True)
    assert log == [e for n in "abcd" for e in (("submit", n), ("finished", n))]


def test_the_inline_executor_hands_each_reply_on_before_it_runs_the_next_task(monkeypatch):
    """With one worker and no time limit, tasks run in this process: each result is stored
    before the next task starts, so a run killed mid-way keeps what it finished."""
    log = []
    monkeypatch.setattr(runner.CheckResult, "from_dict", staticmethod(lambda row: row["id"]))
    import flbounds.ledger.engine.executors as executors

    monkeypatch.setattr(executors, "execute", lambda *task: log.append(("run", task[0])) or
                        {"id": task[0]})
    runner._drive([(n, "quick", 0) for n in "abc"], runner.InlineExecutor(),
                  lambda result, row: log.append(("finished", result)), lease=None)
    assert log == [e for n in "abc" for e in (("run", n), ("finished", n))]


def test_the_first_tasks_start_before_the_others_are_listed(store, monkeypatch):
    """With free workers, the longest claims start before the other keys and cells are
    computed (``plan``, called once they run); together they are the run's order, once."""
    claims = select(["kvib.lemma2_2"])
    fake = {c.id: float(k) for k, c in enumerate(claims)}
    monkeypatch.setattr(runner, "stored_history",
                        lambda store, profile: History(fake, set()))
    seen = {}

    def drive(tasks, executor, finished, *, lease, on_cell=None, plan=None):
        seen["first"] = [t[0] for t in tasks]
        seen["rest"] = [t[0] for t in plan()]
        raise KeyboardInterrupt

    monkeypatch.setattr(runner, "_drive", drive)
    pool = _Recorder([], size=2)
    try:
        runner.run_claims(claims, store=store, pool=pool, workers=2)
    except KeyboardInterrupt:
        pass
    order = [c.id for c in reversed(claims)]
    assert seen["first"] == order[:2]
    assert seen["first"] + seen["rest"] == order


def test_drive_lists_the_other_tasks_once_the_first_have_started(monkeypatch):
    log = []
    monkeypatch.setattr(runner.CheckResult, "from_dict", staticmethod(lambda row: row["id"]))

    def plan():
        log.append(("plan",))
        return [(n, "quick", 0) for n in "cd"]

    runner._drive([(n, "quick", 0) for n in "ab"], _Recorder(log, 2), lambda r, row: None,
                  lease=None, plan=plan)
    assert log[:3] == [("submit", "a"), ("submit", "b"), ("plan",)]
    assert [e[1] for e in log if e[0] == "submit"] == list("abcd")
