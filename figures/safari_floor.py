r"""SAFARI's gradient-norm floor under incomplete participation vs q and :math:`\eta_s`.

Two-group quadratic (spec 7.B: 4 of 10 clients never participate, m = 5, K = 5,
:math:`\eta_c = 2\eta_s/K`). Points: tail average of :math:`\|\nabla F(x_r)\|^2` (median and
20-80% band over seeds); lines: the closed-form floor :math:`\|\nabla F(\bar x)\|^2` of
:func:`verify.safari.closed_forms.safari_mean_limit` and the first-order
:math:`(2q/(1+q))^2\|c_{\mathcal D} - \bar c\|^2`. Right: the floor does not shrink with
:math:`\eta_s`, while Thm 4's bound does.
"""

from __future__ import annotations

import sys

import matplotlib.pyplot as plt
import numpy as np

from figures._common import band, run_figure
from verify.safari.closed_forms import first_order_floor, safari_mean_limit, thm4_rhs
from verify.safari.instances import (
    ELIGIBLE,
    LOCAL_STEPS,
    N_SAMPLED,
    SIGMA,
    SIGMA_S,
    grad_norm2,
    run_seed,
    two_group_problem,
)

NAME = "safari_floor"
#: the claims this figure illustrates (ids or dotted prefixes)
CLAIMS = ("safari.thm4",)


def _tail(rng, prob, q, eta, n_rounds, n_seeds):
    out = []
    for child in rng.spawn(n_seeds):
        _, tr = run_seed(child, prob, n_rounds=n_rounds, q=q, step_server=eta,
                         step_client=2 * eta / LOCAL_STEPS, x0=(0.0, 2.0))
        out.append(grad_norm2(prob, tr.x[n_rounds // 2:]).mean())
    return out


def compute(profile: str = "quick", seed: int = 0) -> dict:
    rng = np.random.default_rng(seed)
    quick = profile == "quick"
    n_seeds, n_rounds = (4, 8000) if quick else (20, 60000)
    prob = two_group_problem()
    qs = np.linspace(0, 1, 6 if quick else 11)
    steps = np.array([0.02, 0.01, 0.005, 0.0025] + ([] if quick else [0.00125]))
    data = {"q": qs, "eta_s": steps}
    for eta in (0.02, 0.005):
        data[f"mc_q_{eta}"] = np.array([_tail(rng, prob, q, eta, n_rounds, n_seeds)
                                        for q in qs]).T
        data[f"closed_q_{eta}"] = np.array([
            np.sum(prob.gradient(safari_mean_limit(prob, ELIGIBLE, q=q,
                                                   step_client=2 * eta / LOCAL_STEPS,
                                                   step_server=eta, local_steps=LOCAL_STEPS))
                          ** 2) for q in qs])
    data["first_order"] = np.array([first_order_floor(q, 1.0) for q in qs])
    def rounds_for(e):
        return int(min(4 * n_rounds, 80 / e))
    data["mc_eta"] = np.array([_tail(rng, prob, 0.8, e, rounds_for(e), n_seeds)
                               for e in steps]).T
    data["closed_eta"] = np.array([np.sum(prob.gradient(safari_mean_limit(
        prob, ELIGIBLE, q=0.8, step_client=2 * e / LOCAL_STEPS, step_server=e,
        local_steps=LOCAL_STEPS)) ** 2) for e in steps])
    data["thm4_eta"] = np.array([thm4_rhs(delta_f=2.0, n_rounds=rounds_for(e), step_server=e,
                                          q=0.8, L=1.0, sigma2=SIGMA ** 2,
                                          sigma_s2=SIGMA_S ** 2, sigma_G2=2.25,
                                          local_steps=LOCAL_STEPS, n_sampled=N_SAMPLED)
                                 for e in steps])
    return data


def plot(data: dict):
    fig, (ax, bx) = plt.subplots(1, 2, figsize=(11, 4.4), layout="constrained")
    # the two steps' curves coincide (the floor does not depend on the step): the second is
    # dashed over the first, its closed form in smaller markers, so both stay visible
    for eta, color, marker, size, style in ((0.02, "C0", "o", 9, "-"),
                                            (0.005, "C1", "s", 5, "--")):
        band(ax, data["q"], data[f"mc_q_{eta}"], label=fr"measured, $\eta_s={eta}$", color=color)
        ax.lines[-1].set_linestyle(style)
        ax.plot(data["q"], data[f"closed_q_{eta}"], marker, color=color, markersize=size,
                markerfacecolor="none",
                label=fr"closed form $\|\nabla F(\bar x)\|^2$, $\eta_s={eta}$")
    ax.plot(data["q"], data["first_order"], "k:", linewidth=1.2,
            label=r"first order $(2q/(1+q))^2\|c_\mathcal{D}-\bar c\|^2$")
    ax.set_xlabel("client-round probability $q$")
    ax.set_ylabel(r"tail average of $\|\nabla F(x_r)\|^2$")
    ax.set_title("SAFARI floor vs $q$ (4 of 10 clients excluded)")
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2)
    x = data["eta_s"]
    band(bx, x, data["mc_eta"], label="measured floor, $q=0.8$", color="C0")
    bx.plot(x, data["closed_eta"], "o", color="C0", markersize=9, markerfacecolor="none",
            label="closed form")
    bx.plot(x, data["thm4_eta"], "--", color="C3", label="Thm 4 right side (as printed)")
    bx.set_xscale("log")
    bx.set_yscale("log")
    bx.set_xticks(x, [f"{v:g}" for v in x], minor=False)
    bx.set_xticks([], minor=True)
    bx.set_xlabel(r"server step $\eta_s$ ($\eta_c = 2\eta_s/K$)")
    bx.set_ylabel(r"tail average of $\|\nabla F(x_r)\|^2$")
    bx.set_title(r"The floor does not vanish as $\eta_s \to 0$")
    bx.legend(loc="upper center", bbox_to_anchor=(0.5, -0.17), ncol=2)
    return fig


def main(argv=None):
    return run_figure(sys.modules[__name__], argv)


if __name__ == "__main__":
    main()
