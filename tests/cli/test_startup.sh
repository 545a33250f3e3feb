# The fixed cost of a recording (`record -- true`), counted in system calls under strace so that
# a loaded machine cannot blur it: the unwind rows of what firn loads ahead (libc, ld.so, the
# command) are copied into the mapped BPF array, with no BPF_MAP_UPDATE_BATCH (which copied them
# one by one: 6 ms for libc's 28k rows); at the end, the two drains wait for in-flight programs
# once, 2 ms at most (they slept 2 ms each), and not at all when only cpu-clock events were
# sampled (disabling a perf event returns once its handler is done).
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
if ! command -v strace >/dev/null; then skip "strace is not installed"; exit 0; fi

# trace WHAT: `record -q -- true` under strace -f -e trace=WHAT, its trace in $TMP/trace
trace() {
	strace -f -qq -e trace="$1" -o "$TMP/trace" "$FIRN" record -q -o "$TMP/t.pb.gz" -- true \
		2>"$TMP/err"
}

trace bpf
check "record -- true under strace exits 0" [ $? -eq 0 ]
batches=$(grep -c 'BPF_MAP_UPDATE_BATCH' "$TMP/trace")
dwarf=$(grep -c 'map_name="unwind_rows".*BPF_F_MMAPABLE\|BPF_F_MMAPABLE.*map_name="unwind_rows"' \
	"$TMP/trace")
check "the unwind rows array is created mappable ($dwarf)" [ "$dwarf" -eq 1 ]
check "no BPF_MAP_UPDATE_BATCH: rows are copied through the mapping ($batches calls)" \
	[ "$batches" -eq 0 ]

trace clock_nanosleep,nanosleep
check "record -- true under strace exits 0 (sleeps traced)" [ $? -eq 0 ]
# slept_at_end: the microseconds slept after the command is reaped (its SIGCHLD)
slept_at_end() {
	awk '/SIGCHLD/ { end = 1 } end && /nanosleep\(/ {
		match($0, /tv_sec=[0-9]+, tv_nsec=[0-9]+/); split(substr($0, RSTART, RLENGTH), v, /[=,]/)
		ns += v[2] * 1e9 + v[4] } END { printf "%d", ns / 1000 }' "$TMP/trace"
}
slept=$(slept_at_end)
check "the end of a cpu-clock recording does not wait for in-flight programs: ${slept} us slept" \
	[ "$slept" -eq 0 ]
strace -f -qq -e trace=clock_nanosleep,nanosleep -o "$TMP/trace" "$FIRN" record -q -e off-cpu \
	-o "$TMP/t.pb.gz" -- true 2>"$TMP/err"
slept=$(slept_at_end)
check "the end of an off-CPU recording waits once at most: ${slept} us slept (<= 2000)" \
	[ "$slept" -le 2000 ]

# sampler_stop closed each cpu-clock event again after its perf link had closed it (EBADF, or
# another thread's file when its number was taken meanwhile)
trace close
check "record -- true under strace exits 0 (closes traced)" [ $? -eq 0 ]
ebadf=$(grep -c 'close(.*EBADF' "$TMP/trace")
check "no file descriptor is closed twice ($ebadf EBADF)" [ "$ebadf" -eq 0 ]

# Python frames: the cpu-clock program that walks them is verified only for a recording that
# may need them from its start (a Python command, -p, -a); for another command it is loaded
# once a Python process shows up (the verifier's work on the program without them: ~35 ms less).
# on_sample_bytes PID: the translated size of the cpu-clock program firn PID holds ("" if none)
on_sample_bytes() {
	local f id
	for f in /proc/"$1"/fdinfo/*; do
		id=$(awk '$1 == "prog_id:" { print $2 }' "$f" 2>/dev/null)
		[ -n "$id" ] || continue
		bpftool prog show id "$id" --json 2>/dev/null | python3 -c '
import json, sys
p = json.load(sys.stdin)
if p.get("name") == "on_sample": print(p["bytes_xlated"])'
	done | sort -n | tail -1
}
# sample_bytes CMD...: records CMD (which runs 3 s) in the background, prints on_sample_bytes
sample_bytes() {
	"$FIRN" record -q -o "$TMP/bytes.pb.gz" -- "$@" 2>>"$TMP/err" &
	local pid=$! n bytes=""
	for n in $(seq 100); do
		bytes=$(on_sample_bytes "$pid")
		[ -n "$bytes" ] && break
		sleep 0.1
	done
	wait "$pid"
	echo "$bytes"
}
if command -v bpftool >/dev/null && [ -x /usr/bin/python3.11 ]; then
	plain=$(sample_bytes sleep 3)
	py=$(sample_bytes /usr/bin/python3.11 -c 'import time; time.sleep(3)')
	check "the cpu-clock program walks Python frames only for a Python command ($plain < $py bytes)" \
		[ "${plain:-0}" -gt 0 -a "${py:-0}" -gt "${plain:-0}" ]
else
	skip "bpftool or /usr/bin/python3.11 missing: the programs' sizes are not compared"
fi
if [ -x /usr/bin/python3.11 ]; then
	"$FIRN" record -F 499 -o "$TMP/late.pb.gz" -- bash -c \
		"/usr/bin/python3.11 '$ROOT/tests/fixtures/pywork.py' pr 2 >/dev/null" 2>"$TMP/err"
	check "record of a shell that starts python3.11 exits 0" [ $? -eq 0 ]
	"$FIRN" report --folded "$TMP/late.pb.gz" >"$TMP/late.folded"
	all=$(awk '/^python3.11;/ { c += $NF } END { print c + 0 }' "$TMP/late.folded")
	named=$(awk '/^python3.11;.*;<module>;/ { c += $NF } END { print c + 0 }' "$TMP/late.folded")
	# (the samples before the program is in place, and the interpreter's own start, have none)
	check "Python frames once python3.11 shows up: $named of $all samples under <module> (>= 80 %)" \
		[ "$all" -ge 100 -a $((named * 100)) -ge $((all * 80)) ]
else
	skip "/usr/bin/python3.11 missing: no Python started by a shell"
fi
