r"""FedALS Table 2: communication per client for alpha in {1, 5, 10, 25, 50, 100}.

The paper prints the column 2.344B, 0.473B, 0.239B, 0.099B, 0.052B, 0.029B (parameters). The
reconstruction (spec 2.2, audit 7): T = 20,000 local steps (the code's ``iteration``), tau = 5,
upload + download, head = the fc layer 64 x 10 + 10 = 650 parameters, body = the other
trainable parameters of the repository's ResNet-20 (3x3-conv + BN downsample shortcuts),
292,304 parameters; cost = 2 [ceil(T/tau) P_h + ceil(T/(alpha tau)) P_phi].
"""

from __future__ import annotations

import numpy as np

from flbounds.algorithms.fedals import communication_cost
from flbounds.ledger import Evidence, Tolerance, claim
from verify.fedals.table2 import TABLE2
from verify.fedals.table3 import TABLE3 as TABLE3_RESULT

TABLE2_BILLIONS = {1: 2.344, 5: 0.473, 10: 0.239, 25: 0.099, 50: 0.052, 100: 0.029}


def resnet20_counts(shortcut: str = "conv") -> tuple[int, int]:
    """(body, head) trainable parameters of a CIFAR ResNet-20 with 10 classes.

    Stem conv 3->16 (3x3, no bias) + BN; three stages of 3 basic blocks (two 3x3 convs + BN
    each) with widths 16, 32, 64; ``shortcut="conv"``: the repository's 3x3 conv + BN
    downsample at the two stage transitions; ``"identity"``: option A (no parameters).
    """
    def conv_bn(c_in, c_out):
        return 9 * c_in * c_out + 2 * c_out

    body = conv_bn(3, 16)
    c_in = 16
    for width in (16, 32, 64):
        for block in range(3):
            body += conv_bn(c_in, width) + conv_bn(width, width)
            if block == 0 and c_in != width and shortcut == "conv":
                body += conv_bn(c_in, width)
            c_in = width
    return body, 64 * 10 + 10


@claim("fedals.table2.communication", ref="Table 2 (communication column)", kind="example",
       expected="holds", result=TABLE2, parts=("communication",),
       statement="Communication per client of FedALS for alpha = 1, 5, 10, 25, 50, 100 is "
                 "2.344B, 0.473B, 0.239B, 0.099B, 0.052B, 0.029B parameters.",
       quick=dict(n_steps=20000, local_steps=5), full=dict(n_steps=20000, local_steps=5))
def table2_communication(*, rng, n_steps, local_steps):
    r"""The formula with the counted ResNet-20 parameters reproduces every entry after rounding
    to 3 decimals in billions: measured = the rounded values, tolerance exact (rounding is part
    of the comparison; the paper prints 3 decimals). The paper is consistent here (audit 7).
    Details: the unrounded counts, and the option-A ResNet-20 (body 269,072) for contrast,
    which does not match (2.158B at alpha = 1)."""
    body, head = resnet20_counts("conv")
    alphas = sorted(TABLE2_BILLIONS)
    exact = [communication_cost(n_steps, local_steps, a, head, body) for a in alphas]
    rounded = [round(c / 1e9, 3) for c in exact]
    body_a, _ = resnet20_counts("identity")
    option_a = [round(communication_cost(n_steps, local_steps, a, head, body_a) / 1e9, 3)
                for a in alphas]
    return Evidence(measured=rounded, theoretical=[TABLE2_BILLIONS[a] for a in alphas],
                    relation="==", tolerance=Tolerance.exact("3-decimal values compared"),
                    instance=dict(alphas=alphas, local_steps=local_steps),
                    details={"alphas": alphas, "counts": exact, "body_params": body,
                             "head_params": head, "option_a_body_params": body_a,
                             "option_a_billions": option_a,
                             "ratio_to_alpha1": list(np.array(exact) / exact[0])})


# Table 3 (ResNet-20, non-iid, tau = 5, alpha = 10): accuracy (mean, std) per L = number of
# leading layer groups in phi; Table 1's non-iid FedAvg and FedALS columns for the same
# setting. Datasets: SVHN, CIFAR-10, CIFAR-100.
DATASETS = ("svhn", "cifar10", "cifar100")
#: the settings the paper prints for the two tables (Sec. 7.1, 7.5 and the table captions)
TABLE3_SETTING = dict(model="ResNet-20", split="noniid", local_steps=5, alpha=10)
TABLE1_SETTING = dict(model="ResNet-20", split="noniid", local_steps=5, alpha=10)
TABLE3 = {20: ((0.6991, 0.0160), (0.4383, 0.0423), (0.4781, 0.0123)),
          16: ((0.7112, 0.0471), (0.4687, 0.0111), (0.4782, 0.0087)),
          12: ((0.6760, 0.0474), (0.4125, 0.0283), (0.4249, 0.0143)),
          8: ((0.6381, 0.0428), (0.3779, 0.03451), (0.4085, 0.0094)),
          4: ((0.6339, 0.0446), (0.3730, 0.0310), (0.4183, 0.0108)),
          1: ((0.6058, 0.0197), (0.4013, 0.0308), (0.3880, 0.0305))}
TABLE1_NONIID = {"fedavg": ((0.7010, 0.0330), (0.4651, 0.0071), (0.4177, 0.0143)),
                 "fedals": ((0.8117, 0.0214), (0.5224, 0.0365), (0.4863, 0.0224))}


@claim("fedals.table3.intermediate_beats_l1", ref="Table 3, Sec. 7.5", kind="example",
       expected="holds", result=TABLE3_RESULT, parts=("intermediate_best",),
       statement="In Table 3 the intermediate split L = 16 is the most accurate row and beats "
                 "L = 1 on SVHN, CIFAR-10 and CIFAR-100.",
       quick={}, full={})
def table3_intermediate(*, rng):
    r"""The qualitative reading of Table 3 the spec keeps (7.17), on the printed numbers:
    measured per dataset [acc(16) - acc(1), acc(16) - max over the other rows]; both >= 0
    (tolerance exact: printed 4-decimal values). Holds: 0.7112/0.4687/0.4782 against L = 1's
    0.6058/0.4013/0.3880, and L = 16 is the column maximum (on CIFAR-100 by 0.0001 over
    L = 20, far inside the printed std 0.0087-0.0123: a tie in substance)."""
    measured = []
    for j in range(len(DATASETS)):
        best_other = max(TABLE3[L][j][0] for L in TABLE3 if L != 16)
        measured += [TABLE3[16][j][0] - TABLE3[1][j][0], TABLE3[16][j][0] - best_other]
    return Evidence(measured=np.round(measured, 4), theoretical=np.zeros(len(measured)),
                    relation=">=", tolerance=Tolerance.exact("printed 4-decimal values"),
                    instance=dict(split=TABLE3_SETTING["split"], alphas=[TABLE3_SETTING["alpha"]],
                                  local_steps=TABLE3_SETTING["local_steps"]),
                    details={"datasets": DATASETS,
                             "order": "per dataset [16 - 1, 16 - best other]"})


@claim("fedals.table3.consistent_with_table1", ref="Table 3 vs Table 1, Sec. 7.5",
       kind="example", expected="violated", result=TABLE3_RESULT, parts=("consistent_with_table1",),
       statement="Table 3 (same setting as Table 1: ResNet-20, non-iid, tau = 5, alpha = 10) "
                 "has L = 16 as the most effective phi/h split, read over every split "
                 "including Table 1's FedALS (phi = the convolutional layers, L = 19), so Table "
                 "1's FedALS is not more accurate than Table 3's L = 16.",
       quick=dict(n_repeats=10), full=dict(n_repeats=10))
def table3_vs_table1(*, rng, n_repeats):
    r"""Cross-table consistency on the printed numbers. Table 1's FedALS treats the
    convolutional layers as phi (Sec. 7: "We treat the convolutional layers of ResNet-20 as
    the representation extractor"; L = 19 of 20), in the stated identical setting; the text
    calls L = 16 "the most effective option". Two readings: (a) the best of the rows Table 3
    lists (L = 20, 16, 12, 8, 4, 1), which L = 16 is (within 1e-4 on CIFAR-100): consistent,
    reported in details; (b) the best split, Table 1's L = 19 included: tested here.
    measured: acc_T1(FedALS) - acc_T3(L = 16) per dataset; theoretical 0; relation <=;
    tolerance 4 SE per dataset under Holm over the three (Tolerance.mc), SE of a difference of
    means = sqrt(std_1^2 + std_2^2)/sqrt(n), n = 10 repetitions (the authors' code's
    ``repeat_simulation``; the paper says 20, which would only shrink the tolerance).
    Differences 0.1005 (SVHN, z = 6.2) and 0.0537 (CIFAR-10, z = 4.5) exceed it; CIFAR-100
    (0.0081) does not. Expected ``violated`` under reading (b): the tables cannot both describe
    the stated setting (spec 7.17: Table 3 presumably comes from another configuration).
    Details: L = 1 (first conv group only in phi) against Table 1's FedAvg, 0.6058 vs 0.7010
    on SVHN, a second sign of the mismatch."""
    diffs, ses, l1 = [], [], []
    for j in range(len(DATASETS)):
        (a, sa), (b, sb) = TABLE1_NONIID["fedals"][j], TABLE3[16][j]
        diffs.append(round(a - b, 4))
        ses.append(float(np.hypot(sa, sb)) / np.sqrt(n_repeats))
        (f, sf), (c, sc) = TABLE1_NONIID["fedavg"][j], TABLE3[1][j]
        l1.append(dict(fedavg_table1=f, l1_table3=c, diff=round(f - c, 4),
                       four_se=4 * float(np.hypot(sf, sc)) / np.sqrt(n_repeats)))
    best_row = [max(TABLE3, key=lambda L, j=j: TABLE3[L][j][0]) for j in range(len(DATASETS))]
    return Evidence(measured=diffs, theoretical=np.zeros(len(diffs)), relation="<=",
                    instance=dict(table1_setting=TABLE1_SETTING, table3_setting=TABLE3_SETTING),
                    tolerance=Tolerance.mc(ses, k=4, what="difference of printed means"),
                    details={"datasets": DATASETS, "se": ses,
                             "z": [d / e for d, e in zip(diffs, ses, strict=True)],
                             "reading_a_best_listed_row": best_row,
                             "reading_a_gap_16_to_best_row": [
                                 round(TABLE3[b][j][0] - TABLE3[16][j][0], 4)
                                 for j, b in enumerate(best_row)],
                             "l1_vs_fedavg": l1})
