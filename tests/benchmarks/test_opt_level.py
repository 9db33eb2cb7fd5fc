"""The optimisation-level benchmark's harness: its report row and its arguments. No timing is
asserted (the benchmark itself compiles every kernel twice, far too long for the suite)."""

from __future__ import annotations

import pytest

from benchmarks import opt_level


def test_row_pairs_each_repeat_of_the_two_levels():
    row = opt_level._row("w", [1.0, 3.0, 2.0], [2.0, 2.0, 2.0], True)
    assert row["level1_s"] == 1.0 and row["level3_s"] == 2.0
    assert row["ratio_min"] == 0.5 and row["ratio_median"] == 1.0    # 0.5, 1.5, 1.0
    assert row["identical"] is True
    assert opt_level._row("compile", [1.0], [2.0], None)["identical"] == ""


def test_the_two_levels_are_flbounds_own_and_numba_default():
    from flbounds.kernels import KERNEL_OPT

    assert opt_level.LEVELS == (KERNEL_OPT, 3)


@pytest.mark.parametrize("repeats", ["0", "-1"])
def test_bad_repeats_is_a_usage_error(repeats, capsys):
    with pytest.raises(SystemExit) as stop:
        opt_level.main(["--repeats", repeats])
    assert stop.value.code == 2
    assert "--repeats" in capsys.readouterr().err
