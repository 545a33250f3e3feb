# Files that processes and profiles name are opened safely (lib/base/safeopen): a FIFO as a process's
# perf map (/tmp/perf-PID.map) neither hangs `record -p PID -d 2` nor keeps SIGTERM from ending
# it; a perf map owned by another user, writable by others or a symlink is ignored with a -v
# note, and one behind a symlink in a chroot's root (its /tmp pointing at a host folder) is not
# read from the host; `report --annotate` of a profile whose mapping names a FIFO, a directory or a symlink to
# a FIFO ends at once with a clear message. File descriptors: under `ulimit -Sn 64` a recording
# of 120 distinct binaries still names their frames (firn raises its soft limit; the command gets
# the old limit back), and under a hard `ulimit -n 128` too (it indexes files early to close them); at
# the tightest limit it records under, frames that go unnamed are announced by one warning.
. "$(dirname "$0")/lib.sh"

SRC="$ROOT/tests/fixtures"

# ---- report --annotate (no root needed) ----
mkfifo "$TMP/fifo" && mkdir "$TMP/dir" && ln -s fifo "$TMP/link"
for what in fifo dir link; do
	python3 "$SRC/fifo_pprof.py" "$TMP/$what.pb.gz" "$TMP/$what" || fail "fifo_pprof.py writes $what"
	start=$(date +%s)
	timeout -k 2 10 "$FIRN" report --annotate work "$TMP/$what.pb.gz" >"$TMP/out" 2>"$TMP/err"
	rc=$? took=$(($(date +%s) - start))
	want="firn: cannot annotate 'work': cannot open '$TMP/$what': not a regular file"
	if [ "$rc" -eq 1 ] && [ "$took" -le 5 ] && [ "$(cat "$TMP/err")" = "$want" ]; then
		pass "report --annotate of a profile naming a $what: exit 1 at once, 'not a regular file'"
	else
		fail "report --annotate of a profile naming a $what: exit $rc after ${took}s"
		sed 's/^/    stderr: /' "$TMP/err"
	fi
done

if ! is_root; then skip "recording tests need root"; exit 0; fi
BUSY="$FIX/busy"
PIDS=()
MAPS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	for m in "${MAPS[@]}"; do rm -f "$m"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# busy_for SECONDS: starts the busy fixture; its pid in $BPID, its perf map path in $MAP
busy_for() {
	"$BUSY" "$1" >/dev/null 2>&1 &
	BPID=$!
	PIDS+=("$BPID")
	MAP=/tmp/perf-$BPID.map
	MAPS+=("$MAP")
	rm -f "$MAP"
}

# has_busy FILE: the profile names busy_hot
has_busy() { "$FIRN" report --folded "$1" 2>/dev/null | grep -q ';busy_hot'; }

# ---- a FIFO as the perf map: -d and SIGTERM still end the recording ----
busy_for 60
mkfifo "$MAP"
start=$(date +%s)
timeout -k 5 20 "$FIRN" record -q -p "$BPID" -d 2 -o "$TMP/fifo-d.pb.gz" 2>"$TMP/err"
rc=$? took=$(($(date +%s) - start))
if [ "$rc" -eq 0 ] && [ "$took" -le 15 ] && has_busy "$TMP/fifo-d.pb.gz"; then
	pass "record -p PID -d 2 with a FIFO as perf-PID.map: exit 0 after ${took}s with a profile"
else
	fail "record -p PID -d 2 with a FIFO as perf-PID.map: exit $rc after ${took}s"
	sed 's/^/    stderr: /' "$TMP/err"
fi
"$FIRN" record -q -p "$BPID" -o "$TMP/fifo-term.pb.gz" 2>"$TMP/err" &
fpid=$!
sleep 2
kill -TERM "$fpid"
for _ in $(seq 1 100); do kill -0 "$fpid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$fpid" 2>/dev/null; then
	kill -KILL "$fpid"
	wait "$fpid" 2>/dev/null
	fail "record -p PID with a FIFO as perf-PID.map still runs 10 s after SIGTERM"
else
	wait "$fpid"
	rc=$?
	check "record -p PID with a FIFO as perf-PID.map ends on SIGTERM (exit $rc) with a profile" \
		has_busy "$TMP/fifo-term.pb.gz"
fi
rm -f "$MAP"

# ---- perf maps that are not the process's own are ignored, with a -v note ----
# map_note NAME WANT: records -v for a second; passes when stderr has the one note WANT about
# $MAP (with WANT empty: no note at all)
map_note() {
	"$FIRN" -v record -q -p "$BPID" -d 1 -o "$TMP/map.pb.gz" 2>"$TMP/err"
	local rc=$? line want=
	line=$(grep "ignoring '/tmp/perf-$BPID.map'" "$TMP/err")
	[ -n "$2" ] && want="firn: ignoring '/tmp/perf-$BPID.map' of pid $BPID: $2"
	if [ "$rc" -eq 0 ] && [ "$line" = "$want" ]; then
		pass "$1"
	else
		fail "$1: exit $rc"; sed 's/^/    stderr: /' "$TMP/err" | head -5
	fi
}
printf '7f0000001000 100 jit_fn\n' >"$MAP"
chmod 644 "$MAP"
map_note "a root-owned perf map of a root process is read" ""
chown 65534 "$MAP"
map_note "a perf map owned by another user is ignored" \
	"not owned by the process's user or root, or writable by others"
chown 0 "$MAP" && chmod 666 "$MAP"
map_note "a perf map anyone may write is ignored" \
	"not owned by the process's user or root, or writable by others"
rm -f "$MAP" && printf '7f0000001000 100 jit_fn\n' >"$TMP/real.map" && ln -s "$TMP/real.map" "$MAP"
map_note "a perf map that is a symlink is ignored" "a symbolic link"
rm -f "$MAP"
kill "$BPID" 2>/dev/null

# ---- a perf map inside a process's root is looked for in that root only ----
# A static program in a chroot runs code it copied to 0x200000000 (anonymous, executable). With
# the root's /tmp a folder holding its map, the map names that code; with /tmp an absolute
# symlink to a host folder (a container's), the map planted there is not read: the symlink
# resolves inside the root, not on the host.
JR="$TMP/jroot" HOSTDIR="$TMP/hostmaps"
mkdir -p "$JR" "$HOSTDIR"
cat >"$TMP/jit.c" <<'C'
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
/* copies a counting loop to 0x200000000 and calls it for argv[1] seconds */
int main(int argc, char **argv)
{
	static const unsigned char loop[] = { 0x48, 0xc7, 0xc1, 0x00, 0x00, 0x10, 0x00, /* mov rcx, 1M */
					      0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 }; /* dec; jnz; ret */
	void *p = mmap((void *)0x200000000, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	time_t end = time(NULL) + (argc > 1 ? atoi(argv[1]) : 3);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, loop, sizeof(loop));
	while (time(NULL) < end)
		((void (*)(void))p)();
	return 0;
}
C
# jit_names WHAT: runs the program in the chroot for 3 s, its map written where WHAT says
# (root: in the root's /tmp folder; host: in the host folder the root's /tmp links to), records
# it for 2 s and prints the JIT names in its folded stacks
jit_names() {
	rm -rf "$JR/tmp" "$HOSTDIR"/*
	if [ "$1" = root ]; then mkdir "$JR/tmp"; else ln -s "$HOSTDIR" "$JR/tmp"; fi
	chroot "$JR" /jit 3 &
	local jpid=$! dir="$JR/tmp"
	PIDS+=("$jpid")
	[ "$1" = host ] && dir=$HOSTDIR
	printf '200000000 20 %s_jit_fn\n' "$1" >"$dir/perf-$jpid.map"
	"$FIRN" -v record -q -p "$jpid" -d 2 -o "$TMP/jit-$1.pb.gz" 2>"$TMP/jit-$1.err"
	wait "$jpid"
	"$FIRN" report --folded "$TMP/jit-$1.pb.gz" | grep -o '[a-z]*_jit_fn[^; ]*' | sort | uniq -c
}
if gcc -static -O2 -o "$JR/jit" "$TMP/jit.c"; then
	own=$(jit_names root)
	planted=$(jit_names host)
	echo "# map in the root's /tmp: ${own:-no JIT names}; planted on the host: ${planted:-no JIT names}"
	grep -q 'root_jit_fn_\[j\]' <<<"$own" \
		&& pass "a chroot's own /tmp/perf-PID.map names its JIT code" \
		|| { fail "a chroot's own perf map not read"; sed 's/^/    stderr: /' "$TMP/jit-root.err" | head -5; }
	[ -z "$planted" ] && "$FIRN" report --folded "$TMP/jit-host.pb.gz" | grep -q '^jit' \
		&& pass "a perf map behind the chroot's /tmp -> host symlink is not read" \
		|| { fail "the host's planted perf map named the chroot's code: $planted"; head -5 "$TMP/jit-host.err"; }
else
	fail "cannot build a static program (libc6-dev's libc.a)"
fi

# ---- file descriptors ----
if [ "$(ulimit -Hn)" != unlimited ] && [ "$(ulimit -Hn)" -lt 1024 ]; then
	skip "the hard limit on open files is $(ulimit -Hn): too low to test raising the soft one"
	exit 0
fi
mkdir "$TMP/bins"
for i in $(seq 1 120); do cp "$BUSY" "$TMP/bins/busy$i"; done
# many.sh SECONDS: 120 distinct binaries at once, niced (so firn, not starved of CPU by them,
# snapshots each while it runs); the soft limit the command got goes to child-limit
cat >"$TMP/many.sh" <<EOS
#!/bin/bash
ulimit -Sn >"$TMP/child-limit"
for i in \$(seq 1 120); do nice -n 19 "$TMP/bins/busy\$i" "\$1" >/dev/null 2>&1 & done
wait
EOS
chmod +x "$TMP/many.sh"
# named FILE: "NAMED TOTAL" samples of the busy copies, named when busy_hot or busy_cold is there
named() {
	"$FIRN" report --folded "$1" 2>/dev/null |
		awk '$1 ~ /^busy[0-9]+;/ { t += $NF; if ($0 ~ /;busy_(hot|cold)/) n += $NF }
			END { print n + 0, t + 0 }'
}
# expect_named NAME FILE RC: exit 0 and at least half of 50 or more samples named
expect_named() {
	local n t
	read -r n t < <(named "$2")
	if [ "$3" -eq 0 ] && [ "$t" -ge 50 ] && [ $((100 * n)) -ge $((50 * t)) ]; then
		pass "$1: $n of $t samples named"
	else
		fail "$1: exit $3, $n of $t samples named (want half of 50 or more)"
		sed 's/^/    stderr: /' "$TMP/err" | head -5
	fi
}
# measured (120 copies, 4 s): 83-96 % named; before: 12-22 % under either limit
(ulimit -Sn 64 && "$FIRN" record -q -o "$TMP/soft.pb.gz" -- "$TMP/many.sh" 4) 2>"$TMP/err"
expect_named "ulimit -Sn 64, 120 binaries (firn raises its soft limit)" "$TMP/soft.pb.gz" $?
check "the command keeps the soft limit it was given (64)" [ "$(cat "$TMP/child-limit")" = 64 ]
check "no warning about file descriptors when the limit could be raised" \
	eval '! grep -q "file descriptors" "$TMP/err"'
# the hard limit sits above firn's own descriptors (about 100 at their peak: the BPF maps of
# the Java, Go-label and OpenTelemetry walkers came on top of the 57 of the live heap's and the
# new-code watch's time, with programs, links, perf events, rings) and far below the 120
# binaries' files
(ulimit -n 128 && "$FIRN" record -q -o "$TMP/hard.pb.gz" -- "$TMP/many.sh" 4) 2>"$TMP/err"
expect_named "ulimit -n 128 (hard too), 120 binaries (firn indexes files early to close them)" \
	"$TMP/hard.pb.gz" $?
# the tightest hard limit firn records under (BPF and perf events take most of it): when the
# frames go unnamed there, one warning says so
for lim in $(seq 30 2 160); do
	(ulimit -n "$lim" && "$FIRN" record -q -o "$TMP/tight.pb.gz" -- "$TMP/many.sh" 1) 2>"$TMP/err" &&
		break
done
read -r n t < <(named "$TMP/tight.pb.gz")
want="firn: warning: out of file descriptors (limit $lim): some symbols are missing"
warned=$(grep -c "file descriptors" "$TMP/err")
if { [ "$t" -gt 0 ] && [ $((100 * n)) -ge $((50 * t)) ] && [ "$warned" -eq 0 ]; } ||
	{ [ "$warned" -eq 1 ] && grep -qxF "$want" "$TMP/err"; }; then
	pass "ulimit -n $lim (the tightest that records): $n of $t named, $warned warning"
else
	fail "ulimit -n $lim (the tightest that records): $n of $t named, $warned warnings"
	sed 's/^/    stderr: /' "$TMP/err" | head -5
fi
