"""``flbounds atlas``: the rate atlas (worst-case contraction against participation).

Computes :func:`flbounds.pep.atlas.compute_atlas` and writes ``atlas.json`` and
``atlas.md`` (the table) and ``pep_atlas.png`` (300 dpi) and ``.pdf`` (the figure of
``figures/pep_atlas.py``, in the figures' style) into ``--out``. Bad constants are a one-line
usage error (exit 2) before any solve.
"""

from __future__ import annotations

from pathlib import Path

from ._common import DEFAULT_RESULTS, UsageError

HELP = "worst-case rates over many rounds against the participation probability"
EXAMPLES = """examples:
  flbounds atlas                              quick profile (N = 2, tau = 2), about a minute
  flbounds atlas --profile full --out atlas   N = 3, tau = 3, 12 probabilities
  flbounds atlas --p 0.1,0.5,1 --L 10 --tau 2 --no-printed"""


def _floats(text: str) -> tuple[float, ...]:
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise UsageError(f"--p must be comma-separated numbers, got {text!r}") from None


def add_arguments(p) -> None:
    p.add_argument("--out", type=Path, default=DEFAULT_RESULTS / "atlas", metavar="DIR",
                   help=f"output folder (default: {DEFAULT_RESULTS / 'atlas'})")
    p.add_argument("--profile", choices=("quick", "full"), default="quick",
                   help="quick: N = 2, tau = 2, 5 probabilities; full: N = 3, tau = 3, 12")
    p.add_argument("--mu", type=float, default=1.0, help="strong convexity (default 1)")
    p.add_argument("--L", type=float, default=4.0, help="smoothness (default 4)")
    p.add_argument("--tau", type=int, default=None, help="local steps (default: profile's)")
    p.add_argument("--clients", type=int, default=None, help="N (default: profile's; <= 8)")
    p.add_argument("--p", default=None, metavar="P1,P2,...",
                   help="participation probabilities in (0, 1] (default: profile's)")
    p.add_argument("--step", type=float, default=None,
                   help="local step of every algorithm (default 1/(4 L tau))")
    p.add_argument("--no-printed", action="store_true",
                   help="leave out FOCUS Thm 1(a) and SAFARI Thm 5 at their printed steps")
    p.add_argument("--no-figure", action="store_true", help="write the table only")


def run(args) -> int:
    from flbounds.pep import atlas

    options = dict(mu=args.mu, L=args.L, local_steps=args.tau, n_clients=args.clients,
                   ps=None if args.p is None else _floats(args.p), step=args.step)
    cfg = atlas.PROFILES[args.profile]
    try:  # every constant checked before any solve
        atlas.check_args(**{k: cfg[k] if v is None else v for k, v in options.items()
                            if k in ("local_steps", "n_clients", "ps")},
                         mu=args.mu, L=args.L, step=args.step)
    except ValueError as exc:  # name the command-line option, not the function's argument
        message = str(exc)
        for name, flag in (("ps", "--p"), ("local_steps", "--tau"), ("n_clients", "--clients"),
                           ("step", "--step"), ("mu", "--mu"), ("L", "--L")):
            if message.startswith(f"{name} "):
                message = f"{flag} ({name}) {message[len(name) + 1:]}"
                break
        raise UsageError(message) from None
    from flbounds.ledger.api.bounds import get
    from flbounds.ledger.api.registry import load_all

    load_all()   # the papers' plugins register the printed bounds
    table = atlas.compute_atlas(profile=args.profile, printed=None if args.no_printed else get,
                                **options)
    written = atlas.write_table(table, args.out)
    if not args.no_figure:
        written += _figure(table, args.out)
    for path in written:
        print(path)
    return 0


def _figure(table, out):
    """The atlas figure, drawn by the ``pep_atlas`` figure of the figures' registry."""
    import matplotlib

    matplotlib.use("Agg")
    from flbounds.ledger.api.figures import select_figures

    return select_figures(["pep_atlas"])["pep_atlas"].draw(table, out)
