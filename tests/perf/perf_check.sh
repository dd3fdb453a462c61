#!/usr/bin/env bash
# perf_check.sh [--write] - the cycle-count baseline (tests/perf/README.md).
# Runs every case of tests/perf/cases.txt on build/<config>/npu with NPU_PERF_LOG set and collects
# one row per program run. Without --write: compares with tests/perf/baseline.csv, prints
# "old -> new" for every figure that differs and exits 1 on any difference (or a failed case).
# With --write: rewrites tests/perf/baseline.csv (make perf-baseline).
# perf_check.sh --compare OLD.csv NEW.csv: only the comparison (its own self-test uses it).
set -u
cd "$(dirname "$0")/../.."

# compare OLD NEW: old -> new for every field of every row; rows on one side only are named.
compare() {
    awk -F, '
    NR == FNR { if (FNR == 1) { hdr = $0; for (i = 1; i <= NF; i++) col[i] = $i; nc = NF }
                else old[$1] = $0
                next }
    FNR == 1 { if ($0 != hdr) { printf "perf: the columns differ:\n  old %s\n  new %s\n", hdr, $0; exit 1 }
               next }
    {
        seen[$1] = 1
        if (!($1 in old)) { printf "perf: %s: new row (not in the baseline)\n", $1; bad = 1; next }
        split(old[$1], o, ",")
        for (i = 2; i <= nc; i++) if (o[i] != $i) {
            printf "perf: %s %s: %s -> %s\n", $1, col[i], o[i], $i; bad = 1 }
    }
    END {
        for (r in old) if (!(r in seen)) { printf "perf: %s: row missing (in the baseline only)\n", r; bad = 1 }
        exit bad
    }' "$1" "$2"
}
if [ "${1:-}" = "--compare" ]; then compare "$2" "$3"; exit; fi
CASES=tests/perf/cases.txt
BASE=tests/perf/baseline.csv
OUT=build/perf
mkdir -p "$OUT"
NEW=$OUT/measured.csv
rm -f "$OUT"/*.log
fail=0
header=""
rows=""
while read -r name cfg args; do
    case "$name" in ''|'#'*) continue ;; esac
    log=$OUT/$name.log
    rm -f "$log"
    # shellcheck disable=SC2086 # args are words by design
    if ! NPU_PERF_LOG=$PWD/$log build/$cfg/npu $args --quiet >"$OUT/$name.out" 2>&1; then
        echo "perf: case $name failed: build/$cfg/npu $args (output: $OUT/$name.out)"
        fail=1
        continue
    fi
    if [ ! -s "$log" ]; then echo "perf: case $name ran no program"; fail=1; continue; fi
    [ -n "$header" ] || header="case,config,$(head -1 "$log")"
    rows+=$(tail -n +2 "$log" | awk -v n="$name" -v c="$cfg" '{ printf "%s#%d,%s,%s\n", n, NR, c, $0 }')
    rows+=$'\n'
done < "$CASES"
{ echo "$header"; printf '%s' "$rows"; } > "$NEW"
if [ "${1:-}" = "--write" ]; then
    [ $fail = 0 ] || { echo "perf: not writing $BASE: a case failed"; exit 1; }
    cp "$NEW" "$BASE"
    echo "perf: wrote $BASE ($(($(wc -l < "$BASE") - 1)) program runs)"
    exit 0
fi
[ -f "$BASE" ] || { echo "perf: $BASE missing (make perf-baseline writes it)"; exit 1; }
compare "$BASE" "$NEW" || fail=1
# Self-test: the comparison must report a changed figure as old -> new (a check that cannot fail
# guards nothing). The first row's cycles, plus one, in a copy of the baseline.
awk -F, -v OFS=, 'NR == 2 { $6 = $6 + 1 } { print }' "$BASE" > "$OUT/mutated.csv"
row=$(sed -n 2p "$BASE" | cut -d, -f1); cyc=$(sed -n 2p "$BASE" | cut -d, -f6)
if compare "$OUT/mutated.csv" "$BASE" | grep -qx "perf: $row cycles: $((cyc + 1)) -> $cyc"; then :; else
    echo "perf: self-test failed: a changed cycle count in $OUT/mutated.csv was not reported"; fail=1
fi
n=$(($(wc -l < "$NEW") - 1))
if [ $fail = 0 ]; then
    echo "perf: $n program runs equal the baseline (cycles, MACs, DRAM bytes per tag, program images)"
else
    echo "perf: FAILED against $BASE (make perf-baseline rewrites it; explain every worse figure in the commit message)"
    exit 1
fi
