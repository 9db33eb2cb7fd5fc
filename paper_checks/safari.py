r"""Cross-table identities of SAFARI's experiments (SAFARI, Sec. 5 and App. B; spec V7).

The printed numbers are transcribed below (``None`` is the paper's '-': no difference within
a 2% error bar). Accuracies carry two decimals (a few one), so a difference of two printed
numbers is exact to 0.01 ("rounding of two-decimal entries").
"""

from __future__ import annotations

import numpy as np

from flbounds.ledger import Evidence, Tolerance, claim
from verify.safari.tables import (
    TABLE1,
    TABLE2,
    TABLE3,
    TABLE4,
    TABLE5,
    TABLE6,
    TABLE7,
    TABLE8,
    TABLE9,
    TABLE10,
    TABLE11,
)

P_COLS = (10, 5, 2, 1)
ROUND = Tolerance.rounding(0.01, "each entry is printed to 0.01; differences exact to 0.01")

#: Table 1, FedAvg accuracy, rows s = 0, 2, 4; columns p = 10, 5, 2, 1
T1 = {"mnist": {0: (92.69, 89.49, 86.17, 84.49), 2: (92.64, 89.11, 86.54, 71.58),
                4: (92.62, 88.81, 77.81, 57.05)},
      "cifar": {0: (81.12, 79.42, 78.22, 75.7), 2: (79.97, 78.54, 76.68, 64.56),
                4: (77.78, 75.55, 67.34, 50.7)}}
#: Table 2, SAFARI (q = 0.8) minus FedAvg
T2 = {"mnist": {0: (None, None, 3.13, 4.47), 2: (None, None, 2.01, 16.53),
                4: (None, None, 10.69, 31.07)},
      "cifar": {0: (None, None, None, 2.57), 2: (None, None, None, 12.57),
                4: (None, 2.93, 9.32, 23.86)}}
#: Tables 3 (MNIST) and 4 (CIFAR-10): improvement vs server size n_T, s = 4
T3 = {50: (None, None, 4.82, 16.65), 100: (None, None, 6.87, 20.26),
      500: (None, None, 9.16, 29.82), 1000: (None, None, 10.69, 31.07)}
T4 = {500: (None, None, 3.45, 7.14), 5000: (None, None, 8.15, 20.52),
      10000: (None, 2.93, 9.32, 23.86)}
#: Table 5, SAFARI accuracy at p = 1 for q = 1.0 (FedAvg), 0.8, 0.6, 0.4
T5 = {"mnist": {0: (84.49, 88.96, 89.11, 89.1), 2: (71.58, 88.11, 88.06, 88.27),
                4: (57.05, 88.12, 88.44, 87.19)},
      "cifar": {0: (75.7, 78.27, 77.2, 76.29), 2: (64.56, 77.13, 75.17, 75.08),
                4: (50.7, 74.56, 73.85, 74.19)}}
#: Tables 10 (MNIST) and 11 (CIFAR-10): accuracy vs m, (FedAvg, SAFARI) rows
T10 = {1: ((92.11, 65.63, 58.65, 49.86), (91.88, 90.04, 87.96, 87.83)),
       2: ((92.40, 83.28, 67.03, 53.75), (92.27, 90.00, 87.63, 87.45)),
       3: ((92.51, 87.19, 75.14, 55.76), (92.54, 90.39, 87.63, 88.19)),
       4: ((92.55, 88.60, 78.52, 56.42), (92.45, 90.85, 88.30, 87.88)),
       5: ((92.62, 88.81, 77.81, 57.05), (92.52, 90.35, 88.50, 88.12)),
       6: ((92.58, 88.20, 77.42, 57.12), (92.65, 90.35, 87.67, 88.23))}
T11 = {1: ((78.61, 75.34, 53.02, 10.31), (79.80, 78.70, 75.90, 63.04)),
       2: ((78.48, 76.46, 67.24, 45.87), (79.15, 77.90, 76.75, 72.93)),
       4: ((78.59, 75.21, 68.05, 50.25), (79.98, 77.56, 76.60, 75.51)),
       5: ((77.78, 75.55, 67.34, 50.70), (79.47, 78.48, 76.66, 74.56))}
#: Tables 8 (MNIST, 5 seeds) and 9 (CIFAR-10, 3 seeds): (FedAvg, SAFARI) rows of (mean, std)
T8 = {0: (((92.67, .05), (89.70, .23), (86.04, .61), (84.60, .99)),
          ((92.60, .08), (91.08, .13), (89.42, .17), (89.10, .24))),
      2: (((92.64, .07), (89.13, .28), (86.34, .92), (71.66, .74)),
          ((92.62, .04), (90.68, .38), (88.75, .22), (88.50, .63))),
      4: (((92.58, .03), (88.76, .13), (77.82, .22), (57.09, .04)),
          ((92.51, .04), (90.41, .17), (88.27, .21), (88.06, .24)))}
T9 = {0: (((81.48, .38), (79.78, .34), (78.36, .17), (76.39, .60)),
          ((81.40, .45), (80.13, .33), (79.00, .25), (78.34, .12))),
      2: (((80.11, .14), (78.63, .33), (77.14, .42), (65.16, .56)),
          ((80.41, .10), (79.13, .28), (77.66, .10), (77.21, .39))),
      4: (((78.16, .33), (75.30, .22), (67.78, .38), (50.67, .25)),
          ((79.28, .21), (78.27, .21), (76.52, .16), (75.18, .54)))}
SEEDS = {"mnist": 5, "cifar": 3}
#: Fashion-MNIST: Table 6 FedAvg at s = 90 and Table 7's FedAvg entry (same setting)
T6_S90, T7_FEDAVG = 80.71, 80.0


def _pairs(measured, printed):
    return Evidence(measured=np.round(measured, 10), theoretical=printed, relation="==",
                    tolerance=ROUND, details={"measured": measured, "printed": printed})


@claim("safari.tables.table2_from_table5", ref="Tables 2 and 5", kind="example",
       expected="holds", parts=(TABLE2.part("improvement"), TABLE5.part("accuracy")),
       statement="Table 2's p = 1 column equals Table 5's q = 0.8 minus q = 1.0 (FedAvg), "
                 "for MNIST and CIFAR-10 and every s.")
def table2_from_table5(*, rng):
    """Pure arithmetic on printed numbers (e.g. 88.12 - 57.05 = 31.07); tolerance 0.01."""
    meas, printed = [], []
    for ds in ("mnist", "cifar"):
        for s in (0, 2, 4):
            meas.append(T5[ds][s][1] - T5[ds][s][0])
            printed.append(T2[ds][s][3])
    return _pairs(meas, printed)


@claim("safari.tables.table5_fedavg_is_table1", ref="Tables 1 and 5", kind="example",
       expected="holds", parts=(TABLE1.part("accuracy"), TABLE5.part("accuracy")),
       statement="Table 5's q = 1.0 (FedAvg) column equals Table 1's p = 1 column.")
def table5_fedavg_is_table1(*, rng):
    """Entry-by-entry equality of printed numbers; tolerance 0.01."""
    meas = [T5[ds][s][0] for ds in ("mnist", "cifar") for s in (0, 2, 4)]
    return _pairs(meas, [T1[ds][s][3] for ds in ("mnist", "cifar") for s in (0, 2, 4)])


@claim("safari.tables.server_size_rows_match_table2", ref="Tables 2, 3, 4", kind="example",
       expected="holds", parts=(TABLE2.part("improvement"), TABLE3.part("improvement"),
                                TABLE4.part("improvement")),
       statement="Table 3's n_T = 1000 row equals Table 2's MNIST s = 4 row and Table 4's "
                 "n_T = 10000 row equals Table 2's CIFAR-10 s = 4 row (so Table 2 used "
                 "n_T = 1000 / 10000).")
def server_size_rows_match_table2(*, rng):
    """Numeric entries compared to 0.01; '-' entries must coincide (count of mismatches 0)."""
    meas, printed, dash_mismatch = [], [], 0
    for row, ref in ((T3[1000], T2["mnist"][4]), (T4[10000], T2["cifar"][4])):
        for a, b in zip(row, ref, strict=True):
            if (a is None) != (b is None):
                dash_mismatch += 1
            elif a is not None:
                meas.append(a)
                printed.append(b)
    return Evidence(measured=meas + [dash_mismatch], theoretical=printed + [0], relation="==",
                    tolerance=ROUND, details={"dash_mismatches": dash_mismatch})


@claim("safari.tables.m5_rows_match_table1_and_table2", ref="Tables 1, 2, 10, 11",
       kind="example", expected="holds",
       parts=(TABLE1.part("accuracy"), TABLE2.part("improvement"), TABLE10.part("accuracy"),
              TABLE11.part("accuracy")),
       statement="The m = 5 FedAvg rows of Tables 10/11 equal Table 1's s = 4 rows, and their "
                 "SAFARI - FedAvg differences equal Table 2's s = 4 rows where numeric and are "
                 "below 2 points where Table 2 prints '-'.")
def m5_rows_match(*, rng):
    """Differences of printed numbers (e.g. 88.50 - 77.81 = 10.69, 79.47 - 77.78 = 1.69 for a
    '-'); '-' cells are encoded as the bound |diff| < 2 (measured |diff| - 2 <= 0)."""
    meas, printed, dash = [], [], []
    for ds, table in (("mnist", T10), ("cifar", T11)):
        fedavg, safari = table[5]
        meas += list(fedavg)
        printed += list(T1[ds][4])
        for f, s, t2 in zip(fedavg, safari, T2[ds][4], strict=True):
            if t2 is None:
                dash.append(round(abs(s - f), 10))
            else:
                meas.append(s - f)
                printed.append(t2)
    return _mixed(meas, printed, dash)


def _mixed(meas, printed, dash):
    """Identities as |measured - printed| <= 0.01 and '-' cells as |diff| <= 2, one relation."""
    gaps = [abs(m - p) for m, p in zip(meas, printed, strict=True)]
    return Evidence(measured=gaps + dash, theoretical=[0.0] * len(gaps) + [2.0] * len(dash),
                    relation="<=", tolerance=ROUND,
                    details={"identity_gaps": gaps, "dash_abs_diffs": dash})


@claim("safari.tables.text_degradation_numbers", ref="Sec. 5, Table 1 text", kind="example",
       expected="holds", parts=(TABLE1.part("degradation"), TABLE3.part("improvement"),
                                TABLE4.part("improvement")),
       statement="The text's numbers follow from Table 1: drops of 27.44 (MNIST) and 25 "
                 "(CIFAR-10) at p = 1 from s = 0 to 4; 92.69 -> 92.62 and 81.12 -> 77.78 at "
                 "p = 10; Table 3's 16.65 (n_T = 50) and 31.07 (n_T = 1000); Table 4's 23.86.")
def text_numbers(*, rng):
    """Subtractions and look-ups of printed numbers; tolerance 0.01."""
    meas = [T1["mnist"][0][3] - T1["mnist"][4][3], T1["cifar"][0][3] - T1["cifar"][4][3],
            T1["mnist"][0][0], T1["mnist"][4][0], T1["cifar"][0][0], T1["cifar"][4][0],
            T3[50][3], T3[1000][3], T4[10000][3]]
    return _pairs(meas, [27.44, 25.0, 92.69, 92.62, 81.12, 77.78, 16.65, 31.07, 23.86])


@claim("safari.tables.gain_grows_with_server_size", ref="Tables 3-4 (text)", kind="remark",
       expected="holds", parts=(TABLE3.part("trend"), TABLE4.part("trend")),
       statement="The improvement grows with the server data size n_T at p = 2 and p = 1, on "
                 "MNIST and CIFAR-10.")
def gain_grows(*, rng):
    """Successive differences of printed improvements must be positive (exact)."""
    steps = []
    for table in (T3, T4):
        sizes = sorted(table)
        for col in (2, 3):
            vals = [table[n][col] for n in sizes]
            steps += [b - a for a, b in zip(vals, vals[1:], strict=False)]
    return Evidence(measured=min(steps), theoretical=0.0, relation=">=",
                    tolerance=Tolerance.exact("printed numbers"), details={"steps": steps})


@claim("safari.tables.m_negative_effect_text", ref="App. B.5 text, Tables 10-11",
       kind="remark", expected="violated",
       parts=(TABLE10.part("m_effect"), TABLE11.part("m_effect")),
       statement="'m has a negative effect on test accuracy in non-i.i.d. scenarios': FedAvg "
                 "accuracy at p = 1 does not increase from the smallest to the largest m.")
def m_negative_effect(*, rng):
    """Literal reading checked on the printed numbers: FedAvg at p = 1 goes 49.86 -> 57.12
    (MNIST, m = 1 -> 6) and 10.31 -> 50.70 (CIFAR-10, m = 1 -> 5): accuracy *rises* with m, so
    the sentence is contradicted by its own tables (spec 5). The likely intent, 'a small m
    hurts', is what the numbers show. Exact comparison of printed numbers."""
    rises = [T10[6][0][3] - T10[1][0][3], T11[5][0][3] - T11[1][0][3]]
    return Evidence(measured=rises, theoretical=[0.0, 0.0], relation="<=",
                    tolerance=Tolerance.exact("printed numbers"),
                    details={"mnist_p1": [T10[m][0][3] for m in sorted(T10)],
                             "cifar_p1": [T11[m][0][3] for m in sorted(T11)]})


@claim("safari.tables.small_m_hurts_reading", ref="App. B.5 text, Tables 10-11",
       kind="remark", expected="holds", corrects="safari.tables.m_negative_effect_text",
       parts=(TABLE10.part("m_effect"), TABLE11.part("m_effect")),
       statement="The other reading of 'm has a negative effect ... more pronounced as the "
                 "non-i.i.d. degree increases': a small m hurts, i.e. FedAvg's accuracy gain "
                 "from the smallest to the largest m is positive at p = 1 and larger at p = 1 "
                 "than at p = 10.")
def small_m_hurts(*, rng):
    """Printed numbers: the gain from m = 1 to the largest m at p = 1 (MNIST 7.26, CIFAR-10
    40.39) must be > 0 and exceed the gain at p = 10 (MNIST 0.47, CIFAR-10 -0.83): measured
    [gain p=1, gain p=1 - gain p=10] per dataset, each >= 0.01, one unit of the print
    (exact comparisons of printed numbers). With safari.tables.m_negative_effect_text, the
    literal reading fails and this one holds."""
    meas, rows = [], {}
    for name, table in (("mnist", T10), ("cifar", T11)):
        first, last = min(table), max(table)
        gain = {p: table[last][0][j] - table[first][0][j] for j, p in enumerate(P_COLS)}
        meas += [gain[1], gain[1] - gain[10]]
        rows[name] = {f"p={p}": round(g, 10) for p, g in gain.items()}
    # strictly positive at the print resolution: at least one unit of 0.01
    return Evidence(measured=np.round(meas, 10), theoretical=[0.01] * len(meas), relation=">=",
                    tolerance=Tolerance.exact("printed numbers"),
                    details={"fedavg_gain_smallest_to_largest_m": rows})


@claim("safari.tables.fmnist_fedavg_consistent", ref="Tables 6 and 7", kind="example",
       expected="violated", parts=(TABLE6.part("accuracy"), TABLE7.part("accuracy")),
       statement="Table 7's FedAvg accuracy (s = 90, M = 150) equals Table 6's s = 90 entry.")
def fmnist_fedavg(*, rng):
    """Same setting, same std (0.38), different means: 80 vs 80.71. Table 7 prints the mean
    without decimals ("80"), so the tolerance is the rounding of an integer print, 0.5 (the
    widest reading of "80"); the difference 0.71 exceeds it by 0.21 (and the 0.01 of a
    two-decimal print by 0.70). Most likely a transcription slip in Table 7."""
    return Evidence(measured=T7_FEDAVG, theoretical=T6_S90, relation="==",
                    tolerance=Tolerance.rounding(0.5, "Table 7 prints 80 without decimals: "
                                                 "any mean in [79.5, 80.5) prints so"),
                    details={"table6_s90": T6_S90, "table7_fedavg": T7_FEDAVG,
                             "excess_over_integer_rounding": round(abs(T6_S90 - T7_FEDAVG)
                                                                   - 0.5, 10)})


def _spread_cells(name, table, n_seeds):
    """(|single run - mean|, the largest deviation one of n_seeds runs can have, label) for
    Table 1's FedAvg cells and, where Table 2 is numeric, SAFARI = Table 1 + Table 2."""
    for s in (0, 2, 4):
        for j, p in enumerate(P_COLS):
            (f_mean, f_std), (s_mean, s_std) = table[s][0][j], table[s][1][j]
            yield (abs(T1[name][s][j] - f_mean), f_std * np.sqrt(n_seeds - 1),
                   f"{name} FedAvg s={s} p={p}")
            if T2[name][s][j] is not None:
                single = T1[name][s][j] + T2[name][s][j]
                yield (abs(single - s_mean), s_std * np.sqrt(n_seeds - 1),
                       f"{name} SAFARI s={s} p={p}")


@claim("safari.tables.appendix_grids_contain_main_runs", ref="Tables 1, 2, 8 and 9",
       kind="example", expected="holds",
       parts=(TABLE1.part("accuracy"), TABLE2.part("improvement"), TABLE8.part("accuracy"),
              TABLE9.part("accuracy")),
       statement="Each single-run accuracy of Tables 1-2 (FedAvg, and SAFARI = FedAvg + "
                 "improvement) could be one of the seeds Tables 8-9 summarize: it lies within "
                 "std sqrt(n - 1) of the seeds' mean; and every '-' of Table 2 has a mean "
                 "difference below 2 points in Tables 8-9.")
def appendix_grids_contain_main_runs(*, rng):
    """n numbers with mean m and standard deviation s satisfy |x_i - m| <= s sqrt(n - 1) for
    the population s (ddof 0) and <= s (n - 1)/sqrt(n) for the sample s (ddof 1); App. B.4's
    "standard variance" does not say which, so the larger, s sqrt(n - 1), is used (n = 5
    MNIST, 3 CIFAR-10). A cell outside it cannot be one of the summarized runs. Tolerance:
    the three printed numbers are each rounded to 0.005, so 0.005 (2 + sqrt(n - 1)) <= 0.02.
    Measured: |single - mean| - s sqrt(n - 1) per cell (<= 0) and, for Table 2's '-' cells,
    |mean SAFARI - mean FedAvg| - 2 (<= 0). The closest cells are reported (CIFAR-10 FedAvg
    s = 0, p = 10: 0.36 against 0.54)."""
    gaps, labels = [], []
    for name, table in (("mnist", T8), ("cifar", T9)):
        for dev, limit, label in _spread_cells(name, table, SEEDS[name]):
            gaps.append(round(dev - limit, 10))
            labels.append(label)
    dash = []
    for name, table in (("mnist", T8), ("cifar", T9)):
        for s in (0, 2, 4):
            for j, p in enumerate(P_COLS):
                if T2[name][s][j] is None:
                    diff = abs(table[s][1][j][0] - table[s][0][j][0])
                    dash.append(round(diff - 2.0, 10))
                    labels.append(f"{name} '-' s={s} p={p}")
    order = np.argsort(gaps)[::-1][:3]
    numeric_below_2 = [f"{name} s={s} p={p}" for name, table in (("mnist", T8), ("cifar", T9))
                       for s in (0, 2, 4) for j, p in enumerate(P_COLS)
                       if T2[name][s][j] is not None
                       and abs(table[s][1][j][0] - table[s][0][j][0]) < 2.0]
    return Evidence(measured=gaps + dash, theoretical=[0.0] * (len(gaps) + len(dash)),
                    relation="<=",
                    tolerance=Tolerance.rounding(0.005 * (2 + np.sqrt(4)),
                                                 "three numbers printed to 0.01, n <= 5"),
                    details={"closest_cells": [(labels[i], gaps[i]) for i in order],
                             "largest_dash_difference_minus_2": max(dash),
                             "numeric_table2_cells_below_2_in_appendix": numeric_below_2})
