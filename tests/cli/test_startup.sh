# The fixed cost of a recording (`record -- true`), counted in system calls under strace so that
# a loaded machine cannot blur it: the unwind rows of what firn loads ahead (libc, ld.so, the
# command) are copied into the mapped BPF array, with no BPF_MAP_UPDATE_BATCH (which copied them
# one by one: 6 ms for libc's 28k rows); at the end, the two drains wait for in-flight programs
# once, 2 ms at most (they slept 2 ms each).
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
# the sleeps of the end: after the command is reaped (its SIGCHLD)
slept=$(awk '/SIGCHLD/ { end = 1 } end && /nanosleep\(/ {
	match($0, /tv_sec=[0-9]+, tv_nsec=[0-9]+/); split(substr($0, RSTART, RLENGTH), v, /[=,]/)
	ns += v[2] * 1e9 + v[4] } END { printf "%d", ns / 1000 }' "$TMP/trace")
check "the end waits for in-flight programs once: ${slept} us slept (<= 2000)" \
	[ "$slept" -le 2000 ]
