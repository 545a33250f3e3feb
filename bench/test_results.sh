#!/usr/bin/env bash
# Checks bench/results.py on known result lines: medians and spreads, ratios, each kind of target,
# failed checks, the machine table and other benches' output. Prints PASS:/FAIL: lines (no root,
# no BPF); exits 1 when a check fails. usage: bash bench/test_results.sh
set -u
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TMP=$(mktemp -d /tmp/firn-bench-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
failed=0

# expect NAME LINE: passes when the rendered Markdown holds LINE exactly.
expect() {
	if grep -qxF -- "$2" "$TMP/out.md"; then echo "PASS: $1"; else
		echo "FAIL: $1 (no line '$2')"
		failed=1
	fi
}

T=$'\t'
{
	echo "@@${T}M${T}CPUs${T}2 × test"
	echo "@@${T}H${T}b${T}Bench B: a test"
	for v in 3 1 2; do echo "@@${T}S${T}b${T}c1${T}firn${T}cpu s${T}$v${T}s"; done
	for v in 20 40 30; do echo "@@${T}S${T}b${T}c1${T}perf -g${T}cpu s${T}$v${T}s"; done
	echo "@@${T}S${T}b${T}c1${T}none${T}cpu s${T}9${T}s"
	echo "@@${T}S${T}b${T}c1${T}firn${T}share %${T}50${T}%"
	echo "@@${T}S${T}b${T}c2${T}firn${T}bytes${T}1234567${T}bytes"
	echo "@@${T}S${T}b${T}c2${T}perf -g${T}bytes${T}2469134${T}bytes"
	echo "@@${T}T${T}b${T}c1${T}cpu s${T}max${T}2.5${T}<= 2.5 s"
	echo "@@${T}T${T}b${T}c1${T}cpu s${T}ratio${T}10 perf -g${T}>= 10x"
	echo "@@${T}T${T}b${T}c1${T}cpu s${T}below${T}perf -g${T}below perf's"
	echo "@@${T}T${T}b${T}c2${T}bytes${T}max${T}1000${T}<= 1000"
	echo "@@${T}T${T}b${T}c2${T}bytes${T}ratio${T}3 perf -g${T}>= 3x"
	echo "@@${T}T${T}b${T}c3${T}ns${T}max${T}1${T}<= 1 ns"
	echo "@@${T}H${T}d${T}Bench D: references elsewhere"
	echo "@@${T}S${T}d${T}c4${T}firn${T}ns${T}1050${T}ns"
	echo "@@${T}S${T}d${T}c4${T}bpftrace${T}ns${T}1000${T}ns"
	echo "@@${T}S${T}d${T}c5${T}firn${T}ns${T}1600${T}ns"
	echo "@@${T}T${T}d${T}c4${T}ns${T}times${T}1.2 bpftrace${T}<= 1.2x bpftrace's"
	echo "@@${T}T${T}d${T}c4${T}ns${T}times${T}1 bpftrace${T}no slower than bpftrace"
	echo "@@${T}T${T}d${T}c5${T}ns${T}times${T}1.5 firn${T}<= 1.5x c4's${T}c4"
	echo "@@${T}T${T}d${T}c5${T}ns${T}times${T}2 bpftrace${T}<= 2x bpftrace's in c4${T}c4"
	echo "@@${T}T${T}d${T}c5${T}ns${T}ratio${T}0.5 bpftrace${T}>= half of c9's${T}c9"
	echo "@@${T}C${T}b${T}c1${T}firn${T}firn record -a"
	echo "@@${T}V${T}b${T}c1${T}firn${T}ok${T}fine"
	echo "@@${T}V${T}b${T}c1${T}perf -g${T}FAIL${T}broken"
	echo "@@${T}N${T}b${T}a note"
	echo "not a result line"
} >"$TMP/r.tsv"
printf '# command: X=1 bash bench/other.sh\n# exit 0, 1 s\nline one\n' >"$TMP/other.txt"

if ! /usr/bin/python3 "$ROOT/bench/results.py" "$TMP/r.tsv" "$TMP/other.txt" >"$TMP/out.md"; then
	echo "FAIL: results.py exits 0"
	exit 1
fi
expect "machine table" "| CPUs | 2 × test |"
expect "heading" "### Bench B: a test"
expect "columns: none first, then firn, then the references" \
	"| case | metric | none | firn | perf -g | ratio ref/firn | target | met? |"
expect "median, spread, ratio, all three kinds of target" \
	"| c1 | cpu s | 9.00 (n=1) | 2.00 [1.00–3.00] n=3 | 30.0 [20.0–40.0] n=3 | perf -g ×15.0 | <= 2.5 s; >= 10x; below perf's | yes; yes (×15.0); yes |"
expect "no ratio for a percentage" "| c1 | share % | — | 50.0 (n=1) | — | — | — | — |"
expect "targets missed: by how much" \
	"| c2 | bytes | — | 1,234,567 (n=1) | 2,469,134 (n=1) | perf -g ×2.00 | <= 1000; >= 3x | NO: 1,235× the target; NO: ×2.00 of ×3 |"
expect "a target without measurements is listed" "Target without any valid measurement: c3, ns (<= 1 ns)."
expect "targets at a glance" "| Bench B | c2, bytes | >= 3x | 1,234,567 bytes | perf -g: 2,469,134 | NO: ×2.00 of ×3 |"
expect "firn at most X times a reference: met, missed" \
	"| c4 | ns | 1,050 (n=1) | 1,000 (n=1) | bpftrace ×0.952 | <= 1.2x bpftrace's; no slower than bpftrace | yes (1.05×); NO: 1.05×, above 1× |"
expect "a reference in another case: missed, met, absent" \
	"| c5 | ns | 1,600 (n=1) | — | — | <= 1.5x c4's; <= 2x bpftrace's in c4; >= half of c9's | NO: 1.52×, above 1.5×; yes (1.60×); ? (no bpftrace figure for c9) |"
expect "targets at a glance: a reference in another case" \
	"| Bench D | c5, ns | <= 1.5x c4's | 1,600 ns | firn (c4): 1,050 | NO: 1.52×, above 1.5× |"
expect "targets at a glance: a reference case without figures" \
	"| Bench D | c5, ns | >= half of c9's | 1,600 ns | bpftrace (c9): — | ? (no bpftrace figure for c9) |"
expect "command" "- c1, firn: \`firn record -a\`"
expect "checks counted" "Output checks (1 passed, 1 failed; a failed run reports no figures):"
expect "failed check shown" "- c1, perf -g: 0 ok; **1 FAILED**: broken"
expect "note" "- a note"
expect "other bench: command" "### \`X=1 bash bench/other.sh\`"
expect "other bench: output verbatim" "line one"
exit "$failed"
