# Bad input table: missing, empty, directory, truncated or garbage gzip, wrong magic, pprof with
# references to missing ids, counts that overflow or are negative, absurd sizes, decompression
# bombs, endless input (/dev/zero), a 1 GB line of folded text, record outputs that cannot be
# written, non-ELF and truncated ELF files for usdt-list, and unknown options, missing arguments
# and bad values for every option of every command (`firn help --commands`). Each failure must
# exit with the documented code (1 runtime, 2 usage), say one line on stderr (plus the usage
# hint), not crash, and leave an existing output file and its directory exactly as they were.
. "$(dirname "$0")/lib.sh"

SRC="$ROOT/tests/fixtures"
mkdir -p "$TMP/in" "$TMP/out" "$TMP/in/dir"
cd "$TMP/in" || exit 1
cp "$SRC/simple.folded" good.folded
"$FIRN" report --pprof -o good.pb.gz good.folded
: >empty
head -c 60 good.pb.gz >truncated.pb.gz
# 4 KiB of fixed pseudo-random bytes: /dev/urandom's were now and then read as a pprof field
# whose length passes the limits ("profile too large"), a message of its own that CI once got
python3 -c "import random, sys; random.seed(1); sys.stdout.buffer.write(bytes(random.getrandbits(8) for _ in range(4096)))" |
	gzip -c >garbage.gz
printf '\x89PNG\r\n\x1a\n\0\0\0\rIHDR' >wrong-magic.png
cp /bin/true elf-program
python3 "$SRC/bad_pprof.py" .
printf 'a;b 9223372036854775807\n\nc;d 1\n' >huge.folded
printf 'hello, not an ELF file\n' >text
head -c 64 /bin/true >elf-header-only
head -c 3000 /bin/true >elf-truncated
printf 'precious\n' >"$TMP/out/keep.out"
cp "$TMP/out/keep.out" "$TMP/keep.ref"
ls -A "$TMP/out" >"$TMP/out.list"

# untouched NAME: the output file and its directory are as they were.
untouched() {
	if cmp -s "$TMP/out/keep.out" "$TMP/keep.ref" && ls -A "$TMP/out" | cmp -s - "$TMP/out.list"
	then return 0; fi
	fail "$1: output directory changed: $(ls -A "$TMP/out" | tr '\n' ' ')"
	cp "$TMP/keep.ref" "$TMP/out/keep.out"
	return 1
}

# bad NAME RC REGEX CMD...: CMD (stdin /dev/null, 60 s at most) exits RC and its stderr is one
# line matching REGEX (a "Try 'firn CMD --help'" hint aside); the output directory is untouched.
bad() {
	local name=$1 want=$2 re=$3; shift 3
	timeout 60 "$@" </dev/null >"$TMP/stdout" 2>"$TMP/stderr"
	local rc=$? lines
	lines=$(grep -cv "^Try 'firn [a-z-]* --help' for more information\.$" "$TMP/stderr")
	if [ "$rc" -ne "$want" ]; then
		fail "$name: exit $rc, wanted $want"; head -3 "$TMP/stderr" | sed 's/^/    stderr: /'
	elif [ "$lines" -ne 1 ]; then
		fail "$name: $lines lines on stderr, wanted 1"; head -5 "$TMP/stderr" | sed 's/^/    stderr: /'
	elif ! head -1 "$TMP/stderr" | grep -qE -- "$re"; then
		fail "$name: message '$(head -1 "$TMP/stderr")' does not match '$re'"
	elif untouched "$name"; then
		pass "$name"
	fi
}

# ---- saved profiles: report, and both sides of diff ----
NOTPROFILE="not a pprof or folded profile"
MISSINGREF="invalid pprof profile: it refers to a string, function, location or mapping it does not have"
while read -r file re; do
	bad "report $file" 1 "^firn: $re" "$FIRN" report -o "$TMP/out/keep.out" "$file"
	bad "report --pprof $file" 1 "^firn: $re" "$FIRN" report --pprof -o "$TMP/out/keep.out" "$file"
	bad "diff BASE=$file" 1 "^firn: $re" "$FIRN" diff -o "$TMP/out/keep.out" "$file" good.folded
	bad "diff NEW=$file" 1 "^firn: $re" "$FIRN" diff --svg -o "$TMP/out/keep.out" good.pb.gz "$file"
done <<EOF
missing cannot open 'missing': No such file or directory$
empty cannot read 'empty': empty file$
dir cannot open 'dir': Is a directory$
truncated.pb.gz cannot read 'truncated.pb.gz': $NOTPROFILE$
garbage.gz cannot read 'garbage.gz': $NOTPROFILE$
wrong-magic.png cannot read 'wrong-magic.png': $NOTPROFILE$
elf-program cannot read 'elf-program': $NOTPROFILE$
missing-location.pb.gz cannot read 'missing-location.pb.gz': $MISSINGREF$
missing-function.pb.gz cannot read 'missing-function.pb.gz': $MISSINGREF$
missing-mapping.pb.gz cannot read 'missing-mapping.pb.gz': $MISSINGREF$
missing-string.pb.gz cannot read 'missing-string.pb.gz': $MISSINGREF$
huge-length.pb.gz cannot read 'huge-length.pb.gz': $NOTPROFILE$
many-types.pb.gz cannot read 'many-types.pb.gz': invalid pprof profile: sample 1 has 1 value for 20000 sample types$
deep-nesting.pb cannot read 'deep-nesting.pb': $NOTPROFILE$
bomb.pb.gz cannot read 'bomb.pb.gz': $NOTPROFILE$
bomb-fields.pb.gz cannot read 'bomb-fields.pb.gz': profile too large \(see LIMITS in firn-report\(1\)\)$
huge-count.pb.gz cannot read 'huge-count.pb.gz': invalid pprof profile: sample values overflow$
negative-count.pb.gz cannot read 'negative-count.pb.gz': invalid pprof profile: negative sample value$
huge.folded cannot read 'huge.folded': sample counts overflow at line 3$
EOF

# counts that sum to exactly 2^63-1 are read (the sums of every output stay exact)
printf 'a;b 9223372036854775806\nc;d 1\n' >max.folded
"$FIRN" report --json max.folded >"$TMP/got" 2>"$TMP/stderr"
check "counts summing to 2^63-1 are read" grep -q '"total": 9223372036854775807' "$TMP/got"

# two files that each fit but overflow once merged into one side of diff
printf 'a;b 5000000000000000000\n' >half1.folded
printf 'a;c 5000000000000000000\n' >half2.folded
bad "diff: a merged side overflows" 1 \
	"^firn: cannot merge 'half2.folded' with 'half1.folded': sample counts overflow$" \
	"$FIRN" diff -o "$TMP/out/keep.out" --base half1.folded half2.folded --new good.folded

# endless input ends with an error at once: NUL bytes are not text, random bytes not a Profile
for dev in /dev/zero /dev/urandom; do
	bad "report $dev" 1 "^firn: cannot read '$dev': $NOTPROFILE$" \
		timeout 10 "$FIRN" report -o "$TMP/out/keep.out" "$dev"
	bad "report - <$dev" 1 "^firn: cannot read '<stdin>': $NOTPROFILE$" \
		bash -c 'timeout 10 "$1" report -o "$2" - <"$3"' _ "$FIRN" "$TMP/out/keep.out" "$dev"
done

# peak_rss_kb CMD...: runs CMD in the background (stdin inherited), polls its VmHWM until it
# exits; prints the highest value seen (KiB). The exit code goes to $TMP/rc.
peak_rss_kb() {
	# under ASan (the sanitizer tier) its quarantine keeps freed memory resident (256 MB by
	# default): a small one, so the peak is firn's own use, as in the plain build
	ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=8 "$@" >"$TMP/stdout" 2>"$TMP/stderr" &
	local pid=$! peak=0 v
	while kill -0 "$pid" 2>/dev/null; do
		v=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
		[ -n "$v" ] && [ "$v" -gt "$peak" ] && peak=$v
		sleep 0.05
	done
	wait "$pid"
	echo $? >"$TMP/rc"
	echo "$peak"
}

# a gzip bomb of 2 GiB of zeros (2 MB): refused at its first bytes, in little memory
python3 -c '
import sys, zlib
z = zlib.compressobj(9, zlib.DEFLATED, 31)
member = z.compress(bytes(16 << 20)) + z.flush()
sys.stdout.buffer.write(member * 128)' >bomb2g.pb.gz
peak=$(peak_rss_kb "$FIRN" report bomb2g.pb.gz </dev/null)
check "2 GiB bomb: exit 1" [ "$(cat "$TMP/rc")" -eq 1 ]
check "2 GiB bomb: the message" grep -qx "firn: cannot read 'bomb2g.pb.gz': $NOTPROFILE" "$TMP/stderr"
if [ "$peak" -lt 100000 ]; then pass "2 GiB bomb: peak RSS ${peak} KiB"; else
	fail "2 GiB bomb: peak RSS ${peak} KiB (wanted under 100 MB)"; fi
# a bomb with a valid Profile prefix inflates to the limit (256x its 311 KB) and no further
peak=$(peak_rss_kb "$FIRN" report bomb-fields.pb.gz </dev/null)
check "field bomb: exit 1" [ "$(cat "$TMP/rc")" -eq 1 ]
if [ "$peak" -lt 200000 ]; then pass "field bomb: peak RSS ${peak} KiB"; else
	fail "field bomb: peak RSS ${peak} KiB (wanted under 200 MB)"; fi

# gigaline TAIL: a 1 GiB line of folded text ("frame;frame;...;leaf 5"), then TAIL
gigaline() {
	python3 -c '
import sys
w = sys.stdout.buffer.write
chunk = b"frame;" * 174763
for _ in range(1024):
    w(chunk)
w(b"leaf 5\n" + sys.argv[1].encode())' "$1"
}
export -f gigaline

# the 1 GB line streamed on stdin, then a good line: the long line is skipped as malformed
# without being held in memory, the good one is read
peak=$(gigaline $'main;after 3\n' | peak_rss_kb "$FIRN" report --folded -)
check "1 GB line: exit 0" [ "$(cat "$TMP/rc")" -eq 0 ]
check "1 GB line: the next line is read" [ "$(cat "$TMP/stdout")" = "main;after 3" ]
check "1 GB line: one warning" \
	[ "$(cat "$TMP/stderr")" = "firn: warning: skipped 1 malformed line in '<stdin>'" ]
if [ "$peak" -gt 0 ] && [ "$peak" -lt 400000 ]; then pass "1 GB line: peak RSS ${peak} KiB"; else
	fail "1 GB line: peak RSS ${peak} KiB (wanted under 400 MB)"; fi
bad "a 1 GB line alone" 1 "^firn: cannot read '<stdin>': $NOTPROFILE$" \
	bash -c 'gigaline "" | "$1" report -o "$2" -' _ "$FIRN" "$TMP/out/keep.out"

# ---- record: an output that cannot be written fails before the command runs ----
if is_root; then
	bad "record -o DIR" 1 "^firn: cannot write '$TMP/out': Is a directory$" \
		"$FIRN" record -o "$TMP/out" -- touch "$TMP/ran"
	bad "record -o MISSING/FILE" 1 \
		"^firn: cannot write '$TMP/missing/x.pb.gz': No such file or directory$" \
		"$FIRN" record -o "$TMP/missing/x.pb.gz" -- touch "$TMP/ran"
	check "record: the command did not run" [ ! -e "$TMP/ran" ]
fi

# ---- ELF files given to usdt-list ----
if "$FIRN" help --commands | grep -qx usdt-list; then
	bad "usdt-list missing" 1 "^firn: cannot (open|find) 'missing'" "$FIRN" usdt-list missing
	bad "usdt-list empty" 1 "^firn: cannot read 'empty': not an ELF file$" "$FIRN" usdt-list empty
	bad "usdt-list dir" 1 "^firn: cannot open 'dir': Is a directory$" "$FIRN" usdt-list dir
	bad "usdt-list non-ELF" 1 "^firn: cannot read 'text': not an ELF file$" "$FIRN" usdt-list text
	bad "usdt-list pprof" 1 "^firn: cannot read 'good.pb.gz': not an ELF file$" \
		"$FIRN" usdt-list good.pb.gz
	bad "usdt-list ELF header only" 1 "'elf-header-only'" "$FIRN" usdt-list elf-header-only
	bad "usdt-list truncated ELF" 1 "'elf-truncated'" "$FIRN" usdt-list elf-truncated
else
	skip "usdt-list: not a command of this firn"
fi

# ---- options of every command ----
cd "$TMP/out" || exit 1
commands=$("$FIRN" help --commands)
check "firn help --commands lists commands" [ -n "$commands" ]
ntyped=0
for c in $commands; do
	opts=$("$FIRN" help --options "$c")
	o_out=()
	if grep -qx -- --output= <<<"$opts"; then o_out=(-o "$TMP/out/keep.out"); fi
	# top runs until quit: one short refresh, so a valid free-text value (a filter's regex) ends
	if [ "$c" = top ]; then o_out+=(-n 1 -d 0.2); fi
	bad "$c: unknown long option" 2 "^firn $c: unknown option '--no-such-option'$" \
		"$FIRN" "$c" "${o_out[@]}" --no-such-option
	grep -qx -- -Z <<<"$opts" ||
		bad "$c: unknown short option" 2 "^firn $c: unknown option '-Z'$" "$FIRN" "$c" "${o_out[@]}" -Z
	# each option with an argument: missing, then bad values
	while read -r opt meta; do
		bad "$c $opt: missing argument" 2 "^firn $c: option '[^']*' needs an argument$" \
			"$FIRN" "$c" "${o_out[@]}" "$opt"
		case $meta in
		N | COUNT | HZ | SECONDS | MB | PX | P | PID* | "PX|PCT%" | KEY | MODE | FORMAT | EVENT | RULE)
			ntyped=$((ntyped + 1))
			for v in abc "" 12abc 1e999 99999999999999999999999 -99999999999999999999999 \
				"$(printf 'x%.0s' $(seq 1 5000))"; do
				bad "$c $opt '${v:0:24}'" 2 "^firn $c: .*(invalid|$opt)" \
					"$FIRN" "$c" "${o_out[@]}" "$opt" "$v"
			done ;;
		*)	# free text (FILE, TEXT, NAME...): an empty or huge value must not crash
			for v in "" "$(printf 'y%.0s' $(seq 1 5000))"; do
				timeout 60 "$FIRN" "$c" "${o_out[@]}" "$opt" "$v" </dev/null >/dev/null 2>"$TMP/stderr"
				rc=$?
				if [ "$rc" -le 2 ] && [ "$(wc -l <"$TMP/stderr")" -le 2 ] && untouched "$c $opt"; then
					pass "$c $opt '${v:0:10}': exit $rc"
				else
					fail "$c $opt '${v:0:10}': exit $rc"; head -3 "$TMP/stderr" | sed 's/^/    /'
				fi
			done ;;
		esac
	done < <("$FIRN" "$c" --help | sed -nE 's/^ +(-[a-zA-Z], )?(--[a-z-]+) ([A-Z][^ ]*) .*/\2 \3/p')
done
check "typed option values were tried ($ntyped options)" [ "$ntyped" -ge 20 ]
bad "an unknown command" 2 "^firn: 'no-such-command' is not a firn command" "$FIRN" no-such-command
"$FIRN" --no-such-option >/dev/null 2>"$TMP/stderr"
rc=$?
if [ "$rc" -eq 2 ] && [ "$(head -1 "$TMP/stderr")" = "firn: unknown option '--no-such-option'" ]
then pass "an unknown global option"; else fail "an unknown global option: exit $rc"; fi
