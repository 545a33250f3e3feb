#!/bin/sh
# cputime.sh FILE CMD...: runs CMD, then writes the CPU time CMD and its descendants used (user +
# system, the shell's `times`, i.e. getrusage(RUSAGE_CHILDREN)) to FILE in ms; exits as CMD did.
# cputime.sh FILE: spins until SIGTERM (as firn record -d ends its command), then writes the CPU
# time it spun. A recording wraps its workload in it (`firn record -- sh cputime.sh F CMD`) so
# that a test's sample floor can follow the CPU the workload actually got (sample_floor, lib.sh).
out=$1
shift
# ms FIELD: the `times` line (1: this shell, 2: its children) as user + system milliseconds
ms() {
	times >"$out.times"
	awk -v n="$1" 'NR == n { t = 0; for (i = 1; i <= 2; i++) { split($i, p, "m"); t += p[1] * 60 + p[2] } print int(t * 1000) }' \
		"$out.times" >"$out"
	rm -f "$out.times"
}
if [ $# -eq 0 ]; then
	trap 'ms 1; exit 0' TERM
	while :; do :; done
fi
"$@"
rc=$?
ms 2
exit $rc
