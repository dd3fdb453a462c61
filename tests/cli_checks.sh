#!/usr/bin/env bash
# Bad CLI input must be rejected with a message on stderr and exit code 2 (never a crash, never
# a simulation). Usage: tests/cli_checks.sh build/<config>/npu
set -u
npu=${1:?usage: $0 path/to/npu}
fail=0
check() {   # expected-exit-code description args...
    local want=$1 what=$2; shift 2
    local err rc
    err=$("$npu" "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -ne "$want" ] || { [ "$want" -eq 2 ] && [ -z "$err" ]; }; then
        echo "FAIL: $what: npu $* -> exit $rc (want $want), stderr: ${err:-<empty>}"; fail=1
    else
        echo "ok: $what -> exit $rc${err:+ ($(echo "$err" | head -n 1))}"
    fi
}
check 2 "no command"
check 2 "unknown command" frobnicate
check 2 "missing sizes" gemm
check 2 "missing -k" gemm -m 4 -n 4
check 2 "zero size" gemm -m 0 -n 4 -k 4
check 2 "negative size" gemm -m -3 -n 4 -k 4
check 2 "non-numeric size" gemm -m abc -n 4 -k 4
check 2 "trailing garbage" gemm -m 4x -n 4 -k 4
check 2 "unknown option" gemm -m 4 -n 4 -k 4 --bogus
check 2 "missing option value" gemm -m 4 -n 4 -k
check 2 "bad dram bandwidth" gemm -m 4 -n 4 -k 4 --dram-bw 0
check 2 "bad stall percentage" gemm -m 4 -n 4 -k 4 --stall-pct 150
check 2 "config is not an option" gemm -m 4 -n 4 -k 4 --config small
check 0 "a valid run" gemm -m 5 -n 6 -k 7 --quiet
check 2 "bad policy" gemm -m 4 -n 4 -k 4 --policy 2g2c
check 0 "1G4C policy run" gemm -m 9 -n 17 -k 19 --policy 1g4c --quiet
check 2 "train without layers" train --batch 4
check 2 "train with one size" train --layers 64
check 2 "train with a bad order" train --layers 8,8 --order fastest
check 0 "train with the oracle order" train --layers 8,8,8 --order oracle --quiet
check 0 "train partitioned along M" train --layers 8,8,8 --partition m --quiet
check 0 "train partitioned by the KNN selector" train --layers 9,20,12 --batch 10 --order dwmajor --partition knn --quiet
check 2 "train bad tile" train --layers 8,8 --tile 0
check 0 "train K one part per core" train --layers 8,64,12 --batch 10 --partition k --quiet
check 0 "train K parts in sequence" train --layers 8,64,12 --batch 10 --partition kseq --quiet
check 2 "train bad partition" train --layers 8,8 --partition kx
# the table marks the per-core K split kx4c (K = 64 is a multiple of 4S at tiny and small)
if ! "$npu" train --layers 8,64,12 --batch 10 --partition k | grep -q ' kx4c '; then
    echo "FAIL: train --partition k: no kx4c in the table"; fail=1
else
    echo "ok: train --partition k runs one part per core (kx4c)"
fi
check 0 "train M one part per core" train --layers 8,20,12 --batch 64 --partition m --quiet
check 0 "train M parts in sequence" train --layers 8,20,12 --batch 64 --partition mseq --quiet
# the table marks the per-core M split mx4c (M = 64 is a multiple of 4S at tiny and small)
if ! "$npu" train --layers 8,20,12 --batch 64 --partition m | grep -q ' mx4c '; then
    echo "FAIL: train --partition m: no mx4c in the table"; fail=1
else
    echo "ok: train --partition m runs one part per core (mx4c)"
fi
check 0 "train N one part per core" train --layers 8,20,64 --batch 12 --partition n --quiet
check 0 "train N parts in sequence" train --layers 8,20,64 --batch 12 --partition nseq --quiet
# the table marks the per-core N split nx4c (N = 64 is a multiple of 8S at tiny and small)
if ! "$npu" train --layers 8,20,64 --batch 12 --partition n | grep -q ' nx4c '; then
    echo "FAIL: train --partition n: no nx4c in the table"; fail=1
else
    echo "ok: train --partition n runs one part per core (nx4c)"
fi
check 0 "a fused training step" train --layers 9,20,12 --batch 10 --order dxmajor --quiet
check 0 "a valid training step" train --layers 12,9,5 --batch 6 --quiet
check 2 "conv without layers" conv --kernel dx
check 2 "conv with a bad layer" conv --conv 3,8,8,4,9,9,1,0,1
check 2 "conv with a bad spec" conv --conv 3,8,8
check 2 "conv with a missing topology" conv --topology /nonexistent.csv
check 2 "conv with a bad kernel" conv --conv 3,8,8,4,3,3,1,0,1 --kernel bwd
check 2 "train with layers and conv" train --layers 8,8 --conv 3,8,8,4,3,3,1,0,1
check 0 "conv kernels, both dataflows" conv --conv "3,9,9,5,3,3,2,1,1;4,7,7,4,3,3,1,1,1,dw" --quiet
check 0 "conv layers of a topology, scaled" train --topology tests/topologies/ecoflow_layers.csv --scale-c 64 --scale-s 8 --quiet --dataflow ecoflow
check 2 "flexsa-report bad batch" flexsa-report --batch 0
check 2 "train-bench unknown set" train-bench --set cloud
check 2 "train-bench bad element size" train-bench --acc-bytes 8
check 2 "train-bench csv not writable" train-bench --set server --quiet --csv /nonexistent/dir/b.csv
check 0 "train-bench on the server set" train-bench --set server --quiet
exit $fail
