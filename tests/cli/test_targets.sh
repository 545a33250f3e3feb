# Targets and the options record and top share: -p lists (each pid once, no empty items), -d in
# decimal only, zombies (refused at the start, and the recording ends when every target became
# one), -F above the kernel's maximum (lowered, as perf does) and above 10000 Hz (a warning of the
# cost), a -- COMMAND that dies with firn, and a command's stdout kept out of a profile written
# to stdout.
. "$(dirname "$0")/lib.sh"

BUSY="$FIX/busy"

# 1. usage errors (no root needed): empty -p items, -d not in decimal
for v in "1,," "1," ",1" "1,,2"; do
	expect_rc "record -p '$v' exits 2" 2 "$FIRN" record -p "$v" -d 1 -o "$TMP/u.pb.gz"
	grep -q "^firn record: invalid value '$v' for --pid (an empty item)$" "$TMP/err" \
		&& pass "... naming the empty item" || fail "-p '$v' message: $(cat "$TMP/err")"
done
expect_rc "top -p '1,' exits 2" 2 "$FIRN" top --stdio -n 1 -p 1,
expect_rc "record -p with a 40-digit pid exits 2" 2 "$FIRN" record -p "1,$(printf '9%.0s' $(seq 40))" -d 1 -o "$TMP/u.pb.gz"
grep -q "^firn record: invalid value '9\{40\}' for --pid (an integer from 1 to 2147483647)$" "$TMP/err" \
	&& pass "... naming the whole item" || fail "long pid message: $(cat "$TMP/err")"
for v in 0x10 0X1p4 inf nan " 5" 1e3x; do
	expect_rc "record -d '$v' exits 2" 2 "$FIRN" record -a -d "$v" -o "$TMP/u.pb.gz"
	grep -q "^firn record: invalid value '$v' for --duration" "$TMP/err" && pass "... with the value in the message" \
		|| fail "-d '$v' message: $(cat "$TMP/err")"
done
expect_rc "top -d 0x10 exits 2" 2 "$FIRN" top --stdio -n 1 -a -d 0x10

if ! is_root; then skip "recording tests need root"; exit 0; fi

# pid_state PID: the state letter of /proc/PID/stat ("" when gone)
pid_state() { sed -n 's/.*) \(.\) .*/\1/p' "/proc/$1/stat" 2>/dev/null; }

# 2. -p B,B and -p B -p B are one process, -p B,C,B two (the summary counts the processes in the
# profile, as firn report does: busy targets, so that each has samples: 1.5 s, so that each gets
# some even when the machine is loaded); -p 1,1 is accepted
"$BUSY" 8 & b1=$!
"$BUSY" 8 & b2=$!
for args in "-p $b1,$b1" "-p $b1 -p $b1"; do
	# shellcheck disable=SC2086
	"$FIRN" record -d 0.5 $args -o "$TMP/dup.pb.gz" 2>"$TMP/dup.err"
	rc=$?
	[ $rc -eq 0 ] && grep -q ", 1 process, " "$TMP/dup.err" && pass "record $args: 1 process in the summary" \
		|| fail "record $args (exit $rc): $(head -1 "$TMP/dup.err")"
done
"$FIRN" record -d 1.5 -p "$b1,$b2,$b1" -o "$TMP/dup.pb.gz" 2>"$TMP/dup.err"
grep -q ", 2 processes, " "$TMP/dup.err" && pass "record -p B,C,B: 2 processes" || fail "-p B,C,B: $(head -1 "$TMP/dup.err")"
expect_rc "record -p 1,1: exit 0" 0 "$FIRN" record -q -d 0.2 -p 1,1 -o "$TMP/dup.pb.gz"
"$FIRN" top --stdio -n 1 -d 0.1 -p "$$,$$" >"$TMP/top.out" 2>&1
grep -q "^firn top: pid $$ ([a-z]*) " "$TMP/top.out" && pass "top -p \$\$,\$\$: the header names one pid" \
	|| fail "top -p \$\$,\$\$ header: $(head -1 "$TMP/top.out")"
kill "$b1" "$b2" 2>/dev/null; wait "$b1" "$b2" 2>/dev/null

# 3. zombies: `sh -c 'sleep N & exec sleep M'`: the exec'd sleep never waits for the first one,
# which stays a zombie from its end until M runs out.
sh -c 'sleep 0.1 & exec sleep 20' &
zparent=$!
sleep 0.6
zombie=$(pgrep -P "$zparent" | head -1)
if [ -n "$zombie" ] && [ "$(pid_state "$zombie")" = Z ]; then
	expect_rc "record -p ZOMBIE exits 1" 1 "$FIRN" record -d 5 -p "$zombie" -o "$TMP/z.pb.gz"
	[ "$(cat "$TMP/err")" = "firn: process $zombie has exited" ] && pass "... 'process N has exited'" \
		|| fail "zombie message: $(cat "$TMP/err")"
	[ ! -e "$TMP/z.pb.gz" ] && pass "... and writes nothing" || fail "a profile of a zombie was written"
	expect_rc "record -p LIVE,ZOMBIE exits 1" 1 "$FIRN" record -d 5 -p "$$,$zombie" -o "$TMP/z.pb.gz"
else
	fail "no zombie to test with (pid '${zombie:-}', state '$(pid_state "${zombie:-0}")')"
fi
kill "$zparent" 2>/dev/null; wait "$zparent" 2>/dev/null
# a target that becomes a zombie 1 s in ends a 15 s recording
sh -c 'sleep 1 & exec sleep 20' &
zparent=$!
sleep 0.2
child=$(pgrep -P "$zparent" | head -1)
start=$(date +%s%N)
"$FIRN" record -d 15 -p "$child" -o "$TMP/z2.pb.gz" 2>"$TMP/z2.err"
rc=$? ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 0 ] && [ "$ms" -lt 6000 ] && pass "a target that became a zombie ends the recording (after $ms ms of -d 15)" \
	|| fail "zombie target: exit $rc after $ms ms (state now '$(pid_state "$child")'): $(head -2 "$TMP/z2.err")"
kill "$zparent" 2>/dev/null; wait "$zparent" 2>/dev/null

# 4. -F: above 10000 Hz a warning of the cost; above kernel.perf_event_max_sample_rate lowered
# to it with a warning (as perf record does)
MAXF=/proc/sys/kernel/perf_event_max_sample_rate
if [ "$(cat "$MAXF")" -ge 20000 ]; then
	expect_rc "record -F 20000 exits 0" 0 "$FIRN" record -q -F 20000 -o "$TMP/f.pb.gz" -- sleep 0.2
	grep -q "^firn: warning: sampling at 20000 Hz slows the profiled threads down" "$TMP/err" \
		&& [ "$(grep -c warning "$TMP/err")" = 1 ] && pass "... with one warning of the cost" || fail "-F 20000 warning: $(cat "$TMP/err")"
else
	skip "the kernel's maximum sample rate is below 20000 Hz: -F 20000 alone"
fi
expect_rc "record -F 10000 exits 0" 0 "$FIRN" record -q -F 10000 -o "$TMP/f.pb.gz" -- sleep 0.2
[ ! -s "$TMP/err" ] && pass "... without a warning" || fail "-F 10000 warned: $(cat "$TMP/err")"
old_max=$(cat "$MAXF")
if echo 30000 >"$MAXF" 2>/dev/null; then
	trap 'echo "$old_max" >"$MAXF"; rm -rf "$TMP"' EXIT
	expect_rc "record -F 100000 with a kernel maximum of 30000 exits 0" 0 \
		"$FIRN" record -q -F 100000 -o "$TMP/f.pb.gz" -- sleep 0.2
	echo "$old_max" >"$MAXF"
	grep -qx "firn: warning: maximum sample rate exceeded (kernel.perf_event_max_sample_rate): sampling at 30000 Hz instead of 100000 Hz" "$TMP/err" \
		&& pass "... lowered to 30000 Hz with a warning" || fail "-F over the maximum: $(cat "$TMP/err")"
	grep -q "^firn: warning: sampling at 30000 Hz slows" "$TMP/err" && pass "... and the cost warning at 30000 Hz" \
		|| fail "-F over the maximum, cost warning: $(cat "$TMP/err")"
	if command -v go >/dev/null; then
		period=$(go tool pprof -raw "$TMP/f.pb.gz" 2>/dev/null | sed -n 's/^Period: //p')
		[ "$period" = $((1000000000 / 30000)) ] && pass "... the profile's period is 1/30000 s" \
			|| fail "period of the lowered recording: '$period'"
	fi
else
	skip "cannot set $MAXF"
fi

# 5. the -- COMMAND dies with firn (PR_SET_PDEATHSIG), even when firn is SIGKILLed
"$FIRN" record -q -o "$TMP/k.pb.gz" -- "$BUSY" 60 &
fpid=$!
for _ in $(seq 50); do child=$(pgrep -P "$fpid" | head -1); [ -n "$child" ] && break; sleep 0.1; done
sleep 0.5
st=$(pid_state "${child:-0}")
if [ -n "$child" ] && { [ "$st" = R ] || [ "$st" = S ]; }; then
	kill -KILL "$fpid"
	wait "$fpid" 2>/dev/null
	for _ in $(seq 30); do st=$(pid_state "$child"); [ -z "$st" ] || [ "$st" = Z ] && break; sleep 0.1; done
	st=$(pid_state "$child")
	[ -z "$st" ] || [ "$st" = Z ] && pass "SIGKILL of firn ends the command (pid $child)" \
		|| { fail "the command outlived firn's SIGKILL (state $st)"; kill "$child"; }
else
	fail "no running command under firn (child '${child:-}')"
fi

# 6. -o - : the command's stdout goes to stderr, never into the profile
"$FIRN" record -q --format folded -o - -- sh -c 'echo status 12345; exec "$0" 1' "$BUSY" \
	>"$TMP/fold.out" 2>"$TMP/fold.err"
rc=$?
[ $rc -eq 0 ] && pass "record --format folded -o - -- CMD exits 0" || fail "record -o - exit $rc: $(cat "$TMP/fold.err")"
! grep -q "^status" "$TMP/fold.out" && pass "... no line of the command's output in the profile" \
	|| fail "the command's stdout went into the profile: $(grep "^status" "$TMP/fold.out")"
grep -qx "status 12345" "$TMP/fold.err" && pass "... the command's output is on stderr" || fail "command output on stderr: $(cat "$TMP/fold.err")"
awk 'NR == 1 && /^# firn folded stacks/ { next } $NF !~ /^[0-9]+$/ { bad = 1 } END { exit bad || NR < 2 }' "$TMP/fold.out" \
	&& grep -q "^busy;.*busy_hot [0-9]*$" "$TMP/fold.out" && pass "... stdout is folded stacks only (busy_hot found)" \
	|| { fail "folded output"; head -3 "$TMP/fold.out"; }
# the summary names standard output as such, not as '-'
"$FIRN" record -o - -- "$BUSY" 0.2 >/dev/null 2>"$TMP/std.err"
grep -q "wrote standard output ([0-9]* bytes)$" "$TMP/std.err" && pass "summary: wrote standard output" \
	|| fail "summary for -o -: $(head -1 "$TMP/std.err")"
"$FIRN" record -q -o "$TMP/file.pb.gz" -- sh -c 'echo to stdout' >"$TMP/file.out" 2>/dev/null
grep -qx "to stdout" "$TMP/file.out" && pass "with -o FILE the command's stdout stays stdout" || fail "-o FILE: command stdout: $(cat "$TMP/file.out")"
