#!/bin/sh
# regress.sh - the full regression tier (make regress), splittable into shards.
#
#   tests/regress.sh [-l] SHARD CONFIGS SEEDS
#     SHARD    i/N: run the jobs whose index modulo N is i (0-based); "0/1" runs everything.
#     CONFIGS  e.g. "tiny small medium" (build/<config>/test_rtl must exist)
#     SEEDS    e.g. "1 2 3": every RTL test runs once per seed (NPU_SEED)
#     -l       only print this shard's jobs
#
# The job list is deterministic (configs, then seeds, then Criterion's sorted test list), so
# shards of one list are disjoint and cover it: `parallel tests/regress.sh {}/4 ... ::: 0 1 2 3`
# or one scheduler task per shard runs the whole tier. The fuzz tests are not in the per-seed
# list; they run as separate jobs with the acceptance counts (100,000 instruction words and
# 10,000 descriptors at tiny, split over four parts, and a tenth of that at small).
# Each job writes Criterion JUnit XML to build/reports/regress-<job>.xml; a failing job prints
# its replay command. Exit 0 when every job of the shard passed.
set -u
list_only=0
if [ "${1:-}" = "-l" ]; then list_only=1; shift; fi
shard=${1:-0/1}
configs=${2:-tiny small medium}
seeds=${3:-1 2 3}
i=${shard%/*}
n=${shard#*/}
case "$i$n" in *[!0-9]*|"") echo "regress: SHARD must be i/N, got '$shard'" >&2; exit 2;; esac
if [ "$n" -lt 1 ] || [ "$i" -ge "$n" ]; then echo "regress: SHARD $shard: need 0 <= i < N" >&2; exit 2; fi

jobs() {
    for c in $configs; do
        bin=build/$c/test_rtl
        [ -x "$bin" ] || { echo "regress: $bin missing (make build/$c/test_rtl)" >&2; exit 2; }
        tests=$("$bin" --list 2>&1 | awk '/^[a-z_0-9]+: [0-9]+ test/ {s=$1; sub(":", "", s); next}
                                          {t=$NF; if (s != "fuzz") print s "/" t}' | sort)
        for s in $seeds; do
            for t in $tests; do echo "rtl $c $s $t"; done
        done
    done
    for p in 0 1 2 3; do
        case " $configs " in *" tiny "*) echo "fuzz tiny $p/4 100000 10000";; esac
        case " $configs " in *" small "*) echo "fuzz small $p/4 10000 1000";; esac
    done
}

all=$(jobs) || exit 2
mine=$(printf '%s\n' "$all" | awk -v i="$i" -v n="$n" 'NF && (NR - 1) % n == i')
if [ $list_only = 1 ]; then printf '%s\n' "$mine"; exit 0; fi

mkdir -p build/reports
total=0; failed=0; failures=""
start=$(date +%s)
while read -r kind c a b x y; do
    [ -n "$kind" ] || continue
    total=$((total + 1))
    if [ "$kind" = rtl ]; then
        name="$c-s$a-$(echo "$b" | tr / -)"
        NPU_SEED=$a NPU_CONV_RANDOM=${NPU_CONV_RANDOM:-40} NPU_TRAIN_RANDOM=${NPU_TRAIN_RANDOM:-100} build/$c/test_rtl --filter "$b" --xml="build/reports/regress-$name.xml" \
            > "build/reports/regress-$name.log" 2>&1
        rc=$?
        replay="NPU_SEED=$a build/$c/test_rtl --filter '$b'"
    else
        name="$c-fuzz-$(echo "$a" | tr / -)"
        NPU_FUZZ_PART=$a NPU_FUZZ_WORDS=$b NPU_FUZZ_DESCS=$x build/$c/test_rtl --filter 'fuzz/*' \
            --xml="build/reports/regress-$name.xml" > "build/reports/regress-$name.log" 2>&1
        rc=$?
        replay="NPU_FUZZ_PART=$a NPU_FUZZ_WORDS=$b NPU_FUZZ_DESCS=$x build/$c/test_rtl --filter 'fuzz/*'"
    fi
    if [ $rc = 0 ]; then
        echo "ok    $kind $c $a $b"
    else
        failed=$((failed + 1))
        echo "FAIL  $kind $c $a $b   (log build/reports/regress-$name.log)"
        grep -E "Assertion|replay|HANG|assert" "build/reports/regress-$name.log" | head -8 | sed 's/^/      /'
        failures="$failures\n  $replay"
    fi
done <<EOF
$mine
EOF
echo "regress shard $shard: $total jobs, $failed failed, $(( $(date +%s) - start )) s"
if [ $failed != 0 ]; then printf "replay:%b\n" "$failures"; exit 1; fi
exit 0
