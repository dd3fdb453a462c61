#!/usr/bin/env python3
"""Every `npu` command's --json output parses with Python's json module (one line, no NaN or
Infinity), starts with the metadata (schema, command, rev, seed, config), and keeps the keys that
tests/bench.sh reads; every CSV the CLI writes starts with the `# npu ...` metadata line and then
parses as a CSV; an unwritable output path is refused before the run (exit 2, the path named).

Usage: tests/json_checks.py build/<config>/npu   (quick sizes: about 15 s at small)
"""
import csv
import json
import os
import subprocess
import sys
import tempfile

SCHEMA = 1
CONV = "4,9,9,4,3,3,2,1,1"
# (command line, keys the command's object must hold beyond the metadata, takes --csv); every run
# exits 0 but overlap, whose small GEMM exits 1 (ratio POOR) with its JSON all the same
RUNS = [
    (["info"], ["config"], False),
    (["gemm", "-m", "5", "-n", "6", "-k", "7", "--stall-pct", "5"],
     ["result", "pass", "cycles", "wall_s", "cycles_per_s", "pe_util", "counters", "dram_bytes"], True),
    (["gemm", "--topology", "tests/topologies/gemm_small.csv"], ["result", "pass", "rows"], True),
    (["overlap", "-m", "16", "-n", "16", "-k", "16"],
     ["result", "overlap", "dram_bw", "compute_cycles", "transfer_cycles", "full_cycles", "ratio",
      "max_ratio"], False),
    (["disasm", "-m", "5", "-n", "6", "-k", "7"], ["instructions", "program"], False),
    (["disasm", "{prog}"], ["instructions", "program"], False),
    (["run", "{prog}"], ["result", "pass", "cycles", "counters", "dram_bytes"], True),
    (["slice", "-m", "64", "-n", "64", "-k", "64"], ["searches"], False),
    (["slice", "--conv", CONV, "--kernel", "all"], ["searches"], False),
    (["train", "--layers", "8,12,8", "--batch", "4"], ["result", "pass", "cycles", "rows"], True),
    (["train", "--conv", CONV], ["result", "pass", "rows"], True),
    (["conv", "--conv", CONV, "--kernel", "dx"], ["result", "pass", "rows"], True),
    (["conv", "--conv", CONV, "--kernel", "bwd"], ["result", "pass", "kernel", "rows"], True),
    (["flexsa-report", "--limit", "1"], ["result", "pass", "rows"], True),
    (["train-bench", "--set", "edge"], ["pass", "rows"], True),
    (["calibrate", "--quick"], ["r2", "q16"], False),
    (["fit", "--model", "mlp:64,8,10", "--engine", "ref", "--epochs", "1"], ["result", "epochs"], True),
    (["estimate", "--model", "mlp:64,128,10"], ["cycles", "rows", "dram_in_bytes"], True),
    (["estimate", "--model", "cnn:c4,c8s2,fc10", "--batch", "2", "--plan", "step", "--resident-banks", "1",
      "--objective", "traffic"], ["cycles", "tensors", "plan_dram_side", "plan_bypass", "plan_objective"], False),
    (["sweep", "--model", "mlp:64,128,10", "--space", "s=4,8;bw=16,32"], ["points", "rows"], True),
]


def no_constant(name):
    raise ValueError(f"non-finite number {name} in the JSON")


def check_json(npu, argv, keys, seen_cmds):
    p = subprocess.run([npu] + argv + ["--json"], capture_output=True, text=True)
    what = " ".join(argv)
    if p.returncode != 0 and not (argv[0] == "overlap" and p.returncode == 1):
        return f"npu {what} --json: exit {p.returncode}: {p.stderr.strip()}"
    lines = p.stdout.splitlines()
    if len(lines) != 1:
        return f"npu {what} --json: {len(lines)} lines on stdout, want one JSON line"
    try:
        d = json.loads(lines[0], parse_constant=no_constant)
    except ValueError as e:
        return f"npu {what} --json: invalid JSON: {e}"
    if list(d)[:5] != ["schema", "command", "rev", "seed", "config"]:
        return f"npu {what} --json: the metadata does not come first: {list(d)[:6]}"
    if d["schema"] != SCHEMA or d["command"] != argv[0] or not isinstance(d["seed"], int):
        return f"npu {what} --json: schema {d['schema']}, command {d['command']}, seed {d['seed']}"
    if not isinstance(d["rev"], str) or not d["rev"]:
        return f"npu {what} --json: empty rev"
    if not isinstance(d["config"], dict) or not d["config"].get("name"):
        return f"npu {what} --json: no config name"
    missing = [k for k in keys if k not in d]
    if missing:
        return f"npu {what} --json: keys missing: {missing}"
    seen_cmds.add(argv[0])
    return None


def check_csv(npu, argv, tmp):
    path = os.path.join(tmp, argv[0] + ".csv")
    p = subprocess.run([npu] + argv + ["--quiet", "--csv", path], capture_output=True, text=True)
    what = " ".join(argv)
    if p.returncode != 0:
        return f"npu {what} --csv: exit {p.returncode}: {p.stderr.strip()}"
    with open(path, newline="") as f:
        first = f.readline()
        rows = list(csv.DictReader(f))
    want = f"# npu {argv[0]} config="
    if not first.startswith(want) or f" schema={SCHEMA}" not in first or " rev=" not in first:
        return f"npu {what} --csv: first line {first.strip()!r}, want '{want}... rev=... schema={SCHEMA}'"
    if not rows or None in rows[0]:
        return f"npu {what} --csv: no rows or a row longer than the header"
    return None


def check_unwritable(npu):
    errs = []
    for argv in (["gemm", "-m", "4", "-n", "4", "-k", "4", "--csv"], ["train-bench", "--csv"],
                 ["calibrate", "--quick", "--out"], ["conv", "--conv", CONV, "--csv"],
                 ["gemm", "-m", "4", "-n", "4", "-k", "4", "--trace"],
                 ["gemm", "-m", "4", "-n", "4", "-k", "4", "--save-program"],
                 ["gemm", "-m", "4", "-n", "4", "-k", "4", "--out"]):
        bad = "/nonexistent-dir/x.out"
        p = subprocess.run([npu] + argv + [bad], capture_output=True, text=True)
        if p.returncode != 2 or bad not in p.stderr or p.stdout:
            errs.append(f"npu {' '.join(argv)} {bad}: exit {p.returncode}, stdout {p.stdout[:80]!r}, "
                        f"stderr {p.stderr.strip()!r} (want exit 2 before the run, the path named)")
    return errs


def main():
    npu = sys.argv[1]
    errs, seen = [], set()
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "p.npuprog")  # for npu run / npu disasm FILE
        subprocess.run([npu, "gemm", "-m", "9", "-n", "10", "-k", "11", "--save-program", prog,
                        "--quiet"], check=True, capture_output=True)
        for argv, keys, takes_csv in RUNS:
            argv = [prog if x == "{prog}" else x for x in argv]
            e = check_json(npu, argv, keys, seen)
            errs += [e] if e else []
            e = check_csv(npu, argv, tmp) if takes_csv else None
            errs += [e] if e else []
    errs += check_unwritable(npu)
    p = subprocess.run([npu, "help"], capture_output=True, text=True)
    # every command of the usage text has a --json run above
    for cmd in ("gemm", "overlap", "slice", "disasm", "run", "train", "conv", "flexsa-report",
                "train-bench", "calibrate", "info"):
        if f"npu {cmd}" in p.stdout and cmd not in seen:
            errs.append(f"npu {cmd}: no --json run checked")
    for e in errs:
        print("FAIL:", e, file=sys.stderr)
    print(f"json_checks: {len(RUNS)} --json runs, {len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
