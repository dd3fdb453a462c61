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
check 2 "fit: an unknown engine" fit --model mlp:64,8,10 --engine gpu
check 2 "fit: whole steps take at most 16 layers" fit --model mlp:64,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,10 --engine step --epochs 1
check 2 "bad policy" gemm -m 4 -n 4 -k 4 --policy 2g2c
check 2 "estimate: an unknown plan" estimate --model mlp:64,128,10 --plan frob
check 0 "estimate --plan step (int16 builds too)" estimate --model mlp:64,128,10 --plan step
check 2 "estimate --plan step with --spm-kib (no resident banks)" estimate --model mlp:64,128,10 --plan step --spm-kib 64
check 0 "estimate --plan step, the scheduler given 16 KiB of the resident bank" estimate --model mlp:64,128,10 --plan step --resident-banks 1 --spm-kib 16
check 2 "estimate --plan step: --spm-kib past the resident banks" estimate --model mlp:64,128,10 --plan step --resident-banks 1 --spm-kib 4096
check 2 "estimate --policy without --plan step" estimate --model mlp:64,128,10 --policy flexsa
check 0 "estimate --plan step, tensors resident" estimate --model mlp:64,128,10 --plan step --resident-banks 1
check 2 "estimate: resident banks leaving a GEMM fewer than 3" estimate --model mlp:64,128,10 --plan step --resident-banks 2
check 2 "estimate: --resident-banks 0" estimate --model mlp:64,128,10 --plan step --resident-banks 0
check 2 "estimate --resident-banks without --plan step" estimate --model mlp:64,128,10 --resident-banks 1
check 2 "sweep --validate without --plan step" sweep --model mlp:64,128,10 --validate 2
check 0 "estimate --plan step of a CNN (its kernels through DRAM)" estimate --model cnn:c4,c8s2,fc10 --plan step
check 0 "estimate --plan step of a residual CNN" estimate --model cnn:c4,c4,c4+1,fc10 --plan step
check 2 "estimate --plan step: a residual connection into the head" estimate --model cnn:c4,fc16,fc16+2 --plan step
check 0 "estimate --plan step of a CNN with --resident-banks (its conv kernels reading DRAM)" estimate --model cnn:c4,c8s2,fc10 --plan step --resident-banks 1
check 0 "estimate --topology (SCALE-Sim, tiled steps)" estimate --topology tests/topologies/scalesim/alexnet.csv --quiet
check 2 "estimate --topology with --input" estimate --topology tests/topologies/scalesim/alexnet.csv --input 8x8x1
check 2 "estimate with --model and --topology" estimate --model mlp:64,10 --topology tests/topologies/scalesim/alexnet.csv
check 0 "sweep --plan step of a CNN (its kernels through DRAM)" sweep --model cnn:c4,fc10 --plan step --space 'batch=8,16' --quiet
check 0 "sweep --plan step of a CNN with --resident-banks (the scheduler's plan)" sweep --model cnn:c4,fc10 --plan step --resident-banks 1 --space 'spm=2,4;batch=4' --quiet
check 2 "sweep --plan step: resident banks leaving a GEMM fewer than 3" sweep --model mlp:64,128,10 --plan step --resident-banks 2
check 2 "sweep --no-prefetch without --resident-banks" sweep --model mlp:64,128,10 --plan step --no-prefetch
check 2 "estimate --no-conv-reuse without --resident-banks" estimate --model cnn:c4,c8s2,fc10 --plan step --no-conv-reuse y
check 2 "estimate --no-conv-reuse on the scheduler's plan" estimate --model cnn:c4,c8s2,fc10 --no-conv-reuse y
check 2 "fit --no-conv-reuse without --resident-banks" fit --model cnn:c4,fc10 --engine step --epochs 1 --no-conv-reuse x
check 0 "estimate --plan step --resident-banks 1 --no-conv-reuse both" estimate --model cnn:c4,c4,c4+1,c4s2,fc10 --batch 2 --plan step --resident-banks 1 --no-conv-reuse both --quiet
# npu sweep --validate: sampled points of the step plan's sweep run on the RTL (exit 1 unless
# every one is bytes exact and its step cycles within 10%), and SHARD=i/N splits them: the
# shards' validated rows are the unsharded run's.
sw=(sweep --model mlp:64,128,10 --plan step --resident-banks 1 --space 'spm=8,16;bw=16,32;batch=16' --validate 3 --quiet)
check 0 "sweep --validate 3 on the RTL: bytes exact, step cycles within 10%" "${sw[@]}"
err=$(SHARD=2/2 "$npu" "${sw[@]}" 2>&1 >/dev/null); rc=$?
if [ "$rc" -ne 2 ] || [ -z "$err" ]; then echo "FAIL: sweep SHARD=2/2 -> exit $rc (want 2)"; fail=1; else echo "ok: sweep SHARD=2/2 -> exit 2 ($err)"; fi
tmp=$(mktemp -d)
"$npu" "${sw[@]}" --csv "$tmp/all.csv" 2>/dev/null && SHARD=0/2 "$npu" "${sw[@]}" --csv "$tmp/s0.csv" 2>/dev/null &&
  SHARD=1/2 "$npu" "${sw[@]}" --csv "$tmp/s1.csv" 2>/dev/null; rc=$?
valid_rows() { cat "$@" | grep -v '^#' | awk -F, '$12 == 1' | sort; }
if [ "$rc" -ne 0 ] || [ "$(valid_rows "$tmp/all.csv" | wc -l)" -ne 3 ] ||
   [ "$(valid_rows "$tmp/all.csv")" != "$(valid_rows "$tmp/s0.csv" "$tmp/s1.csv" | sort)" ]; then
    echo "FAIL: sweep --validate: the shards' rows are not the unsharded run's 3 (exit $rc)"; fail=1
else
    echo "ok: sweep --validate: SHARD=0/2 and 1/2 together are the unsharded run's 3 rows"
fi
rm -rf "$tmp"
check 2 "fit: resident banks leaving a GEMM fewer than 3" fit --model mlp:64,8,10 --resident-banks 2 --epochs 1
check 2 "fit --resident-banks with the kernels engine" fit --model mlp:64,8,10 --engine kernels --resident-banks 1 --epochs 1
check 0 "1G4C policy run" gemm -m 9 -n 17 -k 19 --policy 1g4c --quiet
check 2 "GEMM larger than the DRAM" gemm -m 30000 -n 30000 -k 30000
check 2 "slice without a problem" slice
check 2 "slice with a GEMM and a conv" slice -m 4 -n 4 -k 4 --conv 4,4,4,4,1,1,1,0,1
check 2 "slice --kernel on a GEMM" slice -m 4 -n 4 -k 4 --kernel dx
check 2 "slice --conv with a list" slice --conv "4,4,4,4,1,1,1,0,1;4,4,4,4,1,1,1,0,1"
out=$("$npu" slice -m 4096 -n 5 -k 5 2>&1); rc=$?
case "$rc:$out" in
    0:*"burst cost: "*" candidates, "*" fit"*"noburst cost: "*" candidates, "*) echo "ok: slice gemm, both costs";;
    *) echo "FAIL: npu slice -m 4096 -n 5 -k 5: exit $rc: $out"; fail=1;;
esac
out=$("$npu" slice --conv 64,56,56,64,3,3,1,1,1 --kernel all 2>&1); rc=$?
[ "$rc" -eq 0 ] && [ "$(echo "$out" | grep -c '^npu slice conv')" -eq 3 ] && echo "ok: slice conv, three kernels" ||
    { echo "FAIL: npu slice --conv (ResNet-50 3x3) --kernel all: exit $rc"; fail=1; }
check 2 "overlap larger than the DRAM" overlap -m 30000 -n 30000 -k 30000
# --quiet keeps a failed layer's reason (on stderr; exit 1): a layer whose X alone is 8 GiB can
# never run on a 4 GiB DRAM, whatever the planner learns
msg=$("$npu" conv --conv 4096,1024,1024,16,1,1,1,0,1 --kernel fwd --quiet 2>&1 >/dev/null); rc=$?
if [ "$rc" -eq 1 ] && [ -n "$msg" ]; then echo "ok: conv --quiet names the failure ($msg)"
else echo "FAIL: conv --quiet on a failing layer: exit $rc, stderr '${msg}'"; fail=1; fi
msg=$("$npu" gemm -m 30000 -n 30000 -k 30000 2>&1 >/dev/null)
case $msg in
    *"needs at least 7200000000 bytes of DRAM"*"holds 4294967296 bytes"*) echo "ok: DRAM need named";;
    *) echo "FAIL: a GEMM larger than the DRAM must name the bytes it needs and the limit: $msg"; fail=1;;
esac
check 2 "train without layers" train --batch 4
check 2 "train with one size" train --layers 64
check 2 "train with a bad order" train --layers 8,8 --order fastest
check 0 "train with the oracle order" train --layers 8,8,8 --order oracle --quiet
check 0 "train partitioned along M" train --layers 8,8,8 --partition m --quiet
check 0 "train partitioned by the KNN selector" train --layers 9,20,12 --batch 10 --order dwmajor --partition knn --quiet
check 2 "train bad tile" train --layers 8,8 --tile 0
check 2 "train bad partition" train --layers 8,8 --partition kx
# K, M, N one part per core (K, M a multiple of 4S, N of 8S at tiny and small): the table marks
# them kx4c, mx4c, nx4c; kseq, mseq, nseq run the parts in sequence
for t in "k 8,64,12 10" "m 8,20,12 64" "n 8,20,64 12"; do
    set -- $t
    check 0 "train $1 one part per core" train --layers "$2" --batch "$3" --partition "$1" --quiet
    check 0 "train $1 parts in sequence" train --layers "$2" --batch "$3" --partition "${1}seq" --quiet
    if ! "$npu" train --layers "$2" --batch "$3" --partition "$1" | grep -q " ${1}x4c "; then
        echo "FAIL: train --partition $1: no ${1}x4c in the table"; fail=1
    else
        echo "ok: train --partition $1 runs one part per core (${1}x4c)"
    fi
done
check 0 "a fused training step" train --layers 9,20,12 --batch 10 --order dxmajor --quiet
check 0 "a valid training step" train --layers 12,9,5 --batch 6 --quiet
check 2 "conv without layers" conv --kernel dx
check 2 "conv with a bad layer" conv --conv 3,8,8,4,9,9,1,0,1
check 2 "conv with a bad spec" conv --conv 3,8,8
check 2 "conv with a missing topology" conv --topology /nonexistent.csv
check 2 "conv with a bad kernel" conv --conv 3,8,8,4,3,3,1,0,1 --kernel back
check 2 "conv bwd with zeropad" conv --conv 3,8,8,4,3,3,1,0,1 --kernel bwd --dataflow zeropad
check 2 "slice with --kernel bwd" slice --conv 3,8,8,4,3,3,1,0,1 --kernel bwd
check 0 "conv bwd, fused dX + dW" conv --conv "3,8,8,4,3,3,1,1,1;4,8,8,6,3,3,2,1,1" --kernel bwd --quiet
check 2 "train with layers and conv" train --layers 8,8 --conv 3,8,8,4,3,3,1,0,1
check 0 "conv kernels, both dataflows" conv --conv "3,9,9,5,3,3,2,1,1;4,7,7,4,3,3,1,1,1,dw" --quiet
check 0 "conv layers of a topology, scaled" train --topology tests/topologies/ecoflow_layers.csv --scale-c 64 --scale-s 8 --quiet --dataflow ecoflow
check 2 "conv on a GEMM topology" conv --topology tests/topologies/gemm_small.csv
check 2 "gemm with a missing topology" gemm --topology /nonexistent.csv
check 2 "gemm with a topology and sizes" gemm --topology tests/topologies/gemm_small.csv -m 4
check 0 "conv on SCALE-Sim's depthwise form" conv --topology tests/topologies/conv_small.csv --quiet
# gemm --topology: the exit status and the table (rows, reasons, totals); a layer that does not
# fit the DRAM fails with its bytes and the next layer still runs
table() {   # expected-exit file description patterns...
    local want=$1 file=$2 what=$3 out rc p; shift 3
    out=$("$npu" gemm --topology "tests/topologies/$file" 2>&1); rc=$?
    for p in "$@"; do
        if ! grep -Eq "$p" <<<"$out"; then
            echo "FAIL: $what: no line matching '$p' in:"; echo "$out"; fail=1; return
        fi
    done
    if [ "$rc" -ne "$want" ]; then
        echo "FAIL: $what: exit $rc (want $want)"; echo "$out"; fail=1
    else
        echo "ok: $what -> exit $rc"
    fi
}
table 0 gemm_small.csv "gemm --topology, GEMM format" \
    '^fc1 +64 +32 +48 +[0-9]+ +[0-9.]+% +[0-9]+  PASS$' '^skinny +100 +5 +7 .*  PASS$' \
    '^wide +9 +70 +33 .*  PASS$' '^total: 3 layers, 3 passed, 0 failed, 0 skipped; passed layers'
table 1 gemm_nofit.csv "gemm --topology, a layer too large for the DRAM" \
    "warning: ignored 1 column not in SCALE-Sim's GEMM format: column 5 'Sparsity'" \
    '^small1 +16 +16 +16 .*  PASS$' \
    '^huge +100000 +100000 +100000 +0 .*NO FIT: needs at least 80000000000 bytes of DRAM' \
    '^small2 +20 +12 +40 .*  PASS$' '^total: 3 layers, 2 passed, 1 failed, 0 skipped'
table 0 conv_small.csv "gemm --topology, conv format (im2col forward GEMMs)" \
    'note: 1 layer with Num Filter 1' '^c1 +64 +8 +36 .*  PASS$' \
    '^dw +0 +0 +0 .*SKIP: depthwise: no single GEMM' '^c2 +25 +16 +8 .*  PASS$' \
    '^total: 3 layers, 2 passed, 0 failed, 1 skipped'
check 2 "flexsa-report bad batch" flexsa-report --batch 0
check 2 "train-bench unknown set" train-bench --set cloud
check 2 "train-bench bad element size" train-bench --acc-bytes 8
check 2 "train-bench csv not writable" train-bench --set server --quiet --csv /nonexistent/dir/b.csv
check 0 "train-bench on the server set" train-bench --set server --quiet
# a usage error is two lines on stderr: the problem, naming the option, and where to look
usage_err() {   # description expected-first-line-pattern args...
    local what=$1 pat=$2 err rc; shift 2
    err=$("$npu" "$@" 2>&1 >/dev/null); rc=$?
    if [ "$rc" -eq 2 ] && [ "$(wc -l <<<"$err")" -eq 2 ] && grep -Eq "^npu: $pat" <<<"$err" &&
        grep -Eq "^run 'npu ([a-z-]+ )?--help' for the (options|commands)$" <<<"$err"; then
        echo "ok: $what -> exit 2 ($(head -n 1 <<<"$err"))"
    else
        echo "FAIL: $what: npu $* -> exit $rc (want 2, 'npu: $pat' and a hint), stderr: $err"; fail=1
    fi
}
usage_err "ambiguous option" "option '--s' is ambiguous for 'gemm': --seed, --stall-pct, " gemm -m 4 --s 3
usage_err "unknown option named" "unknown option '--bogus' for 'gemm'" gemm -m 4 --bogus
usage_err "missing value named" "option '--max-cycles' is missing its value" gemm -m 4 --max
usage_err "option of another command" "option '--trace' does not apply to 'overlap'" overlap --trace t.fst
usage_err "unknown command" "unknown command 'frob'" frob
grep -q "^run 'npu overlap --help' for the options$" <("$npu" overlap --trace t.fst 2>&1) ||
    { echo "FAIL: the hint names the command"; fail=1; }
# help: per command, the overview, --version
helped() {   # description stdout-pattern args...
    local what=$1 pat=$2 out rc; shift 2
    out=$("$npu" "$@" 2>/dev/null); rc=$?
    if [ "$rc" -eq 0 ] && grep -Eq -- "$pat" <<<"$out"; then echo "ok: $what"
    else echo "FAIL: $what: npu $* -> exit $rc, no '$pat' in: $out"; fail=1; fi
}
helped "gemm --help lists the policies" '^  --policy 1g1c\|1g4c\|flexsa +.*\(default 1g1c\)$' gemm --help
helped "help train lists the orders" '^  --order seq\|interleave\|dxmajor\|dwmajor\|auto\|oracle$' help train
helped "--help keeps the overview" '^       npu train-bench ' --help
helped "--version: revision" "^npu [0-9a-f]{7}" --version
helped "--version: config" "^config $(basename "$(dirname "$npu")"): S=" --version
if "$npu" gemm --help | grep -q "npu train"; then echo "FAIL: gemm --help prints the overview"; fail=1; fi
# --trace without --trace-end: bounded by --trace-window, with the estimated size on stderr;
# conv and train trace one simulation
tdir=$(mktemp -d)
err=$("$npu" conv --conv 8,10,10,16,3,3,1,1,1 --kernel dx --dataflow ecoflow --quiet \
      --trace "$tdir/c.fst" --trace-window 500 2>&1 >/dev/null); rc=$?
if [ "$rc" = 0 ] && [ -s "$tdir/c.fst" ] &&
   grep -q "has no --trace-end: it covers cycles 0..500 only (--trace-window 500), up to about [0-9]* MB" <<<"$err"; then
    echo "ok: conv --trace bounded by --trace-window, the warning names the window and the size"
else echo "FAIL: conv --trace --trace-window 500: exit $rc, stderr: $err"; fail=1; fi
if "$npu" train --layers 8,16,8 --quiet --trace "$tdir/t.fst" --trace-end 2000 >/dev/null 2>&1 && [ -s "$tdir/t.fst" ]; then
    echo "ok: train --layers --trace writes the step's FST"
else echo "FAIL: train --layers --trace"; fail=1; fi
rm -rf "$tdir"
check 2 "conv --trace over several runs" conv --conv 8,10,10,16,3,3,1,1,1 --trace t.fst
check 2 "--trace-end with --trace-window" gemm -m 4 -n 4 -k 4 --trace t.fst --trace-end 9 --trace-window 4
check 2 "--trace-window without --trace" gemm -m 4 -n 4 -k 4 --trace-window 4
# npu train --topology of a GEMM topology: each row's fwd, dX and dW on the RTL, bit-exact
out=$("$npu" train --topology "$(dirname "$0")/topologies/gemm_small.csv" --stall-pct 5 2>&1); rc=$?
if [ "$rc" = 0 ] && [ "$(grep -cE '^(fc1|skinny|wide)/(fwd|dx|dw) .* PASS$' <<<"$out")" = 9 ]; then
    echo "ok: train --topology of a GEMM topology: 9 passes (fwd, dX, dW of 3 layers) PASS"
else echo "FAIL: train --topology gemm_small.csv: exit $rc: $out"; fail=1; fi
# every option of the overview is some command's option, listed by that command's --help
all=$(for c in gemm overlap disasm slice train train-bench conv flexsa-report calibrate info run fit estimate sweep; do
          "$npu" "$c" --help; done | grep -Eo '^  (--[a-z-]+|-[mnk])' | sort -u)
for o in $("$npu" --help | grep -Eo -- '--[a-z][a-z-]+' | sort -u); do
    case $o in --help|--json|--version) continue;; esac
    grep -qx -- "  $o" <<<"$all" || { echo "FAIL: $o in 'npu --help' but no command's --help"; fail=1; }
done
exit $fail
