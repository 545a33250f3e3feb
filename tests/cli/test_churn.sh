# Churn during a recording (and an exec, at the end): the churn fixture forks, execs itself and another program (split),
# starts and ends threads, and has children die by SIGKILL, SIGTERM and SIGINT, every round.
# firn must not crash or warn, pass the command's status through, symbolize the processes that
# exited (every work function found, by name, under main or its thread) — most of them while
# the recording goes on, as they end — and its counts must agree: the summary's samples = the
# profile's total, processes >= the ones started.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
ROUNDS=40
# firn and churn (its child: the same niceness) run ahead of whatever else loads the machine: what
# is checked is firn keeping up with its own target's churn, not with other tenants of a shared
# CI host, where a stalled firn once missed 5 % of the snapshots
nice -n -10 "$FIRN" record -F 499 -o "$TMP/churn.pb.gz" -- "$FIX/churn" "$ROUNDS" 20 "$FIX/split" 5 \
	2>"$TMP/err"
rc=$?
check "record exits with churn's status 0 (every child ended as planned)" [ "$rc" -eq 0 ]
if grep -v '^firn: [0-9]* samples, \|^firn: frames: \|^firn: dwarf unwinding: ' "$TMP/err" | grep -q .; then
	fail "record printed more than its summary:"; sed 's/^/    /' "$TMP/err"
else
	pass "record printed only its summary"
fi
read -r samples lost procs < <(sed -nE \
	's/^firn: ([0-9]+) samples, ([0-9]+) lost .*\), ([0-9]+) process(es)?, .*/\1 \2 \3/p' "$TMP/err")
echo "# $samples samples, $lost lost, $procs processes"
check "summary: processes >= $((4 * ROUNDS)) started" [ "${procs:-0}" -ge $((4 * ROUNDS)) ]
# record and report count processes the same way (the pids in the profile)
rprocs=$("$FIRN" report "$TMP/churn.pb.gz" | sed -nE '1s/.*, ([0-9]+) process(es)?.*/\1/p')
check "summary's processes ($procs) = report's (${rprocs:-none})" [ "${procs:-x}" = "${rprocs:-y}" ]

"$FIRN" report --folded "$TMP/churn.pb.gz" >"$TMP/churn.folded"
# processes that end are symbolized (and forgotten) during the recording, not at its end
parked=$(go tool pprof -comments "$TMP/churn.pb.gz" 2>/dev/null |
	sed -n 's/^samples.parked: //p')
echo "# $parked samples symbolized as their processes ended"
check "samples of ended processes symbolized during the recording (${parked:-none} > 0)" \
	[ "${parked:-0}" -gt 0 ]
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/churn.folded")
check "summary samples ($samples) = the profile's total ($total)" [ "${samples:-x}" = "$total" ]

# samples COMM REGEX: the count of samples of processes COMM whose stack matches REGEX
count() {
	awk -v comm="$1" -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s) }
		index(s, comm ";") == 1 && s ~ re { c += n } END { print c + 0 }' "$TMP/churn.folded"
}
for f in churn_parent churn_child churn_victim; do
	n=$(count churn ";main;([^;]*;)*$f;burn($|;)")
	check "$f: $n samples under main (>= 20)" [ "$n" -ge 20 ]
done
n=$(count churn ";churn_thread;burn($|;)")
check "churn_thread (threads that come and go): $n samples (>= 20)" [ "$n" -ge 20 ]
n=$(count exe ";main;churn_exec;burn($|;)")
check "churn_exec (an exec of itself, exited): $n samples under main (>= 20)" [ "$n" -ge 20 ]
n=$(count split ";main;a;b($|;)")
check "split (another program, exec'd, exited): $n samples of main;a;b (>= 3)" [ "$n" -ge 3 ]
unknown=$(awk '/\[unknown\]|;0x[0-9a-f]+($|;| )/ { c += $NF } END { print c + 0 }' \
	"$TMP/churn.folded")
check "unresolved stacks: $unknown of $total (< 5 %)" [ $((unknown * 20)) -lt "$total" ]
if pgrep -f -- "$FIX/churn" >/dev/null; then fail "churn processes left running"; else
	pass "no churn process left"; fi

# no temporary file can be made (-o - parks in $TMPDIR): the samples of ended processes stay in
# memory, with a warning, and none is lost
TMPDIR=/nonexistent "$FIRN" record -F 499 -o - -- "$FIX/churn" 20 20 "$FIX/split" 5 \
	>"$TMP/nospill.pb.gz" 2>"$TMP/nospill.err"
rc=$?
check "record without a usable \$TMPDIR exits 0" [ "$rc" -eq 0 ]
check "it warns that samples stay in memory" \
	grep -q "^firn: warning: cannot park samples in a temporary file: .*; keeping them in memory$" \
	"$TMP/nospill.err"
samples=$(sed -nE 's/^firn: ([0-9]+) samples, .*/\1/p' "$TMP/nospill.err")
total=$("$FIRN" report --folded "$TMP/nospill.pb.gz" | awk '{ s += $NF } END { print s + 0 }')
check "and the profile has every sample ($total of ${samples:-?})" [ "${samples:-x}" = "$total" ]

# a live process's entries past FIRN_MAX_ENTRIES are parked too, and merged back: split (60 %
# main→a→b, 40 % main→c) lives the whole recording
FIRN_MAX_ENTRIES=1 "$FIRN" record -F 999 -o "$TMP/live.pb.gz" -- "$FIX/split" 2500 2>"$TMP/live.err"
check "record with FIRN_MAX_ENTRIES=1 exits 0" [ $? -eq 0 ]
parked=$(go tool pprof -comments "$TMP/live.pb.gz" 2>/dev/null | sed -n 's/^samples.parked: //p')
check "a live process's entries were parked (${parked:-none} > 0)" [ "${parked:-0}" -gt 0 ]
samples=$(sed -nE 's/^firn: ([0-9]+) samples, .*/\1/p' "$TMP/live.err")
"$FIRN" report --folded "$TMP/live.pb.gz" >"$TMP/live.folded"
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/live.folded")
check "every sample is in the profile ($total of ${samples:-?})" [ "${samples:-x}" = "$total" ]
b=$(awk '/;main;a;b($|;| )/ { s += $NF } END { print s + 0 }' "$TMP/live.folded")
c=$(awk '/;main;c($|;| )/ { s += $NF } END { print s + 0 }' "$TMP/live.folded")
echo "# parked $parked, b $b, c $c of $total"
check "shares survive parking: main→a→b $((100 * b / (total ? total : 1)))% is 60±3" \
	[ $((100 * b)) -ge $((57 * total)) -a $((100 * b)) -le $((63 * total)) ]
check "and main→c $((100 * c / (total ? total : 1)))% is 40±3" \
	[ $((100 * c)) -ge $((37 * total)) -a $((100 * c)) -le $((43 * total)) ]
FIRN_MAX_ENTRIES=lots "$FIRN" record -o "$TMP/x.pb.gz" -- true 2>"$TMP/err"
check "FIRN_MAX_ENTRIES=lots: exit 1" [ $? -eq 1 ]
check "with a message naming it" grep -q "^firn: invalid FIRN_MAX_ENTRIES 'lots'" "$TMP/err"

# exec: execer burns 800 ms of CPU in pre_exec_burn, then execs split in the same process; the
# samples from before the exec keep the old image's names (they are symbolized before the
# process's snapshot changes)
"$FIRN" record -F 999 -o "$TMP/exec.pb.gz" -- "$FIX/execer" 800 "$FIX/split" 150 2>"$TMP/exec.err"
check "record of a process that execs exits 0" [ $? -eq 0 ]
"$FIRN" report --folded "$TMP/exec.pb.gz" >"$TMP/exec.folded"
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/exec.folded")
pre=$(awk '/;main;pre_exec_burn($|;| )/ { s += $NF } END { print s + 0 }' "$TMP/exec.folded")
post=$(awk '/;main;(a;b|c)($|;| )/ { s += $NF } END { print s + 0 }' "$TMP/exec.folded")
unknown=$(awk '/\[unknown\]/ { s += $NF } END { print s + 0 }' "$TMP/exec.folded")
echo "# exec: $pre before (pre_exec_burn), $post after (split), $unknown unknown, of $total"
check "samples before the exec are named for the old image ($pre of $total >= 60 %)" \
	[ $((100 * pre)) -ge $((60 * total)) ]
check "samples after it for the new one ($post >= 15 %)" [ $((100 * post)) -ge $((15 * total)) ]
check "few unresolved ($unknown < 5 %)" [ $((100 * unknown)) -lt $((5 * total)) ]

# a process sampled before its exec whose new program ends unsampled (execer's 20 ms, then
# true) is still retired as it ends: firn let go of nothing of the 12 before (it kept their
# snapshots and files to the end; 2-5 retired, 7-12 held)
"$FIRN" -v record -F 499 -o "$TMP/execd.pb.gz" -- sh -c \
	"for i in 1 2 3 4 5 6 7 8 9 10 11 12; do $FIX/execer 20 /bin/true; done; sleep 2" \
	2>"$TMP/execd.err"
check "record of 12 exec'd programs that end unsampled exits 0" [ $? -eq 0 ]
read -r snaps retired < <(sed -nE \
	's/^firn: held at the end: .* ([0-9]+) snapshots, .*; ([0-9]+) processes retired; [0-9]+ drains$/\1 \2/p' \
	"$TMP/execd.err")
echo "# held at the end: ${snaps:-?} snapshots; ${retired:-?} processes retired"
check "every one retired as it ended (${retired:-none} >= 12)" [ "${retired:-0}" -ge 12 ]
check "none of them held to the end (${snaps:-none} snapshots <= 3)" [ "${snaps:-99}" -le 3 ]

# the drains take the kernel's stack and thread-name maps in batches (BPF_MAP_LOOKUP_AND_DELETE_BATCH):
# a lookup and a delete of each stack, and three calls for each name, were most of firn's system
# calls under churn (the old firn: one or more per sample here; a big stack, Python's, is still
# looked up alone: none in this recording)
if command -v strace >/dev/null; then
	strace -f -qq -e trace=bpf -o "$TMP/bpf.trace" "$FIRN" record -F 499 -o "$TMP/b.pb.gz" -- \
		"$FIX/churn" 10 20 "$FIX/split" 5 2>"$TMP/b.err"
	check "record of churn under strace exits 0" [ $? -eq 0 ]
	samples=$(sed -nE 's/^firn: ([0-9]+) samples, .*/\1/p' "$TMP/b.err")
	read -r single batch < <(awk '
		/BPF_MAP_CREATE/ && /map_name="(stacks|comms)"/ { fd[$NF] = 1; next }
		match($0, /map_fd=[0-9]+/) { f = substr($0, RSTART + 7, RLENGTH - 7); if (!(f in fd)) next
			if (/BPF_MAP_(LOOKUP|DELETE)_ELEM|BPF_MAP_GET_NEXT_KEY/) s++
			if (/BPF_MAP_LOOKUP_AND_DELETE_BATCH/) b++ }
		END { print s + 0, b + 0 }' "$TMP/bpf.trace")
	echo "# stack and name maps: $single calls on one entry, $batch batches; ${samples:-?} samples"
	check "the stack and name maps drained in batches ($batch > 0)" [ "${batch:-0}" -gt 0 ]
	check "and not entry by entry ($single calls on one entry < 10)" [ "${single:-99}" -lt 10 ]

	# Go's release check opens a process's executable only when the file is new to it: the
	# executables without a Go release are remembered by identity (a stat of /proc/PID/exe), so
	# a churn of processes of two programs opens none of them each time (the old firn: an open
	# and reads of the file at each process's first sample, 452 in 10 s beside bench/churn.sh)
	strace -f -qq -e trace=open,openat,stat,newfstatat,statx -o "$TMP/exe.trace" \
		"$FIRN" record -F 499 -o "$TMP/e.pb.gz" -- "$FIX/churn" 10 20 "$FIX/split" 5 \
		2>"$TMP/e.err"
	check "record of churn under strace (exe) exits 0" [ $? -eq 0 ]
	read -r opens stats < <(awk '/"\/proc\/[0-9]+\/exe"/ { if (/open/) o++; else s++ }
		END { print o + 0, s + 0 }' "$TMP/exe.trace")
	echo "# /proc/PID/exe: $opens opens, $stats stats"
	check "executables' identities looked at ($stats stats > 10)" [ "${stats:-0}" -gt 10 ]
	check "each program's executable opened once ($opens opens <= 4)" [ "${opens:-99}" -le 4 ]
else
	skip "strace is not installed: the drains' system calls, the executables' opens"
fi

# system-wide, a program exec'd by a process never sampled (a shell loop's child) has its code
# and loader noted in the kernel at exec, so its first samples' one VMA lookup (the kernel allows
# one a sample) finds libc and they unwind through it to _start: a loop of 15 ms programs at
# 99 Hz, ~1.5 samples each (the old firn: 76-79 % of their qsort samples from _start, the rest
# cut after the executable's comparator, "no mapping")
( end=$((SECONDS + 8)); while [ $SECONDS -lt $end ]; do "$FIX/shortlived" 15; done ) &
loop=$!
"$FIRN" record -a -F 99 -d 6 -o "$TMP/sw.pb.gz" 2>"$TMP/sw.err"
rc=$?
wait "$loop"
check "record -a over a loop of short programs exits 0" [ $rc -eq 0 ]
read -r all whole < <("$FIRN" report --folded "$TMP/sw.pb.gz" | awk '/^shortlived;/ &&
	/(;|^)(msort_with_tmp|cmp_ints|sort_round|__qsort_r)(;| )/ { n += $NF
	if (/^shortlived;_start;/) s += $NF } END { print n + 0, s + 0 }')
echo "# short programs' qsort samples: $whole of $all from _start"
check "their qsort samples unwind to _start ($whole of $all, >= 98 %; >= 100 samples)" \
	[ "$all" -ge 100 -a $((whole * 100)) -ge $((all * 98)) ]

# and those first samples' ask to describe the mappings the kernel found carries no address of
# code without a table: no JIT to look for, so no perf map is looked up (the old firn opened
# /proc/PID/root and read /proc/PID/status for ~every process of the loop, 479 in 8 s)
if command -v strace >/dev/null; then
	( end=$((SECONDS + 6)); while [ $SECONDS -lt $end ]; do "$FIX/shortlived" 15; done ) &
	loop=$!
	strace -f -qq -e trace=openat,openat2 -o "$TMP/sw.trace" "$FIRN" record -a -F 99 -d 5 \
		-o "$TMP/sw2.pb.gz" 2>"$TMP/sw2.err"
	rc=$?
	wait "$loop"
	check "record -a over the loop under strace exits 0" [ $rc -eq 0 ]
	procs=$(sed -nE 's/^firn: [0-9]+ samples, .*, ([0-9]+) processes.*/\1/p' "$TMP/sw2.err")
	status=$(grep -c 'open.*"/proc/[0-9]*/status"' "$TMP/sw.trace")
	echo "# /proc/PID/status opened $status times for ${procs:-?} processes"
	check "perf maps not looked for per process ($status status opens, ${procs:-?} processes)" \
		[ "${procs:-0}" -ge 40 -a $((status * 4)) -lt "${procs:-0}" ]
else
	skip "strace is not installed: the perf map's look under -a"
fi
