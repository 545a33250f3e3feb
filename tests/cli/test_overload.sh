# Overload: 10 kHz sampling of a 32-deep call chain without frame pointers (DWARF unwinding) in
# two threads, one per CPU, for 5 s. The summary must count lost samples (the map-full causes
# being part of them) and agree with the profile's total; stacks stay complete; firn's peak RSS
# (VmHWM) stays under 256 MiB and its own CPU time under 30 % of one CPU.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
SECS=5
"$FIRN" record -F 10000 -d "$SECS" -o "$TMP/over.pb.gz" -- "$FIX/deep" -t 2 -1 2>"$TMP/err" &
fpid=$!
peak=0 cpu=0
hz=$(getconf CLK_TCK)
while kill -0 "$fpid" 2>/dev/null; do
	v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$fpid/status" 2>/dev/null)
	[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
	# utime + stime (fields 14, 15; the comm field has no spaces here)
	t=$(awk '{ print $14 + $15 }' "/proc/$fpid/stat" 2>/dev/null)
	[ -n "$t" ] && cpu=$t
	sleep 0.1
done
wait "$fpid"
rc=$?
cat "$TMP/err" | sed 's/^/# /'
# the command runs until firn ends it at the deadline: SIGTERM, status 128 + 15
check "record exits with the ended command's status (143)" [ "$rc" -eq 143 ]
re='^firn: ([0-9]+) samples, ([0-9]+) lost \(counts map full ([0-9]+), stack map full ([0-9]+)[,)].*'
read -r samples lost cfull sfull < <(sed -nE "s/$re/\1 \2 \3 \4/p" "$TMP/err")
check "the summary reports samples and lost samples" [ -n "$lost" ]
check "lost ($lost) includes the map-full losses ($cfull + $sfull)" \
	[ "${lost:-0}" -ge $((${cfull:-0} + ${sfull:-0})) ]
check "samples: $samples (>= 1000 per second)" [ "${samples:-0}" -ge $((1000 * SECS)) ]
"$FIRN" report --folded "$TMP/over.pb.gz" >"$TMP/over.folded"
total=$(awk '{ s += $NF } END { print s + 0 }' "$TMP/over.folded")
check "summary samples ($samples) = the profile's total ($total)" [ "${samples:-x}" = "$total" ]
full=$(awk '/;d00;d01;.*;d30;d31;bottom(_\[i\])?;hot( |;)/ { c += $NF } END { print c + 0 }' \
	"$TMP/over.folded")
check "complete 32-deep stacks: $full of $total (>= 90 %)" [ $((full * 10)) -ge $((total * 9)) ]
check "firn's peak RSS: $peak KiB (< 256 MiB)" [ $((peak > 0 && peak < 262144)) -eq 1 ]
pct=$((cpu * 100 / hz / SECS))
check "firn's own CPU: $((cpu * 1000 / hz)) ms in ${SECS} s ($pct % of one CPU, < 30 %)" \
	[ "$pct" -lt 30 ]
