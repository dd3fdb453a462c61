#!/usr/bin/env python3
"""Program replay (issue 17 acceptance 2): `npu gemm --save-program F` at one configuration, then
`npu run F` reproduces the original run's cycles, every counter and the DRAM model's beats,
bursts and stalls exactly (policies, transposes, DRAM stalls); `npu disasm F` lists the
instructions `npu disasm -m -n -k` does; the saved expected results are checked (a tampered one,
checksum recomputed, is a mismatch, exit 1); a file saved at this configuration is refused by the
other configuration's npu (exit 2, both named); truncated, over-long, corrupted and foreign files
are exit 2 with the reason. `npu conv --save-program F` (fwd, dX ecoflow, dW zeropad of a
strided layer, DRAM stalls or a slow DRAM) records the program: `npu run F` leaves the DRAM
window the original run left and gives its cycles, MACs, zero MACs and DRAM bytes; a flipped byte
of the recording (checksum made right) is exit 1, the other configuration's npu refuses it.

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


CONV_CASES = [  # one kernel of one conv layer: npu conv --save-program (a recorded program)
    ["--kernel", "fwd", "--stall-pct", "5"],
    ["--kernel", "dx", "--dataflow", "ecoflow", "--stall-pct", "5", "--seed", "2"],
    ["--kernel", "dw", "--dataflow", "zeropad", "--dram-bw", "8"],
]
CONV_SPEC = "8,10,10,16,3,3,2,1,1"


def check_conv(npu, other, tmp, i, opts, errs):
    """`npu conv --save-program F` then `npu run F`: the replay leaves the DRAM window the
    original run left (checked inside npu run) and its counters equal the conv row's."""
    f = os.path.join(tmp, f"conv{i}.npuprog")
    what = f"conv {' '.join(opts)}"
    p = run(npu, "conv", "--conv", CONV_SPEC, *opts, "--save-program", f, "--json")
    q = run(npu, "run", f, "--json")
    if p.returncode != 0 or q.returncode != 0:
        errs.append(f"{what}: conv exit {p.returncode}, run exit {q.returncode}: {q.stderr.decode()[-300:]}")
        return
    row, rep = json.loads(p.stdout)["rows"][0], json.loads(q.stdout)
    c = rep["counters"]
    got = {"cycles": c["cycles"], "macs": sum(c[f"macs_core{k}"] for k in range(4)),
           "macs_zero": c["macs_zero"],
           "dram_rd_bytes": sum(v for k, v in c.items() if k.startswith("dram_rd_") and k != "dram_rd_prog" and k != "dram_rd_bursts"),
           "dram_wr_bytes": sum(v for k, v in c.items() if k.startswith("dram_wr_") and k != "dram_wr_prog" and k != "dram_wr_bursts")}
    for k, v in got.items():
        if row[k] != v:
            errs.append(f"{what}: replayed {k} {v}, the original run {row[k]}")
    if rep["result"] != "PASS" or rep["label"].split()[:2] != ["conv", row["kernel"]]:
        errs.append(f"{what}: run result {rep['result']}, label {rep['label']!r}")
    data = open(f, "rb").read()
    bad = bytearray(data[:-8])  # a byte of the recorded window after the run flipped, checksum right
    bad[-(8 + 8 * len(c) + 8) - 100] ^= 0x40  # before the counters (count, values) and the cycles
    bad += fnv1a(bad).to_bytes(8, "little")
    tampered = os.path.join(tmp, f"conv{i}_bad.npuprog")
    with open(tampered, "wb") as g:
        g.write(bad)
    t = run(npu, "run", tampered)
    if t.returncode != 1 or b"DRAM bytes differ from the recorded run" not in t.stdout:
        errs.append(f"{what}: a changed recorded byte: exit {t.returncode}, {t.stdout.decode()[-200:]!r}")
    o = run(other, "run", f)
    if o.returncode != 2 or b"built for configuration" not in o.stderr:
        errs.append(f"{what}: the other configuration's npu run: exit {o.returncode}")


def main():
    npu, other = sys.argv[1], sys.argv[2]
    errs, first = [], None
    with tempfile.TemporaryDirectory() as tmp:
        for i, opts in enumerate(CASES):
            res = check_case(npu, tmp, i, opts, errs)
            first = first or res
        if first:
            check_bad_files(npu, other, first[0], errs)
        for i, opts in enumerate(CONV_CASES):
            check_conv(npu, other, tmp, i, opts, errs)
    for e in errs:
        print("FAIL:", e, file=sys.stderr)
    print(f"replay_checks: {len(CASES)} saved GEMMs replayed (cycles, counters, DRAM model "
          f"equal), disasm, 7 bad files; {len(CONV_CASES)} recorded conv kernels replayed (DRAM "
          f"window, counters), each tampered and at the other config; {len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
