#!/usr/bin/env bash
# firn top against perf top, side by side: the CPU time each one's own process uses (utime + stime
# of every thread, from /proc/PID/stat) while it runs full screen in a 120x40 tmux pane for
# DURATION seconds (default 20), sampling the whole system at 99 Hz, with the busy fixture
# spinning. Each tool runs alone, in turn, REPS times (default 2); the table gives the CPU seconds
# of the whole run (start-up included) and the CPU share after the first 5 s (steady state).
# firn top runs with its default DWARF unwinding (auto) and with --call-graph fp; perf top runs
# as `perf top -e cpu-clock -F 99 -a` (no call graph: its default) and with `-g` (frame-pointer
# call graphs, as firn always takes stacks). Prints a markdown table; for firn, the time it spent
# building DWARF unwind tables (from `firn -v top`) follows each run's CPU seconds.
# Needs root, tmux, perf (make deps-bench) and the fixtures (make fixtures).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD:-build}
FIRN=${FIRN:-$ROOT/$BUILD/firn}
PERF=${PERF:-/usr/bin/perf}
BUSY=$ROOT/$BUILD/fixtures/busy
DURATION=${DURATION:-20}
REPS=${REPS:-2}
WARMUP=5
HZ=$(getconf CLK_TCK)
SESSION=firn-bench-top-$$
ERR=$(mktemp /tmp/firn-bench-top.XXXXXX)

[ "$(id -u)" -eq 0 ] || { echo "bench/top.sh: needs root" >&2; exit 1; }
for t in "$FIRN" "$PERF" "$BUSY"; do
	[ -x "$t" ] || { echo "bench/top.sh: no '$t' (make, make fixtures, make deps-bench)" >&2; exit 1; }
done
command -v tmux >/dev/null || { echo "bench/top.sh: needs tmux" >&2; exit 1; }

# cpu_ticks PID: utime + stime of the process (all threads), in clock ticks.
cpu_ticks() {
	sed 's/^.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'
}

# run_one CMD: runs CMD full screen in tmux for DURATION s; prints "TOTAL_S STEADY_PCT".
run_one() {
	tmux -L "$SESSION" new-session -d -s "$SESSION" -x 120 -y 40 "exec $1"
	local pid
	pid=$(tmux -L "$SESSION" list-panes -t "$SESSION" -F '#{pane_pid}')
	sleep "$WARMUP"
	local c1
	c1=$(cpu_ticks "$pid")
	sleep $((DURATION - WARMUP))
	local c2
	c2=$(cpu_ticks "$pid")
	tmux -L "$SESSION" send-keys -t "$SESSION" q
	sleep 1
	tmux -L "$SESSION" kill-server 2>/dev/null || true
	awk -v c1="$c1" -v c2="$c2" -v hz="$HZ" -v d="$((DURATION - WARMUP))" \
		'BEGIN { printf "%.2f %.2f\n", c2 / hz, 100 * (c2 - c1) / hz / d }'
}

"$BUSY" >/dev/null 2>&1 &
busy=$!
trap 'kill $busy 2>/dev/null; tmux -L "$SESSION" kill-server 2>/dev/null || true; rm -f "$ERR"' EXIT
sleep 0.5

printf '| tool | command | CPU s in %d s (each run) | CPU %% after %d s (each run) |\n' "$DURATION" "$WARMUP"
printf '| --- | --- | --- | --- |\n'
for tool in firn firn-fp perf perf-g; do
	case $tool in
	firn) cmd="$FIRN -v top -a -F 99" ;;
	firn-fp) cmd="$FIRN -v top -a -F 99 --call-graph fp" ;;
	perf) cmd="$PERF top -e cpu-clock -F 99 -a" ;;
	perf-g) cmd="$PERF top -e cpu-clock -F 99 -a -g" ;;
	esac
	totals= steadies=
	for ((r = 0; r < REPS; r++)); do
		: >"$ERR"
		read -r total steady < <(run_one "$cmd 2>$ERR")
		tables=$(sed -n 's/.*unwind tables for \([0-9]*\) files .* built in \([0-9]*\) ms$/\1 files in \2 ms/p' "$ERR")
		[ -n "$tables" ] && total="$total (unwind tables: $tables)"
		totals="$totals${totals:+, }$total"
		steadies="$steadies${steadies:+, }$steady"
	done
	shown=${cmd//$ROOT\//}
	shown=${shown/ -v / }
	printf '| %s | `%s` | %s | %s |\n' "${tool%-*}" "${shown#/usr/bin/}" "$totals" "$steadies"
done
