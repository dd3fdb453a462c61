#!/usr/bin/env python3
"""pick_diff.py - what a change of the GEMM tiling moves: N random GEMM shapes (M in 1..2048, N and
K in 1..512, log-uniform, at most 12 M MACs), the plan of each under two builds of the same config
(`npu disasm`, its header line) and, where the plans differ, both RTL runs (`npu gemm --policy
flexsa --quiet`, the config's DRAM). Prints one line per shape and a summary: picks changed, faster,
slower, total cycles of the changed ones.

usage: pick_diff.py OLD_NPU NEW_NPU [N] [SEED]     (run from the repository root)
"""
import random
import re
import subprocess
import sys


def shapes(n, seed):
    rng = random.Random(seed)
    dim = lambda lo, hi: int(round(lo * (hi / lo) ** rng.random()))
    out = set()
    while len(out) < n:
        s = (dim(1, 2048), dim(1, 512), dim(1, 512))
        if s[0] * s[1] * s[2] <= 12_000_000:
            out.add(s)
    return sorted(out)


def args(s):
    return ['-m', str(s[0]), '-n', str(s[1]), '-k', str(s[2]), '--policy', 'flexsa']


def plan(npu, s):
    out = subprocess.run([npu, 'disasm'] + args(s), capture_output=True, text=True).stdout
    return out.split('\n')[0].split(': ', 1)[-1]


def cycles(npu, s):
    r = subprocess.run([npu, 'gemm'] + args(s) + ['--quiet'], capture_output=True, text=True)
    m = re.search(r'PASS .*: (\d+) cycles', r.stdout + r.stderr)
    return int(m.group(1)) if m else None


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    old, new = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 150
    seed = int(sys.argv[4]) if len(sys.argv) > 4 else 7
    changed = faster = slower = failed = 0
    tot = [0, 0]
    for s in shapes(n, seed):
        po, pn = plan(old, s), plan(new, s)
        if po == pn:
            continue
        changed += 1
        co, cn = cycles(old, s), cycles(new, s)
        if co is None or cn is None:
            failed += 1
        else:
            tot[0], tot[1] = tot[0] + co, tot[1] + cn
            faster, slower = faster + (cn < co), slower + (cn > co)
        print('%dx%dx%d: %s -> %s cycles | %s -> %s' % (s + (co, cn, po, pn)), flush=True)
    print('pick_diff: %d shapes, %d picks changed: %d faster, %d slower, %d failed; their cycles %d -> %d (%+.2f%%)'
          % (n, changed, faster, slower, failed, tot[0], tot[1], 100.0 * (tot[1] - tot[0]) / max(tot[0], 1)))
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
