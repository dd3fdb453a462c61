#!/usr/bin/env python3
"""timeline_checks.py NPU TMPDIR - `npu ... --timeline F.json` (sw/run/timeline.h) on the RTL.

A double-buffered GEMM's timeline must be valid Chrome trace-event JSON (what Perfetto reads)
whose slices agree with the run's counters:
  - one LOAD / STORE slice per LOAD / STORE instruction completed, each named by the
    disassembly of an instruction of its queue; slices of one track never overlap;
  - every counter track's summed slice durations equal its counter (waves per mode, drains,
    the token / weight / OBUF / unit stalls, the LOAD and STORE queues' busy cycles), one DRAM
    lane slice per burst the counters count;
  - LOAD, EXEC and STORE overlap: their busy times add up to more than the run's cycles, and
    the shorter of the LOAD time and the array's wave time mostly hides under the other
    (double buffering at work);
  - a LOAD token stall never holds a LOAD that starts (a descriptor waits or starts, not both);
    with the one-descriptor LOAD engine (npu info: load_pipeline 0) it overlaps no LOAD slice at
    all (the engine waits or flies), while the pipelined engine's next descriptor may wait on its
    token while the last one's data still arrive.
Then conv, train and a GEMM topology (several programs, one process each, named after the
program's kernel or layer) give valid timelines too, on one shared clock: the runs in the order
they ran, each starting where the one before ended, none overlapping another, and each run's
slices still summing to its own counters.
Exit 0 when every check passes, 1 otherwise (each failure printed).
"""
import json
import os
import subprocess
import sys

FAILS = []
PIPELINED = False  # the build's LOAD engine takes the next descriptor while the last one's data arrive
COUNTER_TRACKS = {"array FW": "busy_fw", "array VSW": "busy_vsw", "array HSW": "busy_hsw",
                  "array ISW": "busy_isw", "drain": "drain_busy",
                  "LOAD stall: token": "wait_tok_load", "EXEC stall: token": "wait_tok_exec",
                  "EXEC stall: weights": "wait_exec_weights",
                  "EXEC stall: OBUF": "wait_exec_obuf", "EXEC stall: unit": "wait_exec_unit",
                  "STORE stall: token": "wait_tok_store",
                  "LOAD": "busy_load", "STORE": "busy_store"}
QUEUE_OPS = {"LOAD": ("LOAD", "FILL"), "EXEC": ("LDW", "WAVE", "DRAIN", "SYNC_E"),
             "STORE": ("STORE",)}


def check(cond, what):
    if not cond:
        FAILS.append(what)
        print("FAIL: " + what)


def run(npu, args):
    p = subprocess.run([npu] + args, capture_output=True, text=True)
    check(p.returncode == 0, "%s exits %d: %s" % (" ".join(args), p.returncode, p.stderr[-300:]))
    return p


def load(path):
    with open(path) as f:
        d = json.load(f)
    check(isinstance(d.get("traceEvents"), list), path + ": traceEvents is a list")
    return d


def tracks(d):
    """{pid: {track name: [(ts, dur, name, args)]}} from the X events and the thread names."""
    names, out = {}, {}
    for e in d["traceEvents"]:
        check(e.get("ph") in ("X", "M"), "event phase %r" % e.get("ph"))
        if e["ph"] == "M" and e["name"] == "thread_name":
            names[(e["pid"], e["tid"])] = e["args"]["name"]
    for e in d["traceEvents"]:
        if e["ph"] != "X":
            continue
        ok = all(isinstance(e.get(k), (int, float)) for k in ("ts", "dur", "pid", "tid"))
        check(ok and e["dur"] >= 0 and isinstance(e.get("name"), str), "slice fields: %r" % e)
        tname = names.get((e["pid"], e["tid"]))
        check(tname is not None, "slice on a track without a name: %r" % e)
        out.setdefault(e["pid"], {}).setdefault(tname, []).append(
            (e["ts"], e["dur"], e["name"], e.get("args", {})))
    return out


def union(slices):
    """Merged [start, end) intervals of a list of slices."""
    iv = sorted((ts, ts + dur) for ts, dur, _, _ in slices)
    out = []
    for a, b in iv:
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def overlap(u, v):
    i = j = 0
    tot = 0
    while i < len(u) and j < len(v):
        lo, hi = max(u[i][0], v[j][0]), min(u[i][1], v[j][1])
        tot += max(0, hi - lo)
        if u[i][1] < v[j][1]:
            i += 1
        else:
            j += 1
    return tot


def check_no_overlap(pid, tr):
    for name, sl in tr.items():
        sl = sorted(sl)
        bad = [k for k in range(1, len(sl)) if sl[k][0] < sl[k - 1][0] + sl[k - 1][1]]
        check(not bad, "program %d track %s: %d slices overlap the one before" % (pid, name, len(bad)))


def check_program(label, tr, prog):
    cnt, t0, cyc = prog["counters"], prog["ts"], prog["cycles"]
    for q, ops in QUEUE_OPS.items():
        sl = tr.get(q, [])
        check(all(s[2].split()[0] in ops for s in sl), "%s: %s slices name %s instructions" % (label, q, ops))
        check(all(t0 <= s[0] and s[0] + s[1] <= t0 + cyc for s in sl), "%s: %s slices inside the run" % (label, q))
    check(len(tr.get("LOAD", [])) == cnt["insn_load"], "%s: LOAD slices %d = insn_load %d" % (label, len(tr.get("LOAD", [])), cnt["insn_load"]))
    check(len(tr.get("STORE", [])) == cnt["insn_store"], "%s: STORE slices %d = insn_store %d" % (label, len(tr.get("STORE", [])), cnt["insn_store"]))
    check(0 < len(tr.get("EXEC", [])) <= cnt["insn_exec"], "%s: EXEC slices %d in 1..insn_exec %d" % (label, len(tr.get("EXEC", [])), cnt["insn_exec"]))
    for t, c in COUNTER_TRACKS.items():
        got = sum(s[1] for s in tr.get(t, []))
        check(got == cnt[c], "%s: track %s sums %d cycles, counter %s = %d" % (label, t, got, c, cnt[c]))
    rd = sum(len(v) for k, v in tr.items() if k.startswith("DRAM read"))
    wr = sum(len(v) for k, v in tr.items() if k.startswith("DRAM write"))
    check(rd == cnt["dram_rd_bursts"] and wr == cnt["dram_wr_bursts"],
          "%s: DRAM lane slices %d / %d = bursts %d / %d" % (label, rd, wr, cnt["dram_rd_bursts"], cnt["dram_wr_bursts"]))
    stalls = union(tr.get("LOAD stall: token", []))
    starts = [s[0] for s in tr.get("LOAD", []) if any(a < s[0] < b for a, b in stalls)]
    check(not starts, "%s: %d LOAD slices start inside a LOAD token stall" % (label, len(starts)))
    if not PIPELINED:
        lstall = overlap(union(tr.get("LOAD", [])), stalls)
        check(lstall == 0, "%s: LOAD slices and LOAD token stalls overlap %d cycles" % (label, lstall))


def check_double_buffered(npu, tmp, policy, m, n, k):
    path = os.path.join(tmp, "tl_gemm_%s.json" % policy)
    run(npu, ["gemm", "-m", str(m), "-n", str(n), "-k", str(k), "--policy", policy, "--timeline", path, "--quiet"])
    d = load(path)
    progs = d["otherData"]["programs"]
    check(len(progs) == 1 and d["otherData"]["meta"]["command"] == "gemm", "gemm: one program, the metadata")
    tr = tracks(d)[1]
    label = "gemm %dx%dx%d %s" % (m, n, k, policy)
    check_no_overlap(1, tr)
    check_program(label, tr, progs[0])
    busy = {q: sum(e - s for s, e in union(tr.get(q, []))) for q in QUEUE_OPS}
    cyc = progs[0]["cycles"]
    check(sum(busy.values()) > cyc, "%s: LOAD+EXEC+STORE busy %d > cycles %d (they overlap)" % (label, sum(busy.values()), cyc))
    array = union([s for k, v in tr.items() if k.startswith("array") for s in v])
    lo = overlap(union(tr["LOAD"]), array)
    shorter = min(busy["LOAD"], sum(e - s for s, e in array))
    check(lo >= 0.5 * shorter, "%s: LOAD and the waves overlap %d cycles, >= half the shorter (%d)" % (label, lo, shorter))
    so = overlap(union(tr["STORE"]), union(tr["EXEC"]))
    check(so > 0, "%s: STORE overlaps EXEC (%d cycles)" % (label, so))
    print("%s: %d cycles, LOAD %d / EXEC %d / STORE %d busy, LOAD during waves %d, %d events"
          % (label, cyc, busy["LOAD"], busy["EXEC"], busy["STORE"], lo, len(d["traceEvents"])))
    if policy == "flexsa":  # this shape's waves are VSW (Algorithm 1 on N = 8)
        check("array VSW" in tr and "array FW" not in tr, "flexsa: VSW wave track, no FW: " + ", ".join(tr))


def check_shared_clock(label, d, progs, tr, names):
    """The runs on one time axis in the order they ran: the first at 0, each starting where the
    one before ended (its sampled cycles), every slice of a run inside its own span (so no two
    runs overlap), each process named after its program's label."""
    pnames = {e["pid"]: e["args"]["name"] for e in d["traceEvents"]
              if e["ph"] == "M" and e["name"] == "process_name"}
    check([p["pid"] for p in progs] == list(range(1, len(progs) + 1)), label + ": pids in run order")
    check(progs[0]["ts"] == 0, "%s: the first run starts at 0, not %d" % (label, progs[0]["ts"]))
    for a, b in zip(progs, progs[1:]):
        check(b["ts"] == a["ts"] + a["cycles"], "%s: program %d starts at %d, program %d ended at %d"
              % (label, b["pid"], b["ts"], a["pid"], a["ts"] + a["cycles"]))
        check(b["sim_start"] >= a["sim_start"] + a["counters"]["cycles"] or b["sim_start"] <= a["sim_start"],
              "%s: program %d's simulator cycle %d follows program %d's run or a new simulator"
              % (label, b["pid"], b["sim_start"], a["pid"]))
    for p in progs:
        lo, hi = p["ts"], p["ts"] + p["cycles"]
        out = [(t, s[0]) for t, sl in tr.get(p["pid"], {}).items() for s in sl if s[0] < lo or s[0] + s[1] > hi]
        check(not out, "%s program %d: %d slices outside its span [%d, %d): %s" % (label, p["pid"], len(out), lo, hi, out[:3]))
        check(pnames.get(p["pid"], "").startswith(p["label"] + " (program %d," % p["pid"]),
              "%s: process %d named %r, its label %r" % (label, p["pid"], pnames.get(p["pid"]), p["label"]))
    check([p["label"] for p in progs] == names, "%s: labels %s, want %s" % (label, [p["label"] for p in progs], names))


def check_multi(npu, tmp, label, args, names):
    path = os.path.join(tmp, "tl_%s.json" % label)
    run(npu, args + ["--timeline", path, "--quiet"])
    d = load(path)
    progs = d["otherData"]["programs"]
    tr = tracks(d)
    check(len(progs) >= 2 and len(tr) == len(progs), "%s: %d programs, %d processes" % (label, len(progs), len(tr)))
    for p in progs:
        check_no_overlap(p["pid"], tr.get(p["pid"], {}))
        check_program("%s program %d" % (label, p["pid"]), tr.get(p["pid"], {}), p)
    check_shared_clock(label, d, progs, tr, names)
    end = progs[-1]["ts"] + progs[-1]["cycles"]
    print("%s: %d programs end to end over %d cycles, %d events" % (label, len(progs), end, len(d["traceEvents"])))


def main():
    global PIPELINED
    npu, tmp = sys.argv[1], sys.argv[2]
    os.makedirs(tmp, exist_ok=True)
    info = json.loads(run(npu, ["info", "--json"]).stdout)
    PIPELINED = bool(info["config"]["load_pipeline"])
    check_double_buffered(npu, tmp, "1g1c", 256, 128, 512)
    check_double_buffered(npu, tmp, "flexsa", 256, 8, 1024)
    check_multi(npu, tmp, "conv", ["conv", "--conv", "8,10,10,16,3,3,1,1,1", "--kernel", "all", "--dataflow", "ecoflow"],
                ["conv0 fwd", "conv0 dx ecoflow", "conv0 dw ecoflow"])
    check_multi(npu, tmp, "train", ["train", "--layers", "16,32,16", "--batch", "16", "--stall-pct", "5"],
                ["L0 fwd", "L1 fwd", "L1 dx", "L1 dw", "L0 dw"])
    topo = os.path.join(os.path.dirname(os.path.abspath(__file__)), "topologies", "gemm_small.csv")
    check_multi(npu, tmp, "gemm_topology", ["gemm", "--topology", topo], ["fc1", "skinny", "wide"])
    p = subprocess.run([npu, "gemm", "-m", "8", "-n", "8", "-k", "8", "--timeline", "/nonexistent/t.json"], capture_output=True, text=True)
    check(p.returncode == 2 and "--timeline /nonexistent/t.json" in p.stderr, "unwritable --timeline: exit 2 naming it")
    if FAILS:
        print("timeline_checks: %d FAILED" % len(FAILS))
        return 1
    print("timeline_checks: all passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
