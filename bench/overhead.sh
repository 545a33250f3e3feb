#!/usr/bin/env bash
# Overhead bench: fixed-work CPU-bound fixtures run while a system-wide profiler records — nothing,
# `firn record -a`, `perf record -a -g`, `perf record -a --call-graph dwarf` — at 99 Hz and 999 Hz.
# Reports the profiler process's CPU seconds, the workload's wall time and its slowdown against the
# unprofiled run of the same repetition, and the BPF program's run time per sample (bpf_stats).
# (bench/bpf.sh measures the BPF program's cost per sample on its own.)
# Prints result lines (see bench/bench_lib.sh). REPS (default 3), QUICK=1: 999 Hz, deep, 1 rep.
source "$(dirname "$0")/bench_lib.sh"
need_tools
bpf_stats_on
W=$(workdir overhead)

REPS=${REPS:-3}
RATES="99 999"
CASES="deep deep-fp"
DEEP_ROUNDS=300
FP_ROUNDS=2400
TOOLS=(none firn "perf -g" "perf dwarf")
if [ -n "$QUICK" ]; then
	REPS=1 RATES=999 CASES=deep DEEP_ROUNDS=300 TOOLS=(none firn "perf -g")
fi
SETTLE=${SETTLE_OVERHEAD:-0.5}
B=overhead

# fixture_cmd CASE: the workload's command line.
fixture_cmd() {
	case $1 in
	deep) echo "nice -n -19 $DEEP $DEEP_ROUNDS" ;;
	deep-fp) echo "nice -n -19 $DEEP_FP $FP_ROUNDS" ;;
	esac
}

# profiler_cmd TOOL CASE RATE OUT: the profiler's command line (empty for none).
profiler_cmd() {
	local cg=
	[ "$2" = deep-fp ] && cg=" --call-graph fp"
	case $1 in
	firn) echo "nice -n -19 $FIRN record -a -F $3$cg -q -o $4" ;;
	"perf -g") echo "nice -n -19 $PERF record -a -g -F $3 -q -o $4" ;;
	"perf dwarf") echo "nice -n -19 $PERF record -a --call-graph dwarf -F $3 -q -o $4" ;;
	esac
}

# check_output TOOL CASE OUT: prints the check's detail; fails when the output is not valid.
check_output() {
	if [ "$1" = firn ]; then
		firn_chain_check "$3" "$2"
		return
	fi
	local n
	n=$(perf_comm_samples "$3" "$2")
	echo "$n samples of $2"
	[ "$n" -gt 0 ]
}

# run_one TOOL CASE RATE REP: one profiled (or bare) run of the fixture; sets WALL.
run_one() {
	local tool=$1 c=$2 rate=$3 rep=$4 case="$2 @ $3 Hz" out pcmd detail cnt ns
	WALL=
	out=$W/out.$([ "$tool" = firn ] && echo pb.gz || echo data)
	rm -f "$out" "$out.old"
	pcmd=$(profiler_cmd "$tool" "$c" "$rate" "$out")
	if [ -n "$pcmd" ]; then
		bpf_stats_on
		# shellcheck disable=SC2086
		bg_start prof "$W" $pcmd || { emit V "$B" "$case" "$tool" FAIL "did not start"; return; }
		bg_ready prof || { emit V "$B" "$case" "$tool" FAIL "did not start: $(tail -1 "$W/prof.err")"; return; }
	fi
	# shellcheck disable=SC2046
	timed "$W/work.ru" $(fixture_cmd "$c") && ru_read "$W/work.ru"
	local wall=$RU_WALL
	[ "$tool" = firn ] && read -r cnt ns < <(bpf_prog_stats "${BG_PID[prof]}" on_sample)
	if [ "$tool" = none ]; then
		WALL=$wall
		emit S "$B" "$case" "$tool" "workload wall s" "$wall" s
		return
	fi
	bg_stop prof
	# perf re-raises SIGINT after writing its file: 130 is its normal end here
	if ! detail=$(check_output "$tool" "$c" "$out") || { [ "$RU_RC" -ne 0 ] && [ "$RU_RC" -ne 130 ]; }; then
		emit V "$B" "$case" "$tool" FAIL "exit $RU_RC; $detail; $(tail -1 "$W/prof.err")"
		return
	fi
	emit V "$B" "$case" "$tool" ok "$detail"
	WALL=$wall
	emit S "$B" "$case" "$tool" "workload wall s" "$wall" s
	emit S "$B" "$case" "$tool" "profiler CPU s" "$RU_CPU" s
	emit S "$B" "$case" "$tool" "profiler peak RSS MB" "$RU_RSS_MB" MB
	if [ "$tool" = firn ] && [ "${cnt:-0}" -gt 0 ]; then
		emit S "$B" "$case" "$tool" "BPF ns/sample" "$(awk -v n="$ns" -v c="$cnt" 'BEGIN { printf "%.0f", n / c }')" ns
	fi
}

emit H "$B" "Overhead: system-wide recording while a fixed-work fixture runs"
for rate in $RATES; do
	for c in $CASES; do
		for tool in "${TOOLS[@]}"; do
			pcmd=$(profiler_cmd "$tool" "$c" "$rate" OUT)
			emit C "$B" "$c @ $rate Hz" "$tool" "$(show "${pcmd:+$pcmd & }$(fixture_cmd "$c")")"
		done
	done
done
emit N "$B" "Fixtures: deep = tests/fixtures/deep.c built by gcc -O2 without frame pointers ($DEEP_ROUNDS rounds), firn in its default --call-graph auto (DWARF); deep-fp = the same source built by clang -O2 -fno-omit-frame-pointer into $BUILD/bench/deep-fp ($FP_ROUNDS rounds), firn with --call-graph fp. Both run one thread, 34 user frames (main, d00..d31, hot) deep. Fixtures and profilers run at nice -19, so that the other jobs on this shared 2-CPU machine disturb them less (a profiler at nice 0 beside a nice -19 fixture gets too little CPU to build the fixture's unwind tables in time)."
emit N "$B" "Each profiler starts first, is given ${SETTLE} s after it holds a perf event per CPU, then the fixture runs, then the profiler gets SIGINT. 'profiler CPU s' is the profiler process's user+sys time over that whole span (start-up, recording, writing its file; perf's includes its build-id pass). 'slowdown %' pairs each profiled run with the unprofiled run of the same repetition; tools run in a rotated order per repetition."
emit N "$B" "'BPF ns/sample' (firn only) is run_time_ns/run_cnt of the on_sample program over every sample of the system-wide recording (the fixture's, idle CPUs', other processes'). perf's in-kernel sampling cost has no such counter: it shows only in the slowdown."

for ((rep = 1; rep <= REPS; rep++)); do
	for rate in $RATES; do
		for c in $CASES; do
			declare -A walls=()
			n=${#TOOLS[@]}
			for ((k = 0; k < n; k++)); do
				tool=${TOOLS[$(((k + rep - 1) % n))]}
				say "overhead: rep $rep/$REPS, $c @ $rate Hz, $tool"
				run_one "$tool" "$c" "$rate" "$rep"
				walls[$tool]=$WALL
			done
			for tool in "${TOOLS[@]:1}"; do
				[ -n "${walls[none]}" ] && [ -n "${walls[$tool]}" ] || continue
				emit S "$B" "$c @ $rate Hz" "$tool" "slowdown %" \
					"$(awk -v a="${walls[$tool]}" -v b="${walls[none]}" 'BEGIN { printf "%.2f", 100 * (a / b - 1) }')" %
			done
		done
	done
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
