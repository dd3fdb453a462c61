#!/usr/bin/env python3
"""Long runs under a terminal (issue 17): `npu gemm` with stderr on a pseudo-terminal shows the
progress line; SIGINT stops the run cleanly: exit 130, the partial report (the INTERRUPTED line
with the queues' PCs, the note on stderr) and, with --trace, an FST that gtkwave's fst2vcd reads
(that sub-check is skipped with the reason when fst2vcd is not installed).
Usage: tests/sigint_checks.py build/<config>/npu [workdir]"""
import json
import os
import pty
import select
import shutil
import signal
import subprocess
import sys
import time


def read_pty(fd, out, seconds):
    """Appends what the terminal side received within `seconds` to out (bytes list)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        r, _, _ = select.select([fd], [], [], 0.1)
        if r:
            try:
                out.append(os.read(fd, 4096))
            except OSError:  # the child closed its side
                return


def run_interrupted(npu, opts, cmd=None):
    """Starts a long GEMM (or cmd), waits for the progress line, sends SIGINT; (rc, stdout, tty
    text, seconds from SIGINT to the exit)."""
    master, slave = pty.openpty()
    cmd = cmd or [npu, "gemm", "-m", "1024", "-n", "1024", "-k", "1024"] + opts
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    seen = []
    deadline = time.monotonic() + 60
    while b"cycles/s" not in b"".join(seen) and time.monotonic() < deadline and p.poll() is None:
        read_pty(master, seen, 0.5)
    p.send_signal(signal.SIGINT)
    t_int = time.monotonic()
    try:
        out, _ = p.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        p.kill()
        out, _ = p.communicate()
    t_exit = time.monotonic() - t_int
    read_pty(master, seen, 0.5)
    os.close(master)
    return p.returncode, out.decode(), b"".join(seen).decode(errors="replace"), t_exit


def check_fst(tool, fst):
    """fst2vcd reads the whole file: the hierarchy (written when the trace is closed) and the
    value changes to the last time step. The VCD (hundreds of MB) is streamed, not kept."""
    v = subprocess.Popen([tool, fst], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    head, last, total = b"", None, 0
    for chunk in iter(lambda: v.stdout.read(1 << 20), b""):
        head += chunk[:max(0, (1 << 22) - len(head))]
        i = chunk.rfind(b"\n#")
        if i >= 0:  # a time step "#<time>"
            last = chunk[i + 1:].split(b"\n", 1)[0].decode()
        total += len(chunk)
    err = v.stderr.read().decode(errors="replace")
    v.wait()
    if v.returncode != 0 or b"$enddefinitions" not in head or b"$scope" not in head or not last:
        return [f"fst2vcd {fst}: exit {v.returncode}, hierarchy or time steps missing: {err[-300:]}"]
    print(f"ok: fst2vcd reads the interrupted run's FST ({total} bytes of VCD, last time step {last})")
    return []


def check_json(npu):
    """--json: the one JSON line of the partial run says so."""
    rc, out, _, _ = run_interrupted(npu, ["--json"])
    try:
        j = json.loads(out)
    except ValueError as e:
        return [f"--json interrupted: not JSON ({e}): {out[:300]!r}"]
    if rc != 130 or j.get("result") != "INTERRUPTED" or j.get("timeout", {}).get("interrupted") is not True:
        return [f"--json interrupted: exit {rc}, result {j.get('result')}, timeout {j.get('timeout')}"]
    print("ok: --json of an interrupted run: result INTERRUPTED, timeout.interrupted true")
    return []


def check_multi(npu, work):
    """A command of many runs (gemm --topology: four 768^3 layers) stops at once: exit 130, the
    interrupted layer's row says SIGINT, no row (no TIMEOUT) for the layers not started."""
    topo = os.path.join(work, "sigint_topo.csv")
    with open(topo, "w") as f:
        f.write("Layer, M, N, K,\n" + "".join(f"big{i}, 768, 768, 768,\n" for i in range(4)))
    rc, out, _, t_exit = run_interrupted(npu, [], [npu, "gemm", "--topology", topo])
    rows = [l for l in out.splitlines() if l.startswith("big")]
    fails = []
    if rc != 130 or t_exit > 10:
        fails.append(f"gemm --topology interrupted: exit {rc} after {t_exit:.1f} s, want 130 at once")
    if not rows or len(rows) >= 4 or "TIMEOUT: stopped by SIGINT" not in rows[-1] or \
            any("no halt" in l for l in rows):
        fails.append(f"gemm --topology interrupted: rows {rows!r}, want the layers run so far, the "
                     f"last stopped by SIGINT")
    if not fails:
        print(f"ok: gemm --topology interrupted: exit 130 {t_exit:.1f} s after SIGINT, {len(rows)} "
              f"of 4 rows, the last stopped by SIGINT")
    return fails


def main():
    npu = sys.argv[1]
    work = sys.argv[2] if len(sys.argv) > 2 else "build/tmp"
    os.makedirs(work, exist_ok=True)
    fst = os.path.join(work, "sigint.fst")
    if os.path.exists(fst):
        os.remove(fst)
    rc, out, tty, _ = run_interrupted(npu, ["--trace", fst, "--trace-end", "5000000"])
    fails = check_json(npu) + check_multi(npu, work)
    if rc != 130:
        fails.append(f"exit {rc}, want 130")
    if "cycles/s" not in tty or " left" not in tty or "PC L " not in tty:
        fails.append(f"no progress line (cycles, cycles/s, PCs, time left) on the terminal: {tty!r}")
    if "interrupted (SIGINT)" not in tty:
        fails.append(f"no 'interrupted (SIGINT)' note on stderr: {tty!r}")
    if ("INTERRUPTED gemm M=1024 N=1024 K=1024" not in out or "PC_L " not in out or
            "  result       INTERRUPTED" not in out or "  interrupted at cycle " not in out):
        fails.append(f"no partial report (INTERRUPTED line with the PCs) on stdout: {out!r}")
    tool = shutil.which("fst2vcd")
    if not os.path.exists(fst) or os.path.getsize(fst) == 0:
        fails.append(f"{fst} missing or empty")
    elif tool is None:
        print("skip: the FST check: fst2vcd (gtkwave) is not installed")
    else:
        fails += check_fst(tool, fst)
    for f in fails:
        print("FAIL:", f)
    if not fails:
        print("ok: SIGINT under a terminal: progress line, exit 130, partial report")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
