"""Shared plumbing of the figure scripts: arguments, the Agg backend, saving plot and data."""

from __future__ import annotations

import argparse
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

DEFAULT_OUT = Path("flbounds-results") / "figures"


def parse_args(argv, description: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output directory")
    parser.add_argument("--profile", choices=("quick", "full"), default="quick")
    parser.add_argument("--seed", type=int, default=0)
    return parser.parse_args(argv)


def save(fig, data: dict, out_dir: Path, name: str) -> list[Path]:
    """Write ``<name>.png`` and the plotted numbers ``<name>.npz`` into ``out_dir``."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    png, npz = out_dir / f"{name}.png", out_dir / f"{name}.npz"
    fig.savefig(png, dpi=120, bbox_inches="tight")
    plt.close(fig)
    np.savez(npz, **{k: np.asarray(v) for k, v in data.items()})
    return [png, npz]


def band(ax, x, samples, *, label: str, color=None) -> None:
    """Median over seeds (axis 0) with the 20-80% band."""
    samples = np.asarray(samples, dtype=float)
    lo, med, hi = np.percentile(samples, [20, 50, 80], axis=0)
    (line,) = ax.plot(x, med, label=label, color=color)
    ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.25, linewidth=0)


def run_figure(module, argv) -> list[Path]:
    """The ``main`` of a figure module: parse arguments, ``compute``, ``plot``, ``save``.

    The figure's name is the module's ``NAME`` (default: the file name), its description
    the first line of the module docstring.
    """
    description = (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""
    args = parse_args(argv, description)
    data = module.compute(args.profile, args.seed)
    # the module's own name, also when it runs as ``python -m figures.<name>`` (__main__)
    name = getattr(module, "NAME", Path(module.__file__).stem)
    return save(module.plot(data), data, args.out, name)
