"""Shared plumbing of the figure scripts: arguments, the Agg backend, saving plot and data.

Every figure is drawn and saved in the one style of :mod:`figures._style` (fonts, sizes, 300
dpi) and writes four files named after it: ``<name>.png`` (300 dpi) and ``<name>.pdf``
(vector) (the plot),
``<name>.npz`` (the plotted numbers) and ``<name>.json`` (parameters, seed, versions, the
claims it illustrates and how long it took; ``flbounds figures`` reads the durations back
for its ETA and ``flbounds report`` reads the claims to place the figure beside them).
"""

from __future__ import annotations

import argparse
import json
import logging
import re
import time
from datetime import UTC, datetime
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from figures._style import DPI, caption, figure_style  # noqa: E402

DEFAULT_OUT = Path("flbounds-results") / "figures"
#: file suffixes a figure writes, in the order returned by :func:`save`
SUFFIXES = (".png", ".pdf", ".npz", ".json")

log = logging.getLogger("figures")


def parse_args(argv, description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--profile", choices=("quick", "full"), default="quick")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def save(fig, data: dict, out_dir: Path, name: str, meta: dict | None = None) -> list[Path]:
    """Write ``<name>.png``, ``.pdf``, the plotted numbers ``.npz`` and ``meta`` as ``.json``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    png, pdf, npz, meta_path = (out_dir / f"{name}{suffix}" for suffix in SUFFIXES)
    fig.savefig(png, dpi=DPI, bbox_inches="tight")
    fig.savefig(pdf, bbox_inches="tight")
    plt.close(fig)
    np.savez(npz, **{k: np.asarray(v) for k, v in data.items()})
    meta = dict(meta or {"name": name})
    meta["files"] = [p.name for p in (png, pdf, npz, meta_path)]
    meta_path.write_text(json.dumps(meta, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    log.debug("%s: wrote %s", name, ", ".join(meta["files"]))
    return [png, pdf, npz, meta_path]


def band(ax, x, samples, *, label: str, color=None) -> None:
    """Median over seeds (axis 0) with the 20-80% band."""
    samples = np.asarray(samples, dtype=float)
    lo, med, hi = np.percentile(samples, [20, 50, 80], axis=0)
    (line,) = ax.plot(x, med, label=label, color=color)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0)


def contraction_gaps(data: dict, *, printed: str, mc: str, xlabel: str, title: str,
                     vline: float | None = None):
    """Printed, PEP worst-case and Monte Carlo contraction gaps 1 - rho against the step
    (``data`` holds ``steps``, ``printed``, ``pep_worst`` and ``mc_rate``)."""
    fig, ax = plt.subplots(figsize=(6.4, 4.6))
    s = data["steps"]
    ax.loglog(s, 1 - data["printed"], "--", label=printed)
    ax.loglog(s, 1 - data["pep_worst"], "o-", label="PEP worst case (whole class)")
    ax.loglog(s, 1 - data["mc_rate"], "s:", label=mc)
    if vline is not None:
        ax.axvline(vline, color="grey", lw=0.8)
    # within one decade numbers label the minor ticks: 2 and 5 per decade stay readable
    ax.xaxis.set_minor_locator(matplotlib.ticker.LogLocator(subs=(2.0, 5.0)))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(r"contraction gap $1-\rho$ per round")
    ax.set_title(title)
    ax.legend()
    return fig


def _scalars(data: dict) -> dict:
    """The plotted data's scalar entries (sizes, constants), for the JSON record."""
    out = {}
    for key, value in data.items():
        arr = np.asarray(value)
        if arr.ndim == 0 and arr.dtype.kind in "biuf":
            out[key] = arr.item()
    return out


def metadata(module, name: str, args, data: dict, elapsed_s: float) -> dict:
    """The JSON record of one drawn figure (see the module docstring)."""
    import matplotlib as mpl

    from flbounds.ledger.api.registry import versions

    doc = (module.__doc__ or "").strip()
    # the docstring's first line, without reST markup (:math:`x` -> x, ``x`` -> x)
    title = re.sub(r":math:`([^`]*)`|``([^`]*)``", lambda m: m.group(1) or m.group(2),
                   doc.splitlines()[0]) if doc else name
    claims = tuple(getattr(module, "CLAIMS", ()))
    return {"name": name, "title": caption(title, claims),
            "claims": list(getattr(module, "CLAIMS", ())),
            "profile": args.profile, "seed": args.seed,
            "parameters": {"profile": args.profile, "seed": args.seed, **_scalars(data)},
            "arrays": {k: list(np.shape(v)) for k, v in data.items() if np.ndim(v) > 0},
            "versions": {**versions(), "matplotlib": mpl.__version__},
            "elapsed_s": round(elapsed_s, 3),
            "created": datetime.now(UTC).isoformat(timespec="seconds")}


def run_figure(module, argv) -> list[Path]:
    """The ``main`` of a figure module: parse arguments, ``compute``, ``plot``, ``save``.

    The figure's name is the module's ``NAME`` (default: the file name), its description
    the first line of the module docstring, the claims it illustrates its ``CLAIMS``.
    """
    description = (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""
    args = parse_args(argv, description)
    # the module's own name, also when it runs as ``python -m figures.<name>`` (__main__)
    name = getattr(module, "NAME", Path(module.__file__).stem)
    start = time.perf_counter()
    log.debug("%s: computing (profile %s, seed %d)", name, args.profile, args.seed)
    with figure_style():
        data = module.compute(args.profile, args.seed)
        fig = module.plot(data)
        meta = metadata(module, name, args, data, time.perf_counter() - start)
        return save(fig, data, args.out, name, meta)
