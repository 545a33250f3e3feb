# Code without symbols in a real recording (root, BPF): xz -9, whose liblzma is stripped to its
# exported functions, recorded by firn while perf records the same run (perf runs under firn).
# No row may be the whole module ([liblzma.so.5.4.1]) beyond 0.1 % of the stacks: each function
# .eh_frame bounds is a row of its own, "liblzma.so.5.4.1+0xSTART", .init is "_init" (with a cold
# page cache the loader's first fetch of the library's code faults there); only the CRT's helpers
# (frame_dummy and the like) have neither a symbol nor an FDE. The top functions' shares match
# perf's address rows
# grouped by the same bounds (readelf's FDE ranges) within 2 pp, as shares of the samples in user
# code: ~20k samples each at 9999 Hz, the standard error of a difference is under 0.7 pp. Kernel
# rows are left out of those shares: where the kernel enables interrupts again (pvm_irq_enable on
# this paravirtualized guest) it takes the timer interrupts that were held, 8-12 % of the samples,
# split between the two samplers as their timers happen to interleave (firn 8.5 %, perf 11.5 % in
# one CI run, which moved every user share by 3 pp).
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording needs root"; exit 0; fi

# Names for stripped files (issue 44): the summary and report's header say which file has no
# symbols for sampled code, in how many samples, and how to get names. nosym_case NAME PROFILE
# FILE HINT: the summary line (in $TMP/NAME.err) names FILE in at least 95 % of the samples, with
# HINT; report's header has the same line.
nosym_case() {
	local name=$1 prof=$2 file=$3 hint=$4 n line count
	n=$(sed -n 's/^firn: \([0-9]*\) samples,.*/\1/p' "$TMP/$name.err")
	line=$(grep "^firn: no symbols: '$file'" "$TMP/$name.err")
	count=$(echo "$line" | sed -n "s/.* in \([0-9,]*\) samples .*/\1/p" | tr -d ,)
	check "$name: the summary names '$file' in ${count:-no} of ${n:-?} samples: '$line'" \
		test -n "$count" -a "${n:-0}" -gt 0 -a "$((${count:-0} * 100))" -ge "$((${n:-0} * 95))"
	check "$name: how to get names: '$hint'" \
		test "${line#*; }" = "for names install $hint, or set DEBUGINFOD_URLS"
	"$FIRN" report --top 3 "$prof" >"$TMP/$name.txt" 2>&1
	check "$name: report's header says the same: '$(sed -n 2p "$TMP/$name.txt")'" \
		test "$(sed -n 2p "$TMP/$name.txt")" = "# ${line#firn: }"
}
strip_file=$(readlink -f "$FIX/stripfix-stripped")
env -u DEBUGINFOD_URLS "$FIRN" record -F 999 -o "$TMP/nosym.pb.gz" -- "$FIX/stripfix-stripped" \
	20000000 >/dev/null 2>"$TMP/nosym.err"
nosym_case nosym "$TMP/nosym.pb.gz" "$strip_file" "its debug file in /usr/lib/debug"
# Debian's python3.11 is stripped; python3.11-dbg names it (where apt's lists have it; else the
# automatic debug package of python3.11-minimal, which holds the interpreter)
py=/usr/bin/python3.11
if [ ! -x "$py" ] || ! command -v dpkg >/dev/null || readelf -SW "$py" | grep -q ' \.symtab '; then
	skip "no symbols: no stripped $py from a Debian package"
elif dpkg -s python3.11-dbg >/dev/null 2>&1; then
	skip "no symbols: python3.11-dbg is installed: $py has names"
else
	pyhint="$(dpkg -S "$py" | sed 's/[:].*//')-dbgsym"
	apt-cache show python3.11-dbg >/dev/null 2>&1 && pyhint=python3.11-dbg
	env -u DEBUGINFOD_URLS "$FIRN" record -F 499 -o "$TMP/python3.11.pb.gz" -- "$py" -c '
import time
t = time.time()
while time.time() - t < 1: sum(i * i for i in range(1000))' 2>"$TMP/python3.11.err"
	nosym_case python3.11 "$TMP/python3.11.pb.gz" "$py" "$pyhint"
fi
for tool in xz perf readelf; do
	if ! command -v "$tool" >/dev/null; then skip "stripped code: no $tool"; exit 0; fi
done
lzma=$(ldd "$(command -v xz)" | sed -n 's/.*=> \(.*liblzma[^ ]*\) .*/\1/p' | head -1)
lzma=$(readlink -f "$lzma" 2>/dev/null)
if [ -z "$lzma" ] || readelf -SW "$lzma" | grep -q ' \.symtab '; then
	skip "stripped code: xz's liblzma is not a stripped library"; exit 0
fi

# ~2.5 MB of binaries: about 2 s of xz -9
cat "$FIRN" /usr/bin/* 2>/dev/null | head -c 2500000 >"$TMP/data"
"$FIRN" record -q -F 9999 -o "$TMP/xz.pb.gz" -- \
	perf record -q -F 9999 -o "$TMP/perf.data" -- xz -9 -k -c "$TMP/data" >/dev/null 2>"$TMP/rec.err"
"$FIRN" report --comm xz --json --top 0 "$TMP/xz.pb.gz" >"$TMP/firn.json" 2>>"$TMP/rec.err"
perf report -i "$TMP/perf.data" --stdio -n -q --comm xz --sort dso,sym --no-children \
	>"$TMP/perf.txt" 2>>"$TMP/rec.err"
readelf -W --debug-dump=frames "$lzma" >"$TMP/frames.txt" 2>>"$TMP/rec.err"

python3 - "$TMP/firn.json" "$TMP/perf.txt" "$TMP/frames.txt" "$(basename "$lzma")" <<'PY'
import bisect, json, re, sys
firn_json, perf_txt, frames_txt, base = sys.argv[1:]
ok = True
def result(good, what):
    global ok
    ok &= good
    print(("PASS: " if good else "FAIL: ") + what)

rows = json.load(open(firn_json))["functions"]
total = sum(r["self"] for r in rows)
kernel = lambda module: module.startswith("[kernel") or module.startswith("[guest.kernel")
utotal = sum(r["self"] for r in rows if not kernel(r["module"]))
firn = {r["name"]: r["self"] / utotal * 100 for r in rows if not kernel(r["module"])}
whole = [(r["name"], r["total"]) for r in rows if r["name"].startswith("[" + base.split(".so")[0])]
result(total >= 5000 and sum(n for _, n in whole) <= total / 1000,
       "no row is the whole module (%d samples%s)" % (total, ", rows: %s" % whole if whole else ""))
named = [n for n in firn if n.startswith(base + "+0x")]
result(len(named) >= 10, "%d functions of %s named by their bounds" % (len(named), base))

# perf's rows: an address of liblzma goes to the FDE that holds it, named as firn names it
fdes = sorted({(int(a, 16), int(b, 16)) for a, b in
               re.findall(r"FDE .*pc=([0-9a-f]+)\.\.([0-9a-f]+)", open(frames_txt).read())})
starts = [a for a, _ in fdes]
perf, ptotal = {}, 0
for line in open(perf_txt):
    m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\S+)\s+\[.\]\s+(.*\S)", line)
    if not m:
        continue
    n, dso, sym = int(m[1]), m[2], m[3]
    if kernel(dso):
        continue
    ptotal += n
    key = sym
    if dso == base and sym.startswith("0x"):
        addr = int(sym, 16)
        i = bisect.bisect_right(starts, addr) - 1
        if i >= 0 and addr < fdes[i][1]:
            key = "%s+0x%x" % (base, fdes[i][0])
    perf[key] = perf.get(key, 0) + n
perf = {k: v / ptotal * 100 for k, v in perf.items()} if ptotal else {}
top = sorted((n for n in firn if firn[n] >= 3), key=lambda n: -firn[n])
result(ptotal >= 5000 and len(top) >= 3, "perf: %d samples in user code; %d functions >= 3%%" % (ptotal, len(top)))
for n in top:
    d = firn[n] - perf.get(n, 0.0)
    result(abs(d) <= 2.0, "%s: firn %.2f%%, perf %.2f%% (%+.2f pp)" % (n, firn[n], perf.get(n, 0.0), d))
sys.exit(0 if ok else 1)
PY
[ $? -eq 0 ] || sed 's/^/    /' "$TMP/rec.err" | head -5

# report --annotate of a function named by its bounds: the stripped fixture recorded with
# --addresses; its hottest row "stripfix-stripped+0xSTART" is disassembled over the FDE's range
# (the unstripped copy's symbol, from nm), with every one of the row's samples in it
"$FIRN" record -q -F 999 --addresses -o "$TMP/sf.pb.gz" -- "$FIX/stripfix-stripped" 20000000
read -r _ _ self _ fn < <("$FIRN" report --top 0 "$TMP/sf.pb.gz" | grep ' stripfix-stripped+0x' | head -1)
start=${fn##*+0x}
sym=$(nm "$FIX/stripfix" | awk -v s="$start" '$2 ~ /^[tT]$/ && $1 ~ ("0*" s "$") { print $3 }')
end=$(printf '%x' $((0x$start + $(nm -S "$FIX/stripfix" | awk -v n="$sym" '$4 == n { print "0x" $2 }'))))
"$FIRN" report --annotate "$fn" "$TMP/sf.pb.gz" >"$TMP/ann.txt" 2>"$TMP/ann.err"
rc=$?
check "--annotate '$fn' ($sym, unstripped): exit $rc, its bounds $start-$end: $(head -1 "$TMP/ann.txt")" \
	grep -qx "# $fn: no symbol, .eh_frame bounds $fn at $start-$end in .*/stripfix-stripped" "$TMP/ann.txt"
check "--annotate '$fn': the row's $self samples are in it: $(sed -n 3p "$TMP/ann.txt")" \
	grep -q "^# [0-9.]*% of [0-9]* samples ($self) in this function" "$TMP/ann.txt"

# capstone is opened on the first annotation (dlopen): where it cannot be loaded (here an empty
# file mounted over it in a mount namespace of this test's own), --annotate says so in one line
# and exits 1
cs=$(ldconfig -p | awk '/libcapstone\.so\.[0-9]+ .*x86-64/ { print $NF; exit }')
if [ -n "$cs" ] && command -v unshare >/dev/null; then
	unshare -m sh -c 'mount --bind /dev/null "$1" && shift && exec "$@"' _ "$cs" \
		"$FIRN" report --annotate "$fn" "$TMP/sf.pb.gz" >"$TMP/nocs.txt" 2>"$TMP/nocs.err"
	rc=$?
	check "--annotate without capstone: exit $rc, '$(cat "$TMP/nocs.err")'" \
		test "$rc" = 1 -a "$(cat "$TMP/nocs.err")" = "firn: cannot annotate '$fn': cannot load the disassembler library '$(basename "$cs")'"
else
	skip "--annotate without capstone: no libcapstone in ldconfig's cache, or no unshare"
fi
