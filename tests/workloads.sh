#!/bin/bash
# make workloads: every layer of every topology in ../shared/workloads (or WORKLOADS_DIR) at full
# size, batch 1, on the RTL of one build: conv topologies through `npu conv --kernel all
# --dataflow ecoflow` (fwd, dX, dW; bit-exact, every counter checked), GEMM topologies through
# `npu gemm --topology --policy flexsa`. CSVs and logs go to build/workloads/<config>/; the
# per-network tables (layers, cycles, utilization, DRAM bytes / compulsory bytes) are printed by
# tests/workloads_table.py. Exits non-zero if a run fails. At small: about 25 minutes, plus about
# GNMT's three 36,548-wide layers (about 240 million cycles each).
#   [SHARD=i/N] [WORKLOADS_TRAIN=1] tests/workloads.sh build/<config>/npu [topology ...]
# SHARD=i/N runs shard i of each topology's layers (tests/topo_shard.py: largest first to the
# least-loaded shard), so a long run splits into independent jobs, e.g. under GNU parallel:
#   parallel SHARD={}/3 tests/workloads.sh build/small/npu ../shared/workloads/gnmt.csv ::: 0 1 2
# WORKLOADS_TRAIN=1 trains GEMM topologies instead (`npu train --topology`: each row's fwd, dX and
# dW). The CSVs are named <network>[.train][.shard-i-of-N].csv.
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
csvs=()
maxc=${WORKLOADS_MAX_CYCLES:-2000000000} # the CLI's default (10^8) stops GNMT's largest layers
shard=${SHARD:-0/1}
[[ $shard =~ ^[0-9]+/[0-9]+$ ]] || { echo "workloads: SHARD=$shard: need i/N, 0 <= i < N" >&2; exit 2; }
si=${shard%/*}
sn=${shard#*/}
train=${WORKLOADS_TRAIN:-0}
is_conv() { grep -v '^#' "$1" | head -n 1 | grep -q 'IFMAP'; } # the header, past comment lines
for f in "${nets[@]}"; do
    n=$(basename "$f" .csv)
    if [ "$train" = 1 ] && ! is_conv "$f"; then
        n=$n.train
    fi
    if [ "$sn" != 1 ]; then
        n=$n.shard-$si-of-$sn
        mkdir -p "$out/shards"
        layers=$(python3 tests/topo_shard.py "$f" "$si" "$sn" "$out/shards/$n.csv") || exit 2
        echo "workloads: $n: layers $layers"
        f=$out/shards/$n.csv
    fi
    if [ "$train" = 1 ] && ! is_conv "$f"; then
        cmd=("$npu" train --topology "$f" --quiet --max-cycles "$maxc" --csv "$out/$n.csv")
    elif is_conv "$f"; then
        cmd=("$npu" conv --topology "$f" --kernel all --dataflow ecoflow --quiet --max-cycles "$maxc"
             --csv "$out/$n.csv")
    else
        cmd=("$npu" gemm --topology "$f" --policy flexsa --quiet --max-cycles "$maxc" --csv "$out/$n.csv")
    fi
    start=$(date +%s)
    csvs+=("$out/$n.csv")
    if ! "${cmd[@]}" >"$out/$n.log" 2>&1; then
        echo "workloads: $n failed (see $out/$n.log)" >&2
        fail=1
    fi
    echo "workloads: $n done in $(( $(date +%s) - start )) s"
done
python3 tests/workloads_table.py --s "${S:-8}" "${csvs[@]}" || fail=1
exit $fail
