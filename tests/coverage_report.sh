#!/usr/bin/env bash
# coverage_report.sh DIR CONFIG... - line and toggle coverage of rtl/ from the merged
# verilator_coverage data of `make coverage` (DIR/<config>.dat and DIR/all.dat), the least covered
# modules, every line point no config hit (file:line, branch, source text; COV_LIST_MAX of them,
# default 60), and an annotated copy of the sources in DIR/annotated ('%000000' = never hit).
set -euo pipefail
dir=$1; shift
python3 - "$dir" "${COV_LIST_MAX:-60}" "$@" <<'PY'
import re, sys, collections
d, nmax, cfgs = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
def load(path):
    pts = {}  # (kind, file, line, name, hier) -> count; hierarchies merged per source point
    for ln in open(path, encoding='latin-1'):
        if not ln.startswith("C '"):
            continue
        body, cnt = ln.rstrip('\n').rsplit(' ', 1)
        kv = dict(re.findall(r'\x01(\w+)\x02([^\x01\']*)', body))
        page, f = kv.get('page', ''), kv.get('f', '')
        if not f.startswith('rtl/') or not page.startswith('v_'):
            continue
        kind = 'toggle' if page.startswith('v_toggle') else 'line'
        key = (kind, f, kv.get('l'), kv.get('o', ''), kv.get('n', ''))
        pts[key] = pts.get(key, 0) + int(cnt)
    return pts
def pct(h, t): return 100.0 * h / t if t else 0.0
print("coverage of rtl/ (Verilator line and toggle points, instances merged per source point)")
for c in cfgs + ['all']:
    pts = load(f"{d}/{c}.dat")
    s = collections.Counter(); h = collections.Counter()
    for (k, *_), v in pts.items():
        s[k] += 1; h[k] += v > 0
    print(f"  {c:6s} line {pct(h['line'], s['line']):5.1f}% ({h['line']}/{s['line']})   "
          f"toggle {pct(h['toggle'], s['toggle']):5.1f}% ({h['toggle']}/{s['toggle']})")
    if c == 'all':
        per = collections.defaultdict(lambda: [0, 0])
        for (k, f, *_), v in pts.items():
            if k == 'line':
                per[f][0] += 1; per[f][1] += v > 0
        worst = sorted(per.items(), key=lambda kv: pct(kv[1][1], kv[1][0]))[:5]
        print("  least line-covered modules: " +
              ", ".join(f"{f[4:]} {pct(b, a):.1f}%" for f, (a, b) in worst))
        # never-hit line points: file:line, the branch arms (Verilator's 'o' field), the source
        miss = collections.defaultdict(list)
        for (k, f, l, o, _), v in pts.items():
            if k == 'line' and v == 0:
                miss[(f, int(l))].append(o or 'line')
        src = {}
        print(f"  line points never hit: {sum(len(v) for v in miss.values())} on {len(miss)} lines"
              + (f" (first {nmax})" if len(miss) > nmax else ""))
        for (f, l) in sorted(miss)[:nmax]:
            if f not in src:
                try:
                    src[f] = open(f, encoding='latin-1').read().split('\n')
                except OSError:
                    src[f] = []
            text = src[f][l - 1].strip() if l <= len(src[f]) else ''
            print(f"    {f}:{l} [{','.join(sorted(set(miss[(f, l)])))}] {text[:90]}")
PY
verilator_coverage --annotate "$dir/annotated" "$dir/all.dat" >/dev/null 2>&1 || true
echo "annotated sources: $dir/annotated/"
