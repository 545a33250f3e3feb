# Every sample is counted in the summary's frames line: named, or unnamed by the worst reason of
# its frames; and the process records the kernel lost are said. A stripped copy of the busy
# fixture: all its samples have a frame without a symbol (no symbol = all of them). Then firn
# is stopped (SIGSTOP) for 3 s while a loop starts short processes (what made half the samples
# [unknown] after 30 s, uncounted): the line's counts add up, to the first line's samples and
# to the profile's.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi

# frames FILE: "TOTAL NAMED UNNAMED SUM_OF_REASONS NO_SYMBOL" from the frames line of FILE
frames() {
	sed -n 's/^firn: frames: \([0-9]*\) samples, \([0-9]*\) with every frame named, \([0-9]*\) with unnamed frames (process gone before it was seen \([0-9]*\), address in no known mapping \([0-9]*\), file unreadable \([0-9]*\), JIT code without a perf map entry \([0-9]*\), no symbol \([0-9]*\)); lost by the kernel: \([0-9]*\) process records, \([0-9]*\) notices$/\1 \2 \3 \4 \5 \6 \7 \8 \9/p' "$1"
}
# adds_up ERR PROFILE: the frames line adds up, to the first line and to the profile
adds_up() {
	local l t named unnamed a b c d e lost total first
	l=$(frames "$1")
	[ -n "$l" ] || { echo "no frames line: $(grep '^firn' "$1" | head -2)"; return 1; }
	read -r t named unnamed a b c d e lost <<<"$l"
	first=$(sed -n 's/^firn: \([0-9]*\) samples, .*/\1/p' "$1")
	total=$("$FIRN" report --folded "$2" 2>/dev/null | awk '{ t += $NF } END { print t + 0 }')
	echo "total $t named $named unnamed $unnamed (gone $a, no mapping $b, no file $c, jit $d, no symbol $e), records lost $lost; first line $first, profile $total"
	[ "$t" -eq $((named + unnamed)) ] && [ "$unnamed" -eq $((a + b + c + d + e)) ] &&
		[ "$t" -eq "$first" ] && [ "$t" -eq "$total" ] && [ "$t" -gt 0 ]
}

cp "$FIX/busy" "$TMP/busy-stripped" && strip "$TMP/busy-stripped"
"$FIRN" record -d 1 -o "$TMP/s.pb.gz" -- "$TMP/busy-stripped" 5 2>"$TMP/s.err"
if got=$(adds_up "$TMP/s.err" "$TMP/s.pb.gz"); then
	read -r t unnamed nosym <<<"$(frames "$TMP/s.err" | awk '{ print $1, $3, $8 }')"
	[ "$unnamed" -eq "$t" ] && [ "$nosym" -eq "$t" ] \
		&& pass "a stripped program: all $t samples counted with unnamed frames, under no symbol" \
		|| fail "stripped: $got"
else fail "stripped: $got"; fi

"$FIRN" record -d 5 -o "$TMP/p.pb.gz" -- sh -c "while :; do '$FIX/shortlived' 20; done" 2>"$TMP/p.err" &
fpid=$!
sleep 1
kill -STOP "$fpid"; sleep 3; kill -CONT "$fpid"
wait "$fpid"
rc=$?
got=$(adds_up "$TMP/p.err" "$TMP/p.pb.gz") && [ "$rc" -eq 143 ] \
	&& pass "firn stopped 3 s among short processes: every sample counted ($got)" \
	|| fail "stopped firn: exit $rc, $got"
