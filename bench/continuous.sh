#!/usr/bin/env bash
# Continuous profiling's cost (issue 28): `firn record -a -F 19 --every 10 --push URL` to a
# loopback Pyroscope-like server (python3 http.server: accepts POST /ingest, counts requests and
# bytes) for DURATION seconds (default 600; LONG=1: 3600; SHORT=1: 120), twice: the server up
# all the time, then down for the middle half of the run (its listening socket closed, in the
# same process: connections refused; the intervals queue and go once it is back). Measured from /proc after a warm-up (WARM s, default 20, the
# start-up's symbol and table loading left out): firn's CPU as % of one CPU (target <= 0.1 %),
# its RSS at the warm-up and at the end (growth target <= 1 MB; VmRSS, and RssAnon without the
# page cache of the profiled programs' files firn maps to read symbols), its peak (VmHWM,
# <= 32 MB), its
# open descriptors then, at half-time and at the end (no growth; they rise until each long-lived
# process of the host has been sampled once, as firn holds the files of a sampled process), and what the server got against what firn
# says it sent, retried and dropped, with the mean size of its first and last ten intervals
# (flat: an interval holds only its own tables, not the recording's). A third run records only
# one busy process (--cgroup): the
# cost of the continuous machinery itself, without the host's other processes (on a shared
# machine they are most of it: every new process is snapshotted and symbolized).
# Then the in-kernel --cgroup filter on a busy workload outside the cgroup: BPF ns per hit of
# on_sample at 999 Hz, filtered out (an empty cgroup) against recorded (no filter), and the
# fixed-work deep fixture's wall time (REPS runs, median [min-max]) with no profiler, with the
# filtering recording and with the plain one.
# CASES (default "up down cgroup filter") picks the runs: the server up, down for half the run,
# the --cgroup run, the filter rows.
# Prints a Markdown report on stdout (progress on stderr). Needs root, the fixtures and firn.
set -u
. "$(dirname "$0")/bench_lib.sh"

DURATION=${DURATION:-600}
[ -n "${LONG:-}" ] && DURATION=3600
[ -n "${SHORT:-}" ] && DURATION=120
WARM=${WARM:-20}
CASES=${CASES:-up down cgroup filter} # which runs: a LONG=1 run of one case is an hour
REPS=${REPS:-5}
FREQ=19
EVERY=10
[ "$(id -u)" -eq 0 ] || die "needs root (BPF)"
[ -x "$FIRN" ] || die "no firn binary at '$FIRN' (make)"
[ -x "$DEEP" ] || die "no fixture '$DEEP' (make fixtures)"
MNT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
D=$(workdir continuous)
TICK=$(getconf CLK_TCK)

# start_server PORT: the loopback store, counting into $D/count ("requests bytes"); SRV_PID.
start_server() {
	"$PY" - "$1" "$D/count" <<'PY' >/dev/null 2>&1 &
import sys, http.server, os, signal, time
port, out = int(sys.argv[1]), sys.argv[2]
st = [0, 0]
if os.path.exists(out):
    st = [int(x) for x in open(out).read().split()]
class H(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get('Content-Length', 0)))
        st[0] += 1
        st[1] += len(body)
        with open(out + '.tmp', 'w') as f:
            f.write('%d %d\n' % tuple(st))
        os.replace(out + '.tmp', out)
        with open(out + '.sizes', 'a') as f:  # each interval's bytes: flat, or growing with age
            f.write('%d\n' % len(body))
        self.send_response(200)
        self.end_headers()
    def log_message(self, *a):
        pass
# SIGUSR1 closes the listening socket (connections refused), SIGUSR2 opens it again: the
# server stays one process, so firn's descriptors and memory are not charged with a new one
want = [True]
signal.signal(signal.SIGUSR1, lambda *a: want.__setitem__(0, False))
signal.signal(signal.SIGUSR2, lambda *a: want.__setitem__(0, True))
srv = None
while True:
    if want[0] and not srv:
        srv = http.server.HTTPServer(('127.0.0.1', port), H)
        srv.timeout = 0.2
    elif not want[0] and srv:
        srv.server_close()
        srv = None
    if srv:
        srv.handle_request()
    else:
        time.sleep(0.2)
PY
	SRV_PID=$!
	sleep 0.5
}
stop_server() { kill "$SRV_PID" 2>/dev/null; wait "$SRV_PID" 2>/dev/null; SRV_PID=; }

# The readers below are bash builtins that set a variable (no command substitution, so no
# fork), and the loop sleeps on a pipe nobody writes: the once-a-second watch starts no process,
# so firn (which tracks and snapshots the new processes it samples) is not charged with the
# bench's own date/awk/ls/sleep (about 6 processes a second before).
# cpu_s PID VAR: user + system seconds; status_kb PID KEY VAR; nfds PID VAR; now_s VAR.
cpu_s() {
	local st f
	read -r st <"/proc/$1/stat" || return
	read -ra f <<<"${st##*) }"
	printf -v "$2" '%d.%03d' $(((f[11] + f[12]) / TICK)) $(((f[11] + f[12]) % TICK * 1000 / TICK))
}
status_kb() {
	local k v u
	printf -v "$3" ''
	while read -r k v u; do [ "$k" = "$2:" ] && { printf -v "$3" '%s' "$v"; return; }; done <"/proc/$1/status"
}
nfds() { local f=("/proc/$1/fd/"*); printf -v "$2" '%d' "${#f[@]}"; }
now_s() { printf -v "$1" '%s' "${EPOCHREALTIME%.*}"; }
exec {NAP}<> <(:)
nap() { read -rt "$1" -u "$NAP" _; }

# run_case NAME DOWN [ARGS...]: one continuous recording (ARGS: more options); DOWN=1: the
# server is down from 25 % to 75 % of the run. Prints its table row.
run_case() {
	local name=$1 down=$2 port t0 c0 r0 a0 f0 t1 c1 r1 a1 f1 hwm start now
	port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
	rm -f "$D/count" "$D/count.sizes"
	start_server "$port"
	say "continuous: $name: $DURATION s, -F $FREQ --every $EVERY --push to port $port"
	"$FIRN" record -a -F "$FREQ" --every "$EVERY" --push "http://127.0.0.1:$port/" -d "$DURATION" \
		"${@:3}" 2>"$D/$name.err" &
	local fp=$! 
	start=$(date +%s)
	sleep "$WARM"
	t0=$EPOCHREALTIME; cpu_s "$fp" c0; status_kb "$fp" VmRSS r0; nfds "$fp" f0
	status_kb "$fp" RssAnon a0
	local down_at=$((start + DURATION / 4)) up_at=$((start + DURATION * 3 / 4)) rmax=$r0 is_down=
	local half_at=$((start + DURATION / 2)) am= fm=
	while now_s now; [ $((now - start)) -lt $((DURATION - 3)) ]; do
		if [ "$down" = 1 ] && [ -z "$is_down" ] && [ "$now" -ge "$down_at" ] && [ "$now" -lt "$up_at" ]; then
			say "continuous: $name: server down"; kill -USR1 "$SRV_PID"; is_down=1
		elif [ "$down" = 1 ] && [ "$is_down" = 1 ] && [ "$now" -ge "$up_at" ]; then
			say "continuous: $name: server up"; kill -USR2 "$SRV_PID"; is_down=0
		fi
		local r; status_kb "$fp" VmRSS r; [ "${r:-0}" -gt "$rmax" ] && rmax=$r
		if [ -z "$am" ] && [ "$now" -ge "$half_at" ]; then
			status_kb "$fp" RssAnon am; nfds "$fp" fm
		fi
		nap 1
	done
	t1=$EPOCHREALTIME; cpu_s "$fp" c1; status_kb "$fp" VmRSS r1; nfds "$fp" f1
	status_kb "$fp" RssAnon a1; status_kb "$fp" VmHWM hwm
	wait "$fp"
	local rc=$? cnt
	cnt=$(cat "$D/count" 2>/dev/null || echo "0 0")
	# the mean size of the first and of the last ten intervals received
	local sizes; sizes=$(awk '{ v[NR] = $1 } END { n = NR < 10 ? NR : 10; for (i = 1; i <= n; i++) { a += v[i]; b += v[NR - n + i] }
		printf "%.1f → %.1f kB", n ? a / n / 1024 : 0, n ? b / n / 1024 : 0 }' "$D/count.sizes" 2>/dev/null)
	stop_server
	local push; push=$(sed -n 's/^firn: push: //p' "$D/$name.err")
	awk -v n="$name" -v t0="$t0" -v t1="$t1" -v c0="$c0" -v c1="$c1" -v r0="$r0" -v r1="$r1" \
	    -v rmax="$rmax" -v hwm="$hwm" -v a0="$a0" -v a1="$a1" -v f0="$f0" -v f1="$f1" -v cnt="$cnt" -v push="$push" -v rc="$rc" \
	    -v am="${am:-$a1}" -v fm="${fm:-$f1}" -v sizes="${sizes:-—}" 'BEGIN {
		split(cnt, k, " ")
		printf "| %s | %.0f s | %.3f %% | %.2f s | %.1f → %.1f MB (%+.2f MB; max %.1f) | %.1f → %.1f → %.1f MB (%+.2f MB; second half %+.2f) | %.1f MB | %d → %d → %d | %d requests, %.0f kB; first 10 → last 10: %s | %s | %d |\n",
		    n, t1 - t0, 100 * (c1 - c0) / (t1 - t0), c1, r0 / 1024, r1 / 1024, (r1 - r0) / 1024,
		    rmax / 1024, a0 / 1024, am / 1024, a1 / 1024, (a1 - a0) / 1024, (a1 - am) / 1024,
		    hwm / 1024, f0, fm, f1, k[1], k[2] / 1024, sizes, push, rc }'
}

# median_range FILE: "median [min–max]" of the numbers in FILE, one per line.
median_range() {
	sort -g "$1" | awk '{ v[NR] = $1 } END { printf "%.3f [%.3f–%.3f]", v[int((NR + 1) / 2)], v[1], v[NR] }'
}

# deep_walls OUT: REPS runs of the fixed-work deep fixture, their wall seconds into OUT.
deep_walls() {
	: >"$1"
	for ((i = 0; i < REPS; i++)); do
		local a b
		a=$(date +%s.%N); "$DEEP" 200 >/dev/null 2>&1; b=$(date +%s.%N)
		awk -v a="$a" -v b="$b" 'BEGIN { printf "%.4f\n", b - a }' >>"$1"
	done
}

# filter_case NAME ARGS...: firn -a -F 999 ARGS while busy spins outside any cgroup asked for and
# deep runs REPS times; prints "ns-per-hit hits deep-walls".
filter_case() {
	local name=$1; shift
	"$FIRN" record -a -F 999 "$@" -d 600 -q -o "$D/$name.pb.gz" 2>"$D/$name.err" &
	local fp=$! i
	for ((i = 0; i < 200; i++)); do [ "$(perf_event_fds "$fp")" -ge "$NCPU" ] && break; sleep 0.05; done
	sleep 2
	bpf_stats_on
	local s0 s1; s0=$(bpf_prog_stats "$fp" on_sample)
	deep_walls "$D/$name.walls"
	s1=$(bpf_prog_stats "$fp" on_sample)
	kill -INT "$fp"; wait "$fp" 2>/dev/null
	awk -v a="$s0" -v b="$s1" 'BEGIN { split(a, x, " "); split(b, y, " "); n = y[1] - x[1];
		printf "%.0f %d\n", n ? (y[2] - x[2]) / n : 0, n }'
}

filter_rows() {
	[ -n "$MNT" ] || { say "continuous: no cgroup v2: no filter rows"; return; }
	local cg="$MNT/firn-bench-$$" busy r
	mkdir -p "$cg"
	"$FIX/busy" >/dev/null 2>&1 &
	busy=$!
	deep_walls "$D/none.walls"
	r=$(filter_case filtered --cgroup "$cg"); read -r fns fhits <<<"$r"
	r=$(filter_case recorded); read -r rns rhits <<<"$r"
	kill "$busy"; wait "$busy" 2>/dev/null
	rmdir "$cg"
	echo
	echo "In-kernel --cgroup filter: \`$FIX/busy\` spinning outside the cgroup, \`firn record -a -F 999\`, deep fixture \`$DEEP 200\` run $REPS times meanwhile (wall s, median [min–max]):"
	echo
	echo "| case | BPF ns per on_sample run | runs | deep wall s |"
	echo "|---|---|---|---|"
	echo "| no profiler | — | — | $(median_range "$D/none.walls") |"
	echo "| --cgroup EMPTY (every hit filtered out) | $fns | $fhits | $(median_range "$D/filtered.walls") |"
	echo "| no --cgroup (every hit recorded) | $rns | $rhits | $(median_range "$D/recorded.walls") |"
}

echo "### \`DURATION=$DURATION bash bench/continuous.sh\` ($(date -u '+%Y-%m-%d %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg))"
echo
echo "\`firn record -a -F $FREQ --every $EVERY --push http://127.0.0.1:PORT/ -d $DURATION\`; figures after a ${WARM} s warm-up. Targets: CPU <= 0.1 % of one CPU, RSS growth <= 1 MB, peak <= 32 MB, no descriptor growth."
echo
echo "| case | measured | firn CPU (% of one CPU) | CPU s in all | RSS (warm → end) | anonymous RSS (warm → half-time → end) | peak RSS | fds (warm → half-time → end) | server got | firn's push summary | exit |"
echo "|---|---|---|---|---|---|---|---|---|---|---|"
want() { [[ " $CASES " == *" $1 "* ]]; }
want up && run_case "server up" 0
want down && run_case "server down 25–75 %" 1
# the same machinery without the host's other processes: only one steady process, by --cgroup
if want cgroup && [ -n "$MNT" ]; then
	mkdir -p "$MNT/firn-bench-one-$$"
	sh -c 'echo $$ > "$1/cgroup.procs" && exec "$2"' _ "$MNT/firn-bench-one-$$" "$FIX/busy" >/dev/null 2>&1 &
	ONE=$!
	run_case "server up, --cgroup of one busy process" 0 --cgroup "$MNT/firn-bench-one-$$"
	kill "$ONE"; wait "$ONE" 2>/dev/null
	rmdir "$MNT/firn-bench-one-$$"
fi
want filter && filter_rows
