# Short-lived processes: a shell loop starts a 15 ms program 100 times. Each process is known from
# the kernel's records of its fork, exec and mappings (lib/proc/procevents.h) — libc is mapped by ld.so
# after the exec, often after the first sample, and the process is gone before a later look at
# /proc could find it. Its samples must carry no [unknown] frame (<= 1 %) and name their libc
# frames: __libc_start_call_main below main, and qsort's (__qsort_r) between sort_round and the
# comparison (>= 99 % each). (Before the events: 27 % with an [unknown] frame, 85 % named.)
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
cat >"$TMP/loop.sh" <<LOOP
for i in \$(seq 100); do "$FIX/shortlived" 15; done
LOOP
# ahead of whatever else loads the machine: what is checked is what firn learns about its own
# target's processes, not whether a shared host lets the loop run
nice -n -10 "$FIRN" record -F 499 -o "$TMP/short.pb.gz" -- bash "$TMP/loop.sh" 2>"$TMP/err"
check "record of the loop exits 0" [ $? -eq 0 ]
"$FIRN" report --folded "$TMP/short.pb.gz" | grep '^shortlived;' >"$TMP/short.folded"

# sum REGEX: the samples of shortlived whose stack matches REGEX
sum() { awk -v re="$1" '$0 ~ re { c += $NF } END { print c + 0 }' "$TMP/short.folded"; }
total=$(sum '.')
echo "# $total samples of shortlived"
check "enough samples to judge 1 % ($total >= 300)" [ "$total" -ge 300 ]
unknown=$(sum '\[unknown\]|;0x[0-9a-f]+($|;| )')
check "samples with an [unknown] frame: $unknown of $total (<= 1 %)" [ $((unknown * 100)) -le "$total" ]
own=$(sum ';main;sort_round;')
named=$(sum ';__libc_start_call_main;main;sort_round;')
check "under main: $named of $own name __libc_start_call_main below it (>= 99 %)" \
	[ "$own" -gt 0 -a $((named * 100)) -ge $((own * 99)) ]
sorting=$(sum ';sort_round;.*msort')
through=$(sum ';sort_round;__qsort_r;msort')
check "in qsort: $through of $sorting name __qsort_r above sort_round (>= 99 %)" \
	[ "$sorting" -gt 0 -a $((through * 100)) -ge $((sorting * 99)) ]
