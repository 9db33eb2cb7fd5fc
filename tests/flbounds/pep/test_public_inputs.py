"""Bad input to the public PEP entry (``flbounds.pep.worst_case``, ``build``, the engine's
``worst_case``) is refused with a ``ValueError`` naming what is wrong, before any SDP is
built (:mod:`flbounds.pep.inputs`): a measure reading a point the state does not have, a
measure that is not a quadratic expression, a pushed message the local update does not send,
a step reading or setting a point it does not have, and the argument at fault among
``round_``, ``setting`` and ``measure``. A planted bug (the probe switched off) brings back
the bare errors these checks replace."""

import pytest
from PEPit import PEP

from flbounds import pep
from flbounds.participation import Bernoulli
from flbounds.pep import engine, inputs

SETTING = pep.Setting(2, 1.0, 4.0, function_class="quadratic", identical=True)
LAW = Bernoulli([0.5, 0.5])
ENTRIES = [pep.worst_case, engine.worst_case, pep.build]


def momentum(push="delta", reads="m"):
    """FedAvg with server momentum (the plugin guide's round); ``push`` and the server
    point the server step reads are arguments, to plant the user's mistakes."""
    def server(state, aggregated):
        m = 0.2 * state[reads] + aggregated["delta"]
        return {"m": m, "x": state["x"] + m}

    return pep.Round("FedAvgM", pep.local_gd(1, 0.2), {push: "uniform"},
                     pep.Server(server, "server momentum"), server_state=("x", "m"))


def measure(value):
    return pep.lyapunov(value, "my V")


GOOD = measure(lambda s, star: (s["x"] - star.x) ** 2 + s["m"] ** 2)


@pytest.fixture
def no_solve(monkeypatch):
    """Any PEP built or solved fails the test: the checks come before any work."""
    def refuse(*a, **k):
        raise AssertionError("a PEP was built before the input was checked")

    monkeypatch.setattr(PEP, "__init__", refuse)


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_measure_reading_a_missing_point_names_it_the_measure_and_the_state(entry, no_solve):
    bad = measure(lambda s, star: (s["x"] - star.x) ** 2 + s["mom"] ** 2)
    with pytest.raises(ValueError, match=r"measure 'my V' reads the point 'mom', not in the "
                                         r"round's state: server points \['x', 'm'\], client "
                                         r"points \[\]"):
        entry(momentum(), SETTING, bad, LAW)


def test_a_missing_client_point_is_named_too(no_solve):
    bad = measure(lambda s, star: sum(z ** 2 for z in s.client("z")))
    with pytest.raises(ValueError, match="reads the point 'z'"):
        pep.worst_case(pep.fedavg_round(1, 0.2), SETTING, bad)


@pytest.mark.parametrize(("value", "said"), [
    (lambda s, star: True, "returned bool True"),
    (lambda s, star: 1.0, "returned the constant 1.0"),
    (lambda s, star: s["x"] - star.x, "returned a point"),
    (lambda s, star: None, "returned NoneType"),
])
@pytest.mark.parametrize("entry", ENTRIES)
def test_a_measure_that_is_not_quadratic_is_refused(entry, value, said, no_solve):
    with pytest.raises(ValueError, match=r"measure 'my V' must return a quadratic expression "
                                         r"of the state's points.*" + said):
        entry(momentum(), SETTING, measure(value), LAW)


@pytest.mark.parametrize("entry", ENTRIES)
def test_a_push_not_sent_names_what_is_sent(entry, no_solve):
    with pytest.raises(ValueError, match=r"messages \['d'\] not sent by the local update "
                                         r"'1 gradient steps, step 0.2', which sends "
                                         r"\['delta'\]"):
        entry(momentum(push="d"), SETTING, GOOD, LAW)


def test_a_server_step_reading_a_missing_point_is_named(no_solve):
    with pytest.raises(ValueError, match=r"server step 'server momentum' of 'FedAvgM' reads "
                                         r"'mom'"):
        pep.worst_case(momentum(reads="mom"), SETTING, GOOD, LAW)


def test_a_local_update_reading_an_unpulled_point_is_named(no_solve):
    def run(f, pulled, state):
        return {}, {"delta": pulled["m"] - pulled["x"]}

    rnd = pep.Round("r", pep.local_custom(run, "reads m"), {"delta": "uniform"},
                    pep.server_model_step(), server_state=("x", "m"))
    with pytest.raises(ValueError, match=r"local update 'reads m' of 'r' reads 'm', which it "
                                         r"is not given: it reads the pulled points \['x'\]"):
        pep.worst_case(rnd, SETTING, GOOD)


@pytest.mark.parametrize(("args", "said"), [
    (("fedavg", SETTING, GOOD), r"round_ must be a Round or a Mixture, got str"),
    ((momentum(), (2, 1.0, 4.0), GOOD), r"setting must be a Setting, got tuple"),
    ((momentum(), SETTING, lambda s, star: 1), r"measure must be a Measure .*, got function"),
])
def test_the_argument_at_fault_is_named(args, said, no_solve):
    with pytest.raises(ValueError, match=said):
        pep.worst_case(*args)


def test_the_engine_names_the_entry_for_a_mixture(no_solve):
    mixture = pep.single(momentum(), LAW)
    with pytest.raises(ValueError, match=r"engine.worst_case takes a Round, got a Mixture; "
                                         r"call flbounds.pep.worst_case"):
        engine.worst_case(mixture, SETTING, GOOD)
    with pytest.raises(ValueError, match=r"round_ must be a Round \(a Mixture goes to "
                                         r"flbounds.pep.worst_case\), got Mixture"):
        pep.build(mixture, SETTING, GOOD)
    assert engine.worst_case.__annotations__["round_"] == "Round"


def test_a_mixture_is_probed_branch_by_branch(no_solve):
    mixture = pep.Mixture("m", ((0.5, momentum(), LAW), (0.5, momentum(push="d"), None)))
    with pytest.raises(ValueError, match=r"messages \['d'\] not sent"):
        pep.worst_case(mixture, SETTING, GOOD)


def test_a_measure_written_for_pepit_only_is_left_to_the_build():
    """The probe skips user code it cannot run on arrays; the build then runs it."""
    def value(s, star):
        assert type(s["x"]).__name__ != "Vector"  # fails on the probe only
        return (s["x"] - star.x) ** 2 + s["m"] ** 2

    res = pep.worst_case(momentum(), SETTING, measure(value), LAW)
    assert res.worst == pytest.approx(pep.worst_case(momentum(), SETTING, GOOD, LAW).worst,
                                      abs=1e-9)


def test_without_the_probe_the_bare_errors_come_back(monkeypatch):
    """Planted bug: the probe switched off; the build fails with the errors it replaces."""
    monkeypatch.setattr(inputs, "probe", lambda *a, **k: None)
    with pytest.raises(KeyError, match="mom"):
        pep.build(momentum(), SETTING,
                  measure(lambda s, star: (s["x"] - star.x) ** 2 + s["mom"] ** 2), LAW)
    with pytest.raises(AttributeError):
        pep.build(momentum(), SETTING, measure(lambda s, star: True), LAW)
