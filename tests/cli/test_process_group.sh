# `firn record -- CMD` ends the command's whole tree, not only the command: the command runs in
# a process group of its own, and at -d, SIGINT or SIGTERM (or when the command exits first)
# what still runs of that group gets SIGTERM, then SIGKILL after 2 s. Each case: firn's exit
# status is the command's (143 after SIGTERM, 137 after SIGKILL) and no spinner started by the
# command runs once firn has exited. On a terminal the command's group gets it (it reads it).
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
SPIN="$TMP/fspin$$" # a name only this test's spinners have (comm keeps 15 bytes)
cp "$FIX/busy" "$SPIN" || exit 1
NAME=$(basename "$SPIN")

# left: the spinners that still run (zombies waiting for a reaper do not count)
left() {
	local p
	for p in $(pgrep -x "$NAME"); do
		case $(ps -o stat= -p "$p" 2>/dev/null) in Z* | "") ;; *) echo "$p" ;; esac
	done
}

# case NAME WANT_RC SIGNAL SH_SCRIPT [OPTIONS...]: records sh -c SH_SCRIPT (SIGNAL: none, or
# INT/TERM sent to firn 0.7 s in), checks firn's exit status and that no spinner is left.
case_of() {
	local what=$1 want=$2 sig=$3 script=$4
	shift 4
	"$FIRN" record -q -o "$TMP/p.pb.gz" "$@" -- sh -c "$script" 2>"$TMP/err" &
	local fpid=$!
	if [ "$sig" != none ]; then sleep 0.7; kill -s "$sig" "$fpid"; fi
	wait "$fpid"
	local rc=$? l
	l=$(left)
	if [ "$rc" -eq "$want" ] && [ -z "$l" ]; then pass "$what: exit $rc, no spinner left"; else
		fail "$what: exit $rc (wanted $want), left: ${l:-none}"; head -3 "$TMP/err"
		[ -n "$l" ] && kill -9 $l
	fi
}

case_of "-d 1 ends sh and its two background spinners" 143 none "$SPIN & $SPIN & wait" -d 1
case_of "SIGINT to firn ends the command's tree" 143 INT "$SPIN & wait"
case_of "SIGTERM to firn ends the command's tree" 143 TERM "$SPIN & wait"
case_of "a command whose tree ignores SIGTERM: SIGKILL to the group after 2 s" 137 none \
	"trap '' TERM; $SPIN & wait" -d 0.5
case_of "the command exits first: what it left running is ended" 3 none "$SPIN & sleep 0.3; exit 3"

# a spinner that left the group (setsid) is no longer the command's: it is left alone
"$FIRN" record -q -d 0.5 -o "$TMP/p.pb.gz" -- sh -c "setsid $SPIN 30 & wait" 2>"$TMP/err"
rc=$? l=$(left)
if [ "$rc" -eq 143 ] && [ -n "$l" ]; then pass "a process in a session of its own outlives the recording"; else
	fail "setsid spinner: exit $rc, left: ${l:-none}"; fi
[ -n "$l" ] && kill -9 $l

# on a terminal (script(1) gives firn one, firn in its foreground) the command reads it
if command -v script >/dev/null; then
	got=$(printf 'hello\n' | timeout 20 script -qec "'$FIRN' record -q -o '$TMP/t.pb.gz' -- sh -c 'read l; echo got:\$l'" /dev/null 2>&1)
	case $got in
	*got:hello*) pass "on a terminal the command's group reads it" ;;
	*) fail "on a terminal: '$got'" ;;
	esac
fi
