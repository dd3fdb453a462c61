#!/usr/bin/env python3
"""Shard i of N of a SCALE-Sim topology file, for long workload runs split over independent jobs
(tests/workloads.sh with SHARD=i/N, the convention of `make regress`): the layers are dealt
largest first to the shard with the least work so far (work = MACs of the layer), so GNMT's three
36,548-wide layers land on different shards. Writes the comment and header rows, blank separator
rows and the shard's layers, in their original order.

    python3 tests/topo_shard.py FILE.csv i N OUT.csv   -> prints the shard's layer names
"""
import csv
import sys


def macs(row, conv):
    v = [int(x) for x in row[1:8]] if conv else [int(x) for x in row[1:4]]
    if not conv:
        return v[0] * v[1] * v[2]
    h, w, fh, fw, c, f, s = v
    return max(1, (h - fh) // s + 1) * max(1, (w - fw) // s + 1) * fh * fw * c * f


def main():
    if len(sys.argv) != 5:
        sys.exit(__doc__)
    src, i, n, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    if n < 1 or not 0 <= i < n:
        sys.exit(f"topo_shard: shard {i}/{n}: need 0 <= i < N")
    with open(src, newline="") as f:
        lines = f.read().splitlines(keepends=True)
    rows = [next(csv.reader([ln]), []) for ln in lines]
    comment = [k for k, r in enumerate(rows) if r and r[0].lstrip().startswith("#")]
    h = next(k for k, r in enumerate(rows) if k not in comment)  # the header row
    conv = "IFMAP" in ",".join(rows[h])
    layers = [k for k, r in enumerate(rows) if k > h and k not in comment and r and r[0].strip()]
    load, owner = [0] * n, {}
    for k in sorted(layers, key=lambda k: (-macs(rows[k], conv), k)):
        s = min(range(n), key=lambda j: (load[j], j))
        owner[k] = s
        load[s] += macs(rows[k], conv)
    keep = [k for k in range(len(rows)) if k not in owner or owner[k] == i]
    with open(out, "w", newline="") as f:
        f.writelines(lines[k] for k in keep)  # the lines as written
    print(" ".join(rows[k][0].strip() for k in keep if k in owner))


if __name__ == "__main__":
    main()
