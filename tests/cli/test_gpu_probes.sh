# libfirn-cuda.so's probe path without a GPU: the library is built against CUPTI and exports only
# its entry points; firn usdt-list shows its four probes (names, argument types, semaphores); then
# (root) firn record counts the probes while build/gpu/probe_driver calls the library's handlers
# the way CUPTI would: launches per call path (a runtime launch's nested driver launch and non-launch
# calls not counted), kernel and memcpy records of a synthetic buffer, CUPTI activity switched on at
# the first callback after a tracer attaches and off after it detaches (never while untraced), one
# error per failed switch. tests/gpu/run.sh is the same on a real GPU (not part of make check).
. "$(dirname "$0")/lib.sh"

CUDA=${CUDA:-/usr/local/cuda}

# 0. make leaves the library out where there is no CUDA toolkit (and builds it where there is)
n=$(make -s -C "$ROOT" -n BUILD="$TMP/b" CUDA="$TMP/no-cuda" all 2>&1 | grep -c 'cupti\|firn-cuda\|firn_cuda')
[ "$n" = 0 ] && pass "make CUDA=DIR-without-cupti all: nothing of libfirn-cuda.so" || fail "make without CUDA: $n lines about it"
LIB="$ROOT/$BUILD/libfirn-cuda.so"
DRV="$ROOT/$BUILD/gpu/probe_driver"
if [ ! -f "$CUDA/include/cupti.h" ] && [ ! -f "$CUDA/extras/CUPTI/include/cupti.h" ]; then
	skip "no CUDA toolkit with CUPTI at $CUDA: libfirn-cuda.so is not built"
	exit 0
fi
if [ ! -f "$LIB" ] && [ -n "${FIRN_NO_ROOT:-}" ]; then
	skip "libfirn-cuda.so is not built in $BUILD (the sanitizer build leaves it out)"
	exit 0
fi

n=$(make -s -C "$ROOT" -n BUILD="$TMP/b" CUDA="$CUDA" all 2>&1 | sed -e :a -e '/\\$/N; s/\\\n//; ta' |
	grep -c 'libfirn-cuda\.so gpu/firn_cuda\.c.*-lcupti')
[ "$n" = 1 ] && pass "make CUDA=$CUDA all builds libfirn-cuda.so against CUPTI" || fail "make with CUDA: $n link lines"

# 1. built against CUPTI, exporting the entry points and the semaphores only
check "libfirn-cuda.so is built" [ -f "$LIB" ]
LC_ALL=C readelf -d "$LIB" | grep -q 'NEEDED.*\[libcupti\.so' && pass "libfirn-cuda.so links libcupti" \
	|| fail "libfirn-cuda.so does not link libcupti: $(readelf -d "$LIB" | grep NEEDED)"
exports=$(nm -D --defined-only "$LIB" | awk '{print $3}' | sort | tr '\n' ' ')
want="InitializeInjection firn_cuda_buffer_completed firn_cuda_buffer_requested firn_cuda_callback \
firn_cuda_error_semaphore firn_cuda_kernel_semaphore firn_cuda_launch_semaphore firn_cuda_memcpy_semaphore "
[ "$exports" = "$want" ] && pass "exports: InitializeInjection, the three CUPTI handlers, the four semaphores" \
	|| fail "exports: $exports"

# 2. the four probes, each with its semaphore; argument types as firn_cuda.h documents them
"$FIRN" usdt-list "$LIB" >"$TMP/probes" 2>"$TMP/probes.err"
[ $? -eq 0 ] && [ ! -s "$TMP/probes.err" ] && pass "usdt-list libfirn-cuda.so exits 0 quietly" \
	|| fail "usdt-list: $(cat "$TMP/probes.err")"
[ "$(awk '{print $1}' "$TMP/probes" | sort | tr '\n' ' ')" = "firn_cuda:error firn_cuda:kernel firn_cuda:launch firn_cuda:memcpy " ] \
	&& pass "exactly the probes launch, kernel, memcpy, error" || fail "probes: $(awk '{print $1}' "$TMP/probes" | tr '\n' ' ')"
"$FIRN" usdt-list --json "$LIB" | python3 -c '
import json, sys
for p in json.load(sys.stdin):
    print(p["name"], "sem" if p["semaphore"] else "nosem", len(p["arguments"]),
          " ".join(a["text"].split()[0] for a in p["arguments"]))
' >"$TMP/args"
want_probe() {
	local got
	got=$(grep "^$1 " "$TMP/args")
	[ "$got" = "$*" ] && pass "$1: semaphore, $3 arguments ($(echo "${@:4}"))" || fail "$1: '$got', wanted '$*'"
}
want_probe launch sem 3 uint32 uint32 uint64
want_probe kernel sem 6 uint64 uint64 uint32 uint32 uint32 uint64
want_probe memcpy sem 5 uint64 uint64 uint32 uint64 uint8
want_probe error sem 2 int32 uint64

# the launch callback with the semaphores off: what each launch costs an untraced program
ns=$("$DRV" bench 1000000 | awk '/^ns_per_call/ {print $2}')
awk -v n="${ns:-x}" 'BEGIN { exit !(n + 0 > 0 && n + 0 < 1000) }' \
	&& pass "a launch callback with no tracer: $ns ns" || fail "launch callback with no tracer: '$ns' ns"

if ! is_root; then skip "recording tests need root"; exit 0; fi
EV="-e usdt:$LIB:firn_cuda"

# under FOLDED FUNC: hits whose stacks pass through FUNC
under() { awk -v f=";$2;" '{ n = $NF; s = $0; sub(/ [0-9]+$/, ";", s); if (index(s, f)) t += n } END { print t + 0 }' "$1"; }
# hits ERR PROBE: the hit count firn's summary gives for PROBE
hits() { sed -n "s/^firn: usdt_firn_cuda_$2: \([0-9]*\) hits\?$/\1/p" "$1"; }
# line OUT KEY: the value the driver printed for KEY
line() { awk -v k="$2" '$1 " " $2 == k { print $3 }' "$1"; }

# 3. -- CMD: launches per call path, kernel and memcpy records, activity on once per kind
"$FIRN" record $EV:launch $EV:kernel $EV:memcpy -o "$TMP/cmd.pb.gz" -- "$DRV" run 10000 >"$TMP/cmd.out" 2>"$TMP/cmd.err"
rc=$?
[ $rc -eq 0 ] && grep -qx "fired launch 3 2 kernel 5 memcpy 2" "$TMP/cmd.out" && pass "record -- probe_driver exits 0" \
	|| { fail "record -- probe_driver exit $rc"; cat "$TMP/cmd.err"; }
"$FIRN" report --folded "$TMP/cmd.pb.gz" >"$TMP/cmd.folded"
a=$(under "$TMP/cmd.folded" path_a) b=$(under "$TMP/cmd.folded" path_b) c=$(under "$TMP/cmd.folded" path_c)
[ "$a" = 3 ] && [ "$b" = 2 ] && [ "$c" = 0 ] && [ "$(hits "$TMP/cmd.err" launch)" = 5 ] \
	&& pass "launch: 3 hits via path_a (nested cuLaunchKernel not counted), 2 via path_b, 0 for cudaMemcpy" \
	|| { fail "launch: path_a $a, path_b $b, path_c $c, total $(hits "$TMP/cmd.err" launch) (wanted 3 2 0 5)"; cat "$TMP/cmd.folded"; }
[ "$(hits "$TMP/cmd.err" kernel)" = 6 ] && [ "$(hits "$TMP/cmd.err" memcpy)" = 2 ] \
	&& pass "kernel: 6 hits (5 delivered, 1 flushed at exit), memcpy: 2 (the memset record fires nothing)" \
	|| fail "kernel $(hits "$TMP/cmd.err" kernel), memcpy $(hits "$TMP/cmd.err" memcpy) (wanted 6 and 2)"
[ "$(line "$TMP/cmd.out" "exit flush")" = 1 ] && pass "buffers flushed once, at exit" \
	|| fail "flushes at exit: $(line "$TMP/cmd.out" "exit flush")"
[ "$(line "$TMP/cmd.out" "traced enable_kernel")" = 1 ] && [ "$(line "$TMP/cmd.out" "traced enable_memcpy")" = 1 ] \
	&& [ "$(line "$TMP/cmd.out" "traced disable_kernel")" = 0 ] \
	&& pass "kernel and memcpy activity enabled once each (the tracer was there at InitializeInjection), not per callback" \
	|| { fail "activity switches while traced"; cat "$TMP/cmd.out"; }

# 4. -p: untraced callbacks switch nothing; kernel records with their stacks; off after detaching
"$DRV" run 20000 untraced detach >"$TMP/p.out" 2>&1 &
dpid=$!
for i in $(seq 100); do grep -q "^untraced flush" "$TMP/p.out" && break; sleep 0.1; done
[ "$(line "$TMP/p.out" "init returned")" = 1 ] && [ "$(line "$TMP/p.out" "init subscribed")" = 1 ] \
	&& [ "$(line "$TMP/p.out" "init callbacks")" = 20 ] && [ "$(line "$TMP/p.out" "init registered")" = 1 ] \
	&& pass "InitializeInjection: 1 subscriber, 20 callbacks (18 launch APIs, 2 module events), its buffer handlers" \
	|| { fail "InitializeInjection"; cat "$TMP/p.out"; }
[ "$(line "$TMP/p.out" "init enable_kernel")" = 0 ] && [ "$(line "$TMP/p.out" "init enable_memcpy")" = 0 ] \
	&& pass "InitializeInjection with no tracer enables no activity" || { fail "activity enabled at init"; cat "$TMP/p.out"; }
[ "$(line "$TMP/p.out" "untraced enable_kernel")" = 0 ] && [ "$(line "$TMP/p.out" "untraced enable_memcpy")" = 0 ] \
	&& [ "$(line "$TMP/p.out" "untraced flush")" = 0 ] \
	&& pass "4000 callbacks with no tracer: no CUPTI activity enabled" || { fail "untraced switches"; cat "$TMP/p.out"; }
"$FIRN" record -d 3 -p "$dpid" $EV:kernel $EV:memcpy $EV:launch -o "$TMP/p.pb.gz" 2>"$TMP/p.err"
wait "$dpid"
rc=$?
[ $rc -eq 0 ] && pass "probe_driver under record -p exits 0" || { fail "probe_driver exit $rc"; cat "$TMP/p.out" "$TMP/p.err"; }
"$FIRN" report --folded "$TMP/p.pb.gz" >"$TMP/p.folded"
[ "$(under "$TMP/p.folded" deliver)" = 5 ] && [ "$(hits "$TMP/p.err" kernel)" = 5 ] \
	&& [ "$(hits "$TMP/p.err" memcpy)" = 2 ] && [ "$(hits "$TMP/p.err" launch)" = 5 ] \
	&& pass "record -p: 5 kernel hits under deliver (none from the buffer flushed after detaching), 2 memcpy, 5 launches" \
	|| { fail "record -p: $(grep hits "$TMP/p.err" | tr '\n' ' ')"; cat "$TMP/p.folded"; }
[ "$(line "$TMP/p.out" "detached disable_kernel")" = 1 ] && [ "$(line "$TMP/p.out" "detached disable_memcpy")" = 1 ] \
	&& [ "$(line "$TMP/p.out" "detached flush")" = 1 ] && [ "$(line "$TMP/p.out" "exit flush")" = 1 ] \
	&& pass "after the tracer detached: activity disabled and buffers flushed at the next callback, not again at exit" \
	|| { fail "switches after detaching"; cat "$TMP/p.out"; }

# 5. CUPTI refusing to enable activity (as without a driver): one error per kind, not per callback
"$FIRN" record $EV:memcpy $EV:kernel $EV:launch $EV:error -o "$TMP/err.pb.gz" -- "$DRV" run 10000 fail >"$TMP/err.out" 2>"$TMP/err.err"
[ "$(hits "$TMP/err.err" error)" = 2 ] && [ "$(hits "$TMP/err.err" launch)" = 5 ] \
	&& pass "error: 2 hits (enable refused for kernel and memcpy), launches still counted" \
	|| { fail "error hits $(hits "$TMP/err.err" error), launch $(hits "$TMP/err.err" launch) (wanted 2 and 5)"; cat "$TMP/err.err"; }
"$FIRN" report --folded "$TMP/err.pb.gz" >"$TMP/err.folded"
[ "$(under "$TMP/err.folded" deliver)" = 2 ] && pass "memcpy: 2 hits under deliver" \
	|| { fail "memcpy under deliver: $(under "$TMP/err.folded" deliver)"; cat "$TMP/err.folded"; }

# 6. argument values, where bpftrace is installed. bpftrace 0.17 finds no USDT probes in a library
# that its -c command has not mapped yet, and cannot read arguments with -p here, so the same
# sources are linked into one executable for it.
if ! command -v bpftrace >/dev/null; then skip "no bpftrace: argument values not checked"; exit 0; fi
libdir=$(dirname "$(ldd "$LIB" | awk '/libcupti/ { print $3 }')")
${CLANG:-clang} -O2 -g -fno-omit-frame-pointer -std=gnu11 -D_GNU_SOURCE -I"$CUDA/include" -I"$ROOT/gpu" -rdynamic \
	-o "$TMP/one" "$ROOT/tests/gpu/probe_driver.c" "$ROOT/gpu/firn_cuda.c" -L"$libdir" -lcupti \
	-Wl,-rpath,"$libdir" -ldl -pthread 2>"$TMP/one.err" || { fail "building the one-file driver"; cat "$TMP/one.err"; exit 0; }
O="usdt:$TMP/one:firn_cuda"
BPFTRACE_STRLEN=128 timeout 60 bpftrace -q -e "
$O:launch { printf(\"launch %u %x %s\n\", arg0, arg1, str(arg2)); }
$O:kernel { printf(\"kernel %lu %lu %u %u %u %s\n\", arg0, arg1, arg2, arg3, arg4, str(arg5)); }
$O:memcpy { printf(\"memcpy %lu %lu %u %lu %u\n\", arg0, arg1, arg2, arg3, arg4); }
$O:error { printf(\"error %d %s\n\", arg0, str(arg1)); }" -c "$TMP/one run 10000 fail" 2>/dev/null |
	grep '^launch\|^kernel\|^memcpy\|^error' >"$TMP/values"
cat >"$TMP/want" <<'W'
error 15 cuptiActivityEnable(CONCURRENT_KERNEL): CUPTI_ERROR_NOT_INITIALIZED
error 15 cuptiActivityEnable(MEMCPY): CUPTI_ERROR_NOT_INITIALIZED
launch 100 200d3 _Z6kernelPf
launch 102 200d3 _Z6kernelPf
launch 104 200d3 _Z6kernelPf
launch 106 10133 _Z5otherv
launch 107 20137 cudaGraphLaunch
kernel 1000000 1001000 100 0 7 _Z6kernelPf
kernel 2000000 2002000 101 0 7 _Z6kernelPf
kernel 3000000 3003000 102 0 7 _Z6kernelPf
kernel 4000000 4004000 103 0 7 _Z6kernelPf
kernel 5000000 5005000 104 0 7 _Z6kernelPf
memcpy 9000000 9000500 200 4096 1
memcpy 9000001 9000501 201 8192 1
kernel 5000000 6000000 300 0 0 _Z4lastv
W
diff "$TMP/want" "$TMP/values" >"$TMP/values.diff" \
	&& pass "bpftrace reads every argument as sent: correlation ids, runtime/driver cbids, names, times, bytes, codes" \
	|| { fail "argument values differ from what the driver sent"; cat "$TMP/values.diff"; }
