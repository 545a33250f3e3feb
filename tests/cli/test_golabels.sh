# Goroutine labels (root, BPF): tests/fixtures/golabels runs two handlers under pprof.Do with
# endpoint=a (and tier=web; ~1 s of CPU) and endpoint=b (~2 s), and ~1 s outside any label,
# interleaved in 10 rounds. Built now by Debian's Go 1.19 (the labels a map) and by Debian
# unstable's Go (1.27: a sorted slice; the root tests/cli/sid_root.sh makes once), each plainly
# and with -ldflags="-s -w" (no symbols, no DWARF: the release from the build information), and
# by Go 1.19 with cgo (net's resolver: a dynamic executable whose TLS segment holds g), each
# recorded as the recording's command (so the Go walker is loaded from the start). In each:
# samples labelled endpoint=a and endpoint=b are 1:2 (within 10 %, or 3.5 standard errors of
# the ratio where load leaves fewer samples), as many tier=web samples as endpoint=a ones, every
# sample in a handler (under main.main.func1 or func2) labelled with its endpoint (1 % allowed:
# samples before user space told the walker of the process), none of those outside labelled,
# and the summary's go line counts the process.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording needs root"; exit 0; fi
HZ=1999
CACHE=/var/cache/firn-tests
SRC="$ROOT/tests/fixtures/golabels/golabels.go"

# gobuild GO CACHEDIR OUT LDFLAGS FILES...: $TMP/OUT built by GO
gobuild() {
	local go=$1 cache=$2 out=$3 ldflags=$4; shift 4
	mkdir -p "$cache"
	GOCACHE=$cache HOME=$cache GO111MODULE=off GOFLAGS= GOTOOLCHAIN=local \
		"$go" build -ldflags="$ldflags" -o "$TMP/$out" "$@" 2>>"$TMP/gobuild.err"
}

# build GO CACHEDIR NAME: NAME and NAME-stripped in $TMP, from the fixture, by GO
build() {
	gobuild "$1" "$2" "$3" "" "$SRC"
	gobuild "$1" "$2" "$3-stripped" "-s -w" "$SRC"
	[ -x "$TMP/$3-stripped" ] ||
		{ fail "$3: go build failed: $(tail -2 "$TMP/gobuild.err")"; return 1; }
}

# check NAME: records $TMP/NAME and checks its labels
check() {
	local name=$1
	"$FIRN" record -F $HZ -o "$TMP/$name.pb.gz" -- "$TMP/$name" 80000000 "$TMP/$name.cpu" \
		>/dev/null 2>"$TMP/$name.err" || { fail "$name: record failed"; cat "$TMP/$name.err"; return; }
	grep -q "^firn: go: 1 process, .*unknown release 0$" "$TMP/$name.err" \
		&& pass "$name: $(grep '^firn: go:' "$TMP/$name.err")" \
		|| fail "$name: no go line for 1 process: $(grep '^firn: go' "$TMP/$name.err")"
	for l in endpoint tier; do
		"$FIRN" report --group-by $l --folded --tag-focus "comm=^${name:0:15}\$" \
			"$TMP/$name.pb.gz" >"$TMP/$name.$l" 2>&1
	done
	python3 - "$name" "$TMP/$name.endpoint" "$TMP/$name.tier" \
		"$(sample_floor "$TMP/$name.cpu" $HZ)" <<'PY'
import math, sys
name, ep, tier, floor = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
def result(good, what):
    print(("PASS: " if good else "FAIL: ") + name + ": " + what)

def read(path):
    for line in open(path):
        stack, n = line.rsplit(" ", 1)
        frames = stack.split(";")
        yield frames[0].split("=", 1)[1], frames[1:], int(n)

count = {}
wrong = {"a": 0, "b": 0, "outside": 0}
seen = {"a": 0, "b": 0, "outside": 0}
total = 0
for value, frames, n in read(ep):
    total += n
    count[value] = count.get(value, 0) + n
    user = [f for f in frames if not f.endswith("_[k]")]
    where = ("a" if "main.main.func1" in user else "b" if "main.main.func2" in user else
             "outside" if "main.spin" in user and "runtime/pprof.Do" not in user else None)
    if where:
        seen[where] += n
        wrong[where] += n * (value != (where if where != "outside" else "(none)"))
web = sum(n for value, _, n in read(tier) if value == "web")
na, nb = count.get("a", 0), count.get("b", 0)
result(total >= floor and na > 0 and nb > 0,
       "%d samples (floor %d): endpoint=a %d, endpoint=b %d, none %d"
       % (total, floor, na, nb, count.get("(none)", 0)))
r = na / max(nb, 1)
tol = max(0.05, 3.5 * r * math.sqrt(1 / max(na, 1) + 1 / max(nb, 1)))
result(abs(r - 0.5) <= tol, "a:b = %.3f, 0.5 within %.3f" % (r, tol))
result(web == na, "tier=web on %d samples, endpoint=a on %d" % (web, na))
for w in ("a", "b"):
    result(seen[w] > 0 and wrong[w] <= seen[w] / 100,
           "%d of %d samples in handler %s without endpoint=%s" % (wrong[w], seen[w], w, w))
result(seen["outside"] > 0 and wrong["outside"] == 0,
       "%d of %d samples outside the handlers labelled" % (wrong["outside"], seen["outside"]))
PY
}

# 1. Debian's Go 1.19: labels in a map[string]string
if command -v go >/dev/null; then
	build go "$ROOT/$BUILD/go-cache" golabels19 && { check golabels19; check golabels19-stripped; }
	# a cgo build (dynamic, g in the executable's TLS segment), stripped
	gobuild go "$ROOT/$BUILD/go-cache" golabels19-cgo "-s -w" "$SRC" "${SRC%/*}/cgo.go"
	if readelf -lW "$TMP/golabels19-cgo" 2>/dev/null | grep -q "^ *TLS "; then
		check golabels19-cgo
	else
		skip "go 1.19 cgo: no TLS segment in the build (no gcc for cgo?)"
	fi
else
	skip "go 1.19: no go"
fi

# 2. Debian unstable's Go (1.27): labels in a sorted slice
# shellcheck source=tests/cli/sid_root.sh
. "$ROOT/tests/cli/sid_root.sh"
sid=$(sid_root) || { sidwhy=$sid; sid=; }
if [ -x "$sid/usr/lib/go/bin/go" ]; then
	build "$sid/usr/lib/go/bin/go" "$CACHE/sid-go-cache" golabels27 &&
		{ check golabels27; check golabels27-stripped; }
else
	skip "newer Go: no root with Debian unstable's golang-go: $sidwhy"
fi
