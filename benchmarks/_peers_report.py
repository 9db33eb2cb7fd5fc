"""Tables of ``python -m benchmarks peers``: per-configuration summary, all timings, the
roofline, the diagnosis of missed targets, and the README section."""

from __future__ import annotations

import json
import os
import statistics
from pathlib import Path

from benchmarks._common import machine_line, markdown_table
from benchmarks._peers_run import DIM, LAM, QUAD_DIM, SAMPLES, TAU
from benchmarks._roofline import DGEMM_SIZE, flops_bytes, intensity, roofline

BUSY = "(busy: 2 free cores not measured before and after)"
NO_JAX = "not installed"
#: the issue's targets: ratio to the best peer at p = 1 and p = 0.1 (1 thread); roofline
#: fraction at N = 1e4
TARGET_RATIO = {1.0: 3.0, 0.1: 2.0}
TARGET_ROOF, TARGET_N = 0.4, 10_000
BEGIN, END = "<!-- peers-table:begin -->", "<!-- peers-table:end -->"


def _dims(kind):
    return (QUAD_DIM, 0) if kind == "quadratic" else (DIM, SAMPLES)


def _flops(kind):
    dim, samples = _dims(kind)
    return flops_bytes(kind, dim, samples, TAU)[0]


def _ai(kind):
    dim, samples = _dims(kind)
    return intensity(kind, dim, samples, TAU)


def _groups(rows):
    groups = {}
    for row in rows:
        groups.setdefault((row["kind"], row["algorithm"], row["N"], row["p"]), []).append(row)
    return groups


def _paired(flb, peer, key="rates"):
    ratios = [a / b for a, b in zip(flb[key], peer[key], strict=True)]
    return min(ratios), statistics.median(ratios)


def _wait(row):
    """Wall time per CPU time of an implementation (median rates)."""
    return row["cpu_rate_median"] / row["rate_median"]


def _compare(rows):
    """(flbounds row, best peer row, ratio min, ratio median) or None if not timed."""
    ok = {r["impl"]: r for r in rows if r["status"] == "ok"}
    if "flbounds" not in ok or len(ok) < 2:
        return None
    best = max((r for name, r in ok.items() if name != "flbounds"),
               key=lambda r: r["rate_median"])
    return (ok["flbounds"], best, *_paired(ok["flbounds"], best))


def _roof_fraction(kind, flb, machine, threads, cpu=False):
    """(GFLOP/s, fraction of the roofline); ``cpu``: both in process CPU time."""
    rate = flb["cpu_rate_median"] if cpu else flb["rate_median"]
    gflops = _flops(kind) * flb["participants"] * rate / 1e9
    tail = "_cpu" if cpu else ""
    dgemm = machine.get(f"dgemm_{threads}t{tail}")
    read = machine.get(f"read_{threads}t{tail}")
    if dgemm is None:
        return gflops, None
    return gflops, gflops / roofline(_ai(kind), dgemm, read)


def summarize(children, machine):
    """One dict per configuration: rates, best peer, ratios, roofline fractions."""
    by_threads = {c["threads"]: _groups(c["rows"]) for c in children}
    one = by_threads.get(1, {})
    summary = []
    for key, rows in one.items():
        kind, algorithm, n, p = key
        cmp1 = _compare(rows)
        if cmp1 is None:
            continue
        flb, best, rmin, rmed = cmp1
        gflops, frac = _roof_fraction(kind, flb, machine, 1)
        entry = {"kind": kind, "algorithm": algorithm, "N": n, "p": p,
                 "participants": flb["participants"],
                 "flbounds_rounds_s": flb["rate_median"], "best_peer": best["impl"],
                 "peer_rounds_s": best["rate_median"], "ratio_min": rmin,
                 "ratio_median": rmed, "ratio_cpu_median": _paired(flb, best, "cpu_rates")[1],
                 "wall_per_cpu": f"{_wait(flb):.2f} / {_wait(best):.2f}",
                 "gflops_1t": gflops, "roofline_1t": frac,
                 "roofline_cpu_1t": _roof_fraction(kind, flb, machine, 1, cpu=True)[1],
                 "peak_mib_flbounds": flb["peak_mib"],
                 "peak_mib_peer": ("XLA (untraced)" if best["impl"] == "jax"
                                   else best["peak_mib"]),
                 "ratio_2t": BUSY, "roofline_2t": BUSY}
        rows2 = by_threads.get(2, {}).get(key)
        cmp2 = _compare(rows2) if rows2 else None
        if cmp2 is not None and machine.get("dgemm_2t") is not None:
            flb2, best2, rmin2, rmed2 = cmp2
            entry["ratio_2t"] = f"{rmin2:.2f}-{rmed2:.2f} vs {best2['impl']}"
            entry["roofline_2t"] = _roof_fraction(kind, flb2, machine, 2)[1]
        elif rows2 is None:
            entry["ratio_2t"] = entry["roofline_2t"] = "not run"
        summary.append(entry)
    return summary


def _fmt(v, digits=3):
    if v is None:
        return "n/a"
    if isinstance(v, float):
        return f"{v:.{digits}g}"
    return str(v)


def detail_rows(children):
    """Every timed implementation, both thread counts."""
    out = []
    for child in children:
        for r in child["rows"]:
            base = {k: r[k] for k in ("kind", "algorithm", "N", "p", "threads", "impl")}
            if r["status"] != "ok":
                out.append(dict(base, rounds_s_min=BUSY))
                continue
            spread = r["rate_median"] / r["rate_min"] - 1
            out.append(dict(base, rounds_s_min=r["rate_min"], rounds_s_median=r["rate_median"],
                            cpu_rounds_s_median=r["cpu_rate_median"], wall_per_cpu=_wait(r),
                            spread=f"{spread:.0%}" + (" (noisy)" if spread > 0.05 else ""),
                            rounds_per_call=r["rounds_per_call"], calls=r["calls"],
                            peak_MiB=_fmt(r["peak_mib"]) if r["impl"] != "jax"
                            else "XLA (untraced)",
                            max_diff=f"{r['max_diff']:.1e} <= {r['tol']:.1e}",
                            checked_round=r.get("checked_round", r["rounds_per_call"])))
        if not child["jax"]:
            out.append({"kind": "all", "threads": child["threads"], "impl": "jax",
                        "rounds_s_min": NO_JAX})
    return out


def _profile_for(profiles, kind, p):
    for prof in profiles:
        if prof["kind"] == kind and prof["p"] == p:
            return prof
    return None


def _us(seconds):
    """Microseconds; a negative fitted cost is within the two-point fit's noise."""
    return f"{1e6 * seconds:.2f} us" if seconds >= 0 else "0 us (fit noise)"


def _dgemm_cpu(machine):
    return machine.get("dgemm_1t_cpu", machine["dgemm_1t"])


def _us_per_client(entry):
    return 1e6 / (entry["flbounds_rounds_s"] * max(entry["participants"], 1.0))


def _entry_for(summary, kind, algorithm, n, p):
    for e in summary:
        if (e["kind"], e["algorithm"], e["N"], e["p"]) == (kind, algorithm, n, p):
            return e
    return None


def diagnose(entry, profiles, machine, summary=()):
    """One line on what limits a configuration that misses a target (measured numbers);
    ``summary``: the other configurations (the sampler's line compares with FedAvg's)."""
    kind, algorithm, p = entry["kind"], entry["algorithm"], entry["p"]
    us_client = _us_per_client(entry)
    head = (f"- {kind} {algorithm} p = {p}: {entry['ratio_median']:.2f}x the best peer "
            f"({entry['best_peer']}; {entry['ratio_cpu_median']:.2f}x in CPU time), "
            f"{_fmt(_roof_for_target(entry), 2)} of the roofline (CPU time); ")
    flb_wait, peer_wait = (float(v) for v in entry["wall_per_cpu"].split(" / "))
    if flb_wait > 1.5 * peer_wait:
        head += (f"flbounds' wall time is {flb_wait:.1f}x its CPU time against "
                 f"{peer_wait:.1f}x for the peer (time spent waiting, not computing); ")
    if algorithm == "sampler":
        fedavg_entry = _entry_for(summary, kind, "fedavg", entry["N"], p)
        versus = "" if fedavg_entry is None else (
            f" against FedAvg's {_us_per_client(fedavg_entry):.2f} us per participant at the "
            "same N and p")
        return head + ("flbounds (diagnostics=False) runs the rounds in one compiled loop and "
                       f"computes only the drawn clients' {TAU} local steps, as the peers do: "
                       f"{us_client:.2f} us per sampled client and round{versus}; on top of "
                       "FedAvg's work it draws over all N clients every round and weights "
                       "each drawn update by 1/p_i.")
    if algorithm == "focus":
        fedavg_entry = _entry_for(summary, kind, "fedavg", entry["N"], p)
        if fedavg_entry is not None:
            head += (f"FOCUS takes {us_client:.2f} us per participant against FedAvg's "
                     f"{_us_per_client(fedavg_entry):.2f} us at the same N and p (the same "
                     f"{TAU} gradients, plus the stored gradient read and written and the "
                     "push); ")
    prof = _profile_for(profiles, kind, p)
    if prof is None:
        return head + "no profile at this size."
    big, small = prof["fits"]["large"], prof["fits"]["small"]
    grad = big["gradient_s"]
    grad_gflops = _flops(kind) / TAU / grad / 1e9 if grad > 0 else float("nan")
    memory = big["fixed_s"] - small["fixed_s"]
    share = TAU * grad / big["per_client_s"]
    limit = ("gradient arithmetic" if share >= 0.5 else "per-client fixed costs "
             "(data fetch, local buffers, aggregation)")
    if kind == "logistic":
        limit += f" (each gradient also takes {SAMPLES} sigmoids, not in the flop count)"
    traffic = (f"of which {_us(memory)} memory traffic (fixed cost at N = {prof['n_large']} "
               f"minus N = {prof['n_small']})" if prof["n_large"] > prof["n_small"] else
               "memory traffic not separated (one client count run: it takes two)")
    return head + (
        f"FedAvg profile at N = {prof['n_large']}: {1e6 * big['per_client_s']:.2f} us per "
        f"client = {TAU} x {1e6 * grad:.3f} us gradients ({share:.0%}; "
        f"{grad_gflops:.1f} GFLOP/s = {grad_gflops / _dgemm_cpu(machine):.0%} of dgemm) + "
        f"{_us(big['fixed_s'])} fixed, {traffic}; limited by the {limit}.")


def _roof_for_target(entry):
    """The CPU-time roofline fraction if measured (robust to other processes), else wall."""
    cpu = entry.get("roofline_cpu_1t")
    return cpu if cpu is not None else entry["roofline_1t"]


def target_n(summary):
    """TARGET_N, or the largest N run if all are smaller."""
    return max((e["N"] for e in summary if e["N"] <= TARGET_N), default=TARGET_N)


def missed(summary):
    """Configurations at :func:`target_n` missing the ratio or the 1-thread roofline target."""
    out, n = [], target_n(summary)
    for e in summary:
        if e["N"] != n:
            continue
        short_ratio = e["ratio_median"] < TARGET_RATIO.get(e["p"], 2.0)
        roof = _roof_for_target(e)
        short_roof = roof is not None and roof < TARGET_ROOF
        if short_ratio or short_roof:
            out.append(e)
    return out


SUMMARY_COLUMNS = ["kind", "algorithm", "N", "p", "flbounds_rounds_s", "best_peer",
                   "peer_rounds_s", "ratio_min", "ratio_median", "ratio_cpu_median",
                   "wall_per_cpu", "ratio_2t", "gflops_1t",
                   "roofline_1t", "roofline_cpu_1t", "roofline_2t", "peak_mib_flbounds",
                   "peak_mib_peer"]
DETAIL_COLUMNS = ["kind", "algorithm", "N", "p", "threads", "impl", "rounds_s_min",
                  "rounds_s_median", "spread", "cpu_rounds_s_median", "wall_per_cpu",
                  "rounds_per_call", "calls", "peak_MiB", "max_diff", "checked_round"]


def _machine_text(machine, children):
    m = machine
    rss = ", ".join(f"{c['threads']} thread(s) {c['max_rss_mib']:.0f} MiB" for c in children)
    two = (f"dgemm {m['dgemm_2t']:.1f} GFLOP/s, read {m['read_2t']:.1f} GB/s"
           if m.get("dgemm_2t") is not None else BUSY)
    cpu = (f" (in CPU time: {m['dgemm_1t_cpu']:.1f} GFLOP/s, {m['read_1t_cpu']:.1f} GB/s)"
           if "dgemm_1t_cpu" in m else "")
    return (f"Roofline measured in this run: dgemm ({DGEMM_SIZE}x{DGEMM_SIZE} float64) "
            f"{m['dgemm_1t']:.1f} GFLOP/s and read {m['read_1t']:.1f} GB/s on 1 thread{cpu}; "
            f"2 threads: {two}. Free-core check (2-thread speed-up of a compute loop): "
            f"{m['free_speedup']:.2f} at start, {m['after']['free_speedup']:.2f} at end; load "
            f"average {m['load1']:.1f} at start, {m['after']['load1']:.1f} at end. Arithmetic "
            f"intensity (flop per byte of client data): quadratic {_ai('quadratic'):.2f}, "
            f"ridge and logistic {_ai('ridge'):.2f}. Process max RSS: {rss}. The 1-thread "
            f"worker process runs pinned to one core.")


def setup_text() -> str:
    """What was run and what the summary's columns mean."""
    return (
        f"Problems: heterogeneous quadratics (d = {QUAD_DIM}, mu = 0.1, L = 1); ridge and "
        f"L2-logistic regression (n = {SAMPLES} samples per client, d = {DIM}, lambda = "
        f"{LAM:g}). tau = {TAU} local GD steps from x0 = 0; step 1/(2L) for FedAvg and the "
        "sampler, 1/(N L) for FOCUS (its server step multiplies a sum over all N clients); "
        "FedAvg and FOCUS under Bernoulli(p) participation, the sampler a uniform ISP of "
        "expected size pN with server step 1. Checked before timing: flbounds' run does not move "
        "away from x*, and every peer's iterate matches flbounds' within a rounding tolerance "
        "at the timed round and, for a run that settles earlier, at the last round where it "
        "still moves (`checked_round` in the timings table).\n\n"
        "Columns: `flbounds_rounds_s` and `peer_rounds_s` rounds per second (median over the "
        "repeats, wall time) of flbounds and of the best peer (`best_peer`, highest median); "
        "`ratio_min`, `ratio_median` flbounds / best peer per interleaved repeat; "
        "`ratio_cpu_median` the same in process CPU time; `wall_per_cpu` wall / CPU time "
        "(flbounds / peer; above 1: waiting, not computing); `ratio_2t` flbounds on 2 threads "
        "against the best peer on 2 threads (min-max); `gflops_1t` flbounds' useful GFLOP/s; "
        "`roofline_1t`, `roofline_cpu_1t`, `roofline_2t` the fraction of min(dgemm, "
        "intensity x read bandwidth) reached (wall, CPU time, 2 threads; above 1 when the "
        "client data stay in the caches, whose bandwidth the read roof does not count); "
        "`peak_mib_*` "
        "tracemalloc peak of one call in MiB (XLA's allocations are not traced).")


def _jax_notice(children) -> str:
    """A sentence when JAX was not installed: the ratios are then against NumPy only."""
    if all(child.get("jax", True) for child in children):
        return ""
    return (" JAX was not installed (the `bench` extra), so the best peer is the best NumPy "
            "one: these ratios are not against the strongest peer.")


def render(children, machine, profile):
    summary = summarize(children, machine)
    lines = [diagnose(e, children[0]["profiles"], machine, summary) for e in missed(summary)] \
        if children and children[0]["threads"] == 1 else []
    md = (f"## flbounds vs peers ({profile} profile)\n\n{machine_line()}\n\n"
          f"{_machine_text(machine, children)}\n\n{setup_text()}\n\n"
          "### Summary (1 thread unless marked)\n\n"
          f"{markdown_table(summary, SUMMARY_COLUMNS)}\n"
          f"Targets: >= {TARGET_RATIO[1.0]:g}x the best peer at p = 1, >= "
          f"{TARGET_RATIO[0.1]:g}x at p = 0.1, >= {TARGET_ROOF:.0%} of the roofline, "
          f"judged at N = {target_n(summary)}"
          + ("" if target_n(summary) == TARGET_N else
             f" (the largest client count run; the targets are set at N = {TARGET_N})")
          + f".{_jax_notice(children)}\n\n"
          "### Missed targets: what limits them\n\n"
          + ("\n".join(lines) or "- none") + "\n\n### All timings\n\n"
          f"{markdown_table(detail_rows(children), DETAIL_COLUMNS)}\n")
    data = {"machine": machine, "machine_line": machine_line(), "profile": profile,
            "summary": summary, "children": children}
    return md, data


def write(out_dir, name, markdown, data):
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    md, js = out_dir / f"{name}.md", out_dir / f"{name}.json"
    md.write_text(markdown, encoding="utf-8")
    js.write_text(json.dumps(data, indent=1, default=float), encoding="utf-8")
    return [md, js]


def readme_section(data):
    """The short README table: N = 1e4 (or the largest N run) per kind and p."""
    summary = data["summary"]
    n = target_n(summary)
    cells = {(e["kind"], e["p"], e["algorithm"]): e for e in summary if e["N"] == n}
    rows = []
    for kind, p in dict.fromkeys((k, q) for k, q, _ in cells):
        row = {"problem": kind, "p": p}
        for algorithm, label in (("fedavg", "FedAvg"), ("focus", "FOCUS"),
                                 ("sampler", "FedAvg + sampler")):
            e = cells.get((kind, p, algorithm))
            row[label] = "n/a" if e is None else (
                f"{e['ratio_min']:.2f}-{e['ratio_median']:.2f}x {e['best_peer']} "
                f"(CPU {e['ratio_cpu_median']:.2f}x)")
        fed = cells.get((kind, p, "fedavg"))
        row["FedAvg roofline wall / CPU"] = "n/a" if fed is None else (
            f"{_fmt(fed['roofline_1t'], 2)} / {_fmt(fed.get('roofline_cpu_1t'), 2)}")
        row["FedAvg 2 threads"] = "n/a" if fed is None else fed["ratio_2t"]
        rows.append(row)
    m = data["machine"]
    cpu = (f" (in CPU time {m['dgemm_1t_cpu']:.0f} GFLOP/s, {m['read_1t_cpu']:.1f} GB/s)"
           if "dgemm_1t_cpu" in m else "")
    return (f"{BEGIN}\n`python -m benchmarks peers --record` on {data['machine_line']}; "
            f"N = {n}, 1 thread (the process pinned to one core); cells: flbounds / best "
            f"peer, min-median over the repeats "
            f"(wall time), and the median in CPU time; roofline min(dgemm, AI x read) with dgemm "
            f"{m['dgemm_1t']:.0f} GFLOP/s and read {m['read_1t']:.1f} GB/s{cpu}, measured in "
            f"the same run; load average {m['load1']:.1f} on {os.cpu_count()} cores at the "
            f"start. Every run, its 2-thread cells and the diagnosis of missed targets: "
            "`benchmarks/results/peers.json`, shown in the documentation's "
            "[performance page](docs/performance.md).\n\n"
            + markdown_table(rows, list(rows[0]) if rows else ["problem"]) + f"{END}\n")


def update_readme(path: Path, section: str) -> None:
    """Replace the text between the markers (or append it to the Benchmarks section)."""
    text = path.read_text(encoding="utf-8")
    if BEGIN in text and END in text:
        head, rest = text.split(BEGIN, 1)
        text = head + section.rstrip("\n") + rest.split(END, 1)[1]
    else:
        marker = "## Layout"
        text = text.replace(marker, section + "\n" + marker, 1) if marker in text \
            else text + "\n" + section
    path.write_text(text, encoding="utf-8")
