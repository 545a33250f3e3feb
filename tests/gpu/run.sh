#!/usr/bin/env bash
# libfirn-cuda.so on a real NVIDIA GPU (not part of make check; needs root for firn record).
# Builds tests/gpu/twokern.cu (nvcc): kernels light and heavy, run times about 1:3, launched N times
# each from two CPU call paths (path_light, path_heavy); runs it with CUDA_INJECTION64_PATH set to
# the library, first untraced, then under `firn record -e usdt:LIB:firn_cuda:...`, and checks that
# the launch probe's stacks put N launches under each path, that the kernel probe fired once per
# launch and memcpy once per copy, and that error never fired. It prints the kernel probe's hits
# and the kernels' times (CUDA events) and, with bpftrace, the kernel probe's own durations and
# whether launch and kernel correlation ids match.
# Then `firn record --cuda`: gpu_time shares under path_light and path_heavy (kernel run times
# about 1:3: 25 % / 75 %, within 3 pp), the kernels as leaves, the summary's unmatched counts,
# and the program's wall time with and without firn attached (the slowdown).
# usage: tests/gpu/run.sh [N]   (BUILD=build, CUDA=/usr/local/cuda; exits 1 when a check fails)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-build}
CUDA=${CUDA:-/usr/local/cuda}
FIRN="$ROOT/$BUILD/firn"
LIB="$ROOT/$BUILD/libfirn-cuda.so"
N=${1:-20}

if ! command -v nvidia-smi >/dev/null 2>&1 || [ ! -e /dev/nvidia0 ]; then
	echo "SKIP: no NVIDIA GPU"
	exit 0
fi
TMP=$(mktemp -d /tmp/firn-gpu.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failed=0
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failed=1; }

make -s -C "$ROOT" BUILD="$BUILD" CUDA="$CUDA" all || { fail "make all"; exit 1; }
[ -f "$LIB" ] || { fail "$LIB was not built (CUDA=$CUDA has no CUPTI?)"; exit 1; }
"$CUDA/bin/nvcc" -O2 -g -Xcompiler -fno-omit-frame-pointer -o "$TMP/twokern" "$ROOT/tests/gpu/twokern.cu" \
	|| { fail "nvcc twokern.cu"; exit 1; }
nvidia-smi -L | head -1

# untraced: the library loads and stays out of the way
CUDA_INJECTION64_PATH="$LIB" "$TMP/twokern" "$N" >"$TMP/plain.out" 2>&1
[ $? -eq 0 ] && grep -qx "launched $N $N" "$TMP/plain.out" && pass "twokern with the library injected, untraced: exit 0" \
	|| { fail "twokern untraced"; cat "$TMP/plain.out"; }
grep '^light_ms' "$TMP/plain.out" | sed 's/^/    untraced: /'

# traced: launches per call path, kernel and memcpy records, no errors
EV="-e usdt:$LIB:firn_cuda"
CUDA_INJECTION64_PATH="$LIB" "$FIRN" record $EV:launch $EV:kernel $EV:memcpy $EV:error -o "$TMP/gpu.pb.gz" \
	-- "$TMP/twokern" "$N" >"$TMP/rec.out" 2>"$TMP/rec.err"
rc=$?
[ $rc -eq 0 ] && grep -qx "launched $N $N" "$TMP/rec.out" && pass "firn record -- twokern: exit 0" \
	|| { fail "firn record exit $rc"; cat "$TMP/rec.out" "$TMP/rec.err"; }
grep '^light_ms' "$TMP/rec.out" | sed 's/^/    traced: /'
grep '^firn: usdt_' "$TMP/rec.err" | sed 's/^/    /'
hits() { sed -n "s/^firn: usdt_firn_cuda_$1: \([0-9]*\) hits\?$/\1/p" "$TMP/rec.err"; }
"$FIRN" report --folded "$TMP/gpu.pb.gz" >"$TMP/launch.folded"
under() { awk -v f=";$1;" '{ n = $NF; s = $0; sub(/ [0-9]+$/, ";", s); if (index(s, f)) t += n } END { print t + 0 }' "$TMP/launch.folded"; }
l=$(under path_light) h=$(under path_heavy)
[ "$l" = "$N" ] && [ "$h" = "$N" ] && pass "launch: $N hits under path_light, $N under path_heavy" \
	|| { fail "launch: path_light $l, path_heavy $h (wanted $N each; total $(hits launch))"; head -20 "$TMP/launch.folded"; }
k=$(hits kernel)
[ "$k" = $((2 * N)) ] && pass "kernel: $k hits (one per launch)" || fail "kernel: ${k:-?} hits, wanted $((2 * N))"
[ "$(hits memcpy)" = 2 ] && pass "memcpy: 2 hits" || fail "memcpy: $(hits memcpy) hits, wanted 2"
[ "$(hits error)" = 0 ] && pass "error: no hits" || fail "error: $(hits error) hits"

# --cuda: GPU time per launching call path, against the untraced run's wall time
t0=$(date +%s%N)
CUDA_INJECTION64_PATH="$LIB" "$TMP/twokern" "$N" >/dev/null 2>&1
t1=$(date +%s%N)
"$FIRN" record --cuda -o "$TMP/cuda.pb.gz" -- "$TMP/twokern" "$N" >"$TMP/cuda.out" 2>"$TMP/cuda.err"
rc=$?
t2=$(date +%s%N)
[ $rc -eq 0 ] && grep -qx "launched $N $N" "$TMP/cuda.out" && pass "firn record --cuda -- twokern: exit 0" \
	|| { fail "firn record --cuda exit $rc"; cat "$TMP/cuda.err"; }
grep '^firn: gpu:' "$TMP/cuda.err" | sed 's/^/    /'
echo "    wall: untraced $(( (t1 - t0) / 1000000 )) ms, under firn record --cuda $(( (t2 - t1) / 1000000 )) ms (firn's start-up included)"
"$FIRN" report --folded --sample-type gpu_time "$TMP/cuda.pb.gz" >"$TMP/time.folded"
gt() { awk -v f=";$1;" -v l="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, a, ";")
	if (index(";" s ";", f) && index(a[k], l) == 1) t += n } END { print t + 0 }' "$TMP/time.folded"; }
lt=$(gt path_light light) ht=$(gt path_heavy heavy)
awk -v l="$lt" -v h="$ht" 'BEGIN { s = l + h; if (!s) exit 1; p = 100 * l / s
	printf "    gpu_time: path_light %d ns, path_heavy %d ns: %.1f %% / %.1f %%\n", l, h, p, 100 - p
	exit !(p >= 22 && p <= 28) }' && pass "gpu_time shares 25/75 within 3 pp under the launching paths" \
	|| { fail "gpu_time shares: path_light $lt, path_heavy $ht"; head -20 "$TMP/time.folded"; }

# argument values, where bpftrace is installed: kernel durations per name, correlation ids
if command -v bpftrace >/dev/null 2>&1; then
	CUDA_INJECTION64_PATH="$LIB" timeout 120 bpftrace -q -e "
usdt:$LIB:firn_cuda:launch { @launched[arg0] = 1; }
usdt:$LIB:firn_cuda:kernel { @gpu_ns[str(arg5)] = sum(arg1 - arg0); @n[str(arg5)] = count();
	if (@launched[arg2]) { @matched = count(); } }
" -c "$TMP/twokern $N" >"$TMP/bt.out" 2>&1
	m=$(sed -n 's/^@matched: \([0-9]*\)/\1/p' "$TMP/bt.out")
	if grep -q '^@gpu_ns' "$TMP/bt.out"; then
		grep '^@gpu_ns\|^@n\[' "$TMP/bt.out" | sed 's/^/    bpftrace: /'
		[ "${m:-0}" = $((2 * N)) ] && pass "every kernel record's correlation id is a launch's" \
			|| echo "    note: ${m:-0} of $((2 * N)) kernel records matched a launch's correlation id"
	else # bpftrace 0.17 finds no probes in a library its -c command maps later
		echo "    (bpftrace could not attach to the library's probes: argument values not checked)"
		grep ERROR "$TMP/bt.out" | head -2 | sed 's/^/    bpftrace: /'
	fi
else
	echo "    (no bpftrace: argument values not checked)"
fi
[ $failed -eq 0 ]
