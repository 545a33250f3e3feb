# Go programs without debug info (root, BPF): gowork (tests/fixtures/go) built plainly and with
# -ldflags="-s -w" (no .symtab, no DWARF), its code named from Go's own pclntab
# (lib/elf/gopclntab), and stripped position-independent builds (-buildmode=pie, linked by Go's
# linker and by the host's). By Debian's Go 1.19 (the 1.18 table format), then by Debian
# unstable's Go (1.20+ format, a root made once with mmdebstrap and cached under
# /var/cache/firn-tests), and esbuild from npm, a stripped Go binary nobody here built.
# Each Go's builds run side by side in one recording (8 s at 1999 Hz): each stripped build has the
# plain build's function rows (those of 3 % or more in either), their self shares of the
# program's samples within 2 pp, or 3.5 standard errors of the difference of two binomial
# shares when the machine's load leaves fewer samples (printed); at most 1 % of its samples in
# no named function; the inlined helper main.dist a frame of its own under main.sumDist, with
# the share it has in the plain build (whose inlined frames come from DWARF); the callers of
# crypto/sha256.block (Go 1.27: crypto/internal/fips140/sha256.blockSHANI and its kind), Go
# assembly that uses rbp as a register, unwound to main.* in 95 % of its samples in both builds (from the pclntab's SP deltas: Go binaries have no .eh_frame).
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording needs root"; exit 0; fi
if [ ! -x "$FIX/gowork" ] || [ ! -x "$FIX/gowork-stripped" ]; then
	skip "no Go fixtures (tests/fixtures/build.sh found no go)"; exit 0
fi
HZ=1999
CACHE=/var/cache/firn-tests

# record NAME BINARY ARGS...: records it into $TMP/NAME.{pb.gz,json,folded,cpu}
record() {
	local name=$1; shift
	"$FIRN" record -q -F $HZ -o "$TMP/$name.pb.gz" -- sh "$CPUTIME" "$TMP/$name.cpu" "$@" \
		>/dev/null 2>"$TMP/$name.err" || { fail "$name: record failed"; cat "$TMP/$name.err"; }
	"$FIRN" report --json --top 0 "$TMP/$name.pb.gz" >"$TMP/$name.json"
	"$FIRN" report --folded --inline "$TMP/$name.pb.gz" >"$TMP/$name.folded"
}

# record_side "NAME..." ARGS...: the programs $TMP/NAME run side by side in one recording,
# each with its own CPU time ($TMP/NAME.cpu), so a loaded machine slows them alike (two runs
# one after the other differed by 2 pp in sha256's share against sort's); the files of every
# name are that recording's
record_side() {
	local names=$1 first=${1%% *} script= n x
	shift
	for n in $names; do script="$script sh \"\$0\" $TMP/$n.cpu $TMP/$n \"\$@\" &"; done
	record "$first" sh -c "$script wait" "$CPUTIME" "$@"
	for n in ${names#"$first"}; do
		for x in pb.gz json folded; do cp "$TMP/$first.$x" "$TMP/$n.$x"; done
	done
}

# compare LABEL PLAIN STRIPPED: the shares and names of the two recordings' programs
compare() {
	python3 - "$1" "$TMP/$2.json" "$TMP/$3.json" "$TMP/$2.folded" "$TMP/$3.folded" \
		"$(sample_floor "$TMP/$3.cpu" $HZ)" "$2" "$3" <<'PY'
import json, math, re, sys
label, pj, sj, pf, sf, floor, pmod, smod = sys.argv[1:]
floor = int(floor)
def result(good, what):
    print(("PASS: " if good else "FAIL: ") + label + ": " + what)

def shares(path, module):
    rows = [r for r in json.load(open(path))["functions"] if r["module"] == module]
    total = sum(r["self"] for r in rows)
    return {r["name"]: r["self"] / max(total, 1) for r in rows}, total

def inlined(path, module):
    n = t = 0
    for line in open(path):
        stack, count = line.rsplit(" ", 1)
        if stack.split(";")[0] != module[:15]:  # the command's name, as the kernel keeps it
            continue
        t += int(count)
        n += int(count) * stack.endswith(";main.sumDist;main.dist_[i]")
    return n / max(t, 1), t

plain, pn = shares(pj, pmod)
strip, sn = shares(sj, smod)
result(pn >= floor and sn >= floor, "%d and %d samples in the programs (floor %d)" % (pn, sn, floor))
unnamed = sum(v for k, v in strip.items() if k.startswith("[") or "+0x" in k)
result(unnamed <= 0.01, "%.2f %% of the stripped build's samples unnamed" % (unnamed * 100))
# a position-independent build is other machine code than the plain (non-PIE) build it is
# compared with: its functions' costs differ a little (sort.partition 20.4 % plain, 17.9 % in the
# GNU ld PIE build once): there, twice the tolerance; what it must get right is the names (above)
PIE = 2 if "pie" in smod else 1
def tol(p):
    se = math.sqrt(max(p * (1 - p), 0.0025) * (1 / max(pn, 1) + 1 / max(sn, 1)))
    return PIE * max(0.02, 3.5 * se)
top = sorted({k for k, v in plain.items() if v >= 0.03} | {k for k, v in strip.items() if v >= 0.03},
             key=lambda k: -plain.get(k, 0))
result(len(top) >= 4, "%d functions of 3 %% or more" % len(top))
for k in top:
    a, b = plain.get(k, 0), strip.get(k, 0)
    t = tol((a + b) / 2)
    result(abs(a - b) <= t, "%s: plain %.2f %%, stripped %.2f %% (%+.2f pp, within %.2f)"
           % (k, a * 100, b * 100, (b - a) * 100, t * 100))
# Go assembly uses rbp as it likes (crypto/sha256.block): its callers are found from the
# pclntab's SP deltas (lib/unwind/unwind_go.h), not frame pointers, in both builds
def asm_callers(path, module):
    n = t = 0
    for line in open(path):
        stack, count = line.rsplit(" ", 1)
        frames = stack.split(";")
        if frames[0] != module[:15] or not re.match(r"crypto/.*sha256\.block", frames[-1]):
            continue
        t += int(count)
        n += int(count) * any(f.startswith("main.") for f in frames)
    return n, t
# (a program's first samples, before its table is loaded, may go by frame pointers: with five
# programs starting at once, 2-13 samples of 5 s runs here, 0-7 in 8 s ones; 90 % for the
# position-independent builds, dynamically linked by the host's linker)
for what, path, module in (("plain", pf, pmod), ("stripped", sf, smod)):
    n, t = asm_callers(path, module)
    need = 90 if "pie" in module else 95
    result(t >= 50 and n * 100 >= need * t, "sha256.block*'s callers reach main.* in %d of its %d "
           "samples (%.1f %%, at least %d %%), %s build" % (n, t, n * 100 / max(t, 1), need, what))
(pi, _), (si, _) = inlined(pf, pmod), inlined(sf, smod)
# a position-independent build is other machine code than the plain one it is compared with
# (its instructions split between sumDist and the inlined dist otherwise: 6.3 % plain against
# 7.7-9.2 % in the three PIE builds of Go 1.27 under load): there, three times the tolerance
# (tol's twice, times 1.5), which still fails where the inline tree is lost (0 %) or misread
t = tol((pi + si) / 2) * (1.5 if PIE > 1 else 1)
result(si >= 0.01 and abs(pi - si) <= t,
       "main.dist inlined under main.sumDist: plain %.2f %%, stripped %.2f %% (within %.2f)"
       % (pi * 100, si * 100, t * 100))
PY
}

# the pprof mapping of the stripped program says it has inline frames, files and lines
mapping_flags() {
	command -v go >/dev/null || return 0
	go tool pprof -raw "$TMP/$2.pb.gz" 2>/dev/null | grep -E "^[0-9]+: .*/$2 " >"$TMP/$2.map"
	grep -q '\[FN\]\[FL\]\[LN\]\[IN\]' "$TMP/$2.map" \
		&& pass "$1: mapping has_functions, has_filenames, has_line_numbers, has_inline_frames" \
		|| fail "$1: mapping flags: $(cat "$TMP/$2.map")"
}

# 1. Debian's Go 1.19: the fixtures, with the stripped position-independent builds (linked by
# Go's linker, and by the host's as cgo links: GNU ld's and lld's, the table inside
# .data.rel.ro, lld's moduledata's pointers in dynamic relocations) beside them when built.
cp "$FIX/gowork" "$FIX/gowork-stripped" "$TMP/"
pies=
for p in gowork-pie-stripped gowork-piex-stripped gowork-piel-stripped; do
	[ -x "$FIX/$p" ] && cp "$FIX/$p" "$TMP/" && pies="$pies $p"
done
record_side "gowork gowork-stripped$pies" -seconds 8
compare "go 1.19" gowork gowork-stripped
mapping_flags "go 1.19" gowork-stripped
for p in $pies; do
	compare "go 1.19 ${p#gowork-}" gowork "$p"
	mapping_flags "go 1.19 ${p#gowork-}" "$p"
done

# 2. Against Go's own profiler: runtime/pprof's CPU profile of the same run (10 s at 1000 Hz,
# of which Go 1.19 keeps about 250 a second: 1,000-2,400 samples here), top 10 self shares
# within 3 pp (or 3.5 standard errors of the difference under load). runtime.asyncPreempt's
# samples go to the function it interrupted (pprof -hide), as firn's timer sees them: the
# profiling signal lands in the preemption handler, the more often the busier the machine (2 %
# of the samples idle, 8-18 % at a load of 12 on 2 CPUs: left out, it took that from the sort
# functions, 3-10 pp off). As runtime/pprof does, kernel frames go to the user frame below
# them and an autogenerated wrapper's own code (sort.(*IntSlice).Less around the inlined
# sort.IntSlice.Less) to its caller: Go's tracebacks hide wrappers. Its inlined functions
# ("main.dist (inline)") are inlined frames in firn's profile.
"$FIRN" record -q -F $HZ -o "$TMP/both.pb.gz" -- "$TMP/gowork-stripped" -seconds 10 \
	-cpuprofile "$TMP/go.pprof" -hz 1000 >/dev/null 2>"$TMP/both.err"
"$FIRN" report --folded --inline "$TMP/both.pb.gz" >"$TMP/both.folded"
go tool pprof -top -nodecount=1000 -hide='^runtime\.asyncPreempt$' "$TMP/gowork-stripped" \
	"$TMP/go.pprof" >"$TMP/go.top" 2>/dev/null
python3 - "$TMP/both.folded" "$TMP/go.top" <<'PY'
import math, re, sys
folded, top = sys.argv[1:]
def result(good, what):
    print(("PASS: " if good else "FAIL: ") + "against runtime/pprof: " + what)

stacks = []
for line in open(folded):
    stack, count = line.rsplit(" ", 1)
    frames = stack.split(";")
    if frames[0] != "gowork-stripped":  # the command (15 characters: all of it)
        continue
    stacks.append((frames[1:], int(count)))
# wrappers: pkg.(*T).M frames with pkg.T.M inlined into them
wrappers = set()
for frames, _ in stacks:
    for a, b in zip(frames, frames[1:]):
        m = re.match(r"(.*)\.\(\*(\w+)\)\.(\w+)$", a)
        if m and b == "%s.%s.%s_[i]" % m.groups():
            wrappers.add(a)
firn, fn = {}, 0
for frames, n in stacks:
    frames = [f for f in frames if not f.endswith("_[k]") and f not in wrappers]
    if not frames:
        continue
    leaf = frames[-1][:-4] if frames[-1].endswith("_[i]") else frames[-1]
    firn[leaf] = firn.get(leaf, 0) + n
    fn += n
inl = {f[:-4] for frames, _ in stacks for f in frames if f.endswith("_[i]")}
go, total = {}, 0.0
for line in open(top):
    m = re.match(r"Duration: .*Total samples = ([\d.]+)(m?s)", line)
    if m:
        total = float(m[1]) / (1000 if m[2] == "ms" else 1)
    m = re.match(r"\s*[\d.]+m?s\s+([\d.]+)%\s+[\d.]+%\s+[\d.]+m?s\s+[\d.]+%\s+(.*\S)", line)
    if m:
        go[m[2]] = float(m[1]) / 100
gn = total * 1000
result(fn >= 1000 and gn >= 500, "%d samples in firn's, %d in runtime/pprof's" % (fn, gn))
for name in sorted((k for k in go if k != "runtime.asyncPreempt"), key=lambda k: -go[k])[:10]:
    base = name[:-9] if name.endswith(" (inline)") else name
    a, b = go[name], firn.get(base, 0) / max(fn, 1)
    p = max((a + b) / 2 * (1 - (a + b) / 2), 0.0025)
    t = max(0.03, 3.5 * math.sqrt(p * (1 / max(gn, 1) + 1 / max(fn, 1))))
    result(abs(a - b) <= t, "%s: runtime/pprof %.2f %%, firn %.2f %% (%+.2f pp, within %.2f)"
           % (name, a * 100, b * 100, (b - a) * 100, t * 100))
    if name.endswith(" (inline)"):
        result(base in inl, "%s is an inlined frame in firn's" % base)
PY

# 3. A newer Go (the 1.20+ table, Go 1.2x's moduledata): Debian unstable's, in a root made once.
# shellcheck source=tests/cli/sid_root.sh
. "$ROOT/tests/cli/sid_root.sh"
sid=$(sid_root) || { sidwhy=$sid; sid=; }
if [ -x "$sid/usr/lib/go/bin/go" ]; then
	gocache=$CACHE/sid-go-cache
	mkdir -p "$gocache"
	# NAME:LDFLAGS:BUILDMODE
	for v in "gowork-new::" "gowork-new-stripped:-s -w:" "gowork-new-pie-stripped:-s -w:pie" \
		"gowork-new-piex-stripped:-s -w -linkmode=external:pie" \
		"gowork-new-piel-stripped:-s -w -linkmode=external -extldflags=-fuse-ld=lld:pie"; do
		n=${v%%:*} ld=${v#*:} mode=${v##*:}
		GOCACHE=$gocache HOME=$gocache GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local \
			"$sid/usr/lib/go/bin/go" build -buildmode="${mode:-default}" -ldflags="${ld%:*}" \
			-o "$TMP/$n" "$ROOT/tests/fixtures/go/gowork.go" 2>>"$TMP/gobuild.err"
	done
	if [ -x "$TMP/gowork-new-stripped" ] && [ -x "$TMP/gowork-new-piel-stripped" ]; then
		ver=$("$sid/usr/lib/go/bin/go" version | awk '{print $3}')
		record_side "gowork-new gowork-new-stripped gowork-new-pie-stripped \
			gowork-new-piex-stripped gowork-new-piel-stripped" -seconds 8
		for p in stripped pie-stripped piex-stripped piel-stripped; do
			compare "$ver $p" gowork-new "gowork-new-$p"
			mapping_flags "$ver $p" "gowork-new-$p"
		done
	else
		fail "unstable's go build failed: $(tail -2 "$TMP/gobuild.err")"
	fi
else
	skip "newer Go: no root with Debian unstable's golang-go: $sidwhy"
fi

# 4. esbuild from npm (pinned), stripped by its makers: the unit test's foreign-binary case,
# then a recording of it bundling: at most 1 % of its samples unnamed, its own packages named.
ESBUILD_VERSION=0.28.2
npm_dir="$ROOT/${BUILD%%/*}/npm-esbuild"
esbuild="$npm_dir/node_modules/@esbuild/linux-x64/bin/esbuild"
if [ ! -x "$esbuild" ] && command -v npm >/dev/null; then
	mkdir -p "$npm_dir" && npm install --no-audit --no-fund --silent --prefix "$npm_dir" \
		"esbuild@$ESBUILD_VERSION" >"$TMP/npm.log" 2>&1 || tail -3 "$TMP/npm.log"
fi
if [ ! -x "$esbuild" ]; then
	skip "esbuild: npm install esbuild@$ESBUILD_VERSION failed or no npm"; exit 0
fi
FIRN_ESBUILD=$esbuild "$ROOT/$BUILD/tests/test_gopclntab" >"$TMP/unit.out" 2>&1
grep -q '^\[       OK \] test_foreign_binary' "$TMP/unit.out" \
	&& pass "esbuild: test_gopclntab's foreign binary case ($(grep 'steps named' "$TMP/unit.out"))" \
	|| fail "esbuild: test_gopclntab's foreign binary case: $(tail -5 "$TMP/unit.out")"
python3 - "$TMP/big.js" <<'PY'
import sys
with open(sys.argv[1], "w") as f:
    for i in range(40000):
        f.write("export function f%d(a, b) { const o = { x: a + %d, y: [b, '%d'] }; "
                "return o.x > b ? f%d(b, a) : `${o.y.join(',')}`; }\n" % (i, i, i, max(i - 1, 0)))
PY
cp "$esbuild" "$TMP/esbuild"
record esbuild sh -c 'for i in 1 2 3 4 5 6; do "$0" "$1" --bundle --minify --outfile="$1.out.js" --log-level=error; done' \
	"$TMP/esbuild" "$TMP/big.js"
python3 - "$TMP/esbuild.json" <<'PY'
import json, sys
rows = [r for r in json.load(open(sys.argv[1]))["functions"] if r["module"] == "esbuild"]
total = sum(r["self"] for r in rows)
unnamed = sum(r["self"] for r in rows if r["name"].startswith("[") or "+0x" in r["name"])
own = sum(r["self"] for r in rows if r["name"].startswith("github.com/evanw/esbuild/"))
ok = total >= 200 and unnamed <= total / 100 and own >= total / 10
print("%s: esbuild: %d samples, %.2f %% unnamed, %.1f %% in its own packages"
      % ("PASS" if ok else "FAIL", total, unnamed * 100 / max(total, 1), own * 100 / max(total, 1)))
PY
