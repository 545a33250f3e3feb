# --call-graph fp: a frame-pointer walk whose last step read data, not a return address (code
# without frame pointers leaves rbp holding data: ld.so's start-up, Debian's libc), ends the
# stack before that frame instead of adding an [unknown] root — what 2.4 % of a churn loop's
# samples had (bench/churn.sh), against 0.1 % with DWARF unwinding.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi

# fpgarbage spins with rbp pointing at a fake frame whose return address is data
"$FIRN" record --call-graph fp -F 499 -o "$TMP/g.pb.gz" -- "$FIX/fpgarbage" 1 2>"$TMP/err"
check "record --call-graph fp of fpgarbage exits 0" [ $? -eq 0 ]
"$FIRN" report --folded "$TMP/g.pb.gz" >"$TMP/g.folded"
# (a sample before its exec, inside the execve or earlier in the forked child — ret_from_fork,
# a page fault, all the more on a loaded host — has the image before it as its user frame, in no
# mapping of the new one: an honest [unknown] that is no frame-pointer root. A walk from the bad
# rbp starts at the exact pc, in spin_with_bad_rbp, so only stacks through the fixture's code
# count as bad; the check below holds those to 95 % of all)
read -r all bad < <(awk '/^fpgarbage;/ && !/;__x64_sys_execve_\[k\];/ { n += $NF
	if (/;(spin_with_bad_rbp|main)(;| |$)/ && /\[unknown\]|;0x[0-9a-f]+(;| |$)/) u += $NF }
	END { print n + 0, u + 0 }' "$TMP/g.folded")
check "fpgarbage: no [unknown] root frame from its bad rbp ($bad of $all samples)" \
	[ "$all" -ge 100 -a "$bad" -eq 0 ]
spin=$(awk '/^fpgarbage;spin_with_bad_rbp( |;)/ { n += $NF } END { print n + 0 }' "$TMP/g.folded")
check "fpgarbage: its samples end in spin_with_bad_rbp ($spin of $all)" \
	[ $((spin * 100)) -ge $((all * 95)) ]

# a loop of short programs (qsort through libc, which has no frame pointers): <= 1 % [unknown]
( end=$((SECONDS + 5)); while [ $SECONDS -lt $end ]; do "$FIX/shortlived" 15; done ) &
loop=$!
"$FIRN" record -a --call-graph fp -F 499 -d 4 -o "$TMP/c.pb.gz" 2>"$TMP/err"
rc=$?
wait "$loop"
check "record -a --call-graph fp over a churn loop exits 0" [ $rc -eq 0 ]
read -r all bad < <("$FIRN" report --folded "$TMP/c.pb.gz" | awk '/^shortlived;/ { n += $NF;
	if (/\[unknown\]|;0x[0-9a-f]+(;| |$)/) u += $NF } END { print n + 0, u + 0 }')
check "churn loop, --call-graph fp: $bad of $all samples with an [unknown] frame (<= 1 %)" \
	[ "$all" -ge 300 -a $((bad * 100)) -le "$all" ]
# the roots that are real stay: shortlived's qsort samples reach main under frame pointers
main=$("$FIRN" report --folded "$TMP/c.pb.gz" | awk '/^shortlived;.*;main;/ { n += $NF } END { print n + 0 }')
check "churn loop, --call-graph fp: stacks through main kept ($main of $all)" [ "$main" -gt 0 ]
