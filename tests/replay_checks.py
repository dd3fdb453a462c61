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
Commands of several programs (npu conv --kernel all, a train step, npu gemm --topology, with DRAM
stalls) save them all: `npu run F` replays each in order and its label, cycles and every counter
equal those the original run's timeline recorded for it; `npu disasm F` lists them all; a
truncated, corrupted, miscounted or mis-kinded multi-program file is exit 2 naming the program,
a changed expected byte of program 2 fails program 2 (exit 1), and a version 1 file (one
program) still replays.

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
    progs = rep["programs"]
    if rep["result"] != "PASS" or len(progs) != 1 or progs[0]["label"].split()[:2] != ["conv0", row["kernel"]]:
        errs.append(f"{what}: run result {rep['result']}, programs {[q['label'] for q in progs]}")
    data = open(f, "rb").read()
    bad = bytearray(data[:-8])  # a byte of the recorded window after the run flipped, checksum right
    bad[-(8 + 8 * len(c) + 8) - 100] ^= 0x40  # before the counters (count, values) and the cycles
    bad += fnv1a(bad).to_bytes(8, "little")
    tampered = os.path.join(tmp, f"conv{i}_bad.npuprog")
    with open(tampered, "wb") as g:
        g.write(bad)
    t = run(npu, "run", tampered)
    if t.returncode != 1 or b"FAIL program 1/1" not in t.stdout or b"DRAM bytes differ from the recorded run" not in t.stdout:
        errs.append(f"{what}: a changed recorded byte: exit {t.returncode}, {t.stdout.decode()[-200:]!r}")
    o = run(other, "run", f)
    if o.returncode != 2 or b"built for configuration" not in o.stderr:
        errs.append(f"{what}: the other configuration's npu run: exit {o.returncode}")


MULTI = [  # commands of several programs: name, options (small shapes: the check stays fast)
    ("conv all", ["conv", "--conv", CONV_SPEC, "--kernel", "all", "--stall-pct", "5", "--seed", "2"]),
    ("train step", ["train", "--layers", "16,32,24", "--batch", "16", "--stall-pct", "5"]),
    ("gemm topology", ["gemm", "--topology", os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                         "topologies", "gemm_small.csv"),
                       "--stall-pct", "5"]),
]


def records(data):
    """The records of a version 2 file: [(offset of the kind, kind, body offset, body length)]."""
    count = int.from_bytes(data[12:16], "little")
    off = 24 + 4 + int.from_bytes(data[24:28], "little") + 8
    out = []
    for _ in range(count):
        kind = int.from_bytes(data[off:off + 4], "little")
        n = int.from_bytes(data[off + 4:off + 12], "little")
        out.append((off, kind, off + 12, n))
        off += 12 + n
    return out


def window_after(data, body):
    """The end of a recorded program's window "after" bytes: its body is the timing (40 bytes),
    flags, start cycle, the label, the program (base, count, words), the window (address,
    length, before, after), the counters and the cycles."""
    u64 = lambda at: int.from_bytes(data[at:at + 8], "little")
    at = body + 56
    at += 4 + int.from_bytes(data[at:at + 4], "little")
    at += 16 + 16 * u64(at + 8)
    return at + 16 + 2 * u64(at + 8)


def with_sum(body):
    return bytes(body) + fnv1a(bytes(body)).to_bytes(8, "little")


def check_multi(npu, other, tmp, name, opts, errs):
    """The command saves every program it runs; npu run replays them in order: the programs'
    labels, cycles and every counter equal the original run's (its timeline records each
    program's counters), the total its cycles; npu disasm lists them all."""
    f, tl = os.path.join(tmp, "multi.npuprog"), os.path.join(tmp, "multi.json")
    p = run(npu, *opts, "--save-program", f, "--timeline", tl, "--json")
    q = run(npu, "run", f, "--json")
    if p.returncode or q.returncode:
        errs.append(f"{name}: exit {p.returncode}, run exit {q.returncode}: {q.stderr.decode()[-300:]}")
        return None
    orig = json.load(open(tl))["otherData"]["programs"]
    rep = json.loads(q.stdout)
    got = rep["programs"]
    if len(got) < 3 or len(got) != len(orig) or rep["programs_run"] != len(orig):
        errs.append(f"{name}: {len(got)} programs replayed, the command ran {len(orig)}")
        return None
    for o, g in zip(orig, got):
        if o["label"] != g["label"] or o["counters"] != g["counters"] or g["result"] != "PASS":
            diff = [k for k in o["counters"] if o["counters"][k] != g["counters"].get(k)]
            errs.append(f"{name} program {g['index']} {g['label']!r} (ran as {o['label']!r}): "
                        f"{g['result']}, counters differ: {diff}")
    total = sum(o["counters"]["cycles"] for o in orig)
    if rep["cycles"] != total or rep["result"] != "PASS":
        errs.append(f"{name}: replay total {rep['cycles']} cycles, the command's programs {total}")
    d = run(npu, "disasm", f).stdout.decode()
    if d.count("# program ") != len(orig):
        errs.append(f"{name}: disasm lists {d.count('# program ')} programs of {len(orig)}")
    o = run(other, "run", f)
    if o.returncode != 2 or b"built for configuration" not in o.stderr:
        errs.append(f"{name}: the other configuration's npu run: exit {o.returncode}")
    return f


def check_multi_bad(npu, f, errs):
    """A multi-program file damaged: refused with the program named (exit 2), or its replay
    fails at the damaged program (exit 1); a version 1 file of one program still replays."""
    data = open(f, "rb").read()
    recs = records(data)
    d = os.path.dirname(f)

    def expect(tag, content, code, want):
        path = os.path.join(d, f"multi_{tag}.npuprog")
        with open(path, "wb") as h:
            h.write(content)
        p = run(npu, "run", path)
        out = p.stderr.decode() + p.stdout.decode()
        if p.returncode != code or want not in out:
            errs.append(f"multi {tag}: exit {p.returncode}, {out.strip()[-200:]!r}, want {code} and {want!r}")

    n = len(recs)
    expect("trunc", data[:recs[1][0] + 40], 2, "truncated")
    flip = bytearray(data)
    flip[recs[1][2] + 100] ^= 0x10
    expect("flip", bytes(flip), 2, "corrupt: the checksum")
    # program 2's record length one byte short, the checksum made right
    short = bytearray(data[:-8])
    off = recs[1][0] + 4
    short[off:off + 8] = (recs[1][3] - 1).to_bytes(8, "little")
    expect("reclen", with_sum(short), 2, f"program 2 of {n}:")
    kind = bytearray(data[:-8])
    kind[recs[2][0]] = 7
    expect("kind", with_sum(kind), 2, f"program 3 of {n}: program kind 7 is unknown")
    cnt = bytearray(data[:-8])
    cnt[12:16] = (n + 1).to_bytes(4, "little")
    expect("count", with_sum(cnt), 2, f"program {n + 1} of {n + 1}: truncated")
    # the last recorded byte of program 2's window after its run changed: its replay fails
    after = bytearray(data[:-8])
    after[window_after(data, recs[1][2]) - 1] ^= 0x01  # the window's last byte after the run
    expect("after", with_sum(after), 1, f"FAIL program 2/{n}")
    # version 1: the first program alone, the timing in the header's place
    kind0, body0, len0 = recs[0][1], recs[0][2], recs[0][3]
    head = data[28:recs[0][0]]  # name and hash
    v1 = bytearray(data[:8]) + (1).to_bytes(4, "little") + kind0.to_bytes(4, "little") + bytes(8)
    v1 += data[24:28] + head + data[body0:body0 + 40] + data[body0 + 56:body0 + len0]
    v1[16:24] = (len(v1) + 8).to_bytes(8, "little")
    expect("v1", with_sum(v1), 0, "PASS run")


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
        multi = [check_multi(npu, other, tmp, name, opts, errs) for name, opts in MULTI]
        if multi[0]:
            check_multi_bad(npu, multi[0], errs)
    for e in errs:
        print("FAIL:", e, file=sys.stderr)
    print(f"replay_checks: {len(CASES)} saved GEMMs replayed (cycles, counters, DRAM model "
          f"equal), disasm, 7 bad files; {len(CONV_CASES)} recorded conv kernels replayed (DRAM "
          f"window, counters), each tampered and at the other config; {len(MULTI)} multi-program "
          f"commands replayed (each program's counters), 7 damaged multi-program files and a "
          f"version 1 file; {len(errs)} failures")
    return 1 if errs else 0


if __name__ == "__main__":
    sys.exit(main())
