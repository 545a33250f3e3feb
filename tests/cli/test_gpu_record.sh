# The GPU correlation path without a GPU: firn record --cuda runs build/gpu/probe_driver (which
# plays CUPTI to libfirn-cuda.so with synthetic launch callbacks and activity records of known
# correlation ids and timestamps) and must put each kernel's time, exactly, under the CPU stack
# that launched it with the kernel (demangled) as a leaf in [gpu]: path_small 2 x 10 us,
# path_large 2 x 30 us (1:3), path_a 1+3+5 us, path_b's graph launch 2 x 7 us; launches per stack
# under gpu_launches; memcpy time under "[memcpy HtoD]"; kernels whose launch was not seen and
# launches whose records never came counted in the summary. The same with -p, and with -a for a
# process that maps another copy of the library; then --cuda without the library, and -p of a
# process that maps none.
. "$(dirname "$0")/lib.sh"

LIB="$ROOT/$BUILD/libfirn-cuda.so"
DRV="$ROOT/$BUILD/gpu/probe_driver"
if [ ! -f "$LIB" ] || [ ! -x "$DRV" ]; then skip "libfirn-cuda.so is not built (no CUDA toolkit)"; exit 0; fi
if ! is_root; then skip "recording tests need root"; exit 0; fi

# sum FOLDED LEAF FUNC: the value of the stacks that pass through FUNC and end in LEAF
sum() { awk -v l="$2" -v f=";$3;" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, a, ";")
	if (a[k] == l && (f == ";;" || index(";" s ";", f))) t += n } END { print t + 0 }' "$1"; }

"$FIRN" record --cuda -o "$TMP/g.pb.gz" -- "$DRV" run 10000 paths >"$TMP/g.out" 2>"$TMP/g.err"
rc=$?
[ $rc -eq 0 ] && grep -qx "fired paths launch 2 2 kernel 2 2 graph 2" "$TMP/g.out" \
	&& pass "record --cuda -- probe_driver paths exits 0" || { fail "record --cuda exit $rc"; cat "$TMP/g.err"; }
"$FIRN" report --folded --sample-type gpu_time "$TMP/g.pb.gz" >"$TMP/time" 2>"$TMP/time.err"
"$FIRN" report --folded --sample-type gpu_launches "$TMP/g.pb.gz" >"$TMP/launches" 2>>"$TMP/time.err"

# 1. kernel time (ns, from the records' timestamps) under the launching stack, the kernel as leaf
small=$(sum "$TMP/time" "small(int)" path_small) large=$(sum "$TMP/time" "void ns::large<float>(float*)" path_large)
[ "$small" = 20000 ] && [ "$large" = 60000 ] \
	&& pass "gpu_time: small(int) 20000 ns under path_small, ns::large<float> 60000 ns under path_large (1:3)" \
	|| { fail "gpu_time small $small, large $large (wanted 20000, 60000)"; cat "$TMP/time" "$TMP/time.err"; }
a=$(sum "$TMP/time" "kernel(float*)" path_a) g=$(sum "$TMP/time" "graph()" path_b)
[ "$a" = 9000 ] && [ "$g" = 14000 ] \
	&& pass "gpu_time: path_a's 3 runtime launches 1+3+5 us (the nested driver ids match nothing), path_b's graph launch 2 x 7 us" \
	|| { fail "gpu_time path_a $a, graph $g (wanted 9000, 14000)"; cat "$TMP/time"; }
m=$(sum "$TMP/time" "[memcpy HtoD]" "") total=$(awk '{ t += $NF } END { print t + 0 }' "$TMP/time")
[ "$m" = 1000 ] && [ "$total" = $((20000 + 60000 + 9000 + 14000 + 1000)) ] \
	&& pass "gpu_time: 2 copies x 500 ns under [memcpy HtoD]; nothing else (total $total ns)" \
	|| { fail "memcpy $m, total $total"; cat "$TMP/time"; }
# the leaf frames are in the [gpu] mapping, the launch stacks' frames in probe_driver
"$FIRN" report --json --sample-type gpu_time "$TMP/g.pb.gz" >"$TMP/time.json" 2>/dev/null
grep -q '"\[gpu\]"' "$TMP/time.json" && pass "kernel frames in the mapping [gpu]" \
	|| fail "no [gpu] mapping in report --json"

# 2. launches per launching stack (no kernel leaf)
l() { awk -v f=";$2;" '{ n = $NF; s = $0; sub(/ [0-9]+$/, ";", s); if (index(";" s, f)) t += n } END { print t + 0 }' "$1"; }
[ "$(l "$TMP/launches" path_a)" = 3 ] && [ "$(l "$TMP/launches" path_b)" = 2 ] \
	&& [ "$(l "$TMP/launches" path_small)" = 2 ] && [ "$(l "$TMP/launches" path_large)" = 2 ] \
	&& [ "$(l "$TMP/launches" path_c)" = 0 ] \
	&& pass "gpu_launches: path_a 3, path_b 2, path_small 2, path_large 2, path_c (copies) 0" \
	|| { fail "gpu_launches"; cat "$TMP/launches"; }

# 3. the unmatched, in the summary: kernels 101, 103 (driver ids) and 300 (flushed at exit) had no
# launch; path_b's cuLaunchKernel (106) never got a record
line=$(grep '^firn: gpu:' "$TMP/g.err")
[ "$line" = "firn: gpu: 9 launches (1 without a kernel record, 1 of them remembered to the end), 12 kernels (3 without a seen launch), 2 copies, 0 lost" ] \
	&& pass "summary: 9 launches (1 without a record), 12 kernels (3 without a seen launch), 2 copies" \
	|| { fail "summary: '$line'"; cat "$TMP/g.err"; }

# the same counts in the profile's comments (strings of the pprof string table, length-prefixed)
comments=$(python3 -c 'import gzip, sys
d = gzip.open(sys.argv[1]).read()
for k in (b"gpu.launches: ", b"gpu.kernels: ", b"gpu.kernels_without_launch: ", b"gpu.launches_without_record: ", b"off_cpu."):
    i = d.find(k)
    print(d[i:i + d[i - 1]].decode() if i > 0 else "none")' "$TMP/g.pb.gz" | tr '\n' ',')
[ "$comments" = "gpu.launches: 9,gpu.kernels: 12,gpu.kernels_without_launch: 3,gpu.launches_without_record: 1,none," ] \
	&& pass "profile comments: gpu.launches 9, kernels 12, without launch 3, launches without record 1; no off_cpu lines" \
	|| fail "profile comments: $comments"

# more launches than firn remembers (4096) and no records: every one counted as without a record,
# the forgotten ones too
"$FIRN" record --cuda -o "$TMP/many.pb.gz" -- "$DRV" bench 10000 >/dev/null 2>"$TMP/many.err"
grep -q '^firn: gpu: 10000 launches (10000 without a kernel record, [0-9]* of them remembered to the end), 0 kernels' "$TMP/many.err" \
	&& pass "10000 launches without records: all 10000 counted ($(sed -n 's/.*record, \([0-9]*\) of them.*/\1/p' "$TMP/many.err") still remembered)" \
	|| { fail "10000 launches: $(grep '^firn: gpu' "$TMP/many.err")"; }

# 4. -p: the probes of the library the process maps; its launches and kernels after firn attached
"$DRV" run 20000 paths >"$TMP/pd.out" 2>&1 &
dpid=$!
for i in $(seq 50); do grep -q "^init flush" "$TMP/pd.out" && break; sleep 0.1; done
"$FIRN" record --cuda -p "$dpid" -o "$TMP/pd.pb.gz" >"$TMP/pd.rec" 2>"$TMP/pd.err"
rc=$?
wait "$dpid"
"$FIRN" report --folded --sample-type gpu_time "$TMP/pd.pb.gz" >"$TMP/pd.time" 2>/dev/null
small=$(sum "$TMP/pd.time" "small(int)" path_small) large=$(sum "$TMP/pd.time" "void ns::large<float>(float*)" path_large)
[ $rc -eq 0 ] && [ "$small" = 20000 ] && [ "$large" = 60000 ] \
	&& pass "record --cuda -p: small(int) 20000 ns under path_small, large 60000 ns under path_large" \
	|| { fail "record --cuda -p: exit $rc, small $small, large $large"; cat "$TMP/pd.err" "$TMP/pd.time"; }

# 4b. -a: a copy of the library (another file, as an init container's) that a process maps when
# firn starts is attached too
mkdir -p "$TMP/copy/gpu" && cp "$LIB" "$TMP/copy/" && cp "$DRV" "$TMP/copy/gpu/"
"$TMP/copy/gpu/probe_driver" run 20000 paths >"$TMP/pa.out" 2>&1 &
dpid=$!
for i in $(seq 50); do grep -q "^init flush" "$TMP/pa.out" && break; sleep 0.1; done
grep -q "$TMP/copy/libfirn-cuda.so" "/proc/$dpid/maps" && pass "the driver maps the copy of the library" \
	|| fail "the driver does not map $TMP/copy/libfirn-cuda.so"
"$FIRN" record --cuda -a -d 3 -o "$TMP/pa.pb.gz" >"$TMP/pa.rec" 2>"$TMP/pa.err"
rc=$?
wait "$dpid"
"$FIRN" report --folded --sample-type gpu_time "$TMP/pa.pb.gz" >"$TMP/pa.time" 2>/dev/null
small=$(sum "$TMP/pa.time" "small(int)" path_small) large=$(sum "$TMP/pa.time" "void ns::large<float>(float*)" path_large)
[ $rc -eq 0 ] && [ "$small" = 20000 ] && [ "$large" = 60000 ] \
	&& pass "record --cuda -a: the copy's probes too: small 20000 ns, large 60000 ns under their paths" \
	|| { fail "record --cuda -a: exit $rc, small $small, large $large"; cat "$TMP/pa.err"; }

# the command's CUDA_INJECTION64_PATH names the library next to firn
got=$("$FIRN" record --cuda -q -o "$TMP/e.pb.gz" -- sh -c 'echo "$CUDA_INJECTION64_PATH"' 2>"$TMP/e.err")
[ "$(readlink -f "$got")" = "$(readlink -f "$LIB")" ] && pass "record --cuda -- CMD: CUDA_INJECTION64_PATH=$got" \
	|| { fail "CUDA_INJECTION64_PATH '$got'"; cat "$TMP/e.err"; }

# 5. --cuda without the library next to firn: one clear line, exit 1
mkdir -p "$TMP/bin" && cp "$FIRN" "$TMP/bin/firn"
"$TMP/bin/firn" record --cuda -o "$TMP/x.pb.gz" -- true >"$TMP/x.out" 2>"$TMP/x.err"
rc=$?
[ $rc -eq 1 ] && [ "$(wc -l <"$TMP/x.err")" = 1 ] && grep -q 'libfirn-cuda.so' "$TMP/x.err" \
	&& pass "--cuda without libfirn-cuda.so: exit 1, one line ($(cat "$TMP/x.err"))" \
	|| { fail "--cuda without the library: exit $rc"; cat "$TMP/x.err"; }

# 6. -p of a process that maps no libfirn-cuda.so: refused, saying why
sleep 5 & spid=$!
"$FIRN" record --cuda -d 1 -p "$spid" -o "$TMP/p.pb.gz" >"$TMP/p.out" 2>"$TMP/p.err"
rc=$?
kill "$spid" 2>/dev/null; wait "$spid" 2>/dev/null
[ $rc -eq 1 ] && grep -q 'no process maps libfirn-cuda.so' "$TMP/p.err" \
	&& pass "--cuda -p of a process without the library: exit 1" || { fail "--cuda -p: exit $rc"; cat "$TMP/p.err"; }
