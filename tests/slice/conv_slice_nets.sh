#!/usr/bin/env bash
# conv_slice_nets.sh BUILD_DIR [TOPOLOGY.csv ...] - issue 14 acceptance 6 on the full-size layers of
# real networks (make conv-slice-nets): conv_slice_check --topology on every SCALE-Sim conv
# topology given (default: those of ../shared/workloads), two at a time (the machine's two cores),
# each into BUILD_DIR/conv-slice-<net>.log; then the rows of all of them together: the burst-aware
# pick <= 1.01x the bytes-only pick on every row, strictly faster on at least half, the mean gain.
# Exit 0 met, 1 a bound not met, 2 a run failed.
set -u
bdir=${1:?usage: $0 BUILD_DIR [TOPOLOGY.csv ...]}
shift
csc=$bdir/conv_slice_check
[ -x "$csc" ] || { echo "conv_slice_nets: $csc missing (make $csc)" >&2; exit 2; }
nets=("$@")
if [ ${#nets[@]} -eq 0 ]; then
    for f in ../shared/workloads/*.csv; do # the conv format: the header names the IFMAP
        head -n 1 "$f" | grep -qi 'ifmap' && nets+=("$f")
    done
fi
[ ${#nets[@]} -gt 0 ] || { echo "conv_slice_nets: no conv topology found" >&2; exit 2; }
logs=()
for f in "${nets[@]}"; do logs+=("$bdir/conv-slice-$(basename "$f" .csv).log"); done
# one network into its log, the exit status and the seconds last
one_net() {
    local log="$bdir/conv-slice-$(basename "$1" .csv).log" t0
    t0=$(date +%s)
    "$csc" --no-half --topology "$1" > "$log" 2>&1
    echo "rc $? $(( $(date +%s) - t0 )) s" >> "$log"
}
export -f one_net
export bdir csc
# two at a time, the longest file first (ResNet-50 alone is about half of the time)
for f in "${nets[@]}"; do echo "$(wc -l < "$f") $f"; done | sort -rn | cut -d' ' -f2- |
    xargs -d '\n' -P 2 -I{} bash -c 'one_net "$1"' _ {}
rc=0
rows=0; faster=0; worse=0; failed=0; gain=0
for log in "${logs[@]}"; do
    line=$(grep '^conv slicing' "$log")
    [ -n "$line" ] || { echo "conv_slice_nets: $log has no summary" >&2; rc=2; continue; }
    grep -q '^rc 2' "$log" && rc=2
    read -r r f g w <<<"$(sed -n 's/.*: \([0-9]*\) rows, .* on \([0-9]*\), mean gain \(-*[0-9.]*\)%.*1.01x: \([0-9]*\).*/\1 \2 \3 \4/p' <<<"$line")"
    x=$(sed -n 's/.*failed runs.*: \([0-9]*\)$/\1/p' "$log")
    printf '%-28s %s\n' "$(basename "$log" .log)" "${line#conv slicing, }"
    rows=$((rows + r)); faster=$((faster + f)); worse=$((worse + w)); failed=$((failed + ${x:-0}))
    gain=$(awk -v a="$gain" -v r="$r" -v g="$g" 'BEGIN { printf "%.4f", a + r * g }')
done
mean=$(awk -v a="$gain" -v r="$rows" 'BEGIN { printf "%.1f", r ? a / r : 0 }')
echo "conv slicing of the networks' layers (full size, batch 1): $rows rows, burst-aware pick strictly faster" \
     "than the bytes-only pick on $faster, mean gain $mean% [paper 7.4-21.7%]; worse than 1.01x: $worse; failed runs: $failed"
[ "$failed" -eq 0 ] || rc=2
[ "$rc" -eq 2 ] || { [ "$worse" -eq 0 ] && [ $((2 * faster)) -ge "$rows" ]; } || rc=1
echo "acceptance 6 (conv, the networks' layers): $([ "$rc" -eq 0 ] && echo met || echo NOT met)"
exit "$rc"
