#!/usr/bin/env python3
"""make test: tests/workloads.sh's shards. Each small topology of tests/topologies runs whole and
as shards 0/2 and 1/2 (GEMM topologies also trained, WORKLOADS_TRAIN=1): the shards together hold
every layer once, each row equals the whole run's row (cycles are deterministic), all PASS; a bad
SHARD is refused.

    python3 tests/workloads_checks.py build/tiny/npu
"""
import csv
import os
import shutil
import subprocess
import sys

TOPOS = ["tests/topologies/gemm_small.csv", "tests/topologies/conv_small.csv"]


def run(npu, topo, shard, train):
    env = dict(os.environ, SHARD=shard, WORKLOADS_TRAIN="1" if train else "0")
    p = subprocess.run(["tests/workloads.sh", npu, topo], env=env, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"workloads_checks: SHARD={shard} train={train} {topo}: exit {p.returncode}\n"
                 f"{p.stdout}{p.stderr}")
    return p.stdout


def rows(path):
    with open(path, newline="") as f:
        out = list(csv.DictReader(line for line in f if not line.startswith("#")))
    key = "kernel" if out and "kernel" in out[0] else None
    return {(r["layer"], r[key] if key else ""): (r["cycles"], r["result"]) for r in out}


def check(npu, topo, train):
    out = os.path.join("build", "workloads", os.path.basename(os.path.dirname(npu)))
    name = os.path.basename(topo)[:-4] + (".train" if train and "conv" not in topo else "")
    run(npu, topo, "0/1", train)
    whole = rows(os.path.join(out, name + ".csv"))
    parts = {}
    for i in range(2):
        run(npu, topo, f"{i}/2", train)
        got = rows(os.path.join(out, f"{name}.shard-{i}-of-2.csv"))
        dup = set(got) & set(parts)
        if dup:
            sys.exit(f"workloads_checks: {name}: {sorted(dup)} in two shards")
        parts.update(got)
    if parts != whole:
        sys.exit(f"workloads_checks: {name}: shards {parts} differ from the whole run {whole}")
    bad = [k for k, v in whole.items() if v[1] != "PASS"]
    if bad:
        sys.exit(f"workloads_checks: {name}: not PASS: {bad}")
    return len(whole)


def main():
    npu = sys.argv[1]
    out = os.path.join("build", "workloads", os.path.basename(os.path.dirname(npu)))
    shutil.rmtree(out, ignore_errors=True)
    n = sum(check(npu, t, train) for t in TOPOS for train in (False, True) if not
            (train and "conv" in t))
    env = dict(os.environ, SHARD="2/2")
    p = subprocess.run(["tests/workloads.sh", npu, TOPOS[0]], env=env, capture_output=True, text=True)
    if p.returncode == 0 or "need 0 <= i < N" not in p.stderr:
        sys.exit(f"workloads_checks: SHARD=2/2 was not refused: exit {p.returncode} {p.stderr}")
    print(f"workloads_checks: {n} rows, shards 0/2 + 1/2 equal the whole runs; SHARD=2/2 refused")


if __name__ == "__main__":
    main()
