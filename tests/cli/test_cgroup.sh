# --cgroup (root, BPF, cgroup v2): the in-kernel filter keeps only the processes of the cgroups
# given (and of the cgroups below them). A fresh cgroup firn-test-PID gets a child cgroup "sub"
# holding `busy` (busy_hot ~90 %, busy_cold ~10 %); outside it `busy 30 cold` spins in
# busy_cold only, as busy as the first. Recorded -a --cgroup DIR: one process, the inside one
# (report --pid of the outside one: 0 samples), busy_hot >= 65 % (both processes together would
# give ~45 %; the machine may be loaded: 3 s give 30 samples or more), and the summary counts the samples left out. -p IN,OUT --cgroup NAME (the
# relative name): the intersection, only IN. -e off-cpu: only the sleeper inside, its wait in
# progress at the start included (the task iterator's check). Names: a unit name found by a
# search (foo for foo.service), a container id prefix for docker-ID.scope, an ambiguous one
# (exit 2). --process-labels and --push: exe, cgroup and container_id labels (go tool pprof reads
# them; the pushed intervals from a loopback server), none without them. Errors: no such cgroup (exit 1), a cgroup v1 directory, a directory outside cgroupfs
# and --cgroup 17 times (exit 2). The side-band records read are the cgroup's only (20 short
# commands inside against 100 outside). The cgroups are removed at the end.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "cgroup recording tests need root"; exit 0; fi
MNT=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
if [ -z "$MNT" ]; then skip "no cgroup v2 mounted"; exit 0; fi
BUSY="$FIX/busy"
NAME=firn-test-$$
CG="$MNT/$NAME"
ID=$(printf 'f1%062d' $$)   # a container id: 64 hex digits
PIDS=

cleanup() {
	for p in $PIDS; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	for d in "$CG/sub" "$CG/a/twin" "$CG/b/twin" "$CG/a" "$CG/b" "$CG/docker-$ID.scope" \
		"$CG/firn-unit-$$.service" "$CG"; do
		[ -d "$d" ] && rmdir "$d"
	done
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$CG/sub" "$CG/a/twin" "$CG/b/twin" "$CG/docker-$ID.scope" "$CG/firn-unit-$$.service"

# start_in DIR CMD...: CMD runs in cgroup DIR; its pid in $!
start_in() {
	local dir=$1; shift
	sh -c 'echo $$ > "$1/cgroup.procs" && shift && exec "$@"' _ "$dir" "$@" &
	PIDS="$PIDS $!"
}

# share FILE FUNCTION: the function's self% in firn report's table
share() { "$FIRN" report "$1" 2>/dev/null | awk -v f="$2" '$5 == f { print $1; exit }'; }
# samples_of_pid FILE PID: the samples (or ms off the CPU) of PID, from firn report's header
samples_of_pid() { "$FIRN" report --pid "$2" "$1" 2>/dev/null | sed -n 's/^# [^:]*: \([0-9,.]*\) .*/\1/p' | tr -d ,; }
is_zero() { python3 -c "import sys; sys.exit(0 if sys.argv[1] and float(sys.argv[1]) == 0 else 1)" "$1"; }
at_least() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1] or 0) >= float(sys.argv[2]) else 1)" "$1" "$2"; }

start_in "$CG/sub" "$BUSY" 30; IN=$!
"$BUSY" 30 cold & OUT=$!; PIDS="$PIDS $OUT"
sleep 0.3
expect_rc "record -a --cgroup DIR: exit 0" 0 "$FIRN" record -a --cgroup "$CG" -d 3 -o "$TMP/a.pb.gz"
cp "$TMP/err" "$TMP/a.err"
hot=$(share "$TMP/a.pb.gz" busy_hot)
at_least "$hot" 65 && pass "-a --cgroup: busy_hot ${hot}% (only the process inside)" ||
	fail "-a --cgroup: busy_hot ${hot:-none}% (wanted >= 65: the outside busy_cold got in?)"
n_in=$(samples_of_pid "$TMP/a.pb.gz" "$IN"); n_out=$(samples_of_pid "$TMP/a.pb.gz" "$OUT")
is_zero "$n_out" && at_least "$n_in" 5 && pass "-a --cgroup: $n_in samples of the pid inside, 0 of the one outside" ||
	fail "-a --cgroup: pid inside ${n_in:-?} samples, outside ${n_out:-?}"
grep -q '1 process,' "$TMP/a.err" && pass "-a --cgroup: the summary names 1 process" ||
	fail "-a --cgroup: summary: $(head -1 "$TMP/a.err")"
left=$(sed -n 's/^firn: cgroups: 1 given, \([0-9]*\) samples.*left out in the kernel$/\1/p' "$TMP/a.err")
at_least "$left" 5 && pass "-a --cgroup: $left samples outside left out, as the summary says" ||
	fail "-a --cgroup: summary of the left-out samples: $(grep cgroups "$TMP/a.err")"

# the kernel's side-band records too are only the cgroups' (perf's cgroup events): 100 short
# commands outside and 20 inside; -v counts the records read (each command brings its fork,
# exec, mappings and exit: ~8)
records_read() { sed -n 's/.*process table: [0-9]* processes; \([0-9]*\) event records read.*/\1/p' "$1"; }
churn_side() { # churn_side ARGS...: records read by `firn -v record -a ARGS -d 2` over both loops
	start_in "$CG/sub" sh -c 'sleep 0.4; for i in $(seq 20); do /bin/true; done'
	(sleep 0.4; for i in $(seq 100); do /bin/true; done) & PIDS="$PIDS $!"
	"$FIRN" -v record -a "$@" -d 2 -o "$TMP/side.pb.gz" 2>"$TMP/side.err"
	records_read "$TMP/side.err"
}
r_cg=$(churn_side --cgroup "$CG"); r_all=$(churn_side)
at_least "$r_cg" 40 && at_least "$r_all" "$(( ${r_cg:-0} * 3 ))" &&
	pass "--cgroup reads only the cgroup's side-band records: $r_cg (without it: $r_all)" ||
	fail "side-band records read with --cgroup: ${r_cg:-none}, without: ${r_all:-none} (wanted >= 40 and a third of it)"

expect_rc "record -p IN,OUT --cgroup NAME: exit 0" 0 "$FIRN" record -p "$IN,$OUT" --cgroup "$NAME" -d 1 -o "$TMP/p.pb.gz"
n_in=$(samples_of_pid "$TMP/p.pb.gz" "$IN"); n_out=$(samples_of_pid "$TMP/p.pb.gz" "$OUT")
is_zero "$n_out" && at_least "$n_in" 3 && pass "-p and --cgroup intersect: $n_in samples of IN, 0 of OUT" ||
	fail "-p and --cgroup: IN ${n_in:-?} samples, OUT ${n_out:-?}"
kill "$IN" "$OUT"; wait "$IN" "$OUT" 2>/dev/null

start_in "$CG/sub" sleep 3; SIN=$!
sleep 3 & SOUT=$!; PIDS="$PIDS $SOUT"
sleep 0.2
expect_rc "record -a -e off-cpu --cgroup: exit 0" 0 "$FIRN" record -a -e off-cpu --cgroup "$NAME" -d 1 -o "$TMP/o.pb.gz"
n_in=$(samples_of_pid "$TMP/o.pb.gz" "$SIN"); n_out=$(samples_of_pid "$TMP/o.pb.gz" "$SOUT")
grep -q "1 process" "$TMP/err" && is_zero "$n_out" && at_least "$n_in" 900 &&
	grep -q '1 already waiting at the start' "$TMP/err" &&
	pass "-e off-cpu --cgroup: only the sleeper inside, its wait from the start" ||
	fail "-e off-cpu --cgroup: $(head -2 "$TMP/err" | tr '\n' ' ')"
wait "$SIN" "$SOUT" 2>/dev/null

# labels: --process-labels gives exe, cgroup and container_id (a container's scope); without it
# the samples have pid and comm only (as before). Read with go tool pprof, not firn.
start_in "$CG/docker-$ID.scope" "$BUSY" 30; LIN=$!
sleep 0.2
expect_rc "record --process-labels --cgroup SCOPE: exit 0" 0 "$FIRN" record -a --process-labels --cgroup "docker-$ID.scope" -d 1 -o "$TMP/l.pb.gz"
expect_rc "record --cgroup SCOPE (no labels asked): exit 0" 0 "$FIRN" record -a --cgroup "docker-$ID.scope" -d 1 -o "$TMP/l0.pb.gz"
# --push: the labels are on (the profile store's per-sample labels)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir "$TMP/got"
python3 "$ROOT/tests/cli/pyroscope_server.py" "$port" "$TMP/got" &
SRV=$!; PIDS="$PIDS $SRV"
sleep 0.5
expect_rc "record --push --cgroup SCOPE: exit 0" 0 "$FIRN" record -a --cgroup "docker-$ID.scope" --every 1 --push "http://127.0.0.1:$port" -d 1.5
kill "$SRV" "$LIN"; wait "$SRV" "$LIN" 2>/dev/null
if command -v go >/dev/null && go tool pprof -raw "$TMP/l.pb.gz" >"$TMP/l.raw" 2>/dev/null; then
	grep -qF "container_id:[$ID]" "$TMP/l.raw" && grep -qF "cgroup:[/$NAME/docker-$ID.scope]" "$TMP/l.raw" &&
		grep -qF "exe:[$BUSY]" "$TMP/l.raw" && grep -qF "pid:[$LIN]" "$TMP/l.raw" &&
		pass "--process-labels: exe, cgroup, container_id and pid (go tool pprof)" ||
		fail "--process-labels: $(grep -m2 'comm:' "$TMP/l.raw")"
	got=$(for f in "$TMP"/got/*.pb.gz; do go tool pprof -raw "$f" 2>/dev/null; done)
	printf '%s\n' "$got" | grep -qF "container_id:[$ID]" && printf '%s\n' "$got" | grep -qF "exe:[$BUSY]" &&
		pass "--push: the pushed samples have exe, cgroup and container_id labels" ||
		fail "--push: labels: $(printf '%s\n' "$got" | grep -m1 'comm:')"
	go tool pprof -raw "$TMP/l0.pb.gz" 2>/dev/null | grep -q 'comm:\[busy\]' &&
		! go tool pprof -raw "$TMP/l0.pb.gz" 2>/dev/null | grep -q 'exe:\|cgroup:\|container_id:' &&
		pass "without --process-labels: pid and comm only" || fail "without --process-labels: labels differ"
else
	skip "go tool pprof not available"
fi

# names
expect_rc "--cgroup UNIT (foo for foo.service): exit 0" 0 "$FIRN" record -a --cgroup "firn-unit-$$" -d 0.2 -o "$TMP/u.pb.gz"
grep -qF -- "--cgroup firn-unit-$$: '$CG/firn-unit-$$.service'" "$TMP/err" &&
	pass "--cgroup UNIT: says which cgroup it found" || fail "--cgroup UNIT: $(head -1 "$TMP/err")"
expect_rc "--cgroup CONTAINER-ID-PREFIX: exit 0" 0 "$FIRN" record -a --cgroup "${ID:0:12}" -d 0.2 -o "$TMP/c.pb.gz"
grep -qF "'$CG/docker-$ID.scope'" "$TMP/err" && pass "--cgroup ID prefix: the container's scope" ||
	fail "--cgroup ID prefix: $(head -1 "$TMP/err")"
expect_rc "--cgroup NAME that two cgroups have: exit 2" 2 "$FIRN" record -a --cgroup twin -d 0.2 -o "$TMP/t.pb.gz"
grep -q "names several cgroups" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ] &&
	pass "--cgroup ambiguous: one line" || fail "--cgroup ambiguous: $(cat "$TMP/err")"

# errors
expect_rc "--cgroup that does not exist: exit 1" 1 "$FIRN" record -a --cgroup "firn-none-$$" -d 0.2 -o "$TMP/n.pb.gz"
grep -q "^firn: --cgroup: no cgroup 'firn-none-$$'" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ] &&
	pass "--cgroup missing: one line" || fail "--cgroup missing: $(cat "$TMP/err")"
V1=$(awk '$3 == "cgroup" { print $2; exit }' /proc/mounts)
if [ -n "$V1" ]; then
	expect_rc "--cgroup of a cgroup v1 hierarchy: exit 2" 2 "$FIRN" record -a --cgroup "$V1" -d 0.2 -o "$TMP/v.pb.gz"
	grep -q "is a cgroup v1 directory" "$TMP/err" && [ "$(wc -l <"$TMP/err")" = 1 ] &&
		pass "--cgroup v1: one line" || fail "--cgroup v1: $(cat "$TMP/err")"
else
	skip "no cgroup v1 hierarchy mounted"
fi
expect_rc "--cgroup /tmp: exit 2" 2 "$FIRN" record -a --cgroup /sys/fs/cgroup/../../../tmp -d 0.2 -o "$TMP/x.pb.gz"
grep -q "is not a cgroup v2 directory" "$TMP/err" && pass "--cgroup outside cgroupfs: not a cgroup v2 directory" ||
	fail "--cgroup outside cgroupfs: $(cat "$TMP/err")"
args=; for i in $(seq 17); do args="$args --cgroup $NAME"; done
# shellcheck disable=SC2086
expect_rc "--cgroup 17 times: exit 2" 2 "$FIRN" record -a $args -d 0.2 -o "$TMP/m.pb.gz"
