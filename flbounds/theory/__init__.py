r"""Learning-theory constructions and exact limits that are not tied to one paper.

- :mod:`.fedavg_limits`: FedAvg on quadratic clients under any participation law: the local
  affine maps, the mean fixed point, the exact stationary moments, the virtual-phase errors;
- :mod:`.impossibility`: the two-point construction behind "not PAC-learnable under
  incomplete participation" (exact event probability, Chernoff bound, learners, Monte Carlo
  plans);
- :mod:`.thresholds`: one-dimensional threshold classifiers (ERM with a pinned tie-break,
  exact excess error under mixtures of uniforms, the transfer constant of a mixture);
- :mod:`.data_models`: client data models with exact population risks (ridge, softmax
  pools); :mod:`.ols`: the OLS closed forms;
- :mod:`.generalization`, :mod:`.generalization_rounds`: Monte Carlo estimators of the
  one-round and R-round generalization gaps of averaged models, with control variates.
"""
