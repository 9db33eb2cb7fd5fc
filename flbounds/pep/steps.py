r"""The built-in local updates and server steps of a round described in the vocabulary of
:mod:`flbounds.pep.describe`.

A local update (:class:`~flbounds.pep.describe.Local`) is ``run(f, pulled, state) ->
(new_state, messages)`` for one client with function ``f``; a server step
(:class:`~flbounds.pep.describe.Server`) is ``update(state, aggregated) -> new server
points``. The builders here return those records for FedAvg and FedProx (:func:`local_gd`,
:func:`server_model_step`), FOCUS (:func:`local_tracking`, :func:`server_tracking`),
SCAFFOLD (:func:`local_control_variate`, :func:`server_control_variate`), server momentum
(:func:`server_momentum`) and an exact proximal step (:func:`local_prox`);
:func:`local_custom` wraps a user-written local update. Every one but :func:`local_prox`
(PEPit's ``proximal_step``) only uses ``+``, ``-``, scaling and ``f.gradient``, so it runs on
PEPit points and on arrays alike (:mod:`flbounds.pep.replay`).
"""

from __future__ import annotations

from flbounds.validation import check_int, check_positive

from .describe import Local, Server

# --------------------------------------------------------------------------- local updates


def local_gd(local_steps, step, *, prox=0.0) -> Local:
    r""":math:`\tau` gradient steps from the pulled model, :math:`z_0 = x`, :math:`z_{t+1} =
    z_t - \eta (\nabla f(z_t) + \lambda (z_t - x))` (:math:`\lambda` = ``prox``: FedProx's
    proximal term, 0 for FedAvg).

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step size :math:`\eta > 0`.
    prox : float, default 0
        FedProx's proximal weight :math:`\lambda \ge 0` (0: plain gradient steps).

    Returns
    -------
    Local
        Reads the pulled ``x``; changes no client state; pushes ``delta`` :math:`= z_\tau -
        x`.

    References
    ----------
    T. Li et al., Federated optimization in heterogeneous networks (FedProx), MLSys 2020.
    """
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")
    prox = float(prox)
    if not prox >= 0:
        raise ValueError(f"prox must be >= 0, got {prox}")

    def run(f, pulled, state):
        x = pulled["x"]
        z = x
        for _ in range(tau):
            g = f.gradient(z)
            z = z - step * (g + prox * (z - x)) if prox else z - step * g
        return {}, {"delta": z - x}

    return Local(run, f"{tau} gradient steps, step {step:g}" + (f", prox {prox:g}"
                                                                 if prox else ""))


def local_tracking(local_steps, step) -> Local:
    r"""Gradient tracking (FOCUS): from the pulled :math:`z_0 = x`, :math:`h_t = \nabla
    f(z_t)` for :math:`t < \tau` and :math:`z_{t+1} = z_t - \eta (h_t - g)` for :math:`t <
    \tau - 1`, with the stored gradient :math:`g` (:math:`\tau` gradients, :math:`\tau - 1`
    moves).

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step size :math:`\eta > 0`.

    Returns
    -------
    Local
        Reads the pulled ``x`` and the client point ``g``; the client keeps ``z``
        :math:`= z_{\tau-1}` and ``g`` :math:`= h_{\tau-1}` and pushes ``v`` :math:`=
        h_{\tau-1} - g` (for :func:`server_tracking`, aggregated by
        :class:`~flbounds.pep.aggregation.Sum`).

    References
    ----------
    Ying, Li and Yang, FOCUS, NeurIPS 2025, arXiv:2503.20117.
    """
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")

    def run(f, pulled, state):
        z, g_old, v = pulled["x"], state["g"], None
        for t in range(tau):
            if t > 0:
                z = z - step * v
            v = f.gradient(z) - g_old
        return {"z": z, "g": g_old + v}, {"v": v}

    return Local(run, f"tracking, {tau} gradients, step {step:g}")


def local_control_variate(local_steps, step) -> Local:
    r"""SCAFFOLD (option II): :math:`z_{t+1} = z_t - \eta (\nabla f(z_t) - c_i + c)` for
    :math:`t < \tau` from the pulled :math:`z_0 = x`, then :math:`c_i^+ = c_i - c + (x -
    z_\tau)/(\tau\eta)`.

    Parameters
    ----------
    local_steps : int
        :math:`\tau \ge 1`.
    step : float
        The local step size :math:`\eta > 0`.

    Returns
    -------
    Local
        Reads the pulled ``x`` and ``c`` (the server's control) and the client point ``ci``
        (:math:`c_i`); the client keeps ``ci`` :math:`= c_i^+` and pushes ``delta``
        :math:`= z_\tau - x` and ``dc`` :math:`= c_i^+ - c_i` (for
        :func:`server_control_variate`).

    References
    ----------
    S. P. Karimireddy et al., SCAFFOLD: stochastic controlled averaging for federated
    learning, ICML 2020.
    """
    tau = check_int(local_steps, "local_steps", minimum=1)
    step = check_positive(step, "step")

    def run(f, pulled, state):
        x, c, ci = pulled["x"], pulled["c"], state["ci"]
        z = x
        for _ in range(tau):
            z = z - step * (f.gradient(z) - ci + c)
        c_new = ci - c + (1.0 / (tau * step)) * (x - z)
        return {"ci": c_new}, {"delta": z - x, "dc": c_new - ci}

    return Local(run, f"control variates, {tau} steps, step {step:g}")


def local_prox(step) -> Local:
    r"""One exact proximal step from the pulled model, :math:`z = \operatorname{prox}_{\gamma
    f}(x)`, i.e. :math:`z = x - \gamma \nabla f(z)` (PEPit's ``proximal_step``, or the
    function's own ``proximal_step(x, gamma)`` when it has one, as a class representative of
    :mod:`flbounds.pep.symmetric` does: PEPit points only).

    Parameters
    ----------
    step : float
        :math:`\gamma > 0`.

    Returns
    -------
    Local
        Reads the pulled ``x``; changes no client state; pushes ``delta`` :math:`= z - x`.
    """
    gamma = check_positive(step, "step")

    def run(f, pulled, state):
        from PEPit.primitive_steps import proximal_step

        x = pulled["x"]
        own = getattr(f, "proximal_step", None)    # a symmetric form's class representative
        z = own(x, gamma) if own is not None else proximal_step(x, f, gamma)[0]
        return {}, {"delta": z - x}

    return Local(run, f"proximal step, gamma {gamma:g}")


def local_custom(run, label="custom local update") -> Local:
    """A user-written local update.

    Parameters
    ----------
    run : callable
        ``run(f, pulled, state) -> (new_state, messages)`` for one client: ``f`` its
        function (``f.gradient(z)``), ``pulled`` the pulled server points and ``state`` its
        points (dicts by name); it returns its new points (a dict that may omit one that
        does not change) and its messages (a dict, one point per pushed name). Written with
        ``+``, ``-``, scaling and ``f.gradient`` only, it also runs on arrays.
    label : str, default "custom local update"
        A name for reports.

    Returns
    -------
    Local
        ``run``, named ``label``.

    Raises
    ------
    ValueError
        If ``run`` is not callable.
    """
    if not callable(run):
        raise ValueError("run must be callable: run(f, pulled, state) -> (new_state, messages)")
    return Local(run, str(label))


# --------------------------------------------------------------------------- server steps


def server_model_step(global_step=1.0, message="delta") -> Server:
    r""":math:`x^+ = x + \eta_g \Delta` with :math:`\Delta` the aggregated ``message``.

    Parameters
    ----------
    global_step : float, default 1
        :math:`\eta_g > 0`.
    message : str, default "delta"
        The pushed message whose aggregate is :math:`\Delta`.

    Returns
    -------
    Server
        Updates ``x`` only (an empty round aggregates 0 and keeps :math:`x`).
    """
    eta = check_positive(global_step, "global_step")
    return Server(lambda state, agg: {"x": state["x"] + eta * agg[message]},
                  f"x += {eta:g} * aggregated {message}")


def server_tracking(step) -> Server:
    r"""FOCUS: :math:`y^+ = y + V`, :math:`x^+ = x - \eta y^+`, with :math:`V` the aggregated
    ``v`` (:math:`\sum_{i \in S} v_i` with the push ``v`` aggregated by
    :class:`~flbounds.pep.aggregation.Sum`).

    Parameters
    ----------
    step : float
        :math:`\eta > 0` (FOCUS uses the clients' step).

    Returns
    -------
    Server
        Updates ``y`` and ``x``.

    References
    ----------
    Ying, Li and Yang, FOCUS, NeurIPS 2025, arXiv:2503.20117.
    """
    step = check_positive(step, "step")

    def update(state, agg):
        y = state["y"] + agg["v"]
        return {"y": y, "x": state["x"] - step * y}

    return Server(update, f"y += sum v, x -= {step:g} y")


def server_control_variate(global_step=1.0) -> Server:
    r"""SCAFFOLD: :math:`x^+ = x + \eta_g \Delta`, :math:`c^+ = c + \Delta c`, with
    :math:`\Delta, \Delta c` the aggregated ``delta`` and ``dc`` (SCAFFOLD aggregates ``dc``
    by :math:`1/N` over S: :class:`~flbounds.pep.aggregation.FixedWeights` of :math:`1/N`).

    Parameters
    ----------
    global_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    Server
        Updates ``x`` and ``c``.

    References
    ----------
    S. P. Karimireddy et al., SCAFFOLD: stochastic controlled averaging for federated
    learning, ICML 2020.
    """
    eta = check_positive(global_step, "global_step")
    return Server(lambda state, agg: {"x": state["x"] + eta * agg["delta"],
                                      "c": state["c"] + agg["dc"]},
                  f"x += {eta:g} * aggregated delta, c += aggregated dc")


def server_momentum(beta, global_step=1.0) -> Server:
    r"""Server momentum (FedAvgM; heavy ball on the aggregated update): :math:`m^+ = \beta m +
    \Delta`, :math:`x^+ = x + \eta_g m^+`, with :math:`\Delta` the aggregated ``delta``.

    Parameters
    ----------
    beta : float
        The momentum, :math:`0 \le \beta < 1`.
    global_step : float, default 1
        :math:`\eta_g > 0`.

    Returns
    -------
    Server
        Updates ``m`` and ``x``.

    References
    ----------
    T.-M. H. Hsu, H. Qi and M. Brown, Measuring the effects of non-identical data
    distribution for federated visual classification (FedAvgM), arXiv:1909.06335, 2019.
    B. T. Polyak, Some methods of speeding up the convergence of iteration methods, USSR
    Computational Mathematics and Mathematical Physics 4(5), 1964 (heavy ball).
    """
    beta = float(beta)
    if not 0 <= beta < 1:
        raise ValueError(f"beta must be in [0, 1), got {beta}")
    eta = check_positive(global_step, "global_step")

    def update(state, agg):
        m = beta * state["m"] + agg["delta"]
        return {"m": m, "x": state["x"] + eta * m}

    return Server(update, f"m = {beta:g} m + delta, x += {eta:g} m")


__all__ = ["local_control_variate", "local_custom", "local_gd", "local_prox", "local_tracking",
           "server_control_variate", "server_model_step", "server_momentum", "server_tracking"]
