#!/usr/bin/env bash
# Memory bench: firn's resident memory during a system-wide recording (firn record -a, 99 Hz),
# beside perf record -a -g recording at the same time, while a loop keeps starting new processes
# (the deep fixtures, a few a second). RSS is read every few seconds: the peak, the trend (least
# squares slope after a warm-up), firn's RSS without the BPF maps it mmaps, and the kernel memory
# of firn's BPF maps (their memlock).
# Default: a 2-minute trend (make bench must stay a few minutes); LONG=1: the full 10 minutes;
# QUICK=1: 10 s. Prints result lines (see bench/bench_lib.sh).
source "$(dirname "$0")/bench_lib.sh"
need_tools
W=$(workdir memory)
B=memory
SECS=120 EVERY=5 WARM=30
[ -n "${LONG:-}" ] && SECS=600 EVERY=10 WARM=60
[ -n "$QUICK" ] && SECS=10 EVERY=1 WARM=4
CASE="$((SECS / 60 > 0 ? SECS / 60 : 0)) min system-wide"
[ "$SECS" -lt 60 ] && CASE="$SECS s system-wide"

# rss_kb PID: "RSS_KB BPF_MAP_KB": resident memory of PID, and the part of it in mmapped BPF maps.
rss_kb() {
	awk '/^[0-9a-f]+-[0-9a-f]+ / { bpf = ($6 == "anon_inode:bpf-map") }
		/^Rss:/ { all += $2; if (bpf) b += $2 }
		END { if (NR) print all, b + 0 }' "/proc/$1/smaps" 2>/dev/null
}

# bpf_kb PID: the kernel memory of the BPF maps PID holds (each map's fdinfo memlock, once), KiB.
bpf_kb() {
	awk 'FNR == 1 { m = 0 } /^memlock:/ { m = $2 } /^map_id:/ && !($2 in seen) { seen[$2] = 1; s += m }
		END { printf "%d\n", s / 1024 }' /proc/"$1"/fdinfo/* 2>/dev/null
}

# slope FILE COLUMN FROM: least-squares slope of COLUMN (KiB) against column 1 (s), for FROM <= t
# < SECS - 1 (the recording itself, not the profile building after it), in MB per minute.
slope() {
	awk -v c="$2" -v from="$3" -v to="$((SECS - 1))" '$1 >= from && $1 < to { n++; x += $1; y += $c; xx += $1 * $1; xy += $1 * $c }
		END { d = n * xx - x * x; printf "%.3f\n", (d > 0 ? (n * xy - x * y) / d * 60 / 1024 : 0) }' "$1"
}

emit H "$B" "Memory: resident set during a $SECS s system-wide recording (99 Hz)"
emit C "$B" "$CASE" firn "firn record -a -F 99 -d $SECS -o OUT"
emit C "$B" "$CASE" "perf -g" "perf record -a -g -F 99 -o OUT -- sleep $SECS"
emit N "$B" "One run (a trend over time, not repeated); firn and perf record at the same time while a loop runs build/fixtures/deep 20 and build/bench/deep-fp 200 (new processes all along) besides the machine's other jobs. RSS (VmRSS, from /proc/PID/smaps) every $EVERY s; 'peak RSS MB' is the kernel's maximum (wait4's ru_maxrss); the trend is the least-squares slope of RSS after ${WARM} s. The default run is a 2-minute trend so that make bench stays a few minutes; LONG=1 bench/memory.sh (or LONG=1 make bench) runs the full 10 minutes."

(while :; do "$DEEP" 20; "$DEEP_FP" 200; sleep 0.1; done) >/dev/null 2>&1 &
churn=$!
bg_start firn "$W" "$FIRN" record -a -F 99 -d "$SECS" -o "$W/firn.pb.gz"
bg_start perf "$W" "$PERF" record -a -g -F 99 -q -o "$W/perf.data" -- sleep "$SECS"
start=$EPOCHREALTIME
: >"$W/rss.txt"
while kill -0 "${BG_PID[firn]}" 2>/dev/null; do
	t=$(awk -v a="$EPOCHREALTIME" -v b="$start" 'BEGIN { printf "%.1f", a - b }')
	f=$(rss_kb "${BG_PID[firn]}")
	p=$(rss_kb "${BG_PID[perf]}")
	[ -n "$f" ] && echo "$t $f ${p:-0 0} $(bpf_kb "${BG_PID[firn]}")" >>"$W/rss.txt"
	sleep "$EVERY"
done
bg_wait firn
frc=$RU_RC frss=$RU_RSS_MB
bg_wait perf
prc=$RU_RC prss=$RU_RSS_MB
kill "$churn" 2>/dev/null
wait "$churn" 2>/dev/null
say "memory: t firn_kb firn_bpfmap_kb perf_kb perf_bpfmap_kb firn_bpf_kernel_kb:"
tr '\n' ';' <"$W/rss.txt" >&2
say ""

if detail=$(firn_chain_check "$W/firn.pb.gz" deep 1) && [ "$frc" -eq 0 ]; then
	emit V "$B" "$CASE" firn ok "$detail; $(head -1 "$W/firn.err" | sed 's/^firn: //; s/, wrote.*//')"
	emit S "$B" "$CASE" firn "peak RSS MB" "$frss" MB
	emit S "$B" "$CASE" firn "RSS trend MB/min" "$(slope "$W/rss.txt" 2 "$WARM")" MB/min
	emit S "$B" "$CASE" firn "peak RSS without mmapped BPF maps MB" \
		"$(awk '{ v = ($2 - $3) / 1024; if (v > m) m = v } END { printf "%.1f", m }' "$W/rss.txt")" MB
	emit S "$B" "$CASE" firn "RSS trend without BPF maps MB/min" \
		"$(awk '{ print $1, $2 - $3 }' "$W/rss.txt" | slope /dev/stdin 2 "$WARM")" MB/min
	emit S "$B" "$CASE" firn "BPF map kernel memory MB (peak)" \
		"$(awk '{ if ($6 > m) m = $6 } END { printf "%.1f", m / 1024 }' "$W/rss.txt")" MB
	emit N "$B" "firn's RSS (MB) every $EVERY s: $(awk '{ printf "%s%.1f", (NR > 1 ? " " : ""), $2 / 1024 }' "$W/rss.txt"); of it in mmapped BPF maps at the end: $(awk 'END { printf "%.1f", $3 / 1024 }' "$W/rss.txt") MB; processes seen: $(sed -nE 's/.*\), ([0-9]+) process(es)?, .*/\1/p' "$W/firn.err")."
else
	emit V "$B" "$CASE" firn FAIL "exit $frc; $detail; $(tail -1 "$W/firn.err")"
fi
n=$(perf_comm_samples "$W/perf.data" deep)
if [ "$prc" -eq 0 ] && [ "$n" -gt 0 ]; then
	emit V "$B" "$CASE" "perf -g" ok "$n samples of deep"
	emit S "$B" "$CASE" "perf -g" "peak RSS MB" "$prss" MB
	emit S "$B" "$CASE" "perf -g" "RSS trend MB/min" "$(slope "$W/rss.txt" 4 "$WARM")" MB/min
else
	emit V "$B" "$CASE" "perf -g" FAIL "exit $prc; $n samples of deep; $(tail -1 "$W/perf.err")"
fi
# a bench that ran exits 0: its failed checks are V lines in its output
exit 0
