#!/usr/bin/python3
"""plots.py DATA_DIR OUT_DIR - PNG charts from the CSVs the `npu` commands write (`make plots`).

Reads whichever of these DATA_DIR holds (each CSV starts with the `# npu ...` metadata line,
skipped here and shown under each chart):
  COMPUTE_REPORT.csv   npu gemm --topology F --reports DATA_DIR  (SCALE-Sim's columns)
  topology.csv         npu gemm --topology F --csv DATA_DIR/topology.csv
  conv.csv             npu conv ... --dataflow both --csv DATA_DIR/conv.csv
  train_bench.csv      npu train-bench --csv DATA_DIR/train_bench.csv (make bench writes one)
  fit.csv              npu fit --csv DATA_DIR/fit.csv (make bench writes one: fit_mlp.csv)
  est_spm.NET.csv      npu sweep --space 'spm=...' (the estimator over SPM sizes, one network)
  est_batch.NET.csv    npu sweep --space 'spm=SMALL,LARGE;batch=...'
  est_steps.NET.KIB.csv  npu estimate --spm-kib KIB --csv (per step), at two SPM sizes
and writes into OUT_DIR:
  utilization.png      per layer: overall, compute and mapping utilization (COMPUTE_REPORT)
  dram_traffic.png     per layer: DRAM bytes read and written (topology.csv)
  speedups.png         EcoFlow over the zero-padded baseline per conv layer and kernel (conv.csv);
                       the training orders over the sequential baseline per configuration,
                       count-weighted cycles of every layer (train_bench.csv)
  fit_loss.png         npu fit: the loss per epoch beside the fp32 reference's, test accuracy
  est_traffic.png      the estimator's DRAM bytes per iteration against the SPM size, per network;
                       a network named res* (residual) also gets its DRAM In and Out near its
                       block-reuse step, where In alone falls (the skip stays until the Add)
  est_breakdown.png    where an iteration's cycles go (array, point-wise vector work, update,
                       stall) at a small and a large SPM, per network
  est_batch.png        samples per million cycles against the batch, small and large SPM
`plots.py --fit FIT.csv OUT.png` draws that last chart alone (npu fit --plot).
A chart whose data is missing is skipped with a note; no data at all, a CSV without the
expected columns or an unwritable OUT_DIR is a one-line error and exit 2.
Uses Debian's python3-matplotlib (the Makefile installs it like the other dependencies).
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")  # files only: no display on a build machine
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)


class BadData(Exception):
    pass


def read_csv(path, need):
    """(metadata line, rows as dicts) of an npu CSV; BadData when a needed column is missing."""
    with open(path, newline="") as f:
        lines = f.read().splitlines()
    meta = next((l[2:] for l in lines if l.startswith("# ")), "")
    rows = list(csv.DictReader((l for l in lines if l and not l.startswith("#")),
                               skipinitialspace=True))
    missing = [c for c in need if rows and c not in rows[0]]
    if not rows or missing:
        raise BadData(f"{path}: {'no rows' if not rows else 'no column ' + ', '.join(missing)}")
    return meta, rows


def finish(fig, meta, path):
    fig.text(0.01, 0.005, meta, fontsize=7, color="gray")
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print(f"plots: wrote {path}")


def bars(ax, labels, series, ylabel):
    """Grouped bars: series is [(name, values)]."""
    w = 0.8 / len(series)
    for i, (name, vals) in enumerate(series):
        ax.bar([x + (i - (len(series) - 1) / 2) * w for x in range(len(labels))], vals, w, label=name)
    ax.set_xticks(range(len(labels)))
    ax.set_xticklabels(labels, rotation=45, ha="right", fontsize=8)
    ax.set_ylabel(ylabel)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)


def utilization(data, out):
    cols = ["LayerID", "Overall Util %", "Compute Util %", "Mapping Efficiency %", "Layer"]
    meta, rows = read_csv(os.path.join(data, "COMPUTE_REPORT.csv"), cols)
    fig, ax = plt.subplots(figsize=(9, 4.5))
    bars(ax, [r["Layer"] for r in rows],
         [(c, [float(r[c]) for r in rows]) for c in cols[1:4]], "percent of the 4S² PEs")
    ax.set_title("PE utilization per layer (COMPUTE_REPORT.csv)")
    finish(fig, meta, os.path.join(out, "utilization.png"))


def dram_traffic(data, out):
    meta, rows = read_csv(os.path.join(data, "topology.csv"),
                          ["layer", "dram_rd_bytes", "dram_wr_bytes", "result"])
    rows = [r for r in rows if r["result"] == "PASS"]
    fig, ax = plt.subplots(figsize=(9, 4.5))
    labels = [r["layer"] for r in rows]
    rd = [int(r["dram_rd_bytes"]) / 1024 for r in rows]
    wr = [int(r["dram_wr_bytes"]) / 1024 for r in rows]
    ax.bar(labels, rd, label="read")
    ax.bar(labels, wr, bottom=rd, label="written")
    ax.set_ylabel("DRAM KiB")
    ax.set_title("DRAM traffic per layer (npu gemm --topology)")
    ax.tick_params(axis="x", rotation=45, labelsize=8)
    ax.grid(axis="y", alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, meta, os.path.join(out, "dram_traffic.png"))


def conv_speedups(path):
    """[(layer kernel, zeropad cycles / ecoflow cycles)] of the backward kernels run both ways."""
    meta, rows = read_csv(path, ["layer", "kernel", "dataflow", "cycles", "result"])
    cyc = {(r["layer"], r["kernel"], r["dataflow"]): int(r["cycles"])
           for r in rows if r["result"] == "PASS"}
    pts = [(f"{l} {k}", z / cyc[(l, k, "ecoflow")]) for (l, k, d), z in cyc.items()
           if d == "zeropad" and cyc.get((l, k, "ecoflow"))]
    return meta, pts


def train_speedups(path):
    """{config: [(order, seq cycles / its cycles)]}, every layer weighted by its count."""
    orders = ["interleave", "alg1", "oracle", "part"]
    meta, rows = read_csv(path, ["config", "count"] + ["cycles_" + o for o in ["seq"] + orders])
    out = {}
    for cfg in dict.fromkeys(r["config"] for r in rows):
        mine = [r for r in rows if r["config"] == cfg]
        tot = {o: sum(int(r["count"]) * int(r["cycles_" + o]) for r in mine) for o in ["seq"] + orders}
        out[cfg] = [(o, tot["seq"] / tot[o]) for o in orders if tot[o]]
    return meta, out


def speedups(data, out):
    conv, train = os.path.join(data, "conv.csv"), os.path.join(data, "train_bench.csv")
    panels = [p for p in (conv, train) if os.path.exists(p)]
    fig, axes = plt.subplots(1, len(panels), figsize=(5.5 * len(panels), 4.5), squeeze=False)
    metas = []
    for ax, p in zip(axes[0], panels):
        if p == conv:
            meta, pts = conv_speedups(p)
            ax.bar([n for n, _ in pts], [v for _, v in pts], color="tab:green")
            ax.set_title("EcoFlow over zero-padding (conv backward)")
            ax.tick_params(axis="x", rotation=45, labelsize=8)
            ax.grid(axis="y", alpha=0.3)
        else:
            meta, per_cfg = train_speedups(p)
            cfgs = list(per_cfg)
            bars(ax, cfgs, [(o, [dict(per_cfg[c]).get(o, 0) for c in cfgs])
                            for o in ["interleave", "alg1", "oracle", "part"]], "")
            ax.set_title("training orders over the sequential baseline")
        ax.axhline(1.0, color="black", lw=0.8)
        ax.set_ylabel("speedup (cycles ratio)")
        metas.append(meta)
    finish(fig, " | ".join(dict.fromkeys(metas)), os.path.join(out, "speedups.png"))


def fit_loss(path, png):
    """npu fit's loss curve beside the fp32 reference's, and the test accuracy."""
    meta, rows = read_csv(path, ["epoch", "loss", "ref_loss", "test_acc", "ref_test_acc"])
    ep = [int(r["epoch"]) for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.2))
    ax.plot(ep, [float(r["loss"]) for r in rows], "o-", label="loss (this engine)")
    ax.plot(ep, [float(r["ref_loss"]) for r in rows], "x--", label="loss (fp32 reference)")
    ax.set_xlabel("epoch")
    ax.set_ylabel("mean training loss")
    ax.set_yscale("log")
    ax.grid(alpha=0.3)
    acc = ax.twinx()
    acc.plot(ep, [100 * float(r["test_acc"]) for r in rows], "s-", color="tab:green",
             label="test accuracy")
    acc.set_ylabel("test accuracy %")
    lines = ax.get_legend_handles_labels()
    more = acc.get_legend_handles_labels()
    ax.legend(lines[0] + more[0], lines[1] + more[1], fontsize=8, loc="center right")
    ax.set_title("npu fit: loss and test accuracy per epoch")
    finish(fig, meta, png)


def est_files(data, prefix):
    """{NET: path} of DATA_DIR's PREFIX.NET.csv files."""
    return {f[len(prefix) + 1:-4]: os.path.join(data, f) for f in sorted(os.listdir(data))
            if f.startswith(prefix + ".") and f.endswith(".csv")}


def est_finish(fig, ax, metas, path, xlabel, ylabel, title):
    """A sweep chart's axes (log2 x), labels, legend, and the runs' metadata lines."""
    ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, " | ".join(dict.fromkeys(metas)), path)


def in_only_drops(pts):
    """[(spm_kib, in bytes saved)] where DRAM In falls from one SPM size to the next and Out does
    not: the signature of block reuse (the skip, already written out for backward, is no longer
    read back for the Add; docs/estimator.md section 8)."""
    return [(b[0], a[1] - b[1]) for a, b in zip(pts, pts[1:]) if b[1] < a[1] and b[2] == a[2]]


def est_traffic(data, out):
    """The thesis's traffic-against-capacity curve (steps whose tensors exceed the SPM run tile by
    tile; a point the estimator refuses is marked x, not drawn as zero). Networks named res* (a residual
    CNN) get a second panel: their DRAM In against the SPM near their block-reuse step."""
    files = est_files(data, "est_spm")
    res = [n for n in files if n.startswith("res")]
    fig, axes = plt.subplots(1, 2 if res else 1, figsize=(12 if res else 7, 4.5), squeeze=False)
    ax, metas = axes[0][0], []
    for net, path in files.items():
        meta, rows = read_csv(path, ["spm_kib", "ok", "dram_in_bytes", "dram_out_bytes"])
        ok = [r for r in rows if r["ok"] == "1"]
        line, = ax.plot([int(r["spm_kib"]) for r in ok],
                        [(int(r["dram_in_bytes"]) + int(r["dram_out_bytes"])) / 2**20 for r in ok],
                        "o-", label=net)
        no = [int(r["spm_kib"]) for r in rows if r["ok"] != "1"]
        if no:
            ax.plot(no, [0] * len(no), "x", color=line.get_color())
        metas.append(meta)
        if net in res:
            block_panel(axes[0][1], net, [(int(r["spm_kib"]), int(r["dram_in_bytes"]), int(r["dram_out_bytes"]))
                                          for r in ok], line.get_color())
    ax.set_xscale("log", base=2)
    ax.set_xlabel("SPM KiB (x: refused)")
    ax.set_ylabel("DRAM MiB per iteration (in + out)")
    ax.set_title("estimator: DRAM traffic against SPM size")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    finish(fig, " | ".join(dict.fromkeys(metas)), os.path.join(out, "est_traffic.png"))


def block_panel(ax, net, pts, color):
    """DRAM In of a residual network against the SPM (linear) around its In-only drops, each
    marked with the bytes it saves."""
    drops = in_only_drops(pts)
    if drops:
        lo, hi = min(k for k, _ in drops) * 0.8, max(k for k, _ in drops) * 1.2
        pts = [p for p in pts if lo <= p[0] <= hi] or pts
    ax.plot([p[0] for p in pts], [p[1] / 2**20 for p in pts], "o-", color=color, label=f"{net}: DRAM In")
    ax.plot([p[0] for p in pts], [p[2] / 2**20 for p in pts], "s--", color=color, alpha=0.5,
            label=f"{net}: DRAM Out")
    for kib, saved in drops:
        ax.axvline(kib, color="gray", ls=":")
        ax.annotate(f" from {kib} KiB:\n In alone -{saved / 1024:.0f} KiB",
                    (kib, max(p[1] for p in pts) / 2**20), fontsize=8, ha="left", va="top")
    ax.set_xlabel("SPM KiB")
    ax.set_ylabel("DRAM MiB per iteration")
    ax.set_title("residual CNN near its block-reuse step (In alone falls)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower left")


def est_split(path):
    """(meta, {part: cycles}) of one estimate: array, point-wise (fwd/bwd vector), update, stall."""
    meta, rows = read_csv(path, ["phase", "compute", "vec", "stall", "start", "end"])
    parts = {"array": 0, "point-wise": 0, "update": 0, "stall": 0}
    for r in rows:
        parts["array"] += int(r["compute"])
        parts["update" if r["phase"] == "update" else "point-wise"] += int(r["vec"])
        parts["stall"] += int(r["stall"])
    return meta, parts


def est_breakdown(data, out):
    runs = est_files(data, "est_steps")
    fig, ax = plt.subplots(figsize=(7, 4.5))
    labels, bottom, metas, series = [], [], [], {}
    for name, path in sorted(runs.items(), key=lambda kv: (kv[0].rsplit(".", 1)[0], int(kv[0].rsplit(".", 1)[1]))):
        meta, parts = est_split(path)
        total = sum(parts.values()) or 1
        labels.append(f"{name.rsplit('.', 1)[0]}\n{name.rsplit('.', 1)[1]} KiB")
        for k, v in parts.items():
            series.setdefault(k, []).append(100 * v / total)
        metas.append(meta)
    bottom = [0] * len(labels)
    for k, vals in series.items():
        ax.bar(labels, vals, bottom=bottom, label=k)
        bottom = [b + v for b, v in zip(bottom, vals)]
    ax.set_ylabel("percent of the iteration's cycles")
    ax.set_title("estimator: where an iteration's cycles go")
    ax.legend(fontsize=8)
    ax.grid(axis="y", alpha=0.3)
    finish(fig, " | ".join(dict.fromkeys(metas)), os.path.join(out, "est_breakdown.png"))


def est_batch(data, out):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    metas = []
    for net, path in est_files(data, "est_batch").items():
        meta, rows = read_csv(path, ["spm_kib", "batch", "ok", "samples_per_mcycle"])
        for i, spm in enumerate(dict.fromkeys(r["spm_kib"] for r in rows)):
            pts = [(int(r["batch"]), float(r["samples_per_mcycle"])) for r in rows
                   if r["spm_kib"] == spm and r["ok"] == "1"]
            ax.plot([b for b, _ in pts], [v for _, v in pts], "--x" if i == 0 else "-o",
                    label=f"{net}, {spm} KiB")
        metas.append(meta)
    ax.set_yscale("log")
    est_finish(fig, ax, metas, os.path.join(out, "est_batch.png"), "batch",
               "samples per million cycles", "estimator: throughput against batch")


def main(argv):
    if len(argv) == 4 and argv[1] == "--fit":
        try:
            fit_loss(argv[2], argv[3])
        except (BadData, OSError, ValueError, KeyError) as e:
            print(f"plots: {e}", file=sys.stderr)
            return 2
        return 0
    if len(argv) != 3:
        print("usage: plots.py DATA_DIR OUT_DIR", file=sys.stderr)
        return 2
    data, out = argv[1], argv[2]
    jobs = [(utilization, "COMPUTE_REPORT.csv"), (dram_traffic, "topology.csv"),
            (speedups, ("conv.csv", "train_bench.csv"))]
    try:
        os.makedirs(out, exist_ok=True)
        done = 0
        for fn, need in jobs:
            need = need if isinstance(need, tuple) else (need,)
            if any(os.path.exists(os.path.join(data, n)) for n in need):
                fn(data, out)
                done += 1
            else:
                print(f"plots: no {' or '.join(need)} in {data}: {fn.__name__} skipped")
        for fn, prefix in ((est_traffic, "est_spm"), (est_breakdown, "est_steps"), (est_batch, "est_batch")):
            if est_files(data, prefix):
                fn(data, out)
                done += 1
        if os.path.exists(os.path.join(data, "fit.csv")):
            fit_loss(os.path.join(data, "fit.csv"), os.path.join(out, "fit_loss.png"))
            done += 1
        if not done:
            raise BadData(f"{data}: none of COMPUTE_REPORT.csv, topology.csv, conv.csv, train_bench.csv")
    except (BadData, OSError, ValueError, KeyError) as e:
        print(f"plots: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
