#!/usr/bin/env bash
# BPF cost of OpenTelemetry thread contexts: the run time of firn's on_sample program per sample
# of the otelctx fixture (main thread in span a, its worker in span c, both spinning: every
# sample reads a context), with the thread context read (bpf/otelctx.bpf.h: the fs base, the TLS
# pointer, the record twice, the contexts' hash) and with --no-otel (the walker compiled out by
# its bit): two copies of the fixture, each recorded by its own firn, both at once, so the
# machine's load moves both alike (each firn's program counts its own target's samples); the
# same for the general-dynamic build (the DTV route: two more reads). OTEL_AA=1 records both with
# --no-otel: the pairing's own spread (an A/A check: 0.92-1.11 here). The alternated rows: one
# copy, recorded with and without by turns (ALT each). Per sample as in bench/python.sh:
# (run_time_ns - (run_cnt - target samples) x early return) / target samples. No reference tool
# reads OTEP 4947 contexts here (the OpenTelemetry profiler's reader is an open PR stack).
# Prints result lines (bench/bench_lib.sh).
source "$(dirname "$0")/bench_lib.sh"
need_tools
bpf_stats_on
W=$(workdir otelctx)
B=otelctx
REPS=${REPS:-3}
ALT=${ALT:-5} # alternated runs of each, on one copy (ALT_ONLY=1: those rows alone)
SECONDS_ON=2
[ -n "$QUICK" ] && REPS=1 ALT=2 SECONDS_ON=1 SETTLE=0.5
CASES=("local-exec, with context" "local-exec, --no-otel" "general-dynamic, with context"
       "general-dynamic, --no-otel")

# case_cmd CASE: "FIXTURE-COMMAND|FIRN-OPTIONS" (a span lasts 1000 s: every sample is in one).
case_cmd() {
	local exe=otelctx
	[[ $1 == general-dynamic* ]] && exe=otelctx-gd
	case $1 in
	*--no-otel) echo "env OTELCTX_SCALE_MS=1000000 LD_LIBRARY_PATH=$FIX $FIX/$exe|--no-otel" ;;
	idle) echo "sleep 3600|" ;;
	*) echo "env OTELCTX_SCALE_MS=1000000 LD_LIBRARY_PATH=$FIX $FIX/$exe|" ;;
	esac
}

# measure CASE: runs the case's fixture and `firn record -p` for SECONDS_ON; sets CNT NS TAKEN.
measure() {
	local fix opts
	IFS='|' read -r fix opts <<<"$(case_cmd "$1")"
	# shellcheck disable=SC2086
	$fix >/dev/null 2>&1 &
	local fx=$!
	sleep 0.2
	measure_attached "$fx" "$opts"
}

# measure_pair MODEL: the MODEL build twice, `firn record -p` of one and `firn record --no-otel
# -p` of the other at the same time for SECONDS_ON; sets CNT NS TAKEN (with) and CNT2 NS2 TAKEN2.
measure_pair() {
	local fix a b
	IFS='|' read -r fix _ <<<"$(case_cmd "$1, with context")"
	# shellcheck disable=SC2086
	$fix >/dev/null 2>&1 &
	a=$!
	# shellcheck disable=SC2086
	$fix >/dev/null 2>&1 &
	b=$!
	sleep 0.2
	bpf_stats_on
	bg_start with "$W" "$FIRN" record -F 999 ${OTEL_AA:+--no-otel} -p "$a" -o "$W/with.pb.gz" &&
		bg_start without "$W" "$FIRN" record -F 999 --no-otel -p "$b" -o "$W/without.pb.gz" &&
		bg_ready with && bg_ready without && sleep "$SECONDS_ON"
	firn_snapshot "${BG_PID[without]}"
	CNT2=$CNT NS2=$NS TAKEN2=$TAKEN
	firn_snapshot "${BG_PID[with]}"
	bg_stop with
	bg_stop without
	kill "$a" "$b"
	wait "$a" "$b" 2>/dev/null
	[ "${CNT:-0}" -gt 0 ] && [ "${CNT2:-0}" -gt 0 ] && [ "$TAKEN" -gt 0 ] && [ "$TAKEN2" -gt 0 ]
}

# measure_alternated MODEL: one copy of the MODEL build, recorded ALT times by `firn record -p`
# and ALT times by `firn record --no-otel -p`, alternated (the same process: the same stacks);
# each run's counts taken between two snapshots SECONDS_ON apart, after SETTLE (no start-up's
# first samples); sets ALT_RATIOS (with / without per pair) and ALT_WITH ALT_WITHOUT (ns).
measure_alternated() {
	local fix fx i f ns w
	IFS='|' read -r fix _ <<<"$(case_cmd "$1, with context")"
	# shellcheck disable=SC2086
	$fix >/dev/null 2>&1 &
	fx=$!
	sleep 0.2
	ALT_RATIOS="" ALT_WITH="" ALT_WITHOUT=""
	for ((i = 1; i <= ALT; i++)); do
		w=""
		for f in "" --no-otel; do
			bpf_stats_on
			# shellcheck disable=SC2086
			bg_start alt "$W" "$FIRN" record -F 999 $f -p "$fx" -o "$W/alt.pb.gz" &&
				bg_ready alt || { bg_stop alt; continue 2; }
			firn_snapshot "${BG_PID[alt]}"
			local c0=$CNT n0=$NS t0=$TAKEN
			sleep "$SECONDS_ON"
			firn_snapshot "${BG_PID[alt]}"
			bg_stop alt
			CNT=$((CNT - c0)) NS=$((NS - n0)) TAKEN=$((TAKEN - t0))
			[ "$TAKEN" -gt 0 ] || continue 2
			ns=$(per_sample "${C0:-0}")
			if [ -z "$f" ]; then w=$ns ALT_WITH="$ALT_WITH $ns"; else ALT_WITHOUT="$ALT_WITHOUT $ns"; fi
		done
		ALT_RATIOS="$ALT_RATIOS $(awk -v a="$w" -v b="$ns" 'BEGIN { printf "%.3f", a / b }')"
	done
	kill "$fx"
	wait "$fx" 2>/dev/null
	[ -n "$ALT_RATIOS" ]
}

# median X...: the median of the numbers given.
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

per_sample() {
	awk -v c="$CNT" -v n="$NS" -v t="$TAKEN" -v z="$1" 'BEGIN { printf "%.0f", (n - (c - t) * z) / t }'
}

emit H "$B" "BPF run time per sample with an OpenTelemetry thread context (999 Hz)"
emit C "$B" "early return" firn "sleep 3600 & firn record -F 999 -p PID -o OUT"
for c in "${CASES[@]}"; do
	IFS='|' read -r fix opts <<<"$(case_cmd "$c")"
	emit C "$B" "$c" firn "$(show "$fix") & firn record -F 999${opts:+ $opts} -p PID -o OUT (the other case's at once, on a second copy)"
done
for m in local-exec general-dynamic; do
	emit T "$B" "$m, with context" "ns/sample" times "1.1 firn" "<= 1.1x firn's --no-otel (issue 50)" "$m, --no-otel"
	emit C "$B" "$m, alternated, with / without" firn "one copy; firn record -F 999 -p PID and firn record -F 999 --no-otel -p PID taking turns, $ALT each; counts between two snapshots ${SECONDS_ON} s apart"
	emit T "$B" "$m, alternated, with / without" "ratio" max 1.1 "<= 1.1 (issue 50)"
done
emit N "$B" "otelctx = tests/fixtures/otelctx.c (gcc -O1, no frame pointers: DWARF-unwound native stacks in every row); two threads spin, each in a span whose record has one 9-byte http_route attribute. --no-otel: the same program, its walker off (WALKER_ON false: the verifier drops it)."

for ((rep = 1; rep <= REPS; rep++)); do
	say "otelctx: rep $rep/$REPS, early return"
	if measure idle; then
		C0=$((NS / CNT))
		emit S "$B" "early return" firn "ns/sample" "$C0" ns
	fi
	[ -n "${ALT_ONLY:-}" ] && break
	for m in local-exec general-dynamic; do
		say "otelctx: rep $rep/$REPS, $m, with and without at once"
		CNT=0 NS=0 TAKEN=0 CNT2=0 NS2=0 TAKEN2=0
		if ! measure_pair "$m"; then
			emit V "$B" "$m, with context" firn FAIL "no samples counted; $(tail -1 "$W/with.err")"
			continue
		fi
		for f in with without; do
			spans=$("$FIRN" report --group-by span_id "$W/$f.pb.gz" 2>/dev/null | awk '$3 ~ /^[0-9a-f]+$/ && length($3) == 16 { n += $2 } END { print n + 0 }')
			c="$m, with context" t=$TAKEN n=$CNT
			[ $f = without ] && c="$m, --no-otel" t=$TAKEN2 n=$CNT2
			emit V "$B" "$c" firn ok "$spans samples with a span_id; $t of $n program runs were the fixture's samples"
		done
		emit S "$B" "$m, with context" firn "ns/sample" "$(per_sample "${C0:-0}")" ns
		CNT=$CNT2 NS=$NS2 TAKEN=$TAKEN2
		emit S "$B" "$m, --no-otel" firn "ns/sample" "$(per_sample "${C0:-0}")" ns
	done
done
for m in local-exec general-dynamic; do
	say "otelctx: $m, with and without alternated on one copy, $ALT each"
	if measure_alternated "$m"; then
		for r in $ALT_RATIOS; do
			emit S "$B" "$m, alternated, with / without" firn ratio "$r" x
		done
		# shellcheck disable=SC2086
		emit V "$B" "$m, alternated, with / without" firn ok "ns/sample with: $(median $ALT_WITH) (runs:$ALT_WITH), without: $(median $ALT_WITHOUT) (runs:$ALT_WITHOUT), ratios:$ALT_RATIOS"
	else
		emit V "$B" "$m, alternated, with / without" firn FAIL "no samples counted"
	fi
done
exit 0
