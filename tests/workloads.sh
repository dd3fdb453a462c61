#!/bin/bash
# make workloads: every layer of every topology in ../shared/workloads (or WORKLOADS_DIR) at full
# size, batch 1, on the RTL of one build: conv topologies through `npu conv --kernel all
# --dataflow ecoflow` (fwd, dX, dW; bit-exact, every counter checked), GEMM topologies through
# `npu gemm --topology --policy flexsa`. CSVs and logs go to build/workloads/<config>/; the
# per-network tables (layers, cycles, utilization, DRAM bytes / compulsory bytes) are printed by
# tests/workloads_table.py. Exits non-zero if a run fails. At small: about 25 minutes, plus about
# an hour for each of GNMT's three largest layers (about 570 million cycles each).
#   tests/workloads.sh build/<config>/npu [topology ...]
set -u
npu=$1
shift
dir=${WORKLOADS_DIR:-../shared/workloads}
cfg=$(basename "$(dirname "$npu")")
out=build/workloads/$cfg
mkdir -p "$out"
S=$("$npu" info | sed -n 's/^S  *\([0-9]*\) .*/\1/p' | head -n 1)
nets=("$@")
[ ${#nets[@]} -gt 0 ] || nets=("$dir"/*.csv)
fail=0
maxc=${WORKLOADS_MAX_CYCLES:-2000000000} # the CLI's default (10^8) stops GNMT's largest layers
for f in "${nets[@]}"; do
    n=$(basename "$f" .csv)
    if head -n 1 "$f" | grep -q 'IFMAP'; then
        cmd=("$npu" conv --topology "$f" --kernel all --dataflow ecoflow --quiet --max-cycles "$maxc"
             --csv "$out/$n.csv")
    else
        cmd=("$npu" gemm --topology "$f" --policy flexsa --quiet --max-cycles "$maxc" --csv "$out/$n.csv")
    fi
    start=$(date +%s)
    if ! "${cmd[@]}" >"$out/$n.log" 2>&1; then
        echo "workloads: $n failed (see $out/$n.log)" >&2
        fail=1
    fi
    echo "workloads: $n done in $(( $(date +%s) - start )) s"
done
python3 tests/workloads_table.py --s "${S:-8}" "$out"/*.csv || fail=1
exit $fail
