#!/usr/bin/env python3
"""Merge the CSVs of `make sweep-validate` shards (npu sweep --plan step --validate, SHARD=i/N)
and summarise the validation: points run on the RTL, how many moved exactly the estimated DRAM
bytes, the median and max |error| of the step cycles. Exit 1 if a point is not bytes exact or
is out of the 10% bound, or no file holds a validated point; 2 on a bad argument.
    tests/sweep_merge.py build/sweep/validate-*.csv
"""
import csv
import statistics
import sys

BOUND = 0.10


def rows(path):
    with open(path, newline="") as f:
        return [r for r in csv.DictReader(line for line in f if not line.startswith("#"))]


def main(paths):
    if not paths:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    seen, pts = set(), []
    for p in paths:
        for r in rows(p):
            key = (r["s"], r["spm_kib"], r["dram_bw"], r["batch"])
            if r.get("validated") != "1" or key in seen:
                continue
            seen.add(key)
            pts.append(r)
    if not pts:
        print("sweep_merge: no validated point in", " ".join(paths), file=sys.stderr)
        return 1
    errs = [abs(float(r["cycle_err"])) for r in pts]
    exact = sum(r["bytes_exact"] == "1" for r in pts)
    out = sum(e > BOUND for e in errs)
    print(f"{len(pts)} points validated on the RTL from {len(paths)} file(s): bytes exact on {exact}; "
          f"step cycles median |error| {100 * statistics.median(errs):.1f}%, max {100 * max(errs):.1f}% "
          f"(bound {100 * BOUND:.0f}%, {out} out)")
    return 0 if exact == len(pts) and out == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
