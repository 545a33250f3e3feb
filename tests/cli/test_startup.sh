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
# (batches into the rows chunks, whose descriptors the chunks' BPF_MAP_CREATE returned; a
# process's mappings go to the pool in one batch)
batches=$(awk '/BPF_MAP_CREATE/ && /map_name="unwind_rows"/ { sub(/.*= /, ""); rows[$0] = 1 }
	/BPF_MAP_UPDATE_BATCH/ { match($0, /map_fd=[0-9]+/); if (substr($0, RSTART + 7, RLENGTH - 7) in rows) n++ }
	END { print n + 0 }' "$TMP/trace")
dwarf=$(grep -c 'map_name="unwind_rows".*BPF_F_MMAPABLE\|BPF_F_MMAPABLE.*map_name="unwind_rows"' \
	"$TMP/trace")
# (rows go in 512 KiB chunks created as tables load: libc, ld.so and true fill one)
check "the unwind rows are one mappable chunk for record -- true ($dwarf)" [ "$dwarf" -eq 1 ]
check "no BPF_MAP_UPDATE_BATCH: rows are copied through the mapping ($batches calls)" \
	[ "$batches" -eq 0 ]

# the thread names are drained in batches (BPF_MAP_LOOKUP_AND_DELETE_BATCH), not a thread at a
# time: get_next_key, lookup and delete for each at every drain were ~100 system calls a second
# of a system-wide recording
walk=$(awk '/BPF_MAP_CREATE/ && /map_name="comms"/ && / = [0-9]+$/ { fd = $NF }
	fd != "" && /BPF_MAP_(GET_NEXT_KEY|LOOKUP_ELEM|DELETE_ELEM)/ && $0 ~ ("map_fd=" fd "[,}]") { n++ }
	END { print n + 0 }' "$TMP/trace")
named=$(awk '/BPF_MAP_CREATE/ && /map_name="comms"/' "$TMP/trace" | wc -l)
check "the thread names are drained in batches ($walk entry-by-entry calls on comms, $named made)" \
	[ "$named" -eq 1 -a "$walk" -eq 0 ]

# the stacks are drained in batches too, before the counts that name them: a lookup of each new
# stack and a delete or two of each named one were ~300 system calls a second system-wide
strace -f -qq -e trace=bpf -o "$TMP/trace" "$FIRN" record -q -F 999 -o "$TMP/s.pb.gz" -- sh -c \
	'i=0; while [ $i -lt 200000 ]; do i=$((i + 1)); done' 2>"$TMP/err"
check "a busy command's recording under strace exits 0" [ $? -eq 0 ]
walk=$(awk '/BPF_MAP_CREATE/ && /map_name="(stacks|big_stacks)"/ && / = [0-9]+$/ { fd[$NF] = 1 }
	/BPF_MAP_(LOOKUP_ELEM|DELETE_ELEM)/ { match($0, /map_fd=[0-9]+/)
		if (substr($0, RSTART + 7, RLENGTH - 7) in fd) n++ }
	END { print n + 0 }' "$TMP/trace")
samples=$("$FIRN" report --folded "$TMP/s.pb.gz" | awk '{ s += $NF } END { print s + 0 }')
check "its stacks are drained in batches ($walk lookups and deletes one at a time, $samples samples)" \
	[ "$walk" -eq 0 -a "$samples" -gt 50 ]

# The rows array's first chunk goes in while the programs are verified, not after: each update
# of an array of maps from user space waits an RCU grace period (8-20 ms here), which lay on
# the start-up's path (lib/source/rowsfirst.h). Counted: the updates of that array (its
# descriptors: the one created and libbpf's dup3 of it) begun before on_sample's load returned,
# and after.
trace bpf,dup3
check "record -- true under strace exits 0 (bpf and dup3 traced)" [ $? -eq 0 ]
read -r early late < <(awk '
	/BPF_MAP_CREATE/ && /BPF_MAP_TYPE_ARRAY_OF_MAPS/ && /map_name="unwind_rows"/ && / = [0-9]+$/ {
		rows[$NF] = 1 }
	/dup3\(/ { match($0, /dup3\([0-9]+, [0-9]+/); split(substr($0, RSTART + 5, RLENGTH - 5), d, /, /)
		if (d[1] in rows) rows[d[2]] = 1 }
	/prog_name="on_sample"/ { if (/unfinished/) waiting = $1; else loaded = 1 }
	waiting != "" && $1 == waiting && /<\.\.\. bpf resumed>/ { loaded = 1; waiting = "" }
	/BPF_MAP_UPDATE_(ELEM|BATCH)/ { match($0, /map_fd=[0-9]+/)
		if (substr($0, RSTART + 7, RLENGTH - 7) in rows) { if (loaded) late++; else early++ } }
	END { print early + 0, late + 0 }' "$TMP/trace")
check "the rows array's first chunk goes in during the programs' load ($early updates before on_sample was loaded, $late after)" \
	[ "$early" -ge 1 -a "$late" -eq 0 ]
# uprobe mode's per-thread allocation maps (LRU hashes, preallocated: 16384 and 4096 entries)
# take one entry when its programs are not loaded
big=$(awk '/BPF_MAP_CREATE/ && /map_name="alloc_(left|pendin)/ {
	match($0, /max_entries=[0-9]+/); if (substr($0, RSTART + 12, RLENGTH - 12) + 0 > 1) n++ }
	END { print n + 0 }' "$TMP/trace")
check "without -e alloc its uprobe maps take one entry ($big of them more)" [ "$big" -eq 0 ]

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
# (one settle of 2 ms after the stop; a periodic drain due in the moment between the command's
# exit and the stop settles once more: CI slept 3,961 us so, a loaded machine's timing)
check "the end of an off-CPU recording waits once after the stop: ${slept} us slept (<= 4000)" \
	[ "$slept" -le 4000 ]

# BPF maps sized to the recording, not preallocated to their maximum (78.7 MiB of kernel memory
# before: a 16 MiB stacks hash, a 32 MiB rows array, 6 MiB of Python code ids...): -v says
# how much, the memlock of every map firn holds. 24 MiB: the walkers' id tables are
# preallocated LRU maps (V8's functions and Java's methods 3 MiB each, Go's label sets 1.4 MiB),
# there in every recording where their runtime is on (21.8 MiB measured with all of them)
mib_at_most() { [ -n "$1" ] && awk -v m="$1" -v l="$2" 'BEGIN { exit !(m <= l) }'; }
"$FIRN" -v record -o "$TMP/t.pb.gz" -- true 2>"$TMP/err"
mib=$(sed -n 's/^firn: BPF maps: [0-9]*, \([0-9.]*\) MiB of kernel memory$/\1/p' "$TMP/err")
check "record -v -- true reports its BPF maps' memory: ${mib:-none} MiB (<= 24)" mib_at_most "$mib" 24
"$FIRN" -v record --call-graph fp -o "$TMP/t.pb.gz" -- true 2>"$TMP/err"
fpmib=$(sed -n 's/^firn: BPF maps: [0-9]*, \([0-9.]*\) MiB of kernel memory$/\1/p' "$TMP/err")
# the DWARF unwinder's rows, mappings and process tables are about 3 MiB (5 MiB before the
# mappings the kernel finds were kept in a hash allocated as processes need it: 22.0 -> 19.8
# MiB, fp 16.9 MiB both); with frame pointers they take one entry each
check "with frame pointers the DWARF unwinder's maps take no memory: ${fpmib:-none} MiB, at least 2.5 less than ${mib:-none}" \
	mib_at_most "$fpmib" "$(awk -v m="${mib:-0}" 'BEGIN { print m - 2.5 }')"

# libcurl is opened by the first push (lib/record/curlload.h), not linked: linked, the dynamic
# loader opened and relocated it and its ~30 libraries (TLS, Kerberos, LDAP...) at every firn
# command's start, 5-7 ms of CPU of a 0.06 s record -- true
trace openat
check "record -- true under strace exits 0 (opens traced)" [ $? -eq 0 ]
libs=$(grep -c 'openat(.*/lib[a-z0-9_-]*\.so[^"]*", .* = [0-9]' "$TMP/trace")
libcurl=$(grep -c 'openat(.*/libcurl[^"]*", .* = [0-9]' "$TMP/trace")
check "record -- true opens no libcurl ($libcurl times; $libs shared objects opened)" \
	[ "$libcurl" -eq 0 -a "$libs" -gt 0 ]
# the BPF maps' memory is counted only for -v's summary line (below): an fdinfo file read per
# descriptor (89 here) at the end of every recording
fdinfo=$(grep -c 'openat(.*/fdinfo/' "$TMP/trace")
check "record -q -- true reads no fdinfo file ($fdinfo)" [ "$fdinfo" -eq 0 ]

# sampler_stop closed each cpu-clock event again after its perf link had closed it (EBADF, or
# another thread's file when its number was taken meanwhile)
trace close
check "record -- true under strace exits 0 (closes traced)" [ $? -eq 0 ]
ebadf=$(grep -c 'close(.*EBADF' "$TMP/trace")
check "no file descriptor is closed twice ($ebadf EBADF)" [ "$ebadf" -eq 0 ]

# Python frames: the Python unwinder's program (on_sample_python, tail-called by the cpu-clock
# program) is verified only for a recording that may need it from its start (a Python command,
# -p, -a); for another command it is loaded once a Python process shows up and put in the
# unwinders array: the cpu-clock program is the same either way (nothing reloaded, re-attached).
# prog_bytes PID NAME: the translated size of program NAME that firn PID holds ("" if none);
# one read of every fdinfo and one bpftool call (firn holds ~80 descriptors: a tool started per
# descriptor took seconds on a loaded machine, past the end of the recording)
prog_bytes() {
	local ids
	ids=$(grep -hs '^prog_id:' /proc/"$1"/fdinfo/* | awk '{ printf "%s%s", sep, $2; sep = "," }')
	[ -n "$ids" ] || return 0
	bpftool prog show --json 2>/dev/null | python3 -c '
import json, sys
ids = {int(i) for i in sys.argv[2].split(",")}
sizes = [p["bytes_xlated"] for p in json.load(sys.stdin)
         if p.get("id") in ids and p.get("name") in (sys.argv[1], sys.argv[1][:15])]
if sizes: print(max(sizes))' "$2" "$ids"
}
# sample_bytes CMD...: records CMD (which runs 3 s) in the background, prints the sizes of
# on_sample and on_sample_python (0: not loaded while the recording ran)
sample_bytes() {
	"$FIRN" record -q -o "$TMP/bytes.pb.gz" -- "$@" 2>>"$TMP/err" &
	local pid=$! n bytes="" py=""
	for n in $(seq 100); do
		bytes=$(prog_bytes "$pid" on_sample)
		[ -n "$bytes" ] && break
		sleep 0.1
	done
	# the Python program, where there is one, may come a moment later: looked for until the
	# recording ends (a loaded machine takes seconds), not for a fixed while
	while [ -z "$py" ] && kill -0 "$pid" 2>/dev/null; do
		py=$(prog_bytes "$pid" on_sample_python)
		[ -n "$py" ] || sleep 0.2
	done
	wait "$pid"
	echo "${bytes:-0} ${py:-0}"
}
if command -v bpftool >/dev/null && [ -x /usr/bin/python3.11 ]; then
	read -r plain plain_py <<<"$(sample_bytes sleep 3)"
	read -r py py_py <<<"$(sample_bytes /usr/bin/python3.11 -c 'import time; time.sleep(3)')"
	check "the Python unwinder is loaded only for a Python command (sleep: $plain_py bytes, python3.11: $py_py)" \
		[ "$plain_py" -eq 0 -a "$py_py" -gt 0 ]
	check "the cpu-clock program is the same with or without it ($plain, $py bytes)" \
		[ "$plain" -gt 0 -a "$plain" -eq "$py" ]
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
