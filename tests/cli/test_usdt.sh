# USDT: `firn usdt-list` against readelf -n (the usdtfix fixture, Debian's python3.11, a JVM's
# libjvm.so), patterns, --json, -p with semaphore states, damaged files and errors; then (root)
# `firn record -e usdt:...` with exact hit counts per call path for -- CMD, -p and -a, with
# cpu-clock beside, for python3.11's gc__start and for -p in a mount namespace of its own; the
# warning for a spec whose file no process of the recording mapped, and -v's attach lines.
. "$(dirname "$0")/lib.sh"

FX=$(readlink -f "$FIX/usdtfix") # as /proc/PID/maps names it (build/asan/fixtures is a link)
PY=/usr/bin/python3.11
if [ ! -x "$FX" ]; then fail "fixture $FX is missing (make fixtures)"; exit 0; fi

# probe lines from readelf -n: "PROVIDER:NAME ADDRESS SEMAPHORE|- ARGS|-", then "#" and the
# arguments decoded by this script (an independent reading of the spec).
readelf_probes() {
	LC_ALL=C readelf -n "$1" | python3 -c '
import re, sys
def decode(spec):
    m = re.fullmatch(r"(-?)([1248])@(.*)", spec)
    if not m:
        return "? " + spec
    t = ("int" if m.group(1) else "uint") + str(8 * int(m.group(2)))
    op = m.group(3)
    if op.startswith("%"):
        return "%s %s" % (t, op)
    if op.startswith("$"):
        return "%s %d" % (t, int(op[1:], 0))
    m = re.fullmatch(r"([A-Za-z_.][\w.@$]*)?([-+]?(?:0x[0-9a-f]+|\d+))?\((%\w+)\)", op)
    if not m:
        return "? " + spec
    sym, off, base = m.groups()
    inner = base + ("+" + sym if sym else "")
    if off and int(off, 0):
        inner += "%+d" % int(off, 0)
    return "%s [%s]" % (t, inner)
cur = {}
for line in sys.stdin:
    line = line.strip()
    key, _, val = line.partition(":")
    val = val.strip()
    if key == "Provider":
        cur = {"p": val}
    elif key == "Name":
        cur["n"] = val
    elif key == "Location":
        loc, base, sem = (int(x, 16) for x in re.findall(r"0x[0-9a-f]+", val))
        cur["a"], cur["s"] = "%#x" % loc, ("%#x" % sem if sem else "-")
    elif key == "Arguments":
        args = val.split()
        print("%s:%s %s %s %s # %s" % (cur["p"], cur["n"], cur["a"], cur["s"], val or "-",
                                     ", ".join(decode(a) for a in args) or "-"))
'
}

# the same lines from firn usdt-list --json (arguments decoded by firn)
firn_probes() {
	python3 -c '
import json, sys
for p in json.load(sys.stdin):
    sem = "%#x" % p["semaphore"] if p["semaphore"] is not None else "-"
    print("%s:%s %#x %s %s # %s" % (p["provider"], p["name"], p["address"], sem,
                                  p["argument_spec"] or "-",
                                  ", ".join(a["text"] for a in p["arguments"]) or "-"))
'
}

# 1. the fixture: exactly what readelf shows, names/count/semaphores/arguments known
"$FIRN" usdt-list --json "$FX" >"$TMP/fx.json" 2>"$TMP/fx.err"
rc=$?
[ $rc -eq 0 ] && [ ! -s "$TMP/fx.err" ] && pass "usdt-list --json FILE exits 0 quietly" || fail "usdt-list --json exit $rc: $(cat "$TMP/fx.err")"
firn_probes <"$TMP/fx.json" >"$TMP/fx.firn"
readelf_probes "$FX" >"$TMP/fx.readelf"
diff "$TMP/fx.readelf" "$TMP/fx.firn" >"$TMP/fx.diff" && pass "fixture probes, addresses, semaphores and arguments = readelf -n" \
	|| { fail "fixture probes differ from readelf -n"; cat "$TMP/fx.diff"; }
[ "$(cut -d' ' -f1 "$TMP/fx.firn" | tr '\n' ' ')" = "usdtfix:hit usdtfix:args_sem usdtfix:mem usdtfix:nosem usdtfix:nosem other_provider:neg " ] \
	&& pass "fixture: the 6 probes in note order" || fail "fixture probe names: $(cut -d' ' -f1 "$TMP/fx.firn" | tr '\n' ' ')"
[ "$(awk '$3 != "-" {print $1}' "$TMP/fx.firn" | tr '\n' ' ')" = "usdtfix:hit usdtfix:args_sem " ] \
	&& pass "fixture: semaphores on hit and args_sem only" || fail "fixture semaphores: $(awk '{print $1, $3}' "$TMP/fx.firn")"
want_args() {
	local probe=$1 want=$2 got
	got=$(grep "^$probe " "$TMP/fx.firn" | head -1 | sed 's/.* # //')
	[ "$got" = "$want" ] && pass "$probe arguments: $want" || fail "$probe arguments: '$got', wanted '$want'"
}
want_args usdtfix:hit "int32 %edi, int64 %rsi"
want_args usdtfix:args_sem "uint64 %rdi, uint8 %sil, int16 %dx, int32 42"
want_args usdtfix:mem "int32 [%rip+counter], int32 [%rdi+8], int64 [%rdi]"
want_args usdtfix:nosem "-"
want_args other_provider:neg "int64 %rdi, uint32 %esi"

# the text form: one line per probe, PROVIDER:NAME OBJECT ADDRESS SEMAPHORE ARGS
"$FIRN" usdt-list "$FX" >"$TMP/fx.txt"
awk -v fx="$FX" '{ args = $0; sub(/^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", args); print $1, $3, $4, args }' "$TMP/fx.txt" >"$TMP/fx.txt.cols"
awk -F' # ' '{ split($1, a, " "); print a[1], a[2], a[3], $2 }' "$TMP/fx.firn" | diff - "$TMP/fx.txt.cols" >/dev/null &&
	[ "$(awk '{print $2}' "$TMP/fx.txt" | sort -u)" = "$FX" ] \
	&& pass "text lines: name, object, address, semaphore, decoded arguments" || { fail "text lines"; cat "$TMP/fx.txt"; }

# 2. patterns
count() { "$FIRN" usdt-list "$@" 2>/dev/null | wc -l; }
[ "$(count "$FX" 'usdtfix:*')" = 5 ] && pass "pattern usdtfix:* lists 5" || fail "pattern usdtfix:* lists $(count "$FX" 'usdtfix:*')"
[ "$(count "$FX" '*:neg')" = 1 ] && pass "pattern *:neg lists 1" || fail "pattern *:neg"
[ "$(count "$FX" nosem)" = 2 ] && pass "a pattern without ':' matches names (nosem: 2 sites)" || fail "pattern nosem lists $(count "$FX" nosem)"
expect_rc "a pattern that matches nothing exits 0" 0 "$FIRN" usdt-list "$FX" 'none:*'
[ ! -s "$TMP/out" ] && pass "... and prints nothing" || fail "no-match printed: $(cat "$TMP/out")"

# 3. real binaries: Debian's python3.11 and a JVM, against readelf -n
if [ -x "$PY" ]; then
	"$FIRN" usdt-list --json "$PY" >"$TMP/py.json"
	firn_probes <"$TMP/py.json" >"$TMP/py.firn" && pass "python3.11 --json parses" || fail "python3.11 --json does not parse"
	readelf_probes "$PY" >"$TMP/py.readelf"
	n=$(wc -l <"$TMP/py.readelf")
	[ "$n" -gt 0 ] && [ "$(wc -l <"$TMP/py.firn")" = "$n" ] && pass "python3.11: $n probes, as readelf -n" \
		|| fail "python3.11: $(wc -l <"$TMP/py.firn") probes, readelf -n shows $n"
	diff "$TMP/py.readelf" "$TMP/py.firn" >/dev/null && pass "python3.11 probes = readelf -n (addresses, semaphores, arguments)" \
		|| { fail "python3.11 probes differ from readelf -n"; diff "$TMP/py.readelf" "$TMP/py.firn" | head; }
	[ "$(count python3.11 'python:gc__*')" = 2 ] && pass "a program name is found on PATH (python3.11 python:gc__*: 2)" \
		|| fail "python3.11 by name: $(count python3.11 'python:gc__*')"
else
	fail "$PY is missing (Debian's python3.11 package)"
fi
JVM=$(ls /usr/lib/jvm/*/lib/server/libjvm.so 2>/dev/null | head -1)
if [ -n "$JVM" ]; then
	want=$(LC_ALL=C readelf -n "$JVM" | grep -c 'Provider:')
	"$FIRN" usdt-list --json "$JVM" | firn_probes >"$TMP/jvm.firn"
	[ "$want" -gt 100 ] && [ "$(wc -l <"$TMP/jvm.firn")" = "$want" ] && pass "libjvm.so: $want probes, as readelf -n" \
		|| fail "libjvm.so: $(wc -l <"$TMP/jvm.firn") probes, readelf -n shows $want"
	readelf_probes "$JVM" | diff - "$TMP/jvm.firn" >/dev/null && pass "libjvm.so probes = readelf -n" || fail "libjvm.so probes differ from readelf -n"
else
	skip "no JVM (openjdk-17-jre-headless): libjvm.so probe count"
fi

# 4. -p: the objects of a running process, with semaphore states
"$FX" 0 0 3000 >/dev/null 2>&1 &
fpid=$!
sleep 0.2
"$FIRN" usdt-list -p "$fpid" >"$TMP/p.txt" 2>"$TMP/p.err"
rc=$?
[ $rc -eq 0 ] && [ "$(grep -c " $FX " "$TMP/p.txt")" = 6 ] && pass "usdt-list -p lists the fixture's 6 probes" \
	|| { fail "usdt-list -p (exit $rc)"; cat "$TMP/p.txt" "$TMP/p.err"; }
grep -q "^usdtfix:hit .*0x[0-9a-f]*(inactive) " "$TMP/p.txt" && pass "-p: hit's semaphore is inactive" || fail "-p semaphore: $(grep hit "$TMP/p.txt")"
[ "$("$FIRN" usdt-list -p "$fpid" 'usdtfix:h*' | wc -l)" = 1 ] && pass "-p with a pattern" || fail "-p with a pattern"
"$FIRN" usdt-list --json -p "$fpid" 'usdtfix:hit' | python3 -c 'import json,sys; p=json.load(sys.stdin)[0]; sys.exit(0 if p["active"] is False and p["semaphore_count"] == 0 else 1)' \
	&& pass "-p --json: active false, semaphore_count 0" || fail "-p --json semaphore state"
kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null

# 5. damaged files and errors: one warning per object, never a crash
notes=$(LC_ALL=C readelf -S -W "$FX" | awk '$2 == ".note.stapsdt" {print $5}')
cp "$FX" "$TMP/cut"
truncate -s $((0x$notes + 100)) "$TMP/cut"
expect_rc "a file cut inside its notes exits 1" 1 "$FIRN" usdt-list "$TMP/cut" "$FX"
[ "$(cat "$TMP/err")" = "firn: warning: cannot read the stapsdt notes of '$TMP/cut': its section headers lie past the end of the file" ] \
	&& pass "... with one warning naming the object" || fail "truncated file warning: $(cat "$TMP/err")"
[ "$(wc -l <"$TMP/out")" = 6 ] && pass "... and the other file's probes listed" || fail "other file after a truncated one: $(cat "$TMP/out")"
# the second note's descriptor size made 4: that note is skipped, and the rest is out of step
cp "$FX" "$TMP/bad"
python3 - "$TMP/bad" $((0x$notes)) <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b"); off = int(sys.argv[2])
f.seek(off); namesz, descsz, typ = struct.unpack("<III", f.read(12))
second = off + 12 + ((namesz + 3) & ~3) + ((descsz + 3) & ~3)
f.seek(second + 4); f.write(struct.pack("<I", 4))
PY
expect_rc "a file with a bad note size exits 1" 1 "$FIRN" usdt-list "$TMP/bad"
grep -qx "firn: warning: skipped 1 malformed stapsdt note in '$TMP/bad' (descriptor too short), and cannot read the rest: .*" "$TMP/err" \
	&& [ "$(wc -l <"$TMP/err")" = 1 ] && pass "... one warning naming the object and the reason" || fail "bad note warning: $(cat "$TMP/err")"
grep -q "^usdtfix:hit " "$TMP/out" && pass "... the note before it still listed" || fail "note before the bad one: $(cat "$TMP/out")"
expect_rc "a missing file exits 1" 1 "$FIRN" usdt-list /nonexistent/file
[ "$(cat "$TMP/err")" = "firn: cannot open '/nonexistent/file': No such file or directory" ] && pass "missing file message" || fail "missing file message: $(cat "$TMP/err")"
echo "not elf" >"$TMP/text"
expect_rc "a non-ELF file exits 1" 1 "$FIRN" usdt-list "$TMP/text"
[ "$(cat "$TMP/err")" = "firn: cannot read '$TMP/text': not an ELF file" ] && pass "non-ELF message" || fail "non-ELF message: $(cat "$TMP/err")"
expect_rc "an unknown library name exits 1" 1 "$FIRN" usdt-list libno-such-firn-lib
grep -q "cannot find 'libno-such-firn-lib'" "$TMP/err" && pass "unknown library message" || fail "unknown library message: $(cat "$TMP/err")"
expect_rc "nothing to list exits 2" 2 "$FIRN" usdt-list
expect_rc "a pattern alone exits 2" 2 "$FIRN" usdt-list 'python:*'
expect_rc "a missing pid exits 1" 1 "$FIRN" usdt-list -p 999999999
[ "$(cat "$TMP/err")" = "firn: no process with pid 999999999" ] && pass "missing pid message" || fail "missing pid message: $(cat "$TMP/err")"

if ! is_root; then skip "recording tests need root"; exit 0; fi

# hits FOLDED PATH: the hits whose stacks run main→PATH→fire (fire the leaf)
hits() { awk -v p=";main;$2;fire" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (substr(s, length(s) - length(p) + 1) == p) t += n } END { print t + 0 }' "$1"; }
total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }
# exact NAME FOLDED A B: checks A hits through path_a, B through path_b, nothing else
exact() {
	local a b t
	a=$(hits "$2" path_a) b=$(hits "$2" path_b) t=$(total "$2")
	[ "$a" = "$3" ] && [ "$b" = "$4" ] && [ "$t" = $(($3 + $4)) ] && pass "$1: exactly $3 hits via path_a and $4 via path_b" \
		|| { fail "$1: path_a $a, path_b $b, total $t (wanted $3, $4)"; head -5 "$2"; }
}

# 6. -- CMD: the stack at every hit, counted per stack
"$FIRN" record -e "usdt:$FX:usdtfix:hit" -o "$TMP/cmd.pb.gz" -- "$FX" 300 200 5000 >"$TMP/cmd.out" 2>"$TMP/cmd.err"
rc=$?
[ $rc -eq 0 ] && pass "record -e usdt -- CMD exits 0" || { fail "record -e usdt -- CMD exit $rc"; cat "$TMP/cmd.err"; }
grep -qx "semaphore 1" "$TMP/cmd.out" && pass "the probe's semaphore is set while recording" || fail "semaphore while recording: $(cat "$TMP/cmd.out")"
grep -qx "firn: usdt_usdtfix_hit: 500 hits" "$TMP/cmd.err" && pass "summary: 500 hits" || fail "summary: $(cat "$TMP/cmd.err")"
"$FIRN" report --folded "$TMP/cmd.pb.gz" >"$TMP/cmd.folded"
exact "record -- CMD" "$TMP/cmd.folded" 300 200
"$FIRN" report --json "$TMP/cmd.pb.gz" | python3 -c 'import json,sys; d=json.load(sys.stdin); sys.exit(0 if d["sample_type"] == "usdt_usdtfix_hit" and d["unit"] == "count" and d["total"] == 500 else 1)' \
	&& pass "report: sample type usdt_usdtfix_hit/count, 500" || fail "report --json sample type"
if command -v go >/dev/null; then
	go tool pprof -raw "$TMP/cmd.pb.gz" 2>/dev/null | grep -qx 'usdt_usdtfix_hit/count\[dflt\]' \
		&& pass "go tool pprof: the only sample type is usdt_usdtfix_hit/count" || fail "go tool pprof sample types"
fi
"$FIRN" record -q -e "usdt:$FX:usdtfix:hit" -o "$TMP/cmd2.pb.gz" -- "$FX" 100 400 5000 >/dev/null
"$FIRN" diff --json "$TMP/cmd.pb.gz" "$TMP/cmd2.pb.gz" >"$TMP/diff.json" 2>"$TMP/diff.err"
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$TMP/diff.json" 2>/dev/null && grep -q '"path_b"' "$TMP/diff.json" \
	&& pass "diff compares two USDT recordings" || { fail "diff of USDT recordings"; head -3 "$TMP/diff.err"; }

# 7. globs, with cpu-clock beside: one sample type per probe, in -e order; the first is the default
"$FIRN" record -q -e "usdt:$FX:usdt*:h?t" -e cpu-clock -o "$TMP/both.pb.gz" -- "$FX" 30 20 5000 >/dev/null
"$FIRN" report --folded "$TMP/both.pb.gz" >"$TMP/both.folded"
exact "glob + cpu-clock" "$TMP/both.folded" 30 20
if command -v go >/dev/null; then
	types=$(go tool pprof -raw "$TMP/both.pb.gz" 2>/dev/null | sed -n '/^Samples:/{n;p;q}')
	[ "$(echo $types)" = 'usdt_usdtfix_hit/count[dflt] samples/count cpu/nanoseconds' ] \
		&& pass "sample types: usdt_usdtfix_hit (default), samples, cpu" || fail "sample types: $types"
	"$FIRN" record -q -e cpu-clock -e "usdt:$FX:usdtfix:hit" -o "$TMP/cpu1.pb.gz" -- "$FX" 3 2 5000 >/dev/null
	types=$(go tool pprof -raw "$TMP/cpu1.pb.gz" 2>/dev/null | sed -n '/^Samples:/{n;p;q}')
	[ "$(echo $types)" = 'samples/count[dflt] cpu/nanoseconds usdt_usdtfix_hit/count' ] \
		&& pass "-e cpu-clock first: samples is the default" || fail "sample types (cpu-clock first): $types"
fi

# 8. -p PID (the library name resolved in the process); semaphore active while attached, then cleared
"$FX" 300 200 10000 4000 >"$TMP/p.out" 2>&1 &
fpid=$!
sleep 0.3
"$FIRN" record -q -d 3 -e usdt:usdtfix:usdtfix:hit -p "$fpid" -o "$TMP/pid.pb.gz" &
rpid=$!
for i in $(seq 100); do grep -q fired "$TMP/p.out" && break; sleep 0.1; done
"$FIRN" usdt-list -p "$fpid" usdtfix:hit >"$TMP/active.txt"
grep -q "(active)" "$TMP/active.txt" && pass "usdt-list -p: active while recorded" || fail "semaphore while recorded: $(cat "$TMP/active.txt")"
wait "$rpid"
rc=$?
"$FIRN" usdt-list -p "$fpid" usdtfix:hit >"$TMP/inactive.txt"
grep -q "(inactive)" "$TMP/inactive.txt" && pass "usdt-list -p: inactive after the recording (libbpf cleared it)" \
	|| fail "semaphore after recording: $(cat "$TMP/inactive.txt")"
kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
[ $rc -eq 0 ] && pass "record -e usdt -p exits 0" || fail "record -e usdt -p exit $rc"
"$FIRN" report --folded "$TMP/pid.pb.gz" >"$TMP/pid.folded"
exact "record -p" "$TMP/pid.folded" 300 200

# 9. -a: every process that maps the object
"$FX" 40 60 10000 >/dev/null 2>&1 &
fpid=$!
"$FIRN" record -q -a -d 3 -e "usdt:$FX:usdtfix:hit" --format folded -o "$TMP/all.folded"
wait "$fpid"
grep "^usdtfix;" "$TMP/all.folded" >"$TMP/all.fx.folded"
exact "record -a" "$TMP/all.fx.folded" 40 60

# 10. a real runtime: python3.11's gc__start, 7 collections from the script
if [ -x "$PY" ]; then
	"$FIRN" record -q -e "usdt:python3.11:python:gc__start" -o "$TMP/py.pb.gz" -- "$PY" -c \
		'import gc, time; gc.disable(); time.sleep(0.5); [gc.collect() for _ in range(7)]'
	"$FIRN" report --folded "$TMP/py.pb.gz" >"$TMP/py.folded"
	# the script's collections run under PyRun_SimpleStringFlags (the -c string); start-up and
	# finalization collect too, and every hit, from the first, unwinds to _start
	n=$(awk '/;PyRun_SimpleStringFlags;.*;PyEval_EvalCode;/ { t += $NF } END { print t + 0 }' "$TMP/py.folded")
	[ "$n" = 7 ] && pass "python3.11 gc__start: 7 hits under the script's PyEval_EvalCode" || { fail "python3.11 gc__start: $n hits from the script"; cat "$TMP/py.folded"; }
	read -r all complete < <(awk '{ t += $NF; if ($1 ~ /^python3\.11;_start;/) c += $NF } END { print t + 0, c + 0 }' "$TMP/py.folded")
	[ "$all" -ge 7 ] && [ "$complete" = "$all" ] && pass "python3.11 gc__start: all $all hits (start-up too) reach _start" \
		|| { fail "python3.11 gc__start: $complete of $all hits reach _start"; cat "$TMP/py.folded"; }
fi

# 10b. a bare program name is resolved as the command line's shell would (issue 30): the command's
# own file, else PATH in its order, before LD_LIBRARY_PATH and the library directories; the file
# used is named on stderr and in the profile's "event:" comment. A copy of the fixture in
# LD_LIBRARY_PATH, never run, is what the old search took (0 hits).
mkdir -p "$TMP/pathbin" "$TMP/pathlib" "$TMP/shim"
cp "$FX" "$TMP/pathbin/usdtfix"; cp "$FX" "$TMP/pathlib/usdtfix"
bare() { # bare NAME CMD...: record usdt:usdtfix:usdtfix:hit -- CMD with the PATH above
	local name=$1; shift
	LD_LIBRARY_PATH="$TMP/pathlib" PATH="$TMP/pathbin:$PATH" "$FIRN" record -e usdt:usdtfix:usdtfix:hit \
		-o "$TMP/bare.pb.gz" -- "$@" >/dev/null 2>"$TMP/bare.err"
	grep -qx "firn: usdt_usdtfix_hit: 50 hits" "$TMP/bare.err" && pass "$name: 50 hits" \
		|| { fail "$name: hits"; cat "$TMP/bare.err"; }
}
bare "bare name, the command itself" usdtfix 30 20 5000
grep -qx "firn: usdt:usdtfix:usdtfix:hit: probes of '$TMP/pathbin/usdtfix' (the command's)" "$TMP/bare.err" \
	&& pass "bare name: the message names the command's file" || fail "bare name: $(head -1 "$TMP/bare.err")"
bare "bare name, through sh -c" sh -c "usdtfix 30 20 5000"
grep -qx "firn: usdt:usdtfix:usdtfix:hit: probes of '$TMP/pathbin/usdtfix' (PATH)" "$TMP/bare.err" \
	&& pass "bare name: the message names the file found in PATH" || fail "bare name via PATH: $(head -1 "$TMP/bare.err")"
if command -v go >/dev/null; then
	go tool pprof -comments "$TMP/bare.pb.gz" 2>/dev/null | grep -qx "event: usdt:$TMP/pathbin/usdtfix:usdtfix:hit" \
		&& pass "bare name: the profile's event comment names the file" || fail "bare name: comments $(go tool pprof -comments "$TMP/bare.pb.gz" 2>&1 | grep event)"
fi
# a wrapper script first on PATH (a pyenv shim): the shell runs it, not the program; say so
printf '#!/bin/sh\nexec "%s" "$@"\n' "$TMP/pathbin/usdtfix" >"$TMP/shim/usdtfix"; chmod +x "$TMP/shim/usdtfix"
PATH="$TMP/shim:$TMP/pathbin:$PATH" "$FIRN" record -q -e usdt:usdtfix:usdtfix:hit -o "$TMP/bare.pb.gz" -- sh -c "usdtfix 3 2 5000" >/dev/null 2>"$TMP/bare.err"
grep -qx "firn: warning: 'usdtfix' on PATH is '$TMP/shim/usdtfix', a script, not a program: the probes are those of '$TMP/pathbin/usdtfix'; name the program's path if the script runs another" "$TMP/bare.err" \
	&& pass "bare name: a script first on PATH is warned about (also with -q)" || fail "bare name: shim: $(cat "$TMP/bare.err")"

# 11. errors
expect_rc "an unknown event exits 2" 2 "$FIRN" record -e cycles -a
grep -q "invalid event 'cycles'" "$TMP/err" && pass "unknown event message" || fail "unknown event message: $(cat "$TMP/err")"
expect_rc "a malformed usdt event exits 2" 2 "$FIRN" record -e "usdt:$FX:hit" -a
expect_rc "an event matching no probe exits 1" 1 "$FIRN" record -q -e "usdt:$FX:usdtfix:nope*" -o "$TMP/x.pb.gz" -- /bin/true
grep -q "no USDT probe matches 'usdt:$FX:usdtfix:nope\*'" "$TMP/err" && pass "no-match message" || fail "no-match message: $(cat "$TMP/err")"
expect_rc "an unknown object exits 1" 1 "$FIRN" record -q -e "usdt:libno-such-firn-lib:a:b" -o "$TMP/x.pb.gz" -- /bin/true
grep -q "cannot find 'libno-such-firn-lib'" "$TMP/err" && pass "unknown object message" || fail "unknown object message: $(cat "$TMP/err")"
sleep 10 &
spid=$!
expect_rc "-p: an object the process does not map exits 1" 1 "$FIRN" record -q -d 1 -p "$spid" -e "usdt:usdtfix:usdtfix:hit" -o "$TMP/x.pb.gz"
[ "$(cat "$TMP/err")" = "firn: warning: cannot find 'usdtfix' in process $spid: No such file or directory
firn: no USDT probe matches 'usdt:usdtfix:usdtfix:hit'" ] && pass "... with a warning per process, then the error" || fail "-p unmapped object: $(cat "$TMP/err")"
kill "$spid"; wait "$spid" 2>/dev/null || true

# 12. -p PID in a mount namespace of its own (a container's): the object the process maps is not
# at that path outside; firn reaches it through /proc/PID/root, as usdt-list -p does.
NS="$TMP/ns"
mkdir -p "$NS"
# ns_fixture OUT: runs the fixture from a tmpfs mounted on $NS inside a new mount namespace
ns_fixture() {
	unshare -m sh -c 'mount -t tmpfs none "$1" && cp "$2" "$1/usdtfix" && exec "$1/usdtfix" 30 20 10000 4000' \
		sh "$NS" "$FX" >"$1" 2>&1 &
	fpid=$!
	for _ in $(seq 50); do [ "$(readlink "/proc/$fpid/exe")" = "$NS/usdtfix" ] && break; sleep 0.1; done
}
for spec in "usdtfix:usdtfix:hit" "$NS/usdtfix:usdtfix:hit"; do
	ns_fixture "$TMP/ns.out"
	if [ "$(readlink "/proc/$fpid/exe")" != "$NS/usdtfix" ] || [ -e "$NS/usdtfix" ]; then
		fail "namespace fixture did not start (exe $(readlink "/proc/$fpid/exe"))"; kill "$fpid" 2>/dev/null; break
	fi
	"$FIRN" usdt-list -p "$fpid" usdtfix:hit | grep -q " $NS/usdtfix " && pass "usdt-list -p sees $NS/usdtfix in the namespace" \
		|| fail "usdt-list -p in a namespace"
	"$FIRN" record -q -d 3 -e "usdt:$spec" -p "$fpid" -o "$TMP/ns.pb.gz" 2>"$TMP/ns.err"
	rc=$?
	kill "$fpid" 2>/dev/null; wait "$fpid" 2>/dev/null
	[ $rc -eq 0 ] && pass "record -p in a mount namespace, usdt:$spec: exit 0" \
		|| { fail "record -p in a mount namespace, usdt:$spec: exit $rc"; cat "$TMP/ns.err"; continue; }
	"$FIRN" report --folded "$TMP/ns.pb.gz" >"$TMP/ns.folded"
	exact "record -p in a mount namespace, usdt:$spec" "$TMP/ns.folded" 30 20
done

# 13. a spec whose object the command never maps (the command ran another copy, as a pyenv shim
# runs another python3.11): a warning naming the spec and the file; -v names the attached file
cp "$FX" "$TMP/usdtfix-copy"
"$FIRN" -v record -e "usdt:$FX:usdtfix:hit" -o "$TMP/copy.pb.gz" -- "$TMP/usdtfix-copy" 3 2 600 >/dev/null 2>"$TMP/copy.err"
rc=$?
[ $rc -eq 3 ] && pass "record -- another copy: the command's status (3: no tracer)" || fail "record -- another copy: exit $rc"
grep -qx "firn: usdt:$FX:usdtfix:hit: attached usdtfix:hit in '$FX'" "$TMP/copy.err" && pass "-v names the file a probe was attached in" \
	|| fail "-v attach line: $(grep attached "$TMP/copy.err")"
grep -qx "firn: warning: no hits for 'usdt:$FX:usdtfix:hit': no process of the recording was seen mapping '$FX', where its probes were attached" "$TMP/copy.err" \
	&& pass "no hits in a file never mapped: a warning naming the spec and the file" || { fail "unmapped warning"; cat "$TMP/copy.err"; }
"$FIRN" record -q -e "usdt:$FX:usdtfix:hit" -o "$TMP/none.pb.gz" -- "$FX" 0 0 2000 300 >"$TMP/none.out" 2>"$TMP/none.err"
rc=$?
[ $rc -eq 0 ] && grep -qx "semaphore 1" "$TMP/none.out" && [ ! -s "$TMP/none.err" ] \
	&& pass "no hits in a mapped file (the probe never fired): no warning" || { fail "0 hits, mapped: exit $rc"; cat "$TMP/none.err"; }
! grep -q "no hits" "$TMP/cmd.err" && pass "no warning when the probe fired" || fail "warning with hits: $(cat "$TMP/cmd.err")"
PYSHIM=$(command -v python3.11)
if [ -n "$PYSHIM" ] && [ -x "$PY" ] && ! head -c 4 "$PYSHIM" | grep -q ELF; then
	"$FIRN" record -q -e "usdt:python3.11:python:gc__start" -o "$TMP/shim.pb.gz" -- python3.11 -c \
		'import gc, time; time.sleep(0.3); gc.collect()' 2>"$TMP/shim.err"
	grep -qx "firn: warning: 'python3.11' on PATH is '$PYSHIM', a script, not a program: the probes are those of '$PY'; name the program's path if the script runs another" "$TMP/shim.err" \
		&& pass "python3.11 on PATH is a shim ($PYSHIM): a warning names it and $PY" || { fail "shim warning"; cat "$TMP/shim.err"; }
	grep -q "^firn: warning: no hits for 'usdt:$PY:python:gc__start': no process of the recording was seen mapping '$PY'" "$TMP/shim.err" \
		&& pass "python3.11 on PATH is a shim: the no-hits warning names $PY" || { fail "shim no-hits warning"; cat "$TMP/shim.err"; }
else
	skip "python3.11 on PATH is no shim: the pyenv case"
fi
