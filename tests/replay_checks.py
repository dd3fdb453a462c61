#!/usr/bin/env python3
"""Program replay (issue 17 acceptance 2): `npu gemm --save-program F` at one configuration, then
`npu run F` reproduces the original run's cycles, every counter and the DRAM model's beats,
bursts and stalls exactly (policies, transposes, DRAM stalls); `npu disasm F` lists the
instructions `npu disasm -m -n -k` does; the saved expected results are checked (a tampered one,
checksum recomputed, is a mismatch, exit 1); a file saved at this configuration is refused by the
other configuration's npu (exit 2, both named); truncated, over-long, corrupted and foreign files
are exit 2 with the reason.

Usage: tests/replay_checks.py build/small/npu build/tiny/npu
"""
import json
import os
import subprocess
import sys
import tempfile

CASES = [  # gemm options
    ["-m", "33", "-n", "17", "-k", "40", "--stall-pct", "5", "--seed", "3"],
    ["-m", "40", "-n", "24", "-k", "19", "--policy", "flexsa", "--trans-a", "--seed", "4"],
    ["-m", "18", "-n", "40", "-k", "33", "--policy", "1g4c", "--trans-b", "--stall-pct", "10"],
    ["-m", "64", "-n", "64", "-k", "64", "--dram-bw", "8", "--dram-latency", "50"],
]
SAME = ["cycles", "counters", "dram_model", "dram_bytes", "plan", "result", "pass", "workload",
        "useful_macs", "expected_macs", "counters_check"]


def run(npu, *args):
    return subprocess.run([npu, *args], capture_output=True)


def fnv1a(data):
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def disasm_lines(text):
    return [ln.split(None, 1)[1] for ln in text.decode().splitlines() if not ln.startswith("#")]


def check_case(npu, tmp, i, opts, errs):
    f = os.path.join(tmp, f"p{i}.npuprog")
    g = run(npu, "gemm", *opts, "--save-program", f, "--json")
    r = run(npu, "run", f, "--json")
    what = " ".join(opts)
    if g.returncode or r.returncode:
        errs.append(f"{what}: gemm exit {g.returncode}, run exit {r.returncode}: {r.stderr.decode()}")
        return None
    gj, rj = json.loads(g.stdout), json.loads(r.stdout)
    diff = [k for k in SAME if gj.get(k) != rj.get(k)]
    if diff or rj["command"] != "run":
        errs.append(f"{what}: replay differs in {diff or 'command'}")
    dims = [o for o in opts if o in ("--trans-a", "--trans-b")]
    for k in ("-m", "-n", "-k", "--policy", "--dram-bw", "--dram-latency"):  # the tiles follow the timing
        if k in opts:
            dims += [k, opts[opts.index(k) + 1]]
    d1, d2 = run(npu, "disasm", f), run(npu, "disasm", *dims)
    if d1.returncode or disasm_lines(d1.stdout) != disasm_lines(d2.stdout):
        errs.append(f"{what}: disasm FILE differs from disasm {' '.join(dims)}")
    return f, gj["cycles"]


def check_bad_files(npu, other, f, errs):
    data = open(f, "rb").read()
    d = os.path.dirname(f)

    def refused(name, content, want, code=2, binary=npu):
        path = os.path.join(d, name)
        with open(path, "wb") as h:
            h.write(content)
        p = run(binary, "run", path)
        if p.returncode != code or want not in p.stderr.decode() + p.stdout.decode():
            errs.append(f"run {name}: exit {p.returncode}, output {p.stderr.decode().strip()!r} "
                        f"{p.stdout.decode()[:120]!r}, want {code} and '{want}'")

    cfg = json.loads(run(npu, "info", "--json").stdout)["config"]["name"]
    ocfg = json.loads(run(other, "info", "--json").stdout)["config"]["name"]
    refused("foreign.npuprog", data, f"built for configuration '{cfg}', this binary simulates "
            f"'{ocfg}'", binary=other)
    refused("trunc.npuprog", data[:len(data) // 2], "truncated")
    refused("long.npuprog", data + b"\0", "1 bytes past the end")
    flip = bytearray(data)
    flip[len(data) // 2] ^= 0x40
    refused("corrupt.npuprog", bytes(flip), "corrupt: the checksum")
    refused("magic.npuprog", b"NOTAPROG" + data[8:], "no NPUPROG magic")
    ver = bytearray(data)
    ver[8] = 9
    refused("version.npuprog", bytes(ver), "format version 9")
    # the last expected element changed, the checksum made right: the replay must see it
    bad = bytearray(data[:-8])
    bad[-1] ^= 0x01
    bad += fnv1a(bad).to_bytes(8, "little")
    refused("expect.npuprog", bytes(bad), "mismatch", code=1)


def main():
    npu, other = sys.argv[1], sys.argv[2]
    errs, first = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for i, opts in enumerate(CASES):
            res = check_case(npu, tmp, i, opts, errs)
            first = first or res
        if first:
            check_bad_files(npu, other, first[0], errs)
    for e in errs:
        print("FAIL:", e, file=sys.stderr)
    print(f"replay_checks: {len(CASES)} saved GEMMs replayed (cycles, counters, DRAM model "
          f"equal), disasm, 7 bad files; {len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
