r"""A rate atlas: worst-case contraction per round against the participation probability.

For each algorithm with a description (:mod:`flbounds.pep.described`) and each participation
probability :math:`p` (every one of N clients independently, ``Bernoulli([p] * N)``), the
bracket of :func:`~flbounds.pep.lyapunov_search.lyapunov_rate`: the contraction of a replayed
witness (lower end) and the best rate certified by a quadratic Lyapunov function of the
round's state (upper end), at fixed :math:`L/\mu`, :math:`\tau` and local step. Clients share
their minimizer (no loss for FOCUS and SCAFFOLD; FedAvg's rate to its own fixed point with
heterogeneous clients is another question). Where a paper prints a rate it is set beside:

- FOCUS Thm 1(a), :math:`1 - \eta\mu N/2` per round at its admissible step (which depends on
  :math:`p`), next to the bracket of FOCUS at that step;
- SAFARI Thm 5, :math:`1 - \bar\eta` per round (noise and heterogeneity 0), next to
  :func:`~flbounds.pep.lyapunov_search.safari_bracket` with :math:`q = p` the probability of
  a client round (SAFARI's coin, not a participation probability) and Thm 5's coupled steps
  (:data:`SAFARI_FRACTION` of its largest server step). Thm 5 also asks its q-condition of
  every round's state, which this bracket does not impose: a certified value above the
  printed rate is a comparison, not a violation (``safari.thm5.tightness`` is the claim).

The printed values come from the ledger's bounds, looked up by the caller's ``printed``
(``flbounds.ledger.api.bounds.get``, as ``flbounds bound`` shows them). :func:`write_table`
writes the JSON and Markdown table; the figure is ``figures/pep_atlas.py``; ``flbounds
atlas`` does both.

Algorithms. :data:`ALGORITHMS` maps a name to a builder ``(local_steps, step, n_clients, p)
-> Round`` (:mod:`flbounds.pep.described` and :mod:`flbounds.pep.described_server`):

- FedAU (:func:`~flbounds.pep.described_server.fedau_round`, its published rule
  :math:`x^+ = x + \frac1N\sum_{i \in S}\omega_i\Delta_i`) needs the clients' weights
  :math:`\omega_i`, FedAU's online estimates of the mean interval between a client's
  participations. Under ``Bernoulli([p] * N)`` that interval is geometric with mean
  :math:`1/p`, so the estimates settle at :math:`\omega_i = 1/p`, the weights the atlas uses
  (the steady state; the rounds before the estimates settle are not in the cell). With
  :math:`\omega_i = 1/p` the aggregation is unbiased, and at :math:`p = 1` FedAU is FedAvg.
- MIFA (:func:`~flbounds.pep.described_server.mifa_round`): the state searched by
  :func:`~flbounds.pep.lyapunov_search.lyapunov_rate` holds the model and every client's
  remembered update :math:`u_i`, so its certified rate is that of a quadratic Lyapunov
  function of the model and the memory (:func:`~flbounds.pep.described_server.mifa_lyapunov`
  is one such function with a fixed weight).

The upper end is the certificate rebuilt from the check's multipliers (:mod:`.lyapunov_check`),
a rigorous upper bound; ``accurate`` keeps the check's accurate value, which can sit just
below the witness.

A cell without a certificate (no quadratic Lyapunov function certifies a rate below 1, or no
accurate solve) keeps the reason (``error``) and the replayed witness's contraction, which
is above 1 when the witness diverges.

A cell the quadratic of the state leaves open (bracket wider than :data:`OPEN`, or no
certificate while the witness contracts) is searched again over the lifted V, which also
weighs every client's gradient and value at the model
(:func:`~flbounds.pep.lyapunov_search.lyapunov_rate` with ``values=True``, warm-started from
the witness and the first search's rate); its certificate replaces the first, kept under
``plain``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import numpy as np

from flbounds.validation import check_int, check_positive

from . import described, described_server
from .describe import Setting
from .lyapunov_search import lyapunov_rate, safari_bracket
from .sdp import PEPSolveError
from .second_moment import witness_rate

#: rounds of the atlas: name -> (local_steps, step, n_clients, p) -> Round, p the clients'
#: participation probability (FedAU's weights settle at 1/p: module docstring)
ALGORITHMS = {
    "FedAvg": lambda tau, step, n, p: described.fedavg_round(tau, step),
    "SCAFFOLD": lambda tau, step, n, p: described.scaffold_round(tau, step, n),
    "FOCUS": lambda tau, step, n, p: described.focus_round(tau, step),
    "FedAU": lambda tau, step, n, p: described_server.fedau_round(tau, step, [1.0 / p] * n),
    "MIFA": lambda tau, step, n, p: described_server.mifa_round(tau, step, n),
}
#: SAFARI's server step as a fraction of Thm 5's largest, 2/(L + mu): at 1 the coupled client
#: step 4 L eta_s/(K(L + mu)) exceeds 2/L for small K and the client round expands
SAFARI_FRACTION = 0.3
#: a bracket wider than this is re-searched with the lifted V (``values=True``)
OPEN = 1e-4
#: sizes of the two profiles (the CLI's options override them)
PROFILES = {
    "quick": dict(n_clients=2, local_steps=2, ps=(0.05, 0.2, 0.5, 0.8, 1.0)),
    "full": dict(n_clients=3, local_steps=3,
                 ps=(0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)),
}


def check_args(*, mu, L, local_steps, n_clients, ps, step):
    """Validated atlas constants (``ValueError`` naming the argument)."""
    mu, L = check_positive(mu, "mu"), check_positive(L, "L")
    if mu > L:
        raise ValueError(f"L must be >= mu, got L={L}, mu={mu}")
    tau = check_int(local_steps, "local_steps", minimum=1)
    n = check_int(n_clients, "n_clients", minimum=1, maximum=8)
    ps = tuple(float(p) for p in ps)
    if not ps or not all(0 < p <= 1 for p in ps):
        raise ValueError(f"ps must be probabilities in (0, 1], got {ps}")
    step = 1.0 / (4 * L * tau) if step is None else check_positive(step, "step")
    return mu, L, tau, n, ps, step


def _cell(run, witness=None, lifted=None):
    """One cell: the bracket of ``run()``; when no certificate, ``witness()``'s contraction
    alone (above 1: a replayed instance on which the algorithm diverges). When the bracket is
    open (wider than :data:`OPEN`, or no certificate with a contracting witness), the
    certificate of ``lifted(warm)`` (the search over the lifted V, ``warm`` the witness and
    the plain search's feasible rate) where it has one, the quadratic of the state's kept as
    ``plain``."""
    try:
        res = run()
    except PEPSolveError as exc:  # no certificate or no accurate solve: said, not hidden
        low = None if witness is None else witness()[0]
        cell = dict(certified=None, witness=low, error=str(exc)[:200])
        if lifted is None or low is None or low >= 1:
            return cell
    else:
        cell = dict(certified=res.certified, witness=res.witness, search=list(res.search),
                    status=res.worst_case.status, printed=res.printed,
                    accurate=getattr(res, "accurate", None),
                    seconds=round(res.seconds, 3))
        if lifted is None or res.certified - res.witness <= OPEN:
            return cell
    try:  # warm guess (checked by the search): the witness below, the plain rate above
        lift = lifted((cell["witness"], cell.get("search", (None, 1.0))[1]))
    except PEPSolveError as exc:
        return dict(cell, lifted_error=str(exc)[:200])
    plain = {k: cell.pop(k) for k in ("certified", "search", "status", "error", "accurate")
             if k in cell}
    return dict(cell, certified=lift.certified, search=list(lift.search),
                accurate=getattr(lift, "accurate", None),
                status=lift.worst_case.status, values=True, plain=plain,
                seconds=round(cell.get("seconds", 0.0) + lift.seconds, 3))


def compute_atlas(*, mu=1.0, L=4.0, local_steps=None, n_clients=None, ps=None, step=None,
                  profile="quick", printed=None, values=True) -> dict:
    r"""The atlas's numbers (module docstring).

    Parameters
    ----------
    mu, L : float
        The clients' class, ``0 < mu <= L``.
    local_steps, n_clients : int, optional
        :math:`\tau` and N (default: the profile's).
    ps : sequence of float, optional
        Participation probabilities in (0, 1] (default: the profile's).
    step : float, optional
        The local step of every algorithm (default :math:`1/(4L\tau)`).
    profile : {"quick", "full"}
    printed : callable, optional
        A lookup of registered printed bounds by result id, e.g.
        ``flbounds.ledger.api.bounds.get`` (with the papers' plugins loaded): adds FOCUS at
        Thm 1(a)'s step and SAFARI under Thm 5, with their printed rates. None or False:
        without them (this module takes no paper's bound from anywhere else).
    values : bool, default True
        Re-search the cells the quadratic of the state leaves open (bracket wider than
        :data:`OPEN`, or no certificate with a contracting witness) over the lifted V
        (:func:`~flbounds.pep.lyapunov_search.lyapunov_rate` with ``values=True``); such a
        cell has ``values`` True and the first search's numbers in ``plain``.

    Returns
    -------
    dict
        ``constants`` and ``series``:
        name -> list of cells (one per ``p``: ``certified`` (the certificate of the check's
        solve, a rigorous upper bound: :mod:`.lyapunov_check`), ``accurate`` (that solve's
        value when accurate, else None), ``witness``, ``printed``, ``status``, ``seconds``;
        ``error`` instead when no accurate solve; ``values`` and
        ``plain`` when re-searched, ``lifted_error`` when that search failed).
    """
    if profile not in PROFILES:
        raise ValueError(f"profile must be one of {sorted(PROFILES)}, got {profile!r}")
    cfg = PROFILES[profile]
    mu, L, tau, n, ps, step = check_args(
        mu=mu, L=L, local_steps=cfg["local_steps"] if local_steps is None else local_steps,
        n_clients=cfg["n_clients"] if n_clients is None else n_clients,
        ps=cfg["ps"] if ps is None else ps, step=step)
    from flbounds.participation import Bernoulli

    clock = time.perf_counter()
    setting = Setting(n, mu, L, common_minimizer=True)
    series = {name: [_cell(lambda b=build, p=p: lyapunov_rate(b(tau, step, n, p), setting,
                                                            Bernoulli([p] * n)),
                           lambda b=build, p=p: witness_rate(b(tau, step, n, p), setting,
                                                             Bernoulli([p] * n)),
                           (lambda warm, b=build, p=p: lyapunov_rate(
                               b(tau, step, n, p), setting, Bernoulli([p] * n), witness=False,
                               values=True, warm=warm)) if values else None)
                     for p in ps] for name, build in ALGORITHMS.items()}
    if printed and not callable(printed):
        raise ValueError("printed must be a lookup of printed bounds by id (e.g. "
                         f"flbounds.ledger.api.bounds.get) or None, got {printed!r:.60}")
    if printed:
        series.update(_printed_series(mu, L, tau, n, ps, setting, printed, values))
    return dict(constants=dict(mu=mu, L=L, local_steps=tau, n_clients=n, step=step,
                               ps=list(ps), profile=profile),
                series=series, seconds=round(time.perf_counter() - clock, 2))


def _printed_series(mu, L, tau, n, ps, setting, get, values):
    from flbounds.participation import Bernoulli

    focus, safari = [], []
    top = SAFARI_FRACTION * 2.0 / (L + mu)  # a fraction of Thm 5's eta_s <= 2/(L + mu)
    thm1a, thm5 = get("focus.thm1a"), get("safari.thm5")
    for p in ps:
        value = thm1a.evaluate(mu=mu, L=L, p=np.full(n, p), tau=tau)
        cell = _cell(lambda v=value, p=p: lyapunov_rate(
            described.focus_round(tau, v.step), setting, Bernoulli([p] * n), printed=v.value),
            lifted=(lambda warm, v=value, p=p: lyapunov_rate(
                described.focus_round(tau, v.step), setting, Bernoulli([p] * n),
                printed=v.value, witness=False, values=True, warm=warm)) if values else None)
        focus.append(dict(cell, step=value.step, printed=value.value))
        eta_c = 4 * L * top / (tau * (L + mu))
        rate = thm5.evaluate(mu=mu, L=L, local_steps=tau, n_sampled=n, q=p, R=1, dist0=1.0,
                             sigma2=0.0, sigma_s2=0.0, sigma_G2=0.0, step=top).value
        cell = _cell(lambda p=p, r=rate, e=eta_c: safari_bracket(mu, L, p, tau, e, top,
                                                                 printed=r))
        safari.append(dict(cell, step=top, step_client=eta_c, printed=rate))
    return {"FOCUS at Thm 1(a)'s step": focus, "SAFARI, q = p (Thm 5's steps)": safari}


def _fmt(x):
    return "—" if x is None else f"{x:.6f}"


def _reason(cell) -> str:
    """A failed cell's text: the witness's contraction and why there is no certificate."""
    error = cell.get("error", "")
    why = ("no quadratic Lyapunov function certifies a rate below 1"
           if error.startswith("no quadratic Lyapunov") else f"no certificate ({error})")
    low = cell.get("witness")
    if low is not None and low > 1:
        return f"unbounded: witness {_fmt(low)} > 1; {why}"
    return f"witness {_fmt(low)}; {why}"


def markdown(atlas: dict) -> str:
    """The atlas as a Markdown table: one row per p, ``[witness, certified]`` per algorithm
    (and ``(printed)`` where a paper gives one; the reason where there is no certificate)."""
    c = atlas["constants"]
    lines = [f"Worst-case contraction per round (E||x_R - x*||^2 factor), mu = {c['mu']:g}, "
             f"L = {c['L']:g}, tau = {c['local_steps']}, N = {c['n_clients']}, step "
             f"{c['step']:.4g} (FOCUS Thm 1(a) and SAFARI Thm 5 rows at their printed steps); "
             "each cell [witness, certified], (printed) where a paper gives one; SAFARI "
             "without Thm 5's q-condition on the state; FedAU with its weights at their "
             "steady state under Bernoulli(p) participation, omega_i = 1/p (the mean "
             "interval between participations); MIFA's rate is over its model and memory; "
             "(lifted V): the quadratic of the state left the bracket open, certified by "
             "the V that also weighs the clients' gradients and values at x", ""]
    names = list(atlas["series"])
    head = ["p"] + [f"{k} (printed)" if any(cell.get("printed") is not None
                                            for cell in atlas["series"][k]) else k
                    for k in names]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for j, p in enumerate(c["ps"]):
        row = [f"{p:g}"]
        for k in names:
            cell = atlas["series"][k][j]
            text = f"[{_fmt(cell['witness'])}, {_fmt(cell['certified'])}]" if "error" not in \
                cell else _reason(cell)
            if cell.get("values"):
                text += " (lifted V)"
            if cell.get("printed") is not None:
                text += f" ({cell['printed']:.6f})"
            row.append(text)
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines) + "\n"


def write_table(atlas: dict, out_dir) -> list[Path]:
    """``atlas.json`` and ``atlas.md`` in ``out_dir`` (created)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "atlas.json", out / "atlas.md"]
    paths[0].write_text(json.dumps(atlas, indent=1) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(atlas), encoding="utf-8")
    return paths


def arrays(atlas: dict) -> dict:
    """The atlas as flat arrays (NaN where no value), for the figure and its ``.npz``."""
    out = {"p": np.asarray(atlas["constants"]["ps"], float)}
    for k, cells in enumerate(atlas["series"].values()):
        for field in ("certified", "witness", "printed"):
            out[f"s{k}_{field}"] = np.array([np.nan if cell.get(field) is None
                                             else cell[field] for cell in cells], float)
    out["names"] = np.array(list(atlas["series"]))
    return out


__all__ = ["ALGORITHMS", "OPEN", "PROFILES", "arrays", "check_args",
           "compute_atlas", "markdown", "write_table"]
