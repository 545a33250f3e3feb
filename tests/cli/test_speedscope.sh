# speedscope reads firn's pprof: its own importer (npm speedscope, pinned; installed under
# build/npm on first use) on a profile firn converted and, as root, on one it recorded; the
# per-function self and total shares must match firn report's within 0.5 pp (issue 30).
. "$(dirname "$0")/lib.sh"
SPEEDSCOPE_VERSION=1.25.0
NPM_DIR="$ROOT/${BUILD%%/*}/npm" # one copy for build/ and build/asan/
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
	skip "speedscope: node and npm are needed (make deps installs nodejs; npm comes with it)"; exit 0
fi
if [ "$(node -p "require('$NPM_DIR/node_modules/speedscope/package.json').version" 2>/dev/null)" != "$SPEEDSCOPE_VERSION" ]; then
	mkdir -p "$NPM_DIR" && npm install --no-audit --no-fund --silent --prefix "$NPM_DIR" \
		"speedscope@$SPEEDSCOPE_VERSION" >"$TMP/npm.log" 2>&1 || { fail "npm install speedscope@$SPEEDSCOPE_VERSION"; tail -5 "$TMP/npm.log"; exit 0; }
fi
BUNDLE=$(ls "$NPM_DIR"/node_modules/speedscope/dist/release/speedscope-*.js 2>/dev/null | head -1)
[ -n "$BUNDLE" ] && pass "speedscope $SPEEDSCOPE_VERSION installed" || { fail "speedscope bundle not found"; exit 0; }

# same NAME PROFILE: speedscope's shares against firn report's, every function, within 0.5 pp
same() {
	node "$ROOT/tests/cli/speedscope_pprof.js" "$BUNDLE" "$2" >"$TMP/ss.txt" 2>"$TMP/ss.err" \
		|| { fail "$1: speedscope could not read it: $(cat "$TMP/ss.err")"; return; }
	"$FIRN" report --json --top 0 "$2" >"$TMP/firn.json"
	python3 - "$TMP/ss.txt" "$TMP/firn.json" "$1" <<'PY' && pass "$1: speedscope's self and total shares match firn report's (0.5 pp)" || fail "$1: shares differ"
import json, sys
ss = {}
for line in open(sys.argv[1]):
    if line.startswith("#"):
        continue
    s, t, name = line.rstrip("\n").split(" ", 2)
    ss[name] = (float(s), float(t))
firn = {}
for f in json.load(open(sys.argv[2]))["functions"]:
    s, t = firn.get(f["name"], (0.0, 0.0))
    # one name in two modules (_start: the program's and the dynamic loader's): speedscope's
    # rows add the frames of a name up, so the totals add up here too (max lost the loader's
    # 0.4-0.9 %: over the 0.5 pp tolerance once the loader had 2 samples)
    firn[f["name"]] = (s + f["self_pct"], t + f["total_pct"])
# a location with no function (an address firn could not name: "[unknown]", "[MODULE]", which
# firn's reader names after its mapping) is a frame speedscope's importer leaves out; such a
# row of firn's must hold no self share (it is never a leaf speedscope would lose samples of)
def omitted(n):
    return n not in ss and n.startswith("[") and n.endswith("]") and firn[n][0] <= 0.5
bad = [(n, ss.get(n), firn.get(n)) for n in set(ss) | set(firn)
       if not (n in firn and omitted(n)) and
       (n not in ss or n not in firn or abs(ss[n][0] - firn[n][0]) > 0.5 or abs(ss[n][1] - firn[n][1]) > 0.5)]
top = sorted(firn.items(), key=lambda kv: -kv[1][0])[:3]
print(f"# {sys.argv[3]}: {len(firn)} functions; top self: " + ", ".join(f"{n} {v[0]:.2f}% (speedscope {ss.get(n, (float('nan'),))[0]:.2f}%)" for n, v in top))
for b in bad[:10]:
    print("   ", b)
sys.exit(1 if bad or not firn else 0)
PY
}

"$FIRN" report --pprof -o "$TMP/simple.pb.gz" "$ROOT/tests/fixtures/simple.folded"
same "folded converted by firn report --pprof" "$TMP/simple.pb.gz"
same "Go's own pprof (the importer reads pprof at all)" "$ROOT/tests/fixtures/go-cpu.pb.gz"
if is_root; then
	"$FIRN" record -q -F 499 -o "$TMP/split.pb.gz" -- "$FIX/split" 300 >/dev/null 2>&1
	same "a recording (split 300, -F 499)" "$TMP/split.pb.gz"
else
	skip "speedscope on a recording: needs root"
fi
