# Symbolization in real recordings (root, BPF): demangled C++ names, inlined frames with their
# file and line (gcc, and clang without .debug_aranges), a stripped binary whose debug file is
# under /usr/lib/debug/.build-id/ (and one found by .gnu_debuglink, and one from a debuginfod
# server; another user's copy with the same build id and a debug file of its own lends it to no
# one), debuginfod that never answers (a note, no hang), Node.js JIT frames from its perf map,
# a JVM perf map written at exit, and 200 processes of ~30 ms each. Shares are of the samples of the fixture's own process.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "symbolization recordings need root"; exit 0; fi

# share FILE.folded COMM PATTERN [WITHIN]: percent of COMM's samples whose stack (frames joined
# by ';', comm first) matches the Python regex PATTERN, then the sample count: "PCT TOTAL". With
# WITHIN, only the samples whose stack matches WITHIN count.
share() {
	python3 - "$@" <<'PY'
import re, sys
path, comm, pat = sys.argv[1], sys.argv[2], re.compile(sys.argv[3])
within = re.compile(sys.argv[4]) if len(sys.argv) > 4 else None
tot = hit = 0
for line in open(path):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    if stack.split(";")[0] != comm or (within and not within.search(stack)):
        continue
    tot += int(n)
    if pat.search(stack):
        hit += int(n)
print("%.1f %d" % (100.0 * hit / tot if tot else 0.0, tot))
PY
}

# expect_share NAME FILE.folded COMM PATTERN MIN_PCT: passes when the share is at least MIN_PCT
# of at least 50 samples.
expect_share() {
	local name=$1 pct tot
	read -r pct tot < <(share "$2" "$3" "$4")
	if python3 -c "import sys; sys.exit(0 if float('$pct') >= $5 and $tot >= 50 else 1)"; then
		pass "$name ($pct% of $tot samples)"
	else
		fail "$name ($pct% of $tot samples, wanted >= $5%)"
		sort -t' ' -k2 -n -r "$2" 2>/dev/null | head -5 | cut -c1-300 | sed 's/^/    /'
	fi
}

# record NAME ARGS...: records ARGS into $TMP/NAME.pb.gz and writes $TMP/NAME.folded.
record() {
	local name=$1; shift
	"$FIRN" record -q -F 999 ${RECORD_OPTS:-} -o "$TMP/$name.pb.gz" -- "$@" 2>"$TMP/$name.err" >/dev/null
	"$FIRN" report --folded "$TMP/$name.pb.gz" >"$TMP/$name.folded" 2>>"$TMP/$name.err"
}

# line_of FILE MARKER: the line number of the marker comment in a fixture source.
line_of() { grep -n "$2" "$ROOT/tests/fixtures/$1" | cut -d: -f1; }

# 1. C++: namespaces and templates come out demangled, with parameter types.
record cxx "$FIX/cxxfix" 60
expect_share "C++ hot method demangled" "$TMP/cxx.folded" cxxfix \
	';firnfix::shapes::Accumulator<double>::spin\(long\)( |;|$)' 90
expect_share "C++ template function caller demangled" "$TMP/cxx.folded" cxxfix \
	';double firnfix::shapes::run<double>\(long\);firnfix::shapes::Accumulator<double>::spin\(long\)' 90
grep -q '_ZN7firnfix' "$TMP/cxx.folded" && fail "a mangled name is left in the folded output" \
	|| pass "no mangled firnfix name left"

# 2. Inlined frames: the always_inline helper is its own frame, with its file and line; the
# table shows it as outer_work (at the call's line) unless --inline.
hot=$(line_of inlinefix.c HOT_LINE) call=$(line_of inlinefix.c CALL_LINE)
for v in inlinefix:40 inlinefix-clang:400; do
	fx=${v%%:*} rounds=${v#*:}
	record "$fx" "$FIX/$fx" "$rounds"
	"$FIRN" report --folded --inline "$TMP/$fx.pb.gz" >"$TMP/$fx.inl.folded"
	expect_share "$fx: inlined helper marked _[i] under its caller (--inline)" "$TMP/$fx.inl.folded" "$fx" \
		';main;outer_work;mix_helper_\[i\]( |;|$)' 90
	expect_share "$fx: inlined helper marked _[i] without --inline too (read back as inlined)" \
		"$TMP/$fx.folded" "$fx" ';main;outer_work;mix_helper_\[i\]( |;|$)' 90
	top=$("$FIRN" report --lines --inline "$TMP/$fx.pb.gz" | awk 'NR==3 {print $5, $6}')
	[ "$top" = "mix_helper (inlinefix.c:$hot)" ] && pass "$fx: --lines --inline top row is '$top'" \
		|| fail "$fx: --lines --inline top row '$top', wanted 'mix_helper (inlinefix.c:$hot)'"
	top=$("$FIRN" report --lines "$TMP/$fx.pb.gz" | awk 'NR==3 {print $5, $6}')
	[ "$top" = "outer_work (inlinefix.c:$call)" ] && pass "$fx: --lines top row is the caller at the call '$top'" \
		|| fail "$fx: --lines top row '$top', wanted 'outer_work (inlinefix.c:$call)'"
	if command -v go >/dev/null; then
		go tool pprof -raw "$TMP/$fx.pb.gz" 2>/dev/null | grep -E "/$fx [0-9a-f]+ " >"$TMP/$fx.map"
		grep -q '\[FN\]\[FL\]\[LN\]\[IN\]' "$TMP/$fx.map" \
			&& pass "$fx: pprof mapping has_functions, has_filenames, has_line_numbers, has_inline_frames" \
			|| fail "$fx: pprof mapping flags: $(cat "$TMP/$fx.map")"
	fi
done
readelf -S -W "$FIX/inlinefix-clang" | grep -q debug_aranges && fail "the clang fixture has .debug_aranges" \
	|| pass "the clang fixture has no .debug_aranges"

# 3. A stripped copy whose debug file is found by build id under /usr/lib/debug/.build-id/.
bid=$(readelf -n "$FIX/shortfix" | awk '/Build ID:/ {print $3}')
dbg_dir=/usr/lib/debug/.build-id/${bid:0:2} dbg_file=/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug
made_dir=
cleanup() {
	rm -f "$dbg_file"
	[ -n "$made_dir" ] && rmdir "$dbg_dir" 2>/dev/null
	[ -n "${srv_pid:-}" ] && kill "$srv_pid" 2>/dev/null
	[ -n "${hole_pid:-}" ] && kill "$hole_pid" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
mkdir -p "$TMP/bin"
strip -s -o "$TMP/bin/shortfix" "$FIX/shortfix"
objcopy --only-keep-debug "$FIX/shortfix" "$TMP/shortfix.debug"
if [ -z "$bid" ] || [ -e "$dbg_file" ]; then
	fail "no build id in the fixture, or '$dbg_file' exists already"
else
	record nodebug "$TMP/bin/shortfix" 300
	expect_share "stripped, no debug file: short_hot unknown (control)" "$TMP/nodebug.folded" shortfix \
		'^(?!.*short_hot)' 99
	[ -d "$dbg_dir" ] || { mkdir -p "$dbg_dir" && made_dir=1; }
	cp "$TMP/shortfix.debug" "$dbg_file"
	record byid "$TMP/bin/shortfix" 300
	expect_share "stripped + /usr/lib/debug/.build-id file: full names" "$TMP/byid.folded" shortfix \
		';main;short_hot( |;|$)' 90
	top=$("$FIRN" report --lines "$TMP/byid.pb.gz" | awk 'NR==3 {print $5, $6}')
	case $top in "short_hot (shortfix.c:"*) pass "lines come from the debug file: '$top'" ;;
		*) fail "lines from the debug file: top row '$top'" ;; esac
	rm -f "$dbg_file"
fi

# 4. .gnu_debuglink: the debug file next to the stripped binary.
mkdir -p "$TMP/link"
cp "$TMP/shortfix.debug" "$TMP/link/shortfix.debug"
objcopy --remove-section=.note.gnu.build-id --add-gnu-debuglink="$TMP/link/shortfix.debug" \
	"$TMP/bin/shortfix" "$TMP/link/shortfix"
record link "$TMP/link/shortfix" 300
expect_share "stripped + .gnu_debuglink (no build id): full names" "$TMP/link.folded" shortfix \
	';main;short_hot( |;|$)' 90

# 4b. A build id is anyone's to copy: nobody's copy of the stripped shortfix (same build id)
# with a debuglink to a debug file of its own (shortfix.c with short_hot renamed forged_hot,
# built as shortfix is, with shortfix's build id) runs first; root's copy, with its real debug
# file next to it, runs beside it. Each is named by its own debug file: the first one found for
# the build id is not shared with another owner's file.
PUB="$TMP/pub"
mkdir -p "$PUB" "$TMP/real" && chmod 711 "$TMP" && chmod 755 "$PUB"
sed 's/short_hot/forged_hot/g' "$ROOT/tests/fixtures/shortfix.c" >"$PUB/forged.c"
gcc -O2 -g -fno-omit-frame-pointer -Wl,--build-id=0x"$bid" -o "$PUB/forged" "$PUB/forged.c"
objcopy --only-keep-debug "$PUB/forged" "$PUB/forged.debug"
objcopy --add-gnu-debuglink="$PUB/forged.debug" "$TMP/bin/shortfix" "$PUB/forgedfix"
cp "$TMP/shortfix.debug" "$TMP/real/shortfix.debug"
objcopy --add-gnu-debuglink="$TMP/real/shortfix.debug" "$TMP/bin/shortfix" "$TMP/real/shortfix"
chown nobody "$PUB/forgedfix" "$PUB/forged.debug"
record owners sh -c "setpriv --reuid=nobody --regid=nogroup --clear-groups '$PUB/forgedfix' 900 &
	sleep 0.5; '$TMP/real/shortfix' 300; wait"
expect_share "nobody's copy with a copied build id named by its own debug file (control)" \
	"$TMP/owners.folded" forgedfix ';main;forged_hot( |;|$)' 90
expect_share "root's copy beside it named by its own debug file, not nobody's" \
	"$TMP/owners.folded" shortfix ';main;short_hot( |;|$)' 90

# 5. debuginfod: a server that has the debug file, then one that never answers.
ldconfig -p | grep -q 'libdebuginfod\.so\.1 ' || fail "libdebuginfod.so.1 is missing (Debian package libdebuginfod1)"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$TMP/srv/buildid/$bid"
cp "$TMP/shortfix.debug" "$TMP/srv/buildid/$bid/debuginfo"
(cd "$TMP/srv" && exec python3 -m http.server "$port" --bind 127.0.0.1 >/dev/null 2>&1) &
srv_pid=$!
for _ in $(seq 50); do python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" 2>/dev/null && break; sleep 0.1; done
DEBUGINFOD_URLS=http://127.0.0.1:$port DEBUGINFOD_CACHE_PATH=$TMP/cache record dinfod "$TMP/bin/shortfix" 300
expect_share "stripped + debuginfod: full names" "$TMP/dinfod.folded" shortfix ';main;short_hot( |;|$)' 90
hole=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c "import socket, time; s=socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(('127.0.0.1', $hole)); s.listen(16); time.sleep(300)" &
hole_pid=$!
sleep 0.3
start=$(date +%s)
DEBUGINFOD_URLS=http://127.0.0.1:$hole DEBUGINFOD_TIMEOUT=2 DEBUGINFOD_CACHE_PATH=$TMP/cache2 \
	"$FIRN" record -q -F 999 -o "$TMP/hole.pb.gz" -- "$TMP/bin/shortfix" 200 2>"$TMP/hole.err" >/dev/null
rc=$? secs=$(( $(date +%s) - start ))
[ $rc -eq 0 ] && [ $secs -lt 20 ] && pass "debuginfod that never answers: recording ends (exit $rc, ${secs}s)" \
	|| fail "debuginfod that never answers: exit $rc after ${secs}s"
grep -q "debuginfod gave no answer for build id $bid" "$TMP/hole.err" && pass "debuginfod timeout note" \
	|| fail "debuginfod timeout note: $(cat "$TMP/hole.err")"

# 6. Node.js JIT code through /tmp/perf-PID.map (--perf-basic-prof), frames marked _[j].
if command -v node >/dev/null; then
	before=$(ls /tmp/perf-*.map 2>/dev/null)
	cd "$TMP" # node may drop v8 logs in its working directory
	# --no-js: the perf map's path (V8's own frames would name these functions first; test_v8)
	"$FIRN" record -q -F 999 --no-js -o "$TMP/node.pb.gz" -- node --perf-basic-prof \
		"$ROOT/tests/fixtures/jitfix.js" 2 2>"$TMP/node.err" >/dev/null
	"$FIRN" report --folded "$TMP/node.pb.gz" >"$TMP/node.folded" 2>>"$TMP/node.err"
	cd "$ROOT"
	for m in /tmp/perf-*.map; do # node leaves its map behind: remove the one it made
		[ -e "$m" ] && ! grep -qx "$m" <<<"$before" && grep -q jitfix.js "$m" && rm -f "$m"
	done
	expect_share "Node.js: the hot JavaScript function named from the perf map" "$TMP/node.folded" node \
		'firnHotLoop [^;]*jitfix\.js[^;]*_\[j\]( |;|$)' 30
else
	fail "node is not installed (Debian package nodejs)"
fi

# 6b. A JVM that writes its perf map only as it exits (-XX:+DumpPerfMapAtExit): the map is read
# when the exited process's samples are symbolized, so its JIT frames are named, not [anon].
# --no-java: the map is the fallback for JVMs the Java walker cannot read (test_java has the
# walker's names; a JVM read by both gets the walker's).
# JitFix.java is compiled here with OpenJDK 17's javac (openjdk-17-jdk-headless); Temurin 25 is
# tested where it is installed (its map lines carry 0x-prefixed sizes).
JAVAC=/usr/lib/jvm/java-17-openjdk-amd64/bin/javac
if [ -x "$JAVAC" ] && mkdir -p "$ROOT/$BUILD/fixtures/java" \
	&& "$JAVAC" -d "$ROOT/$BUILD/fixtures/java" "$ROOT/tests/fixtures/JitFix.java"; then
	for jdk in java-17-openjdk-amd64 temurin-25-jdk-amd64; do
		java=/usr/lib/jvm/$jdk/bin/java
		[ -x "$java" ] || { skip "$jdk is not installed"; continue; }
		before=$(ls /tmp/perf-*.map 2>/dev/null)
		RECORD_OPTS=--no-java record "jvm-$jdk" sh "$CPUTIME" "$TMP/jvm-$jdk.cpu" "$java" -XX:+UnlockDiagnosticVMOptions \
			-XX:+DumpPerfMapAtExit -XX:+PreserveFramePointer -cp "$ROOT/$BUILD/fixtures/java" JitFix 2
		for m in /tmp/perf-*.map; do # the JVM leaves its map behind: remove the one it made
			[ -e "$m" ] && ! grep -qx "$m" <<<"$before" && grep -q JitFix "$m" && rm -f "$m"
		done
		read -r anon tot < <(share "$TMP/jvm-$jdk.folded" java '(^|;)\[anon\](_\[j\])?( |;|$)')
		floor=$(sample_floor "$TMP/jvm-$jdk.cpu" 999) # every JVM thread's CPU is the java process's
		python3 -c "import sys; sys.exit(0 if float('$anon') <= 5 and $tot >= $floor else 1)" \
			&& pass "$jdk, map written at exit: $anon% of $tot samples [anon] (<= 5%, >= $floor samples)" \
			|| fail "$jdk, map written at exit: $anon% of $tot samples [anon] (wanted <= 5% of >= $floor samples)"
		expect_share "$jdk: JitFix.firnHashWork named from the map written at exit" \
			"$TMP/jvm-$jdk.folded" java 'JitFix\.firnHashWork\(int\)_\[j\]' 5
		expect_share "$jdk: JitFix.firnSortWork named from the map written at exit" \
			"$TMP/jvm-$jdk.folded" java 'JitFix\.firnSortWork\(int, long\)_\[j\]' 5
	done
	# without a map, the summary says so, and what share of the samples has [anon] frames
	"$FIRN" record -F 499 --no-java -o "$TMP/nomap.pb.gz" -- /usr/lib/jvm/java-17-openjdk-amd64/bin/java \
		-XX:+PreserveFramePointer -cp "$ROOT/$BUILD/fixtures/java" JitFix 1 2>"$TMP/nomap.err" >/dev/null
	grep -Eq '^firn: JIT code: 1 process ran JIT code that no perf map \(/tmp/perf-PID.map\) or runtime named: \[anon\] frames in [0-9,]+ of [0-9,]+ samples' "$TMP/nomap.err" \
		&& pass "a JIT process without a perf map is named in the summary" \
		|| { fail "no summary line for a JIT process without a perf map"; cat "$TMP/nomap.err"; }
else
	fail "no JDK to compile tests/fixtures/JitFix.java (Debian package openjdk-17-jdk-headless)"
fi

# 7. 200 processes of ~30 ms CPU each: their samples are symbolized although each is gone long
# before the recording ends. The exec and the dynamic loader take a share of each process that
# is the kernel's and the machine's, not firn's (10-11 % on kernel 6.18.44-fc-v1294, where a
# share of all samples in short_hot was 89-90 %): short_hot's share is counted among the
# samples that reached main (which calls only atol and short_hot), the unnamed frames' among
# all, and main must hold most of the samples (a process not symbolized has no main).
record short sh -c 'i=0; while [ $i -lt 200 ]; do "$0" 30; i=$((i+1)); done' "$FIX/shortfix"
read -r pct tot < <(share "$TMP/short.folded" shortfix ';main;short_hot( |;|$)' ';main(;|$| )')
read -r inmain all < <(share "$TMP/short.folded" shortfix ';main(;|$| )')
read -r unnamed _ < <(share "$TMP/short.folded" shortfix '\[unknown\]')
python3 -c "import sys; sys.exit(0 if float('$pct') >= 95 and float('$inmain') >= 75 and float('$unnamed') <= 3 and $all >= 2000 else 1)" \
	&& pass "200 short-lived processes: $pct% of $tot samples in main in short_hot, $inmain% of $all in main, $unnamed% unnamed" \
	|| { fail "200 short-lived processes: $pct% of $tot samples in main in short_hot (wanted >= 95%), $inmain% of $all in main (>= 75%), $unnamed% unnamed (<= 3%)"; \
	     sort -t' ' -k2 -n -r "$TMP/short.folded" | head -5 | cut -c1-200 | sed 's/^/    /'; }
