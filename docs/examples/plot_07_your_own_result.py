"""
Checking a result of your own
=============================

A paper of your own is a plugin: declare the paper, each numbered result with its parts and
hypotheses, and the claims that check the parts. Here a toy "lemma" states that one gradient
step on a mu-strongly convex, L-smooth quadratic contracts the distance to the minimiser by
``1 - step mu`` when ``step <= 1/L``. One claim checks it inside the hypothesis; a second
reports a counterexample at a step beyond ``1/L``: the ledger does not accept that as a
violation of the lemma, because the instance is outside its hypothesis.
(In a package, these declarations live in a module registered under the entry-point group
``flbounds.claims``; see the plugin guide.)
"""

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim, get, hypothesis, paper, result

paper("toy", title="A toy lemma on gradient steps", reference="A. Reader", venue="2026")


@hypothesis("step", "eta <= 1/L")
def small_step(*, step, L):
    return step <= 1 / L


LEMMA = result("toy.lemma1", ref="Lemma 1", title="one gradient step contracts",
               parts={"contraction": "|x_1 - x*| <= (1 - eta mu) |x_0 - x*|"},
               hypotheses=(small_step,))


def one_step(mu, L, step):
    """Worst ratio |x_1 - x*| / |x_0 - x*| of one gradient step over curvatures in [mu, L]."""
    curvatures = np.linspace(mu, L, 101)
    return float(np.max(np.abs(1 - step * curvatures)))


@claim("toy.lemma1.contraction", result=LEMMA, parts=("contraction",), ref="Lemma 1",
       kind="statement", expected="holds", statement="eta <= 1/L: contraction by 1 - eta mu.",
       quick=dict(mu=1.0, L=4.0, step=0.25))
def contraction(*, rng, mu, L, step):
    return Evidence(measured=one_step(mu, L, step), theoretical=1 - step * mu, relation="<=",
                    tolerance=Tolerance.rounding(1e-15, "one subtraction"),
                    instance=dict(step=step, L=L))


@claim("toy.lemma1.large_step", result=LEMMA, parts=("contraction",), ref="Lemma 1",
       kind="statement", expected="not-applicable",
       statement="The same contraction at a step beyond 1/L.",
       quick=dict(mu=1.0, L=4.0, step=0.45))
def large_step(*, rng, mu, L, step):
    return Evidence(measured=one_step(mu, L, step), theoretical=1 - step * mu, relation="<=",
                    tolerance=Tolerance.rounding(1e-15, "one subtraction"),
                    instance=dict(step=step, L=L))


for cid in ("toy.lemma1.contraction", "toy.lemma1.large_step"):
    row = get(cid).check(seed=0)
    print(f"{cid}: {row.verdict}  (measured {row.measured:.3f}, bound {row.theoretical:.3f})")
    if row.reason:
        print("   ", row.reason)
