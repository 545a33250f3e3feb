#!/usr/bin/env bash
# Process churn bench: a 30 s system-wide recording at 99 Hz while a loop starts short programs
# (tests/fixtures/shortlived, 15 ms of qsort through libc, then exit; about 30 a second), by firn
# (its default --call-graph auto, and --call-graph fp) and perf record -a -g side by side, at once,
# over the same loop. Reports each profiler process's CPU seconds — what following processes
# costs: firn learns them from the kernel's side-band records (lib/proc/procevents.h) as perf does —
# and, for firn, the share of the loop's samples with an [unknown] frame. The target (issues 14 and
# 18): firn's CPU <= 1/3 of perf -g's in the same run, over 30 s as in bench/size.sh (no churn).
# Prints result lines (see bench/bench_lib.sh). REPS (default 3), SECONDS_REC (default 30);
# QUICK=1: one 5 s recording.
source "$(dirname "$0")/bench_lib.sh"
need_tools
W=$(workdir churn)
B=churn
REPS=${REPS:-3}
SECS=${SECONDS_REC:-30}
[ -n "$QUICK" ] && REPS=1 SECS=5
HZ=99
SHORT=$FIX/shortlived
[ -x "$SHORT" ] || die "no fixture '$SHORT' (make fixtures)"

# churn_start / churn_stop: the loop of short programs (each run once more after SECS + 2 s).
churn_start() {
	(
		end=$((SECONDS + SECS + 2))
		while [ $SECONDS -lt $end ]; do "$SHORT" 15; done
	) &
	CHURN_PID=$!
}
churn_stop() {
	kill "$CHURN_PID" 2>/dev/null
	wait "$CHURN_PID" 2>/dev/null
}

# unknown_pct PROFILE: the share of shortlived's samples with an [unknown] frame, in %.
unknown_pct() {
	"$FIRN" report --folded "$1" 2>/dev/null | awk '/^shortlived;/ { t += $NF;
		if (/\[unknown\]|;0x[0-9a-f]+($|;| )/) u += $NF }
		END { if (t) printf "%.2f\n", 100 * u / t }'
}

# whole_pct PROFILE: the share of shortlived's qsort samples (the work: libc's sort calling the
# program's comparator) whose stack goes back to _start, in % (a stack cut short is not [unknown]).
whole_pct() {
	"$FIRN" report --folded "$1" 2>/dev/null | awk '/^shortlived;/ &&
		/(;|^)(msort_with_tmp|cmp_ints|sort_round|__qsort_r)(;| )/ { t += $NF
		if (/^shortlived;_start;/) w += $NF } END { if (t) printf "%.2f\n", 100 * w / t }'
}

# one_run CG: firn (with --call-graph CG) and perf -g side by side over the loop.
one_run() {
	local cg=$1
	rm -f "$W"/firn.pb.gz "$W"/perf-g.data*
	churn_start
	sleep 0.5
	bg_start firn "$W" "$FIRN" record -a -F "$HZ" --call-graph "$cg" -d "$SECS" -o "$W/firn.pb.gz"
	bg_start perf-g "$W" "$PERF" record -a -g -F "$HZ" -q -o "$W/perf-g.data" -- sleep "$SECS"
	bg_wait firn
	bg_wait perf-g
	churn_stop
}

emit H "$B" "Process churn: ${SECS} s system-wide recordings while a loop starts short programs, side by side"
for cg in auto fp; do
	c="churn, --call-graph $cg"
	emit C "$B" "$c" firn "firn record -a -F $HZ --call-graph $cg -d $SECS -o OUT & perf record -a -g ... (at once)"
	emit C "$B" "$c" "perf -g" "perf record -a -g -F $HZ -o OUT -- sleep $SECS"
	emit T "$B" "$c" "profiler CPU s" ratio "3 perf -g" "<= 1/3 of perf -g's"
done
emit N "$B" "The loop runs $BUILD/fixtures/shortlived 15 (tests/fixtures/shortlived.c: 15 ms of CPU, qsort through libc) again and again; firn and perf -g start together and record for ${SECS} s at once, each also sampling the other. 'profiler CPU s' is the profiler process's user+sys time from start to exit (start-up, recording, writing its file; perf's includes its build-id pass). Before the side-band process events firn read /proc/PID/maps for every process it sampled, twice, and opened and stat-ed each mapped file. With --call-graph fp the [unknown] frames were not missing mappings: code without frame pointers (ld.so's start-up, libc) leaves rbp holding data, and the walk took one more frame from it (2.4-2.8 %); the BPF walk now drops an outermost frame that does not follow a call instruction."

for ((rep = 1; rep <= REPS; rep++)); do
	for cg in auto fp; do
		c="churn, --call-graph $cg"
		say "churn: rep $rep/$REPS, $cg (${SECS} s)"
		one_run "$cg"
		ru_read "$W/firn.ru"
		pct=$(unknown_pct "$W/firn.pb.gz")
		if [ "$RU_RC" -ne 0 ] || [ -z "$pct" ]; then
			emit V "$B" "$c" firn FAIL "exit $RU_RC; no samples of shortlived; $(tail -1 "$W/firn.err")"
			continue
		fi
		emit V "$B" "$c" firn ok "$(head -1 "$W/firn.err" | sed 's/^firn: //; s/, wrote.*//')"
		emit S "$B" "$c" firn "profiler CPU s" "$RU_CPU" s
		emit S "$B" "$c" firn "[unknown] % of the loop's samples" "$pct" %
		[ "$cg" = auto ] && # (frame pointers stop in libc, which has none: DWARF's figure)
			emit S "$B" "$c" firn "% of the loop's qsort samples from _start" "$(whole_pct "$W/firn.pb.gz")" %
		ru_read "$W/perf-g.ru"
		if [ "$RU_RC" -ne 0 ]; then
			emit V "$B" "$c" "perf -g" FAIL "exit $RU_RC; $(tail -1 "$W/perf-g.err")"
			continue
		fi
		emit V "$B" "$c" "perf -g" ok "$(perf_comm_samples "$W/perf-g.data" shortlived) samples of shortlived"
		emit S "$B" "$c" "perf -g" "profiler CPU s" "$RU_CPU" s
	done
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
