# Interrupting `firn record -- CMD` at random moments (starting, attaching, sampling, symbolizing,
# writing): 50 trials of SIGINT or SIGTERM 0-1.5 s in, against a command that itself runs
# 0-2.5 s; half of them over an existing output, a quarter with a second signal. Each time: firn
# exits in time without crashing; the output is absent, the old file, or a complete profile that
# firn report reads (never torn); no temporary file stays; an old file replaced is kept whole as
# FILE.old; the command is neither left running nor stopped. FIRN_INTERRUPT_SEED=N replays one
# sequence, FIRN_INTERRUPT_TRIALS=N changes the count.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
SPLIT="$FIX/split"
TRIALS=${FIRN_INTERRUPT_TRIALS:-50}
RANDOM=${FIRN_INTERRUPT_SEED:-$$}
echo "# seed ${FIRN_INTERRUPT_SEED:-$$}"

printf 'main;old 7\n' >"$TMP/old.folded"
"$FIRN" report --pprof -o "$TMP/old.pb.gz" "$TMP/old.folded" || exit 1

# valid FILE: firn report reads FILE whole
valid() { gzip -t "$1" 2>/dev/null && "$FIRN" report --folded "$1" >/dev/null 2>&1; }

bad=0 wrote=0 kept=0 none=0 stopped=0 finished=0
for i in $(seq 1 "$TRIALS"); do
	d="$TMP/t$i"
	mkdir "$d"
	old=$((RANDOM % 2))
	[ "$old" -eq 1 ] && cp "$TMP/old.pb.gz" "$d/out.pb.gz"
	delay=$(printf '0.%03d' $((RANDOM % 1000)))
	[ $((RANDOM % 3)) -eq 0 ] && delay=1.$(printf '%03d' $((RANDOM % 500)))
	sig=$([ $((RANDOM % 2)) -eq 0 ] && echo INT || echo TERM)
	rounds=$((1 + RANDOM % 500))
	tag=$((900000 + i)) # an exit status only this trial's command has on its command line
	"$FIRN" record -q -F 997 -o "$d/out.pb.gz" -- "$SPLIT" "$rounds" "$tag" 2>"$d/err" &
	fpid=$!
	sleep "$delay"
	kill -s "$sig" "$fpid" 2>/dev/null
	twice=$((RANDOM % 4 == 0)) # an impatient user: a second signal 50 ms later
	[ "$twice" -eq 1 ] && sleep 0.05 && kill -s INT "$fpid" 2>/dev/null
	for _ in $(seq 1 300); do kill -0 "$fpid" 2>/dev/null || break; sleep 0.05; done
	what="trial $i ($sig at ${delay}s, twice: $twice, $rounds rounds, old file: $old)"
	if kill -0 "$fpid" 2>/dev/null; then
		fail "$what: firn still runs 15 s after the signal"; kill -9 "$fpid"; bad=$((bad + 1))
	fi
	wait "$fpid"
	rc=$?
	[ "$rc" -eq 143 ] && stopped=$((stopped + 1))
	[ "$rc" -eq $((tag & 255)) ] && finished=$((finished + 1))
	problems=()
	# firn's exit: 0, the command's (its tag & 255, or 143 after firn's SIGTERM), or death by
	# the signal itself before its handler was installed (130, 143); never a crash
	case $rc in
	0 | 130 | 143 | $((tag & 255))) ;;
	*) problems+=("exit $rc: $(head -2 "$d/err" | tr '\n' ' ')") ;;
	esac
	left=$(cd "$d" && ls -A | grep -vx -e out.pb.gz -e out.pb.gz.old -e err)
	[ -n "$left" ] && problems+=("left behind: $left")
	if [ -e "$d/out.pb.gz" ]; then
		valid "$d/out.pb.gz" || problems+=("torn output")
		if cmp -s "$d/out.pb.gz" "$TMP/old.pb.gz"; then kept=$((kept + 1)); else wrote=$((wrote + 1)); fi
	else
		none=$((none + 1))
		[ "$old" -eq 1 ] && problems+=("the old output vanished")
	fi
	if [ -e "$d/out.pb.gz.old" ] && ! cmp -s "$d/out.pb.gz.old" "$TMP/old.pb.gz"; then
		problems+=("FILE.old is not the old file")
	fi
	if [ "$old" -eq 0 ] && [ -e "$d/out.pb.gz.old" ]; then problems+=("a FILE.old from nowhere"); fi
	left=$(pgrep -f -- "$SPLIT $rounds $tag\$")
	if [ -n "$left" ]; then
		problems+=("command left behind: $(ps -o pid=,stat=,args= -p "$left" | tr '\n' ' ')")
		kill -9 $left
	fi
	if [ ${#problems[@]} -gt 0 ]; then
		fail "$what: ${problems[*]}"; bad=$((bad + 1))
	fi
done
echo "# $TRIALS trials: the command ended by firn $stopped, finished first $finished;" \
	"new profile written $wrote, old file kept $kept, no file $none"
check "$TRIALS interrupted recordings: no crash, no torn file, nothing left behind" [ "$bad" -eq 0 ]
check "the trials wrote new profiles" [ "$wrote" -gt 0 ]
