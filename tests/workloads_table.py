#!/usr/bin/env python3
"""Per-network tables of `make workloads` (tests/workloads.sh): one row per layer and kernel with
cycles, PE utilization (MACs / (cycles x 4S^2)) and DRAM bytes over compulsory bytes (each tensor
once), and a total per network. Reads the CSVs of `npu conv --csv` and `npu gemm --topology --csv`.
Exits 1 if a row is not PASS.

    python3 tests/workloads_table.py --s 8 build/workloads/small/*.csv [--markdown]
"""
import argparse
import csv
import os
import sys


def conv_rows(rows):
    out = []
    for r in rows:
        comp = int(r["compulsory_rd_bytes"]) + int(r["compulsory_wr_bytes"])
        moved = int(r["dram_rd_bytes"]) + int(r["dram_wr_bytes"])
        out.append((r["layer"], r["kernel"], int(r["cycles"]), int(r["macs"]), moved, comp,
                    int(r.get("parts") or 1), r["result"]))
    return out


def gemm_rows(rows):
    out = []
    for r in rows:
        m, n, k = int(r["M"]), int(r["N"]), int(r["K"])
        comp = 2 * m * k + 2 * k * n + 4 * m * n  # A, B int16 once, C int32 once
        moved = int(r["dram_rd_bytes"]) + int(r["dram_wr_bytes"])
        out.append((r["layer"], "gemm", int(r["cycles"]), int(r["macs"]), moved, comp, 1, r["result"]))
    return out


def table(name, rows, pes, md):
    fmt = "| {} | {} | {:,} | {:.1f}% | {:.2f} | {} | {} |" if md else "  {:<14} {:<5} {:>12,} {:>7.1f}% {:>8.2f} {:>5} {}"
    if md:
        print(f"\n**{name}**\n")
        print("| layer | kernel | cycles | util | bytes / compulsory | parts | result |")
        print("|---|---|---|---|---|---|---|")
    else:
        print(f"{name}")
        print("  {:<14} {:<5} {:>12} {:>8} {:>8} {:>5} {}".format("layer", "kern", "cycles", "util",
                                                                "B/comp", "parts", "result"))
    cyc = macs = moved = comp = 0
    bad = 0
    for layer, kern, c, m, mv, cp, parts, res in rows:
        util = 100.0 * m / (c * pes) if c else 0.0
        print(fmt.format(layer, kern, c, util, mv / cp if cp else 0.0, parts, res))
        bad += res != "PASS"
        cyc, macs, moved, comp = cyc + c, macs + m, moved + mv, comp + cp
    for k in sorted({r[1] for r in rows}) if len({r[1] for r in rows}) > 1 else []:
        sel = [r for r in rows if r[1] == k]
        kc, km, kmv, kcp = (sum(r[i] for r in sel) for i in (2, 3, 4, 5))
        print(fmt.format(f"all {k}", f"{len(sel)}", kc, 100.0 * km / (kc * pes) if kc else 0.0,
                         kmv / kcp if kcp else 0.0, "", "FAIL" if any(r[7] != "PASS" for r in sel) else "PASS"))
    util = 100.0 * macs / (cyc * pes) if cyc else 0.0
    print(fmt.format("total", f"{len(rows)}", cyc, util, moved / comp if comp else 0.0, "", "FAIL" if bad else "PASS"))
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--s", type=int, required=True, help="core side S of the config (PEs = 4 S^2)")
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("csv", nargs="+")
    a = ap.parse_args()
    bad = 0
    for path in a.csv:
        with open(path, newline="") as f:
            # the CLI's CSVs start with a "# npu ..." metadata line
            rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
        rows = conv_rows(rows) if rows and "kernel" in rows[0] else gemm_rows(rows)
        bad += table(os.path.basename(path)[:-4], rows, 4 * a.s * a.s, a.markdown)
    if bad:
        print(f"workloads: {bad} run(s) not PASS", file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
