r"""FedAvg with unbiased samplers on FedProx Synthetic(0, 0) (K-Vib Sec. 6.1, Fig. 2).

Training loss :math:`f(x^t)=\sum_i\lambda_if_i(x^t)` and squared gradient norm
:math:`\|\nabla f(x^t)\|^2` against rounds, median and 20-80% band over seeds, for uniform ISP,
uniform RSP (unbiased N/K estimator), Vrb, Mabs, Avare (reconstructed), K-Vib and the
full-information oracle. N = 100 clients, K = 10 (the released code's sample ratio), multinomial
logistic regression, R local GD steps, :math:`\eta_g=1`. K-Vib and the baselines use the
Sec. 6 practical G (mean first-round feedback). Client sizes are capped (see
:func:`verify.kvib.fedprox_synthetic.fedprox_synthetic`).
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import band, run_figure
from flbounds.algorithms.fedavg_sampler import fedavg_sampler, local_updates
from flbounds.sampling import Avare, KVib, Mabs, OracleISP, UniformISP, UniformRSP, Vrb
from verify.kvib.fedprox_synthetic import fedprox_synthetic

NAME = "kvib_fl"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("kvib.thm4_1.kvib_beats_uniform_isp", "kvib.sec5.enhanced_rate")
SAMPLERS = ("uniform ISP", "uniform RSP", "Vrb", "Mabs", "Avare (recon.)", "K-Vib", "oracle")


def _make(name, n, k, t, G):
    return {"uniform ISP": lambda: UniformISP(n, k), "uniform RSP": lambda: UniformRSP(n, k),
            "Vrb": lambda: Vrb(n, k, t, G=G), "Mabs": lambda: Mabs(n, k, t, G=G),
            "Avare (recon.)": lambda: Avare(n, k, G=G), "K-Vib": lambda: KVib(n, k, t, G=G),
            "oracle": lambda: OracleISP(n, k)}[name]()


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    quick = profile == "quick"
    n, k, local_steps, step = 100, 10, 5, 0.1
    n_rounds, n_seeds, cap = (40, 2, 200) if quick else (300, 5, 1000)
    problem = fedprox_synthetic(rng, 0.0, 0.0, n_clients=n, max_samples=cap)
    z0 = problem.weights[:, None] * local_updates(problem, np.zeros(problem.dim),
                                                  local_steps=local_steps, step=step)
    G = float(np.linalg.norm(z0, axis=1).mean())
    data = {"rounds": np.arange(n_rounds + 1)}
    for j, name in enumerate(SAMPLERS):
        runs = [fedavg_sampler(problem, _make(name, n, k, n_rounds, G),
                               np.random.default_rng([seed, j, s]), n_rounds=n_rounds,
                               local_steps=local_steps, step=step) for s in range(n_seeds)]
        data[f"loss_{j}"] = np.array([r.loss for r in runs])
        data[f"grad_{j}"] = np.array([r.grad_sq for r in runs])
        data[f"beta1_{j}"] = np.array([np.mean(r.variance - r.opt_variance) for r in runs])
    return data


def _beta(value: float) -> str:
    """The mean excess variance; a value at rounding level (the oracle's) prints as 0."""
    return "0" if abs(value) < 1e-12 else f"{value:.2g}"


def plot(data: dict):
    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(10.5, 4.6), layout="constrained")
    t = data["rounds"]
    for j, name in enumerate(SAMPLERS):
        label = rf"{name} ($\beta_1$ = {_beta(np.median(data[f'beta1_{j}']))})"
        color = "k" if name == "oracle" else f"C{j}"
        band(ax, t, data[f"loss_{j}"], label=label, color=color)
        band(ax2, t, data[f"grad_{j}"], label=name, color=color)
        if name == "oracle":               # the reference, dashed in both panels
            ax.lines[-1].set_linestyle("--")
            ax2.lines[-1].set_linestyle("--")
    ax.set_xlabel(r"round $t$")
    ax.set_ylabel(r"training loss $f(x^t)$")
    ax2.set_xlabel(r"round $t$")
    ax2.set_ylabel(r"$\|\nabla f(x^t)\|^2$")
    ax2.set_yscale("log")
    ax.set_title("training loss")
    ax2.set_title("squared gradient norm")
    fig.suptitle(rf"FedAvg on Synthetic(0,0), $N = 100$, $K = 10$: median and 20-80% band over "
                 f"{data['loss_0'].shape[0]} seeds")
    fig.legend(*ax.get_legend_handles_labels(), loc="outside lower center", ncol=3,
               title=r"sampler ($\beta_1$: mean variance above the oracle's, Thm 4.1)")
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
