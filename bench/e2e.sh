#!/usr/bin/env bash
# End-to-end bench: CPU seconds from recording to a flame graph and a table. The three profilers
# record the same workload at the same time for the same duration (99 Hz, system-wide); then
#   firn: firn report --svg (the flame graph) and firn report (the table),
#   perf: perf script (the flame graph's input) and perf report --stdio (the table),
# each timed alone. perf's pipeline is a lower bound: the folding and drawing of perf script's
# output (stackcollapse-perf.pl, flamegraph.pl) is not counted.
# Prints result lines (see bench/bench_lib.sh). REPS (default 3), SECONDS_REC (default 5: perf's
# DWARF pipeline costs about 6 CPU seconds per recorded second here);
# QUICK=1: one 2 s recording, perf dwarf's reports skipped (they take seconds of CPU).
source "$(dirname "$0")/bench_lib.sh"
need_tools
W=$(workdir e2e)
B=e2e
REPS=${REPS:-3}
SECS=${SECONDS_REC:-5}
SKIP_DWARF=
[ -n "$QUICK" ] && REPS=1 SECS=2 SKIP_DWARF=1
HZ=99
CASE="${SECS} s @ $HZ Hz"

emit H "$B" "End to end: CPU seconds from a ${SECS} s system-wide recording to a flame graph and a table"
for ((i = 0; i < ${#RECORD_THREE_CMDS[@]}; i += 2)); do
	emit C "$B" "$CASE" "${RECORD_THREE_CMDS[i]}" "$(echo "${RECORD_THREE_CMDS[i + 1]}" | sed "s/HZ/$HZ/; s/SECONDS/$SECS/"), then $(
		case ${RECORD_THREE_CMDS[i]} in
		firn) echo "firn report --svg OUT > OUT.svg, firn report OUT > OUT.table" ;;
		*) echo "perf script -i OUT > OUT.script, perf report --stdio -i OUT > OUT.report" ;;
		esac)"
done
emit N "$B" "Rows: 'record' = the profiler process (user+sys, start to exit); 'flame graph' = firn report --svg vs perf script (only the text a flame graph tool would fold: perf's side is a lower bound); 'table' = firn report vs perf report --stdio; 'total' = the sum, per repetition. The recordings run side by side (as in the size bench) over: $SPIN_DESC. The chain row is the share of the deep fixture's samples whose stack holds all of d00..d31 (firn from its folded output, perf from perf script): how usable each flame graph is; firn builds the tables of every running process when it starts, and samples taken meanwhile fall back to frame pointers, which this short recording shows."

# stage TOOL STAGE OUTFILE CMD...: times one report stage; sets STAGE_CPU (empty on failure).
stage() {
	local tool=$1 st=$2 outf=$3
	shift 3
	STAGE_CPU=
	if ! "$PY" "$ROOT/bench/rusage.py" "$W/stage.ru" -- bash -c 'exec "$@" >"$0" 2>/dev/null' "$outf" "$@"; then
		emit V "$B" "$CASE" "$tool" FAIL "$st: '$*' failed"
		return 1
	fi
	ru_read "$W/stage.ru"
	STAGE_CPU=$RU_CPU
}

# pipeline TOOL FILE: report stages of one tool's recording; emits its rows.
pipeline() {
	local tool=$1 rec=$2 ru=$3 svg_cpu table_cpu rec_cpu chain
	ru_read "$ru"
	rec_cpu=$RU_CPU
	if [ "$tool" = firn ]; then
		stage firn "flame graph" "$W/firn.svg" "$FIRN" report --svg "$rec" || return
		svg_cpu=$STAGE_CPU
		grep -q '<svg' "$W/firn.svg" && grep -q 'd31' "$W/firn.svg" || {
			emit V "$B" "$CASE" firn FAIL "the SVG lacks the fixture's frames"
			return
		}
		stage firn table "$W/firn.table" "$FIRN" report "$rec" || return
		table_cpu=$STAGE_CPU
		grep -q 'hot' "$W/firn.table" || { emit V "$B" "$CASE" firn FAIL "the table lacks 'hot'"; return; }
		emit V "$B" "$CASE" firn ok "SVG $(stat -c %s "$W/firn.svg") bytes with d31; table lists hot"
		"$FIRN" report --folded --comm deep "$rec" >"$W/firn.folded" 2>/dev/null
		read -r _ chain < <(folded_chain_pct "$W/firn.folded" deep)
	else
		stage "$tool" "flame graph" "$W/perf.script" "$PERF" script -i "$rec" || return
		svg_cpu=$STAGE_CPU
		local want=deep
		[ "$tool" = "perf dwarf" ] && want=d31
		grep -q "$want" "$W/perf.script" || {
			emit V "$B" "$CASE" "$tool" FAIL "perf script lacks '$want'"
			return
		}
		stage "$tool" table "$W/perf.report" "$PERF" report --stdio -i "$rec" || return
		table_cpu=$STAGE_CPU
		grep -q 'deep' "$W/perf.report" || { emit V "$B" "$CASE" "$tool" FAIL "the report lacks deep"; return; }
		emit V "$B" "$CASE" "$tool" ok "perf script $(grep -c "$want" "$W/perf.script") lines with '$want'; report lists deep"
		read -r _ chain < <(perf_chain_pct "$W/perf.script" deep)
	fi
	emit S "$B" "$CASE" "$tool" "record CPU s" "$rec_cpu" s
	emit S "$B" "$CASE" "$tool" "flame graph CPU s" "$svg_cpu" s
	emit S "$B" "$CASE" "$tool" "table CPU s" "$table_cpu" s
	emit S "$B" "$CASE" "$tool" "deep's samples with all 32 d-frames %" "$chain" %
	emit S "$B" "$CASE" "$tool" "total CPU s" "$(awk -v a="$rec_cpu" -v b="$svg_cpu" -v c="$table_cpu" 'BEGIN { printf "%.6f", a + b + c }')" s
}

for ((rep = 1; rep <= REPS; rep++)); do
	say "e2e: rep $rep/$REPS: recording ${SECS} s"
	record_three "$W" "$SECS" "$HZ"
	check_three "$W" "$B" "$CASE"
	[ -n "$OK_firn" ] && say "e2e: firn reports" && pipeline firn "$W/firn.pb.gz" "$W/firn.ru"
	[ -n "$OK_perf_g" ] && say "e2e: perf -g reports" && pipeline "perf -g" "$W/perf-g.data" "$W/perf-g.ru"
	[ -n "$OK_perf_dwarf" ] && [ -z "$SKIP_DWARF" ] && say "e2e: perf dwarf reports" && pipeline "perf dwarf" "$W/perf-dwarf.data" "$W/perf-dwarf.ru"
done
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
