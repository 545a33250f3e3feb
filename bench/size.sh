#!/usr/bin/env bash
# Output size bench: a 30 s system-wide recording at 99 Hz by firn (pprof, gzip), perf -g and
# perf --call-graph dwarf (perf.data), all three at once over the same background workload; the
# bytes each wrote, and the CPU seconds and peak RSS of each profiler process for the recording
# (firn's own CPU for a 30 s system-wide recording, against perf -g's in the same run: issue 18's
# target, <= 1/3; bench/churn.sh is the same with process churn).
# Prints result lines (see bench/bench_lib.sh). REPS (default 3), SECONDS_REC (default 30);
# QUICK=1: one 3 s recording.
source "$(dirname "$0")/bench_lib.sh"
need_tools
W=$(workdir size)
B=size
REPS=${REPS:-3}
SECS=${SECONDS_REC:-30}
[ -n "$QUICK" ] && REPS=1 SECS=3
HZ=99
CASE="${SECS} s @ $HZ Hz"

emit H "$B" "Output size and profiler CPU: ${SECS} s system-wide recordings, side by side"
for ((i = 0; i < ${#RECORD_THREE_CMDS[@]}; i += 2)); do
	emit C "$B" "$CASE" "${RECORD_THREE_CMDS[i]}" "$(echo "${RECORD_THREE_CMDS[i + 1]}" | sed "s/HZ/$HZ/; s/SECONDS/$SECS/")"
done
emit T "$B" "$CASE" "output bytes" ratio "100 perf -g" ">= 100x smaller than perf -g"
emit T "$B" "$CASE" "output bytes" ratio "3000 perf dwarf" ">= 3000x smaller than perf dwarf"
emit T "$B" "$CASE" "profiler CPU s" ratio "3 perf -g" "<= 1/3 of perf -g's"
emit N "$B" "The three profilers record at the same time (started together, each for ${SECS} s) over the same workload: $SPIN_DESC, plus whatever else runs on this shared machine; each also samples the other two. firn writes gzip-compressed pprof; perf.data is perf's native format (uncompressed; perf 6.1 has no -z here)."
emit N "$B" "'DWARF table build wall s' is the time firn reports (pprof comment unwind.tables, 'built in', a wall-clock sum: on this loaded machine it exceeds the CPU time) for building the CFI tables of every binary the recording met. 'profiler CPU s' is the user+sys time of the profiler process from start to exit (start-up, recording, writing its file; for perf also its build-id pass at the end); the in-kernel sampling work is not in it for any tool."

for ((rep = 1; rep <= REPS; rep++)); do
	say "size: rep $rep/$REPS (${SECS} s)"
	record_three "$W" "$SECS" "$HZ"
	check_three "$W" "$B" "$CASE"
	for t in firn perf-g perf-dwarf; do
		ok=OK_${t//-/_}
		[ -n "${!ok}" ] || continue
		tool=firn
		[ "$t" = perf-g ] && tool="perf -g"
		[ "$t" = perf-dwarf ] && tool="perf dwarf"
		out=$W/$t.data
		[ "$t" = firn ] && out=$W/firn.pb.gz
		ru_read "$W/$t.ru"
		emit S "$B" "$CASE" "$tool" "output bytes" "$(stat -c %s "$out")" bytes
		emit S "$B" "$CASE" "$tool" "profiler CPU s" "$RU_CPU" s
		emit S "$B" "$CASE" "$tool" "profiler peak RSS MB" "$RU_RSS_MB" MB
		if [ "$t" = firn ]; then
			emit S "$B" "$CASE" firn "DWARF table build wall s" "$(table_build_s "$out")" s
		fi
	done
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
