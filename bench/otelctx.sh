#!/usr/bin/env bash
# BPF cost of OpenTelemetry thread contexts: the run time of firn's on_sample program per sample
# of the otelctx fixture (main thread in span a, its worker in span c, both spinning: every
# sample reads a context), with the thread context read (bpf/otelctx.bpf.h: the fs base, the TLS
# pointer, the record twice, the contexts' hash) and with --no-otel (the walker compiled out by
# its bit), side by side in each repetition so load moves both alike; the same for the
# general-dynamic build (the DTV route: two more reads). Per sample as in bench/python.sh:
# (run_time_ns - (run_cnt - target samples) x early return) / target samples. No reference tool
# reads OTEP 4947 contexts here (the OpenTelemetry profiler's reader is an open PR stack).
# Prints result lines (bench/bench_lib.sh).
source "$(dirname "$0")/bench_lib.sh"
need_tools
bpf_stats_on
W=$(workdir otelctx)
B=otelctx
REPS=${REPS:-3}
SECONDS_ON=2
[ -n "$QUICK" ] && REPS=1 SECONDS_ON=1 SETTLE=0.5
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

per_sample() {
	awk -v c="$CNT" -v n="$NS" -v t="$TAKEN" -v z="$1" 'BEGIN { printf "%.0f", (n - (c - t) * z) / t }'
}

emit H "$B" "BPF run time per sample with an OpenTelemetry thread context (999 Hz)"
emit C "$B" "early return" firn "sleep 3600 & firn record -F 999 -p PID -o OUT"
for c in "${CASES[@]}"; do
	IFS='|' read -r fix opts <<<"$(case_cmd "$c")"
	emit C "$B" "$c" firn "$(show "$fix") & firn record -F 999${opts:+ $opts} -p PID -o OUT"
done
for m in local-exec general-dynamic; do
	emit T "$B" "$m, with context" "ns/sample" times "1.1 firn" "<= 1.1x firn's --no-otel (issue 50)" "$m, --no-otel"
done
emit N "$B" "otelctx = tests/fixtures/otelctx.c (gcc -O1, no frame pointers: DWARF-unwound native stacks in every row); two threads spin, each in a span whose record has one 9-byte http_route attribute. --no-otel: the same program, its walker off (WALKER_ON false: the verifier drops it)."

for ((rep = 1; rep <= REPS; rep++)); do
	say "otelctx: rep $rep/$REPS, early return"
	if measure idle; then
		C0=$((NS / CNT))
		emit S "$B" "early return" firn "ns/sample" "$C0" ns
	fi
	for c in "${CASES[@]}"; do
		say "otelctx: rep $rep/$REPS, $c"
		if ! measure "$c" || [ "$TAKEN" -le 0 ]; then
			emit V "$B" "$c" firn FAIL "no samples counted; $(tail -1 "$W/prof.err")"
			continue
		fi
		spans=$("$FIRN" report --group-by span_id "$W/prof.pb.gz" 2>/dev/null | awk '$3 ~ /^[0-9a-f]+$/ && length($3) == 16 { n += $2 } END { print n + 0 }')
		emit V "$B" "$c" firn ok "$spans samples with a span_id; $TAKEN of $CNT program runs were the fixture's samples"
		emit S "$B" "$c" firn "ns/sample" "$(per_sample "${C0:-0}")" ns
	done
done
exit 0
