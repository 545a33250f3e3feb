# Off-CPU and wall-clock recordings (root, BPF) of two fixtures:
# - offcpu_mix: per round the main thread sleeps 100 ms (sleep_short), 200 ms (sleep_long), waits
#   ~300 ms on a pipe its child fills (wait_pipe) and spins 100 ms of wall time (spin).
#   `-e off-cpu`: the shares of the process's off-CPU time are 1/6, 2/6, 3/6 (±2 pp), the kernel
#   frames name the wait (do_nanosleep, pipe_read) and are each wait's own (>= 99 % of the sleeps'
#   time through do_nanosleep, of the pipe wait's through pipe_read, none crossed), go tool pprof
#   reads the off_cpu type.
#   `-e cpu-clock -e off-cpu --off-cpu-runnable`: the wall type (the default; report --sample-type,
#   --json) gives 1/7, 2/7, 3/7, 1/7 (±2 pp), and within 1 pp the shares of the times the fixture
#   measured itself; --sample-type off_cpu of it keeps 1:2:3 among the waits. Runnable waits are included so that the spin keeps its 100 ms of wall time when
#   other jobs preempt it (a loaded machine); the waits themselves are measured, not sampled, so
#   the tolerance holds with few rounds; the spin's CPU part is sampled at 999 Hz (~100 samples a
#   round).
# - offcpu_lock: 4 threads contending for one mutex: the waits show the lock's call path
#   (lock_path → take_lock → pthread_mutex_lock → futex), and each thread's off-CPU time (with
#   --off-cpu-runnable) is its wall time minus its CPU time, as the thread measured them, ±5 %.
# Then the options' checks (usage errors) and --off-cpu-min / --off-cpu-rate accounting.
# - offcpu_stuck, stuck before the recording starts (a thread deadlocked on a mutex, the main
#   thread in a pipe read that never returns): `-p PID -d 2` shows both waits (deadlock_here ->
#   futex, blocked_here -> pipe read) with ~2 s each, counted from the start, not from when they
#   began (>1 s before), and the summary counts the 2 waits already in progress.
. "$(dirname "$0")/lib.sh"

MIX="$FIX/offcpu_mix"
LOCK="$FIX/offcpu_lock"
STUCK="$FIX/offcpu_stuck"
if ! is_root; then skip "off-CPU recording tests need root"; exit 0; fi

# within VALUE LO HI
within() { python3 -c "import sys; v,lo,hi=map(float,sys.argv[1:]); sys.exit(0 if lo<=v<=hi else 1)" "$@"; }

# mix_shares FOLDED: "short long pipe spin other total" shares (%) of the offcpu_mix process's
# stacks in a folded file, by the fixture function they are in
mix_shares() {
	python3 - "$1" <<'PY'
import sys
s = {"sleep_short": 0, "sleep_long": 0, "wait_pipe": 0, "spin": 0, "other": 0}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0] != "offcpu_mix":
        continue
    k = next((f for f in frames if f in s), "other")
    s[k] += int(n)
t = sum(s.values()) or 1
print(" ".join("%.2f" % (100.0 * s[k] / t) for k in s), t)
PY
}

# kernel_own FOLDED: "S_OWN S_OTHER P_OWN P_OTHER": of the off-CPU time of sleep_short and
# sleep_long, the shares (%) whose kernel stack goes through do_nanosleep and through pipe_read;
# of wait_pipe's, through pipe_read and through do_nanosleep
kernel_own() {
	python3 - "$1" <<'PY'
import sys
w = {"s": [0, 0, 0], "p": [0, 0, 0]}  # total, through the wait's own kernel function, the other
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    stack, _, n = line.rstrip("\n").rpartition(" ")
    f = stack.split(";")
    k = "s" if "sleep_short" in f or "sleep_long" in f else "p" if "wait_pipe" in f else None
    if not k:
        continue
    nano = any(x.startswith("do_nanosleep") for x in f)
    pipe = any("pipe_read" in x for x in f)
    own, other = (nano, pipe) if k == "s" else (pipe, nano)
    w[k][0] += int(n)
    w[k][1] += int(n) if own else 0
    w[k][2] += int(n) if other else 0
pct = lambda a, b: 100.0 * a / (b or 1)
print("%.2f %.2f %.2f %.2f" % (pct(w["s"][1], w["s"][0]), pct(w["s"][2], w["s"][0]),
                               pct(w["p"][1], w["p"][0]), pct(w["p"][2], w["p"][0])))
PY
}

# share NAME VALUE WANT [TOL]: passes when VALUE is WANT ± TOL (percentage points, default 2)
share() {
	local lo hi tol=${4:-2}
	lo=$(python3 -c "print($3 - $tol)") hi=$(python3 -c "print($3 + $tol)")
	within "$2" "$lo" "$hi" && pass "$1 share $2% is $3±$tol" || fail "$1 share $2% not $3±$tol"
}

# own_shares OUT [off]: the shares (%) of sleep_short, sleep_long, wait_pipe and spin in the wall
# time offcpu_mix measured itself (printed in OUT); with "off", of the first three only
own_shares() {
	awk -v off="${2:-}" '{ t[$1] = $2; if (!(off && $1 == "spin")) n += $2 }
		END { printf "%.2f %.2f %.2f %.2f\n", 100 * t["sleep_short"] / n, 100 * t["sleep_long"] / n,
			100 * t["wait_pipe"] / n, off ? 0 : 100 * t["spin"] / n }' "$1"
}

# 1. -e off-cpu: shares of the off-CPU time, kernel frames, the summary, go tool pprof.
"$FIRN" record -e off-cpu -o "$TMP/off.pb.gz" -- "$MIX" 5 >"$TMP/off.out" 2>"$TMP/off.err"
rc=$?
[ $rc -eq 0 ] && pass "record -e off-cpu exits 0" || { fail "record -e off-cpu exit $rc"; cat "$TMP/off.err"; }
grep -q "off-cpu: [0-9]* waits: [0-9]* added (.* s off the CPU; .*), 0 under 0 us" "$TMP/off.err" &&
	grep -q ", 0 lost (counts map full 0, stack map full 0" "$TMP/off.err" &&
	pass "summary: waits added, none short, none lost" || fail "summary: $(cat "$TMP/off.err")"
"$FIRN" report --folded "$TMP/off.pb.gz" >"$TMP/off.folded" && pass "report --folded reads it" || fail "report --folded"
read -r ps pl pp pspin po total < <(mix_shares "$TMP/off.folded")
echo "# off-cpu: sleep_short=$ps% sleep_long=$pl% wait_pipe=$pp% spin=$pspin% other=$po% of $total ns"
within "$total" 2.9e9 4e9 && pass "off-CPU total of the main thread ${total} ns is ~3 s" || fail "off-CPU total ${total} ns (wanted ~3 s)"
share "off-cpu sleep_short" "$ps" 16.67
share "off-cpu sleep_long" "$pl" 33.33
share "off-cpu wait_pipe" "$pp" 50
# the same against the times the fixture measured itself (1 pp: both measure the same waits)
read -r os ol op _ < <(own_shares "$TMP/off.out" off)
echo "# off-cpu, by the fixture's own clock: sleep_short=$os% sleep_long=$ol% wait_pipe=$op%"
share "off-cpu sleep_short (fixture's clock)" "$ps" "$os" 1
share "off-cpu sleep_long (fixture's clock)" "$pl" "$ol" 1
share "off-cpu wait_pipe (fixture's clock)" "$pp" "$op" 1
grep ';sleep_short;' "$TMP/off.folded" | grep -q ';do_nanosleep_\[k\]' && grep ';wait_pipe;' "$TMP/off.folded" |
	grep -q 'pipe_read_\[k\]' && pass "kernel frames name the wait (do_nanosleep, pipe_read)" ||
	{ fail "kernel frames name the wait"; cut -c1-300 "$TMP/off.folded"; }
# every wait's kernel stack is its own (a kernel stack taken from another thread, from the thread
# after it ran on, or reused from another wait would mix them)
read -r sgood sbad pgood pbad < <(kernel_own "$TMP/off.folded")
echo "# kernel frames: sleeps through do_nanosleep $sgood% (pipe_read $sbad%), wait_pipe through pipe_read $pgood% (do_nanosleep $pbad%)"
within "$sgood" 99 100 && within "$sbad" 0 0 && within "$pgood" 99 100 && within "$pbad" 0 0 &&
	pass "each wait's kernel stack is its own: sleeps $sgood% do_nanosleep, wait_pipe $pgood% pipe_read, none crossed" ||
	fail "kernel stacks of the waits: sleeps $sgood% do_nanosleep ($sbad% pipe_read), wait_pipe $pgood% pipe_read ($pbad% do_nanosleep)"
! grep -q 'bpf_prog_\|bpf_trace_run' "$TMP/off.folded" && pass "no tracing frames above __schedule" || fail "tracing frames in the stacks"
if command -v go >/dev/null; then
	go tool pprof -raw "$TMP/off.pb.gz" 2>/dev/null | grep -qx 'off_cpu/nanoseconds\[dflt\]' &&
		pass "sample type off_cpu/nanoseconds, the default" || fail "sample types: $(go tool pprof -raw "$TMP/off.pb.gz" 2>&1 | grep -A1 '^Samples' | tail -1)"
	go tool pprof -sample_index=off_cpu -top "$TMP/off.pb.gz" >"$TMP/off.top" 2>"$TMP/pprof.err"
	grep -q 'sleep_long' "$TMP/off.top" && grep -q 'wait_pipe' "$TMP/off.top" &&
		pass "go tool pprof -sample_index=off_cpu reads it" || { fail "go tool pprof -sample_index=off_cpu"; head "$TMP/off.top" "$TMP/pprof.err"; }
else
	fail "go is not installed (make deps installs golang-go)"
fi

# 2. -e cpu-clock -e off-cpu: the wall type (default) sums on-CPU samples x period and off-CPU ns.
"$FIRN" record -F 999 -e cpu-clock -e off-cpu --off-cpu-runnable -o "$TMP/wall.pb.gz" -- "$MIX" 5 \
	>"$TMP/wall.out" 2>"$TMP/wall.err"
rc=$?
[ $rc -eq 0 ] && pass "record -e cpu-clock -e off-cpu exits 0" || { fail "record -e cpu-clock -e off-cpu exit $rc"; cat "$TMP/wall.err"; }
grep -q 'off-cpu: [0-9]* waits (preemptions included)' "$TMP/wall.err" && pass "summary: preemptions included" || fail "summary: $(cat "$TMP/wall.err")"
"$FIRN" report --folded "$TMP/wall.pb.gz" >"$TMP/wall.folded"
"$FIRN" report --folded --sample-type wall "$TMP/wall.pb.gz" | cmp -s - "$TMP/wall.folded" &&
	pass "wall is the default sample type (report --sample-type wall gives the same)" || fail "report's default is not wall"
"$FIRN" report --json "$TMP/wall.pb.gz" | python3 -c '
import json, sys
t = json.load(sys.stdin)["sample_types"]
want = [("samples", "count"), ("cpu", "nanoseconds"), ("off_cpu", "nanoseconds"), ("wall", "nanoseconds")]
sys.exit(0 if [(x["name"], x["unit"]) for x in t] == want and t[3]["default"] else 1)' &&
	pass "report --json: samples, cpu, off_cpu, wall (default) with their units" || fail "report --json sample types"
read -r ps pl pp pspin po total < <(mix_shares "$TMP/wall.folded")
echo "# wall: sleep_short=$ps% sleep_long=$pl% wait_pipe=$pp% spin=$pspin% other=$po% of $total ns"
# --sample-type off_cpu of the same recording: the waits, the spin's preemptions among them
"$FIRN" report --folded --sample-type off_cpu "$TMP/wall.pb.gz" >"$TMP/wall-off.folded"
read -r ws wl wp _ < <(mix_shares "$TMP/wall-off.folded")
python3 -c "import sys; sys.exit(0 if abs($ws / $wl - 0.5) < 0.05 and abs($wp / $wl - 1.5) < 0.1 else 1)" &&
	pass "report --sample-type off_cpu: sleep_short:sleep_long:wait_pipe = 1:2:3 ($ws:$wl:$wp)" ||
	fail "report --sample-type off_cpu: $ws:$wl:$wp, not 1:2:3"
within "$total" 3.4e9 5e9 && pass "wall total of the main thread ${total} ns is ~3.5 s" || fail "wall total ${total} ns (wanted ~3.5 s)"
share "wall sleep_short" "$ps" 14.29
share "wall sleep_long" "$pl" 28.57
share "wall wait_pipe" "$pp" 42.86
share "wall spin" "$pspin" 14.29
# against the fixture's own clock: a loaded machine stretches the spin (preempted past its end)
# and the sleeps (late wake-ups); the wall type follows (1 pp: ~500 cpu-clock samples a run)
read -r os ol op ospin < <(own_shares "$TMP/wall.out")
echo "# wall, by the fixture's own clock: sleep_short=$os% sleep_long=$ol% wait_pipe=$op% spin=$ospin%"
share "wall sleep_short (fixture's clock)" "$ps" "$os" 1
share "wall sleep_long (fixture's clock)" "$pl" "$ol" 1
share "wall wait_pipe (fixture's clock)" "$pp" "$op" 1
# the spin, preempted most of its time on a loaded machine, falls short by up to ~2 pp there in
# one run of four or so (old builds too: a preemption interval lost; see issue notes)
share "wall spin (fixture's clock)" "$pspin" "$ospin" 2.5
if command -v go >/dev/null; then
	types=$(go tool pprof -raw "$TMP/wall.pb.gz" 2>/dev/null | grep -A1 '^Samples:' | tail -1)
	[ "$types" = "samples/count cpu/nanoseconds off_cpu/nanoseconds wall/nanoseconds[dflt]" ] &&
		pass "sample types samples, cpu, off_cpu, wall (the default)" || fail "sample types: $types"
	go tool pprof -sample_index=wall -top "$TMP/wall.pb.gz" 2>/dev/null | grep -q ' spin$' &&
		pass "go tool pprof -sample_index=wall reads it" || fail "go tool pprof -sample_index=wall"
	# wall = cpu + off_cpu in every sample
	go tool pprof -raw "$TMP/wall.pb.gz" 2>/dev/null | awk '/^ *[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+:/ {
		n++; if ($2 + $3 != $4 + 0) bad++ } END { exit !(n > 0 && !bad) }' &&
		pass "every sample's wall is its cpu + off_cpu" || fail "wall != cpu + off_cpu in some samples"
fi

# 3. a mutex: the waiting stacks show the lock's call path; per thread, off-CPU = wall - CPU ±5 %.
"$FIRN" record -e off-cpu --off-cpu-runnable --thread-labels -o "$TMP/lock.pb.gz" -- "$LOCK" 4 150 \
	>"$TMP/lock.out" 2>"$TMP/lock.err"
rc=$?
[ $rc -eq 0 ] && pass "record offcpu_lock exits 0" || { fail "record offcpu_lock exit $rc"; cat "$TMP/lock.err"; }
"$FIRN" report --folded "$TMP/lock.pb.gz" >"$TMP/lock.folded"
python3 - "$TMP/lock.folded" <<'PY' && pass "lock waits: lock_path;take_lock;..pthread_mutex_lock..;futex_wait_[k] holds most of the threads' off-CPU time" || { fail "lock waits"; cut -c1-300 "$TMP/lock.folded"; }
import sys
lock = total = 0
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if ";start_thread;" not in stack:
        continue
    total += int(n)
    f = stack.split(";")
    if "take_lock" in f and f[f.index("take_lock") - 1] == "lock_path" and \
       any("pthread_mutex_lock" in x for x in f) and "futex_wait_[k]" in f:
        lock += int(n)
print("# lock path: %.1f%% of the threads' off-CPU time" % (100.0 * lock / max(total, 1)))
sys.exit(0 if total and lock > 0.5 * total else 1)
PY
if command -v go >/dev/null; then
	go tool pprof -raw "$TMP/lock.pb.gz" 2>/dev/null >"$TMP/lock.raw"
	python3 - "$TMP/lock.raw" "$TMP/lock.out" <<'PY'
import re, sys
per, cur = {}, None
for line in open(sys.argv[1]):
    m = re.match(r"^ +(\d+): [\d ]+$", line)
    if m:
        cur = int(m.group(1))
        continue
    m = re.search(r"tid:\[(\d+)\]", line)
    if m and cur is not None:
        per[int(m.group(1))] = per.get(int(m.group(1)), 0) + cur
        cur = None
rows = [l.split() for l in open(sys.argv[2]) if l.strip()]
if len(rows) != 4:
    print("FAIL: offcpu_lock printed %d threads, wanted 4" % len(rows))
for tid, wall, cpu in rows:
    want, got = int(wall) - int(cpu), per.get(int(tid), 0)
    # a new thread's first wait for a CPU (woken new, never switched out) is no off-CPU
    # interval firn sees: on a loaded machine up to ~100 ms short, never over
    ok = want > 0 and -(0.05 * want + 0.1e9) <= got - want <= 0.05 * want
    print("%s: thread %s off-CPU %.3f s, wall - CPU %.3f s (%+.1f%%)" % (
        "PASS" if ok else "FAIL", tid, got / 1e9, want / 1e9, 100.0 * (got - want) / max(want, 1)))
PY
fi

# 4. options: --off-cpu-* need -e off-cpu; bad values; --off-cpu-min counts short waits;
# --off-cpu-rate samples and scales.
expect_rc "--off-cpu-min without -e off-cpu exits 2" 2 "$FIRN" record --off-cpu-min 10 -- true
grep -q 'off-cpu-min needs -e off-cpu' "$TMP/err" && pass "... and says why" || fail "message: $(cat "$TMP/err")"
expect_rc "--off-cpu-runnable without -e off-cpu exits 2" 2 "$FIRN" record -e cpu-clock --off-cpu-runnable -- true
expect_rc "--off-cpu-rate 0 exits 2" 2 "$FIRN" record -e off-cpu --off-cpu-rate 0 -- true
expect_rc "--off-cpu-min -1 exits 2" 2 "$FIRN" record -e off-cpu --off-cpu-min -1 -- true
expect_rc "-e off_cpu (a misspelt event) exits 2" 2 "$FIRN" record -e off_cpu -- true
# 150 ms minimum: the 100 ms sleeps are short (counted, not added), the others stay
"$FIRN" record -e off-cpu --off-cpu-min 150000 -o "$TMP/min.pb.gz" -- "$MIX" 2 >/dev/null 2>"$TMP/min.err"
"$FIRN" report --folded "$TMP/min.pb.gz" >"$TMP/min.folded"
short=$(sed -n 's/.* added (.*), \([0-9]*\) under 150000 us.*/\1/p' "$TMP/min.err")
! grep -q ';sleep_short;' "$TMP/min.folded" && grep -q ';sleep_long;' "$TMP/min.folded" && [ "${short:-0}" -ge 2 ] &&
	pass "--off-cpu-min 150000: the 100 ms sleeps are left out and counted ($short short waits)" ||
	{ fail "--off-cpu-min: short=$short"; cat "$TMP/min.err"; }
# 1 in 4 waits sampled, times x4: the threads' total stays near the sum of their wall - CPU
# (~1000 waits, 1 in 4 kept: the estimate's error is ~10 %; 30 % is 3 standard errors)
"$FIRN" record -e off-cpu --off-cpu-runnable --off-cpu-rate 4 -o "$TMP/rate.pb.gz" -- "$LOCK" 4 150 \
	>"$TMP/rate.out" 2>"$TMP/rate.err"
grep -q '; 1 wait in 4 sampled ([0-9]* left out)' "$TMP/rate.err" && pass "--off-cpu-rate 4: the summary says so" || fail "--off-cpu-rate summary: $(cat "$TMP/rate.err")"
got=$("$FIRN" report --folded "$TMP/rate.pb.gz" | awk '/;start_thread;/ { n += $NF } END { print n + 0 }')
want=$(awk '{ n += $2 - $3 } END { print n + 0 }' "$TMP/rate.out")
echo "# --off-cpu-rate 4: threads off the CPU $got ns in the profile, $want ns by their own clocks"
within "$got" "$(python3 -c "print($want * 0.7)")" "$(python3 -c "print($want * 1.3)")" &&
	pass "--off-cpu-rate 4: scaled times estimate the threads' off-CPU time (±30 %)" || fail "--off-cpu-rate 4: $got ns, wanted $want ±30 %"

# 5. a wait still going when the recording ends is added up to the end (the task iterator): a
# command that sleeps 5 s recorded for 0.5 s shows ~0.5 s in nanosleep
"$FIRN" record -e off-cpu -d 0.5 -o "$TMP/end.pb.gz" -- sleep 5 2>"$TMP/end.err"
got=$("$FIRN" report --folded "$TMP/end.pb.gz" | awk '/do_nanosleep_\[k\]/ { n += $NF } END { print n + 0 }')
grep -q '; 1 of them still waiting at the end, added up to it)' "$TMP/end.err" && within "$got" 4e8 7e8 &&
	pass "a wait through the end of the recording is added up to it ($got ns)" || { fail "wait at the end: $got ns"; cat "$TMP/end.err"; }

# 6. -a: every thread's waits, never the idle task's nor firn's own threads' (other firn processes
# of a shared machine are recorded like any other)
"$FIRN" record -a -e off-cpu --call-graph fp -d 1 -o "$TMP/all.pb.gz" 2>"$TMP/all.err" &
fpid=$!
wait $fpid
"$FIRN" report --folded "$TMP/all.pb.gz" >"$TMP/all.folded"
n=$(grep -vc '^#' "$TMP/all.folded")
[ "$n" -gt 0 ] && ! grep -q '^\[idle\];' "$TMP/all.folded" && pass "-a: $n stacks of waits, none of the idle task" ||
	{ fail "-a: $n stacks; idle: $(grep -c '^\[idle\];' "$TMP/all.folded")"; head -3 "$TMP/all.err"; }
if command -v go >/dev/null; then
	! go tool pprof -raw "$TMP/all.pb.gz" 2>/dev/null | grep -q "pid:\[$fpid\]" &&
		go tool pprof -raw "$TMP/all.pb.gz" 2>/dev/null | grep -q "pid:\[" &&
		pass "-a: no wait of firn's own threads (pid $fpid)" || fail "-a: waits of firn itself (pid $fpid) recorded"
fi

# 7. a process stuck before the recording: the waits in progress at the start are taken then (a
# sleepable task iterator) and counted from the start to the end (they never end).
"$STUCK" 30 >"$TMP/stuck.out" &
spid=$!
for _ in $(seq 50); do grep -q '^ready' "$TMP/stuck.out" && break; sleep 0.1; done
sleep 1 # both waits began over a second before the recording
"$FIRN" record -e off-cpu -p "$spid" -d 2 -o "$TMP/stuck.pb.gz" 2>"$TMP/stuck.err"
rc=$?
kill "$spid" 2>/dev/null
wait "$spid" 2>/dev/null
"$FIRN" report --folded "$TMP/stuck.pb.gz" >"$TMP/stuck.folded" 2>/dev/null
# stuck_ns FUNC KFRAME: off-CPU ns of the stacks through FUNC whose kernel part has KFRAME
stuck_ns() { awk -v f=";$1;" -v k=";$2" 'index($0, f) && index($0, k) { n += $NF } END { print n + 0 }' "$TMP/stuck.folded"; }
blocked=$(stuck_ns blocked_here anon_pipe_read_\[k\]) deadlocked=$(stuck_ns deadlock_here futex_wait_\[k\])
echo "# stuck: blocked_here $blocked ns, deadlock_here $deadlocked ns in a 2 s recording"
[ $rc -eq 0 ] && within "$blocked" 1.8e9 2.4e9 &&
	pass "a read begun before the recording: main;blocked_here;..;anon_pipe_read_[k] holds $blocked ns (~2 s, from the start)" ||
	{ fail "blocked_here: $blocked ns (rc $rc)"; cat "$TMP/stuck.err"; cut -c1-300 "$TMP/stuck.folded"; }
grep -q ';thread;deadlock_here;.*pthread_mutex_lock' "$TMP/stuck.folded" && within "$deadlocked" 1.8e9 2.4e9 &&
	pass "a deadlocked thread: thread;deadlock_here;..pthread_mutex_lock..;futex_wait_[k] holds $deadlocked ns (~2 s)" ||
	fail "deadlock_here: $deadlocked ns"
grep -q '; 2 of them still waiting at the end, added up to it)' "$TMP/stuck.err" &&
	grep -q '; 2 already waiting at the start, counted from it (the oldest since [1-9][0-9.]* s before)' "$TMP/stuck.err" &&
	pass "summary: 2 waits already in progress at the start, begun over a second before it" ||
	fail "summary: $(cat "$TMP/stuck.err")"

# 7b. a Python thread waiting when the recording starts: its wait gets its Python functions (the
# start's walk reads another task's memory: they are read at the thread's system call exit,
# where they are still those of the wait). Its main thread sleeps in firn_start_waiter from
# before the recording to within it; a second thread burns CPU (the process is found a Python
# one by then). Before, its clock_nanosleep wait was a raw interpreter stack.
if [ -x /usr/bin/python3.11 ]; then
	cat >"$TMP/startwait.py" <<'PY'
import sys, threading, time
def firn_busy():
    t = time.time()
    while time.time() - t < 6:
        sum(i * i for i in range(1000))
def firn_start_waiter():
    print("ready", flush=True)
    time.sleep(4)
threading.Thread(target=firn_busy).start()
firn_start_waiter()
PY
	/usr/bin/python3.11 "$TMP/startwait.py" >"$TMP/startwait.out" &
	ppid=$!
	for _ in $(seq 50); do grep -q '^ready' "$TMP/startwait.out" && break; sleep 0.1; done
	sleep 0.3
	"$FIRN" record -e off-cpu -p "$ppid" -d 8 -o "$TMP/startwait.pb.gz" 2>"$TMP/startwait.err"
	wait "$ppid" 2>/dev/null
	"$FIRN" report --folded "$TMP/startwait.pb.gz" >"$TMP/startwait.folded" 2>/dev/null
	read -r named raw < <(awk 'index($0, "clock_nanosleep_[k]") {
		if (index($0, ";<module>;firn_start_waiter;")) n += $NF; else r += $NF } END { printf "%.0f %.0f\n", n, r }' \
		"$TMP/startwait.folded")
	check "a Python wait begun before the recording: <module>;firn_start_waiter in its stack ($named ns, $raw ns without)" \
		test "$named" -gt 1000000000 -a "$raw" = 0
	grep -q 'already waiting at the start' "$TMP/startwait.err" || fail "7b: no wait at the start: $(cat "$TMP/startwait.err")"
else
	skip "a Python wait begun before the recording: no /usr/bin/python3.11"
fi
