#!/usr/bin/env bash
# Allocation profiling cost (-e alloc, issue 47): a malloc-heavy workload — bench/allocloop.c,
# ROUNDS rounds of malloc+write+free (16..1040 bytes) with a calloc/realloc/free cycle every 8,
# timed around its loop — run bare, with libfirn-alloc.so preloaded and no tracer (the
# library's own cost per call), under firn record -e alloc at the default rate (512 KiB) and at
# --alloc-rate 4096, under heaptrack (Debian's 1.4: every call written out), and with empty
# uprobes on libc's malloc, calloc, realloc and free (bpftrace: the floor of a uprobe-per-call
# design, bcc's memleak, which cannot be built here; a hundredth of the rounds: a trap a call),
# and firn's own uprobe mode (--alloc-mode uprobe, the default for -p/-a processes without the
# library: entry and return probes, the Poisson rule in BPF; a hundredth of the rounds too). Reports the loop's time, its ns per round
# and the slowdown against the bare run of the same repetition; a note derives the cost at
# 100 MB/s of allocation. Prints result lines (see bench/bench_lib.sh). REPS (default 3),
# QUICK=1: 1 rep of fewer rounds. Needs root, heaptrack and bpftrace (make deps-bench).
# Accuracy, side by side with heaptrack on the same program (the issue's targets): the allocfix
# fixture, Debian's python3.11 on a json/re workload and sqlite3 building and grouping a table,
# each run once under heaptrack and once under firn -e alloc --alloc-rate ACC_RATE (4096): total
# bytes allocated (+-5 %), the top 10 sites' shares of them (+-3 pp; a site is the allocator's
# caller, bench/alloc_sites.py) and the bytes live at exit against heaptrack's "leaked" (+-5 %).
# PARTS: "cost accuracy" (default), or either.
source "$(dirname "$0")/bench_lib.sh"
[ "$(id -u)" -eq 0 ] || die "needs root (BPF)"
[ -x "$FIRN" ] || die "no firn binary at '$FIRN' (make)"
W=$(workdir alloc)
B=alloc
REPS=${REPS:-3}
ROUNDS=${ROUNDS:-20000000}
[ -n "$QUICK" ] && REPS=1 ROUNDS=2000000
LOOP=$ROOT/$BUILD/bench/allocloop
LIB=$ROOT/$BUILD/libfirn-alloc.so
LIBC=$(ldd /bin/true | awk '/libc.so/ { print $3 }')
CASES=(none preload "firn -e alloc" "firn -e alloc --alloc-rate 4096" "firn -e alloc --alloc-mode uprobe"
	heaptrack uprobes)
UPROBES="uprobe:$LIBC:malloc {} uprobe:$LIBC:calloc {} uprobe:$LIBC:realloc {} uprobe:$LIBC:free {}"

# build_loop: the workload (gcc -O2, frame pointers: the sampled stacks walk into it).
build_loop() {
	local src=$ROOT/bench/allocloop.c
	[ -x "$LOOP" ] && [ "$LOOP" -nt "$src" ] && return 0
	mkdir -p "$(dirname "$LOOP")"
	gcc -O2 -g -fno-omit-frame-pointer -o "$LOOP" "$src" || die "cannot build '$LOOP'"
}

# field FILE NAME: a field of allocloop's result line.
field() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1" | tail -1; }

# rounds_of CASE: the workload's rounds in a case: a hundredth where every call traps.
rounds_of() {
	case $1 in
	*uprobe*) echo $((ROUNDS / 100)) ;;
	*) echo "$ROUNDS" ;;
	esac
}

# command_of CASE: the command line of a case (the workload last).
command_of() {
	case $1 in
	none) echo "$LOOP $ROUNDS" ;;
	preload) echo "env LD_PRELOAD=$LIB $LOOP $ROUNDS" ;;
	firn*) echo "$FIRN record ${1#firn } -o $W/out.pb.gz -- $LOOP $(rounds_of "$1")" ;;
	heaptrack) echo "heaptrack -o $W/heaptrack $LOOP $ROUNDS" ;;
	uprobes) echo "bpftrace -e '$UPROBES' -c '$LOOP $((ROUNDS / 100))'" ;;
	esac
}

# run_case CASE: one run; sets NS (ns per round; empty on failure) and emits its measurements.
run_case() {
	local c=$1 tool=${1%% *}
	NS=
	case $c in
	uprobes) bpftrace -e "$UPROBES" -c "$LOOP $((ROUNDS / 100))" >"$W/out" 2>"$W/err" ;;
	*) eval "$(command_of "$c")" >"$W/out" 2>"$W/err" ;;
	esac
	NS=$(field "$W/out" ns_per_round)
	[ -z "$NS" ] && NS=$(field "$W/err" ns_per_round)
	if [ -z "$NS" ]; then
		emit V "$B" "$c" "$tool" FAIL "no result line; $(tail -1 "$W/err")"
		return
	fi
	[ "$tool" = firn ] && emit V "$B" "$c" firn ok "$(grep -h 'alloc:' "$W/err" | sed 's/^firn: //' | tr '\n' ' ')"
	emit S "$B" "$c" "$tool" "ns/round" "$NS" ns
	emit S "$B" "$c" "$tool" "loop s" "$(field "$W/out" elapsed_s)$(field "$W/err" elapsed_s)" s
}

ACC_RATE=${ACC_RATE:-4096}
PARTS=${PARTS:-cost accuracy}
SITES="python3 $ROOT/bench/alloc_sites.py"
PYWORK='import json, re
d = [{"id": i, "name": "item%d" % i, "tags": ["t%d" % (i % 7), "x" * (i % 50)], "v": i * 0.5}
     for i in range(20000)]
keep = []
for _ in range(5):
    s = json.dumps(d)
    e = json.loads(s)
    keep.append(re.findall(r"\"name\": \"item(\d+)\"", s))'
SQL="create table t(a, b); with recursive c(x) as (select 1 union all select x + 1 from c where x < 200000) insert into t select x, hex(randomblob(20)) from c; create index ti on t(b); select a % 100, count(*), sum(length(b)) from t group by 1 order by 3 desc limit 3;"
ACC_CASES=(allocfix python3.11 sqlite3)

# acc_command CASE: the program of an accuracy case, as words.
acc_command() {
	case $1 in
	allocfix) echo "$FIX/allocfix 200000" ;;
	python3.11) echo "/usr/bin/python3.11 -c \"\$PYWORK\"" ;;
	sqlite3) echo "/usr/bin/sqlite3 :memory: \"\$SQL\"" ;;
	esac
}

# accuracy_case CASE: the program under heaptrack and under firn; emits the comparison.
accuracy_case() {
	local c=$1 cmd d=$W/acc-$1
	cmd=$(acc_command "$c")
	mkdir -p "$d" && rm -f "$d"/*
	eval "PYTHONHASHSEED=0 heaptrack -o $d/ht $cmd" >"$d/ht.out" 2>&1
	eval "PYTHONHASHSEED=0 $FIRN record -q -e alloc --alloc-rate $ACC_RATE -o $d/a.pb.gz -- $cmd" >"$d/firn.out" 2>&1
	"$FIRN" report --folded --sample-type alloc_space "$d/a.pb.gz" >"$d/alloc.folded" 2>/dev/null
	"$FIRN" report --folded --sample-type inuse_space "$d/a.pb.gz" >"$d/inuse.folded" 2>/dev/null
	if ! $SITES heaptrack "$d"/ht.zst >"$d/ht.json" || ! $SITES firn "$d/alloc.folded" "$d/inuse.folded" >"$d/firn.json" ||
		! $SITES compare "$d/ht.json" "$d/firn.json" >"$d/cmp.json"; then
		emit V "$B" "acc $c" firn FAIL "no comparison; $(tail -1 "$d/firn.out")"
		return
	fi
	python3 - "$d/cmp.json" "$B" "acc $c" <<'PY'
import json, sys
d, b, c = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
def emit(*f):
    print("@@\t" + "\t".join(str(x) for x in f))
emit("S", b, c, "heaptrack", "allocated MB", "%.2f" % (d["total"][0] / 1e6), "MB")
emit("S", b, c, "firn", "allocated MB", "%.2f" % (d["total"][1] / 1e6), "MB")
emit("S", b, c, "heaptrack", "leaked MB", "%.3f" % (d["leaked"][0] / 1e6), "MB")
emit("S", b, c, "firn", "leaked MB", "%.3f" % (d["leaked"][1] / 1e6), "MB")
emit("S", b, c, "firn", "allocated err %", "%.2f" % d["total_err_pct"], "%")
emit("S", b, c, "firn", "leaked err %", "%.2f" % d["leaked_err_pct"], "%")
emit("S", b, c, "firn", "top-10 share max err pp", "%.2f" % d["max_share_pp"], "pp")
ok = abs(d["total_err_pct"]) <= 5 and abs(d["leaked_err_pct"]) <= 5 and d["max_share_pp"] <= 3
emit("V", b, c, "firn", "ok" if ok else "FAIL", "allocated %+.2f %%, leaked %+.2f %%, top-10 shares within %.2f pp"
     % (d["total_err_pct"], d["leaked_err_pct"], d["max_share_pp"]))
emit("N", b, "%s, top sites by heaptrack's bytes (heaptrack %% / firn %%): %s" % (c, ", ".join(
     "%s %.2f/%.2f" % (s, a, f) for s, a, f in d["sites"])))
PY
}

command -v heaptrack >/dev/null || die "needs heaptrack (make deps-bench)"
command -v bpftrace >/dev/null || die "needs bpftrace"
[ -f "$LIB" ] || die "no '$LIB' (make)"
build_loop
emit H "$B" "Allocation profiling: cost on a malloc-heavy workload (libfirn-alloc.so, heaptrack, uprobes); accuracy against heaptrack"
if [[ " $PARTS " == *" accuracy "* ]]; then
	for c in "${ACC_CASES[@]}"; do
		emit C "$B" "acc $c" firn "$FIRN record -e alloc --alloc-rate $ACC_RATE -- $(acc_command "$c")"
		emit C "$B" "acc $c" heaptrack "heaptrack $(acc_command "$c"); bench/alloc_sites.py heaptrack FILE"
		say "alloc: accuracy: $c"
		accuracy_case "$c"
	done
fi
[[ " $PARTS " == *" cost "* ]] || exit 0
for c in "${CASES[@]}"; do emit C "$B" "$c" "$c" "$(command_of "$c")"; done
for ((rep = 1; rep <= REPS; rep++)); do
	declare -A got=()
	for c in "${CASES[@]}"; do
		say "alloc: rep $rep: $c"
		run_case "$c"
		got[$c]=$NS
	done
	for c in "${CASES[@]:1}"; do
		[ -n "${got[none]}" ] && [ -n "${got[$c]}" ] &&
			emit S "$B" "$c" "${c%% *}" "slowdown x" "$(awk -v a="${got[$c]}" -v b="${got[none]}" 'BEGIN { printf "%.3f", a / b }')" x
	done
done
emit N "$B" "allocloop ($BUILD/bench/allocloop, bench/allocloop.c) makes 2.375 calls of the malloc family per round (malloc+free, and calloc+realloc+free every 8th) of 440 bytes on average per allocation; 'ns/round' is its own loop's time per round (the tool's start-up and end are not in it), ('uprobes' and '--alloc-mode uprobe' run a hundredth of the rounds: a trap a call; ns/call = (ns/round − bare) / 2.375), 'slowdown x' pairs each run with the bare run of the same repetition. At full speed the loop allocates several GB/s: the cost at 100 MB/s of allocation is (ns/round − bare) × the rounds of 100 MB (100e6 / 550 bytes per round ≈ 182,000 a second)."
