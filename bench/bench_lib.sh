# Shared helpers of firn's benchmarks against perf, sourced by bench/{overhead,size,e2e,startup,
# memory,dwarf}.sh: result lines, profilers in the background, resource use, BPF statistics.
#
# Result lines go to stdout as "@@<TAB>KIND<TAB>fields..." (bench/run collects them into
# bench/RESULTS.md with bench/results.py); progress goes to stderr. Kinds:
#   S bench case tool metric value unit   one measurement (one repetition)
#   C bench case tool command             the exact command behind a (case, tool)
#   V bench case tool ok|FAIL detail      an output check (a run whose check fails reports no S)
#   T bench case metric kind arg text [refcase]
#                                         a target on firn's median: max V | ratio "R TOOL"
#                                         (TOOL's median / firn's >= R) | times "X TOOL" (firn's
#                                         <= X × TOOL's; TOOL may be firn) | below TOOL | flat V;
#                                         TOOL's median is that of refcase (default: case)
#   N bench text                          a note printed under the bench's table
#   H bench title                         the bench's heading (first line of its section)
set -u

ROOT=${ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
BUILD=${BUILD:-build}
FIRN=${FIRN:-$ROOT/$BUILD/firn}
PERF=${PERF:-/usr/bin/perf}
PY=${PY:-/usr/bin/python3}
BENCH_DIR=${BENCH_DIR:-/tmp/firn-bench}
QUICK=${QUICK:-}
NCPU=$(nproc)
SETTLE=${SETTLE:-1}
FIX=$ROOT/$BUILD/fixtures
DEEP=$FIX/deep
DEEP_FP=$ROOT/$BUILD/bench/deep-fp

declare -A BG_PID BG_WRAP BG_RU

# emit KIND FIELDS...: one result line on stdout.
emit() {
	local IFS=$'\t'
	printf '@@\t%s\n' "$*"
}
# say TEXT: a progress line on stderr.
say() { printf '%s\n' "$*" >&2; }

# die MESSAGE: the bench cannot run at all.
die() {
	say "bench: $*"
	exit 1
}

# need_tools: the bench's prerequisites (root, perf, the fixtures, the firn binary).
need_tools() {
	[ "$(id -u)" -eq 0 ] || die "needs root (BPF and system-wide perf)"
	[ -x "$FIRN" ] || die "no firn binary at '$FIRN' (make)"
	[ -x "$PERF" ] || die "no perf at '$PERF' (make deps-bench installs linux-perf)"
	[ -x "$DEEP" ] || die "no fixture '$DEEP' (make fixtures)"
	command -v bpftool >/dev/null || die "needs bpftool"
	build_deep_fp
}

# build_deep_fp: the 32-deep fixture again, built by clang with frame pointers (bench only).
build_deep_fp() {
	local src=$ROOT/tests/fixtures/deep.c
	[ -x "$DEEP_FP" ] && [ "$DEEP_FP" -nt "$src" ] && return 0
	mkdir -p "$(dirname "$DEEP_FP")"
	clang -O2 -g -fno-omit-frame-pointer -pthread -o "$DEEP_FP" "$src" ||
		die "cannot build '$DEEP_FP'"
}

# workdir NAME: a fresh scratch folder for one bench, printed.
workdir() {
	local d=$BENCH_DIR/$1
	rm -rf "$d" && mkdir -p "$d" && printf '%s\n' "$d"
}

# ru_read FILE: sets RU_RC RU_WALL RU_USER RU_SYS RU_CPU RU_RSS_MB from a rusage.py line.
ru_read() {
	local rss
	read -r RU_RC RU_WALL RU_USER RU_SYS rss <"$1" || return 1
	RU_CPU=$(awk -v u="$RU_USER" -v s="$RU_SYS" 'BEGIN { printf "%.6f", u + s }')
	RU_RSS_MB=$(awk -v r="$rss" 'BEGIN { printf "%.1f", r / 1024 }')
}

# timed FILE CMD...: runs CMD in the foreground, its resource use into FILE.
timed() {
	local out=$1
	shift
	"$PY" "$ROOT/bench/rusage.py" "$out" -- "$@"
}

# bg_start NAME DIR CMD...: starts CMD in the background under rusage.py; BG_PID[NAME] is its pid.
bg_start() {
	local name=$1 dir=$2
	shift 2
	rm -f "$dir/$name.pid" "$dir/$name.ru"
	"$PY" "$ROOT/bench/rusage.py" "$dir/$name.ru" --pidfile "$dir/$name.pid" -- "$@" \
		>"$dir/$name.out" 2>"$dir/$name.err" &
	BG_WRAP[$name]=$!
	BG_RU[$name]=$dir/$name.ru
	local i
	for ((i = 0; i < 500; i++)); do
		[ -s "$dir/$name.pid" ] && break
		sleep 0.01
	done
	BG_PID[$name]=$(cat "$dir/$name.pid" 2>/dev/null)
	[ -n "${BG_PID[$name]}" ]
}

# perf_event_fds PID: how many perf events PID holds open.
perf_event_fds() {
	local n=0 fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:[perf_event]" ] && n=$((n + 1))
	done
	printf '%s\n' "$n"
}

# bg_ready NAME: waits (20 s at most) until the profiler holds a perf event per CPU, then SETTLE s.
bg_ready() {
	local pid=${BG_PID[$1]} i
	for ((i = 0; i < 400; i++)); do
		kill -0 "$pid" 2>/dev/null || return 1
		[ "$(perf_event_fds "$pid")" -ge "$NCPU" ] && break
		sleep 0.05
	done
	sleep "$SETTLE"
	kill -0 "$pid" 2>/dev/null
}

# bg_stop NAME [again]: SIGINT to the command (unless it already ended), then waits; sets RU_*
# from it. "again": SIGINT once more every 2 s while it runs (bpftrace 0.17 sometimes misses one).
bg_stop() {
	local name=$1 i
	kill -INT "${BG_PID[$name]}" 2>/dev/null
	if [ "${2:-}" = again ]; then
		for ((i = 1; i <= 100; i++)); do
			kill -0 "${BG_PID[$name]}" 2>/dev/null || break
			sleep 0.1
			[ $((i % 20)) -eq 0 ] && kill -INT "${BG_PID[$name]}" 2>/dev/null
		done
	fi
	wait "${BG_WRAP[$name]}" 2>/dev/null
	ru_read "${BG_RU[$name]}"
}

# bg_wait NAME: waits for the command to end by itself; sets RU_* from it.
bg_wait() {
	wait "${BG_WRAP[$1]}" 2>/dev/null
	ru_read "${BG_RU[$1]}"
}

# bpf_fd_ids PID KIND: ids of the BPF objects (KIND prog or map) that PID holds.
bpf_fd_ids() {
	local fd
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd" 2>/dev/null)" = "anon_inode:bpf-$2" ] || continue
		awk -v k="$2_id:" '$1 == k { print $2 }' "/proc/$1/fdinfo/${fd##*/}" 2>/dev/null
	done | sort -un
}

# bpf_objects PID KIND: bpftool's JSON lines (one per object) of PID's BPF programs or maps.
bpf_objects() {
	local ids
	ids=$(bpf_fd_ids "$1" "$2" | tr '\n' ' ')
	[ -n "$ids" ] || return 0
	bpftool "$2" show -j 2>/dev/null | "$PY" -c '
import json, sys
want = set(int(i) for i in sys.argv[1].split())
for o in json.load(sys.stdin):
    if o.get("id") in want:
        print(json.dumps(o))' "$ids"
}

# bpf_prog_stats PID NAME: "RUN_CNT RUN_TIME_NS" summed over PID's programs whose name starts
# with NAME.
bpf_prog_stats() {
	bpf_objects "$1" prog | "$PY" -c '
import json, sys
cnt = ns = 0
for line in sys.stdin:
    p = json.loads(line)
    if p.get("name", "").startswith(sys.argv[1]):
        cnt += p.get("run_cnt", 0)
        ns += p.get("run_time_ns", 0)
print(cnt, ns)' "$2"
}

# bpf_prog_ids PID NAME: ids of PID's programs whose name starts with NAME.
bpf_prog_ids() {
	bpf_objects "$1" prog | "$PY" -c '
import json, sys
for line in sys.stdin:
    p = json.loads(line)
    if p.get("name", "").startswith(sys.argv[1]):
        print(p["id"])' "$2"
}

# bpf_map_id PID NAME: the id of PID's BPF map named NAME (empty when none).
bpf_map_id() {
	bpf_objects "$1" map | "$PY" -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("name") == sys.argv[1]:
        print(m["id"])' "$2"
}

# bpf_map_bytes PID: "MAPS BYTES": how many BPF maps PID holds and their memory (bytes_memlock).
bpf_map_bytes() {
	bpf_objects "$1" map | "$PY" -c '
import json, sys
n = b = 0
for line in sys.stdin:
    n += 1
    b += json.loads(line).get("bytes_memlock", 0)
print(n, b)'
}

# bpf_stats_on: enables kernel.bpf_stats_enabled (again: other jobs on this machine may turn it
# off); the value found first comes back when the shell exits.
bpf_stats_on() {
	if [ -z "${BPF_STATS_OLD:-}" ]; then
		BPF_STATS_OLD=$(sysctl -n kernel.bpf_stats_enabled)
		trap 'sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS_OLD"' EXIT
	fi
	sysctl -qw kernel.bpf_stats_enabled=1
}

# spin_start DIR: the background workload of the system-wide benches (the deep fixture, no frame
# pointers, and Debian's python3.11 in a recursive loop), one process each; sets SPIN_PIDS.
spin_start() {
	"$DEEP" -1 >/dev/null 2>&1 &
	SPIN_PIDS=$!
	/usr/bin/python3.11 -c '
def f(n):
    return 1 if n == 0 else f(n - 1) + 1
while True:
    f(25)' >/dev/null 2>&1 &
	SPIN_PIDS="$SPIN_PIDS $!"
}
SPIN_DESC="build/fixtures/deep -1 (gcc -O2, no frame pointers, 32 frames) and /usr/bin/python3.11 running a 25-deep recursion in a loop"

# spin_stop: ends the background workload.
spin_stop() {
	local p
	for p in ${SPIN_PIDS:-}; do
		kill "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	SPIN_PIDS=
}

# record_three DIR SECONDS HZ: firn record -a, perf record -a -g and perf record -a --call-graph
# dwarf side by side, all three at once for SECONDS over the background workload (spin_start), so
# they see the same system; outputs DIR/firn.pb.gz, DIR/perf-g.data, DIR/perf-dwarf.data, their
# resource use in DIR/{firn,perf-g,perf-dwarf}.ru and firn's summary in DIR/firn.err.
record_three() {
	local d=$1 secs=$2 hz=$3
	rm -f "$d"/firn.pb.gz* "$d"/perf-*.data*
	spin_start
	sleep 0.5
	bg_start firn "$d" "$FIRN" record -a -F "$hz" -d "$secs" -o "$d/firn.pb.gz"
	bg_start perf-g "$d" "$PERF" record -a -g -F "$hz" -q -o "$d/perf-g.data" -- sleep "$secs"
	bg_start perf-dwarf "$d" "$PERF" record -a --call-graph dwarf -F "$hz" -q -o "$d/perf-dwarf.data" -- sleep "$secs"
	bg_wait firn
	bg_wait perf-g
	bg_wait perf-dwarf
	spin_stop
}
RECORD_THREE_CMDS=(firn "firn record -a -F HZ -d SECONDS -o OUT"
	"perf -g" "perf record -a -g -F HZ -o OUT -- sleep SECONDS"
	"perf dwarf" "perf record -a --call-graph dwarf -F HZ -o OUT -- sleep SECONDS")

# check_three DIR BENCH CASE: checks the three recordings (firn's holds samples of the deep fixture,
# some with its whole chain; perf's hold samples of it); emits V lines; sets OK_firn, OK_perf_g,
# OK_perf_dwarf.
check_three() {
	local d=$1 b=$2 c=$3 detail rc
	OK_firn='' OK_perf_g='' OK_perf_dwarf=''
	ru_read "$d/firn.ru"
	if detail=$(firn_chain_check "$d/firn.pb.gz" deep 1) && [ "$RU_RC" -eq 0 ]; then
		OK_firn=1
		emit V "$b" "$c" firn ok "$detail; $(head -1 "$d/firn.err" | sed 's/^firn: //; s/, wrote.*//')"
	else
		emit V "$b" "$c" firn FAIL "exit $RU_RC; $detail; $(tail -1 "$d/firn.err")"
	fi
	for t in g dwarf; do
		local tool="perf dwarf"
		[ "$t" = g ] && tool="perf -g"
		ru_read "$d/perf-$t.ru"
		rc=$RU_RC
		detail="$(perf_comm_samples "$d/perf-$t.data" deep) samples of deep"
		if [ "$rc" -eq 0 ] && [ "${detail%% *}" -gt 0 ]; then
			printf -v "OK_perf_$t" 1
			emit V "$b" "$c" "$tool" ok "$detail, $(perf_all_samples "$d/perf-$t.data") in all"
		else
			emit V "$b" "$c" "$tool" FAIL "exit $rc; $detail; $(tail -1 "$d/perf-$t.err")"
		fi
	done
}

# perf_all_samples DATA: how many samples a perf.data holds.
perf_all_samples() {
	"$PERF" script -i "$1" -F comm 2>/dev/null | wc -l
}

# pprof_comment PROFILE KEY: the value of the "KEY: value" comment of a pprof file (gzip or raw;
# a minimal reader of profile.proto's string_table (6) and comment (13) fields).
pprof_comment() {
	"$PY" - "$1" "$2" <<-'EOF'
		import gzip, sys
		data = open(sys.argv[1], "rb").read()
		if data[:2] == b"\x1f\x8b":
		    data = gzip.decompress(data)
		def varint(b, i):
		    v = s = 0
		    while True:
		        c = b[i]; i += 1; v |= (c & 0x7f) << s; s += 7
		        if c < 0x80:
		            return v, i
		strings, comments, i = [], [], 0
		while i < len(data):
		    key, i = varint(data, i)
		    field, wire = key >> 3, key & 7
		    if wire == 0:
		        v, i = varint(data, i)
		        if field == 13:
		            comments.append(v)
		    elif wire == 2:
		        n, i = varint(data, i)
		        chunk, i = data[i:i + n], i + n
		        if field == 6:
		            strings.append(chunk.decode("utf-8", "replace"))
		        elif field == 13:
		            j = 0
		            while j < len(chunk):
		                v, j = varint(chunk, j)
		                comments.append(v)
		    elif wire == 1:
		        i += 8
		    elif wire == 5:
		        i += 4
		    else:
		        break
		prefix = sys.argv[2] + ": "
		for c in comments:
		    if c < len(strings) and strings[c].startswith(prefix):
		        print(strings[c][len(prefix):])
		        break
	EOF
}

# table_build_s PROFILE: the seconds firn spent building DWARF unwind tables (0 when none).
table_build_s() {
	pprof_comment "$1" unwind.tables | sed -n 's/.*built in \([0-9.]*\) ms.*/\1/p' |
		awk '{ printf "%.4f\n", $1 / 1000 } END { if (!NR) print 0 }'
}

# folded_chain_pct FOLDED COMM: "SAMPLES PCT": the samples of COMM in a folded file and the share
# of them whose stack holds the fixture's whole chain d00;...;d31.
folded_chain_pct() {
	awk -v comm="$2" '
		{ n = $NF; split($0, f, ";") }
		f[1] == comm { all += n; if (index($0, "d00;d01;d02;d03;d04;d05;d06;d07;d08;d09;d10;d11;d12;d13;d14;d15;d16;d17;d18;d19;d20;d21;d22;d23;d24;d25;d26;d27;d28;d29;d30;d31")) full += n }
		END { printf "%d %.1f\n", all, all ? 100 * full / all : 0 }' "$1"
}

# firn_chain_check PROFILE COMM [MIN_PCT]: prints "N samples of COMM, P% with the whole d00..d31
# chain"; fails unless N > 0 and P >= MIN_PCT (default 50: the fixture's stacks were unwound).
# Sets CHAIN_PCT.
firn_chain_check() {
	local f n pct
	f=$(mktemp "$BENCH_DIR/check.XXXXXX")
	if ! "$FIRN" report --folded --comm "$2" "$1" >"$f" 2>/dev/null; then
		rm -f "$f"
		echo "firn report cannot read '$1'"
		return 1
	fi
	read -r n pct < <(folded_chain_pct "$f" "$2")
	rm -f "$f"
	CHAIN_PCT=$pct
	echo "$n samples of $2, $pct% with the whole d00..d31 chain"
	[ "$n" -gt 0 ] && awk -v p="$pct" -v m="${3:-50}" 'BEGIN { exit !(p >= m && p > 0) }'
}

# perf_chain_pct SCRIPT COMM: "SAMPLES PCT" like folded_chain_pct, from perf script output.
perf_chain_pct() {
	awk -v comm="$2" 'BEGIN { RS = "" }
		$1 == comm {
			all++
			ok = 1
			for (i = 0; i < 32; i++)
				if (!index($0, sprintf(" d%02d+", i))) { ok = 0; break }
			full += ok
		}
		END { printf "%d %.1f\n", all, all ? 100 * full / all : 0 }' "$1"
}

# bpf_snapshot MAP_ID PROG_ID...: "RUN_CNT RUN_TIME_NS LAST" read at (nearly) one moment: the
# programs' statistics (summed) read before and after the map, averaged, and LAST, the sum over
# CPUs of the last entry of the per-CPU array MAP_ID (firn's count of its targets' samples).
bpf_snapshot() {
	"$PY" - "$@" <<-'EOF'
		import json, subprocess, sys
		def progs():
		    c = n = 0
		    for i in sys.argv[2:]:
		        p = json.loads(subprocess.run(["bpftool", "prog", "show", "id", i, "-j"],
		                                      capture_output=True, text=True).stdout)
		        c += p.get("run_cnt", 0)
		        n += p.get("run_time_ns", 0)
		    return c, n
		c0, n0 = progs()
		m = json.loads(subprocess.run(["bpftool", "map", "dump", "id", sys.argv[1], "-j"],
		                              capture_output=True, text=True).stdout)
		c1, n1 = progs()
		last = sum(v["value"] for v in m[-1]["formatted"]["values"])
		print((c0 + c1) // 2, (n0 + n1) // 2, last)
	EOF
}

# perf_comm_samples DATA COMM: how many samples of COMM a perf.data holds (no unwinding).
perf_comm_samples() {
	"$PERF" script -i "$1" -F comm 2>/dev/null | awk -v c="$2" '$1 == c { n++ } END { print n + 0 }'
}

# show TEXT: a command line as RESULTS.md shows it: firn, perf and the fixtures by their short names.
show() {
	local s=$1
	s=${s//$FIRN/firn}
	s=${s//$PERF/perf}
	s=${s//$ROOT\//}
	printf '%s\n' "$s"
}

# fmt X: a number with 4 significant digits.
fmt() { awk -v x="$1" 'BEGIN { printf "%.4g", x }'; }

# firn_snapshot FIRN_PID: sets CNT NS TAKEN from that firn's on_sample programs and its count of
# its targets' samples (the last entry of its 'lost' map), read at one moment (bpf_snapshot);
# leaves them as they were when either is not found.
firn_snapshot() {
	local map progs
	map=$(bpf_map_id "$1" lost)
	progs=$(bpf_prog_ids "$1" on_sample)
	# shellcheck disable=SC2086
	[ -n "$map" ] && [ -n "$progs" ] && read -r CNT NS TAKEN < <(bpf_snapshot "$map" $progs)
	return 0
}

# measure_attached PID OPTS: `firn record -F 999 OPTS -p PID` (W, FIRN) for SECONDS_ON, then
# kills PID; sets CNT NS TAKEN from firn's on_sample programs and its count of the target's
# samples (bpf_snapshot). Fails when nothing was counted or the programs ran fewer times.
measure_attached() {
	local fx=$1 opts=$2
	CNT=0 NS=0 TAKEN=0
	bpf_stats_on
	# shellcheck disable=SC2086
	bg_start prof "$W" "$FIRN" record -F 999 $opts -p "$fx" -o "$W/prof.pb.gz" || { kill "$fx"; return 1; }
	bg_ready prof
	sleep "$SECONDS_ON"
	firn_snapshot "${BG_PID[prof]}"
	bg_stop prof
	kill "$fx"
	wait "$fx" 2>/dev/null
	[ "${CNT:-0}" -gt 0 ] && [ "$CNT" -ge "$TAKEN" ]
}
