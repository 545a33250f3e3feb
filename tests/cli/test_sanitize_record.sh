# Recordings of running processes (-p), which the other sanitizer-tier tests (no root) never
# make (and a diff of empty profiles, which no other test makes): in `make test-asan` (FIRN_SANITIZED=1, firn built with ASan+UBSan) this runs as root
# anyway, and in the plain tier as any recording test does. record -p of a busy fixture for 1 s,
# then record --cuda -p of build/gpu/probe_driver (the GPU path without a GPU): each exits 0 with
# its samples (cpu samples in busy_hot; the driver's kernel times) and no sanitizer report.
. "$(dirname "$0")/lib.sh"

# clean NAME RC ERRFILE: firn exited 0 and wrote no sanitizer report
clean() {
	if [ "$2" -eq 0 ] && ! grep -q 'runtime error\|Sanitizer' "$3"; then return 0; fi
	fail "$1: exit $2"; grep -m5 'runtime error\|Sanitizer\|firn:' "$3" | sed 's/^/    /'; return 1
}

# no root needed: a diff of profiles without samples (qsort of no lines, NULL)
printf 'main;f 0\n' >"$TMP/z.folded"
"$FIRN" report --pprof -o "$TMP/z.pb.gz" "$TMP/z.folded" 2>"$TMP/z.err"
"$FIRN" diff --folded -o "$TMP/z.out" "$TMP/z.pb.gz" "$TMP/z.pb.gz" 2>"$TMP/z.err"
clean "diff --folded of empty profiles" $? "$TMP/z.err" &&
	pass "diff --folded of two profiles without samples: exit 0, no sanitizer report"

if [ "$(id -u)" -ne 0 ] || { ! is_root && [ -z "${FIRN_SANITIZED:-}" ]; }; then
	skip "recording tests need root"; exit 0
fi
# the library and driver come from the plain build (the sanitizer build leaves them out)
PLAIN="$ROOT/${FIRN_PLAIN_BUILD:-$BUILD}"

"$FIX/busy" 10 & bpid=$!
sleep 0.2
"$FIRN" record -p "$bpid" -d 1 -o "$TMP/p.pb.gz" >/dev/null 2>"$TMP/p.err"
rc=$?
kill "$bpid" 2>/dev/null; wait "$bpid" 2>/dev/null
if clean "record -p" "$rc" "$TMP/p.err"; then
	n=$("$FIRN" report --folded "$TMP/p.pb.gz" 2>/dev/null | awk '/busy_hot/ { t += $NF } END { print t + 0 }')
	[ "$n" -ge 10 ] && pass "record -p PID -d 1: exit 0, $n samples in busy_hot, no sanitizer report" \
		|| fail "record -p: $n samples in busy_hot"
fi

LIB="$PLAIN/libfirn-cuda.so" DRV="$PLAIN/gpu/probe_driver"
if [ ! -f "$LIB" ] || [ ! -x "$DRV" ]; then skip "libfirn-cuda.so is not built (no CUDA toolkit)"; exit 0; fi
mkdir "$TMP/bin" && cp "$FIRN" "$LIB" "$TMP/bin/" # --cuda wants the library next to firn
"$DRV" run 20000 paths >"$TMP/d.out" 2>&1 &
dpid=$!
for _ in $(seq 50); do grep -q "^init flush" "$TMP/d.out" && break; sleep 0.1; done
"$TMP/bin/firn" record --cuda -p "$dpid" -o "$TMP/c.pb.gz" >/dev/null 2>"$TMP/c.err"
rc=$?
wait "$dpid"
if clean "record --cuda -p" "$rc" "$TMP/c.err"; then
	t=$("$FIRN" report --folded --sample-type gpu_time "$TMP/c.pb.gz" 2>/dev/null |
		awk '/small\(int\)$|small\(int\) / { t += $NF } END { print t + 0 }')
	[ "$t" = 20000 ] && pass "record --cuda -p PID: exit 0, small(int) 20000 ns of kernel time, no sanitizer report" \
		|| fail "record --cuda -p: small(int) $t ns (wanted 20000)"
fi
