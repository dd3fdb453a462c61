#!/usr/bin/python3
"""plots_checks.py NPU WORKDIR - `npu gemm --topology --reports` and plots/plots.py (make test).

The SCALE-Sim-shaped reports of tests/topologies/gemm_small.csv: both files start with the
`# npu gemm config=... seed=... rev=... schema=1` line, then SCALE-Sim's columns; one row per
layer; each value agrees with the run's own table (--csv): Total Cycles = cycles, Overall Util %
= pe_util, Stall Cycles below the cycles, Compute Util % >= Overall Util %, the OFMAP DRAM words
per cycle x cycles = the bytes written / 4 (only C is written; dense rows share beats) >= M x N. Then plots.py turns those CSVs, a conv CSV (both
dataflows) and a train-bench CSV into three PNGs (checked by their signature and size), and
refuses a directory without data and a CSV without its columns (exit 2, one line).
Exit 0 when every check passes, 1 otherwise.
"""
import csv
import os
import shutil
import subprocess
import sys

FAILS = []
HERE = os.path.dirname(os.path.abspath(__file__))
PLOTS = os.path.join(HERE, "..", "plots", "plots.py")


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def rows_of(path):
    with open(path) as f:
        lines = f.read().splitlines()
    check(lines and lines[0].startswith("# npu gemm config=") and "schema=1" in lines[0],
          f"{path}: the metadata line first: {lines[:1]}")
    return list(csv.DictReader(l for l in lines if not l.startswith("#")))


def check_reports(npu, d):
    p = subprocess.run([npu, "gemm", "--topology", os.path.join(HERE, "topologies", "gemm_small.csv"),
                        "--reports", d, "--csv", os.path.join(d, "topology.csv"), "--quiet"],
                       capture_output=True, text=True)
    check(p.returncode == 0, f"gemm --topology --reports: exit {p.returncode} {p.stderr[-200:]}")
    comp = rows_of(os.path.join(d, "COMPUTE_REPORT.csv"))
    bw = rows_of(os.path.join(d, "BANDWIDTH_REPORT.csv"))
    topo = [r for r in csv.DictReader(l for l in open(os.path.join(d, "topology.csv")) if not l.startswith("#"))]
    check(list(comp[0])[:6] == ["LayerID", "Total Cycles", "Stall Cycles", "Overall Util %",
                                "Mapping Efficiency %", "Compute Util %"], f"COMPUTE_REPORT columns {list(comp[0])}")
    check(list(bw[0])[:7] == ["LayerID", "Avg IFMAP SRAM BW", "Avg FILTER SRAM BW", "Avg OFMAP SRAM BW",
                              "Avg IFMAP DRAM BW", "Avg FILTER DRAM BW", "Avg OFMAP DRAM BW"],
          f"BANDWIDTH_REPORT columns {list(bw[0])}")
    check(len(comp) == len(bw) == len(topo) == 3, f"rows: {len(comp)}, {len(bw)}, {len(topo)} (3 layers)")
    for c, b, t in zip(comp, bw, topo):
        cyc = int(t["cycles"])
        check(int(c["Total Cycles"]) == cyc and 0 < int(c["Stall Cycles"]) < cyc,
              f"{t['layer']}: Total {c['Total Cycles']}, Stall {c['Stall Cycles']}, cycles {cyc}")
        check(abs(float(c["Overall Util %"]) - 100 * float(t["pe_util"])) < 1e-3,
              f"{t['layer']}: Overall Util {c['Overall Util %']} vs pe_util {t['pe_util']}")
        check(float(c["Compute Util %"]) >= float(c["Overall Util %"]), f"{t['layer']}: compute < overall util")
        words, mn = float(b["Avg OFMAP DRAM BW"]) * cyc, int(t["M"]) * int(t["N"])
        check(abs(words - int(t["dram_wr_bytes"]) / 4) <= 1e-4 * cyc and mn <= words + 0.5,
              f"{t['layer']}: OFMAP DRAM words {words:.1f}, written bytes / 4 = "
              f"{int(t['dram_wr_bytes']) / 4}, M x N = {mn}")
    print(f"reports: {len(comp)} layers, COMPUTE_REPORT and BANDWIDTH_REPORT agree with the run's table")


def plots_to_pngs(d, out, names):
    """plots.py d out succeeds and writes each of names as a PNG (its signature, > 5 kB)."""
    r = subprocess.run([sys.executable, PLOTS, d, out], capture_output=True, text=True)
    check(r.returncode == 0, f"plots.py: exit {r.returncode}: {r.stderr.strip()}")
    for name in names:
        path = os.path.join(out, name)
        ok = os.path.exists(path) and os.path.getsize(path) > 5000
        check(ok and open(path, "rb").read(8) == b"\x89PNG\r\n\x1a\n", f"{path}: a PNG")


def check_plots(npu, d, out):
    p = subprocess.run([npu, "conv", "--conv", "8,10,10,16,3,3,2,1,1", "--dataflow", "both",
                        "--csv", os.path.join(d, "conv.csv"), "--quiet"], capture_output=True, text=True)
    q = subprocess.run([npu, "train-bench", "--set", "edge", "--csv", os.path.join(d, "train_bench.csv")],
                       capture_output=True, text=True)
    check(p.returncode == 0 and q.returncode == 0, f"conv exit {p.returncode}, train-bench exit {q.returncode}")
    plots_to_pngs(d, out, ("utilization.png", "dram_traffic.png", "speedups.png"))
    empty = os.path.join(out, "empty")
    os.makedirs(empty, exist_ok=True)
    r = subprocess.run([sys.executable, PLOTS, empty, out], capture_output=True, text=True)
    check(r.returncode == 2 and "none of COMPUTE_REPORT.csv" in r.stderr and r.stderr.count("\n") == 1,
          f"plots.py on an empty directory: exit {r.returncode}, {r.stderr!r}")
    with open(os.path.join(empty, "topology.csv"), "w") as f:
        f.write("# npu gemm\nlayer,cycles\nx,1\n")
    r = subprocess.run([sys.executable, PLOTS, empty, out], capture_output=True, text=True)
    check(r.returncode == 2 and "no column dram_rd_bytes" in r.stderr, f"plots.py, a CSV without its columns: exit {r.returncode}, {r.stderr!r}")
    print("plots: three PNGs from the reports, a conv and a train-bench CSV; bad data refused")


def check_estimator_plots(npu, d, out):
    """The estimator's charts from a sweep over SPM sizes, one over batches and two estimates of
    a CNN (make plots' own); its traffic halves between 1 and 1.5 MiB of SPM (adjacent-layer
    reuse) and never grows with the SPM; the residual CNN's block-reuse step (check_block_step)."""
    model = ["--model", "cnn:c32,c32,c64s2,c64,fc10", "--input", "16x16x3"]
    runs = [["sweep", "--batch", "16", "--space", "spm=512,1024,1536,4096", "--csv", "est_spm.cnn.csv"],
            ["sweep", "--space", "spm=1024,4096;batch=2,16", "--csv", "est_batch.cnn.csv"],
            ["estimate", "--batch", "16", "--spm-kib", "1024", "--csv", "est_steps.cnn.1024.csv"],
            ["estimate", "--batch", "16", "--spm-kib", "4096", "--csv", "est_steps.cnn.4096.csv"]]
    for r in runs:
        r[-1] = os.path.join(d, r[-1])
        p = subprocess.run([npu] + r[:1] + model + r[1:] + ["--quiet"], capture_output=True, text=True)
        check(p.returncode == 0, f"npu {' '.join(r[:1])}: exit {p.returncode} {p.stderr[-200:]}")
    rows = list(csv.DictReader(l for l in open(runs[0][-1]) if not l.startswith("#")))
    traffic = [int(x["dram_in_bytes"]) + int(x["dram_out_bytes"]) for x in rows if x["ok"] == "1"]
    # 512 KiB: steps past the SPM run tile by tile (docs/estimator.md 4.1); 1 -> 1.5 MiB: the
    # activations stay from forward to backward
    check(len(traffic) == 4 and all(a >= b for a, b in zip(traffic, traffic[1:]))
          and traffic[2] < 0.6 * traffic[1], f"estimator traffic against SPM size: {traffic}")
    block = check_block_step(npu, d)
    plots_to_pngs(d, out, ("est_traffic.png", "est_breakdown.png", "est_batch.png"))
    print(f"plots: the estimator's three charts; traffic against SPM size {traffic}; {block}")


def check_block_step(npu, d):
    """The residual CNN of make plots (layer 3 adds layer 1's output, 16x16x16 at batch 16):
    DRAM In is flat from 384 to 388 KiB and falls by exactly cap(X1) at 389 KiB, Out unchanged
    (block reuse: the skip X1 stays until the Add), and the thesis's capacity
    cap(X1) + cap(X2) + cap(W2) + cap(X3) lies within one SPM word (32 bytes at S = 8) of that
    388..389 KiB bracket (brief 003 section 6 check 8)."""
    path = os.path.join(d, "est_spm.res.csv")
    p = subprocess.run([npu, "sweep", "--model", "cnn:c16,c16,c16+1,fc10", "--input", "16x16x3", "--batch", "16",
                        "--space", "spm=320,384,388,389,416", "--csv", path, "--quiet"], capture_output=True, text=True)
    check(p.returncode == 0, f"npu sweep (residual): exit {p.returncode} {p.stderr[-200:]}")
    rows = {int(r["spm_kib"]): (int(r["dram_in_bytes"]), int(r["dram_out_bytes"]))
            for r in csv.DictReader(l for l in open(path) if not l.startswith("#")) if r["ok"] == "1"}
    act = 2 * 16 * 16 * 16 * 16          # X1, X2, X3: bf16, batch 16, 16x16 pixels, 16 channels
    formula, granule = 3 * act + 2 * 3 * 3 * 16 * 16, 4 * 8
    check(len(rows) == 5 and rows[384] == rows[388], f"residual: In/Out not flat 384..388 KiB: {rows}")
    check(len(rows) == 5 and rows[388][0] - rows[389][0] == act and rows[388][1] == rows[389][1],
          f"residual: at 389 KiB In must fall by cap(X1) = {act}, Out stay: {rows}")
    check(388 * 1024 - granule <= formula <= 389 * 1024 + granule,
          f"residual: the formula {formula} B is not within a granule of 388..389 KiB")
    return f"block reuse from 389 KiB (In -{act} B), formula {formula} B"


def main():
    npu, work = sys.argv[1], sys.argv[2]
    shutil.rmtree(work, ignore_errors=True)
    d, out = os.path.join(work, "data"), os.path.join(work, "png")
    os.makedirs(d)
    check_reports(npu, d)
    check_plots(npu, d, out)
    check_estimator_plots(npu, d, out)
    print(f"plots_checks: {len(FAILS)} failures")
    return 1 if FAILS else 0


if __name__ == "__main__":
    sys.exit(main())
