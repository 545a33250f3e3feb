# README.md's examples are what the commands print: the off-CPU example is taken from the README's
# own code block (its commands and its "# " output lines), run on the bundled fixture, and its rows
# compared with what firn prints (issue 30). Also: the README's man page commands work from the
# source tree, before make install.
. "$(dirname "$0")/lib.sh"
README="$ROOT/README.md"

# the README's ```sh blocks, each line prefixed by its block's number
python3 - "$README" >"$TMP/blocks" <<'EOF'
import sys
n, inside = 0, False
for line in open(sys.argv[1], encoding="utf-8"):
    line = line.rstrip("\n")
    if line.startswith("```"):
        inside = not inside and line.startswith("```sh")
        n += inside
        continue
    if inside:
        print(f"{n}\t{line}")
EOF
block=$(awk -F'\t' '$2 ~ /firn record .*-e off-cpu/ { print $1; exit }' "$TMP/blocks")
[ -n "$block" ] && pass "README: the off-CPU example's code block found" || fail "README: no off-CPU example"
awk -F'\t' -v b="$block" '$1 == b { sub(/^[0-9]+\t/, ""); print }' "$TMP/blocks" >"$TMP/example"
rec=$(grep -m1 '^sudo firn record .*-e off-cpu' "$TMP/example" | sed 's/^sudo //')
rep=$(grep -m1 '^firn report ' "$TMP/example" | sed 's/ *#.*//')
grep '^# ' "$TMP/example" | sed 's/^# //' >"$TMP/want"
[ -n "$rec" ] && [ -n "$rep" ] && [ -s "$TMP/want" ] && pass "README: the example's commands and output lines parsed" \
	|| fail "README: example: record '$rec', report '$rep'"

# the README's Python section says what firn top shows of Python: its functions, as report does
# (it said "Not yet in `firn top`" while they were there)
pysec=$(sed -n '/^### Python functions/,/^### /p' "$README")
check "README: the Python section says firn top shows Python functions" \
	eval 'echo "$pysec" | grep -q "^\`--no-python\` keeps the native view. \`firn top\` shows them too" &&
		! echo "$pysec" | grep -qi "not yet"'
if ! is_root || [ ! -x /usr/bin/python3.11 ]; then
	skip "README: firn top's Python functions: needs root and /usr/bin/python3.11"
else
	timeout 60 "$FIRN" top --stdio -n 2 --rows 0 -- /usr/bin/python3.11 -c '
import time
def readme_top_fn():
    t = time.time()
    while time.time() - t < 3: sum(i * i for i in range(1000))
readme_top_fn()' >"$TMP/top.txt" 2>&1
	check "README: firn top shows the Python function: $(grep -m1 "\[python\] *readme_top_fn" "$TMP/top.txt")" \
		grep -Eq '^ +[0-9.]+ +[0-9.]+ +[0-9]+ +\[python\] +readme_top_fn$' "$TMP/top.txt"
fi

if ! is_root; then
	skip "README off-CPU example: needs root (BPF)"
elif [ -n "$rec" ]; then
	# the commands as the README types them, in a folder holding the fixture as ./offcpu_mix
	mkdir -p "$TMP/run" && ln -s "$FIX/offcpu_mix" "$TMP/run/offcpu_mix"
	(cd "$TMP/run" && eval "\"\$FIRN\" ${rec/firn record/record -q}" >/dev/null 2>"$TMP/rec.err" &&
		eval "\"\$FIRN\" ${rep#firn }") >"$TMP/got" 2>>"$TMP/rec.err"
	[ -s "$TMP/got" ] && pass "README off-CPU example runs" || { fail "README off-CPU example runs"; cat "$TMP/rec.err"; }
	python3 - "$TMP/want" "$TMP/got" <<'EOF' && pass "README off-CPU example: header file and rows match what firn prints" \
		|| fail "README off-CPU example drifted from firn's output"
import re, sys
want = open(sys.argv[1], encoding="utf-8").read().splitlines()
got = open(sys.argv[2], encoding="utf-8").read().splitlines()
row = re.compile(r"^\s*(\d+\.\d+)\s+(\d+\.\d+)\s+\S+\s+(\S+)\s+(\S+)")
def rows(lines):
    return [(m[4], m[3], float(m[1]), float(m[2])) for m in map(row.match, lines) if m]
ok = True
def bad(msg):
    global ok
    ok = False
    print("   ", msg)
# the header: the same file name (as typed on the command line) and the same kind of total
wh, gh = want[0].split(":")[0], got[0].removeprefix("# ").split(":")[0]
if wh != gh:
    bad(f"header names {wh!r}, firn prints {gh!r}")
if want[1].split() != got[1].split():
    bad(f"column titles {want[1].split()} vs {got[1].split()}")
w, g = rows(want), rows(got)
gi = {(name, mod): i for i, (name, mod, *_rest) in enumerate(g)}
# every README row is in firn's table, with its module and shares (3 pp: a loaded machine; 5 pp
# for spin, preempted most of its time there, whose preemptions firn now and then under-counts
# on a loaded machine: 14.2 % against 10.5 % in one CI run, a known bug in the issue notes)
for name, mod, self_, total in w:
    tol = 5 if name == "spin" else 3
    if (name, mod) not in gi:
        bad(f"README row {name} ({mod}) not in firn's table")
        continue
    _, gmod, gself, gtotal = g[gi[name, mod]]
    if abs(gself - self_) > tol or abs(gtotal - total) > tol:
        bad(f"{name}: README {mod} {self_} {total}, firn {gmod} {gself} {gtotal}")
# the README's rows come first, in firn's order (rows of equal total may swap), none left out
# before the "…" that trims the rest
shown = [(n, m) for n, m, *_ in w]
top = [(n, m) for n, m, *_ in g[:len(shown)]]
if sorted(shown) != sorted(top):
    bad(f"firn's top {len(shown)} rows are {top}, the README shows {shown}")
for a, b in zip(shown, shown[1:]):
    if a in gi and b in gi and gi[a] > gi[b] and abs(g[gi[a]][3] - g[gi[b]][3]) > 3:
        bad(f"README has {a} before {b}; firn the other way")
if not want[-1].strip().startswith("…"):
    bad("the trimmed table does not end with an explicit …")
sys.exit(0 if ok else 1)
EOF
fi

# The CI example: two builds in their own folders, the change's binary under another name (issue
# 44): its commands as the README types them, diffwork copied to each binary's path; the gate
# passes (it tripped when every function of the renamed binary looked new).
block=$(awk -F'\t' '$2 ~ /firn record .*-o base\.pb\.gz/ { print $1; exit }' "$TMP/blocks")
awk -F'\t' -v b="$block" '$1 == b { sub(/^[0-9]+\t/, ""); sub(/ *#.*/, ""); print }' "$TMP/blocks" >"$TMP/ci"
mapfile -t ci_rec < <(grep '^sudo firn record ' "$TMP/ci" | sed 's/^sudo firn record /record -q /')
ci_diff=$(grep -m1 '^firn diff .*--fail-on' "$TMP/ci" | sed 's/^firn //')
[ -n "$block" ] && [ ${#ci_rec[@]} -eq 2 ] && [ -n "$ci_diff" ] && pass "README: the CI example's commands parsed" \
	|| fail "README: CI example: block '$block', ${#ci_rec[@]} recordings, diff '$ci_diff'"
if ! is_root; then
	skip "README CI example: needs root (BPF)"
elif [ ${#ci_rec[@]} -eq 2 ]; then
	mkdir -p "$TMP/ci-run"
	for r in "${ci_rec[@]}"; do
		prog=$(sed 's/.* -- \([^ ]*\).*/\1/' <<<"$r")
		mkdir -p "$TMP/ci-run/$(dirname "$prog")" && cp "$FIX/diffwork" "$TMP/ci-run/$prog"
	done
	(cd "$TMP/ci-run" && for r in "${ci_rec[@]}"; do eval "\"\$FIRN\" $r" || exit; done) 2>"$TMP/ci.err" \
		&& pass "README CI example: both builds recorded" || { fail "README CI example: record"; cat "$TMP/ci.err"; }
	(cd "$TMP/ci-run" && eval "\"\$FIRN\" $ci_diff") >"$TMP/ci.out" 2>"$TMP/ci.err"
	rc=$?
	[ $rc -eq 0 ] && ! grep -q ' tripped: ' "$TMP/ci.err" && pass "README CI example: the gate passes across renamed builds (exit 0)" \
		|| { fail "README CI example: exit $rc"; cat "$TMP/ci.err"; }
	awk '$8 == "work_a" { n++; m = $7 } END { exit !(n == 1 && m == "bench-pr") }' "$TMP/ci.out" \
		&& pass "README CI example: work_a one row, under the change's binary" || { fail "README CI example: table"; cat "$TMP/ci.out"; }
fi

# man pages: the README's `man` commands name files of the source tree, not installed pages
grep -o '`man [^`]*`' "$README" | tr -d '`' | sed 's/^man //' >"$TMP/man"
bad=$(while read -r m; do case $m in ./man/*) [ -f "$ROOT/$m" ] || echo "$m" ;; firn*) ;; *) echo "$m" ;; esac; done <"$TMP/man")
[ -z "$bad" ] && pass "README: man commands name pages that exist" || fail "README: man pages missing: $bad"
grep -q '`man \./man/firn\.1`' "$README" && pass "README: man ./man/firn.1 (works before make install)" \
	|| fail "README: no man ./man/firn.1"
if command -v man >/dev/null; then
	(cd "$ROOT" && MANPAGER=cat man ./man/firn.1 2>/dev/null | grep -q 'firn') && pass "man ./man/firn.1 renders from the tree" \
		|| fail "man ./man/firn.1 does not render"
fi
