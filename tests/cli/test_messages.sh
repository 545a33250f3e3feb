# Messages and number options: `firn help help` shows help's usage; every numeric option takes
# a plain decimal only (no blank, no '+', no trailing junk, in range: exit 2 with one line);
# a malformed profile says what is wrong with it, in one line of bounded length; output errors
# of `top --stdio` are one line with the real reason.
. "$(dirname "$0")/lib.sh"

cd "$TMP" || exit 1
SRC="$ROOT/tests/fixtures"

# ---- firn help help ----
"$FIRN" help help >out 2>err
rc=$?
check "firn help help: exit 0 (exit $rc), help's usage, nothing on stderr" \
	test "$rc" = 0 -a "$(head -1 out)" = "usage: firn help [COMMAND]" -a ! -s err
"$FIRN" help no-such >out 2>err
check "firn help no-such: exit 2" test "$?" = 2

# ---- numbers: one strict reading for every numeric option of every command ----
nnum=0
for c in $("$FIRN" help --commands); do
	o_out=()
	"$FIRN" help --options "$c" | grep -qx -- --output= && o_out=(-o "$TMP/never")
	while read -r opt meta; do
		case $meta in N | COUNT | HZ | SECONDS | MB | PX | P | PID* | "PX|PCT%") ;; *) continue ;; esac
		nnum=$((nnum + 1))
		for v in ' 5' '+5' '5x' '' ' 1' '5 '; do
			timeout 20 "$FIRN" "$c" "${o_out[@]}" "$opt" "$v" </dev/null >/dev/null 2>err
			rc=$?
			n=$(grep -cv "^Try 'firn $c --help' for more information\.$" err)
			if [ "$rc" = 2 ] && [ "$n" = 1 ] && grep -q "^firn $c: invalid value '$v' for $opt" err; then
				pass "$c $opt '$v': exit 2, one line"
			else
				fail "$c $opt '$v': exit $rc, $n lines: $(head -1 err)"
			fi
		done
	done < <("$FIRN" "$c" --help | sed -nE 's/^ +(-[a-zA-Z], )?(--[a-z-]+) ([A-Z][^ ]*) .*/\2 \3/p')
done
check "numeric options tried ($nnum >= 15)" test "$nnum" -ge 15
# (-p ' 1' was pid 1: init recorded)
check "no bad number recorded anything" test ! -e "$TMP/never"

# ---- a malformed profile says what is wrong, in one short line ----
python3 "$SRC/names_pprof.py" mismatch.pb.gz --type a --type b --func f --func g --values 1
"$FIRN" report mismatch.pb.gz >/dev/null 2>err
rc=$?
check "a sample with 1 value for 2 types: exit 1 (exit $rc), named: $(head -1 err)" test "$rc" = 1 -a \
	"$(cat err)" = "firn: cannot read 'mismatch.pb.gz': invalid pprof profile: sample 1 has 1 value for 2 sample types"
python3 "$SRC/names_pprof.py" many.pb.gz --types 5000
"$FIRN" report --sample-type nope many.pb.gz >/dev/null 2>err
rc=$?
check "no such type among 5,000: exit 2, one line of $(wc -c <err) bytes (< 300) naming 8 and 'and 4992 more'" \
	test "$rc" = 2 -a "$(grep -vc '^Try ' err)" = 1 -a "$(wc -c <err)" -lt 300 -a \
	"$(head -1 err | grep -o ', [0-9]* t[0-9]*/count' | wc -l)" = 7
check "the list ends with 'and 4992 more'" grep -q "7 t7/count and 4992 more$" err

# ---- output errors: one line with the real reason; a reader that goes away is no error ----
# outerr NAME CMD...: CMD with stdout closed exits 1 saying "Bad file descriptor" once; with
# stdout into `head -c1`, exits 0 and says nothing
outerr() {
	local name=$1; shift
	"$@" >&- 2>err
	rc=$?
	check "$name >&-: exit 1 (exit $rc), one line: $(head -1 err)" test "$rc" = 1 -a \
		"$(cat err)" = "firn: cannot write output: Bad file descriptor"
	"$@" 2>err | head -c1 >/dev/null
	rc=${PIPESTATUS[0]}
	check "$name | head -c1: exit 0 (exit $rc), nothing on stderr: $(head -1 err)" \
		test "$rc" = 0 -a ! -s err
}
awk 'BEGIN { for (i = 0; i < 20000; i++) printf "main;f%d %d\n", i, i + 1 }' >big.folded
outerr "report (a 20,000-row table)" "$FIRN" report big.folded
if is_root; then
	outerr "top --stdio" timeout 30 "$FIRN" top --stdio -n 3 -d 0.2 -- sleep 10
else
	skip "top --stdio output errors need root"
fi

# FIRN_* numbers are decimal digits and nothing else: strtoull alone took ' 5', '+5', '5 ' and
# wrapped '-1'; each is refused before recording, exit 1, in one line naming the variable (the
# variables are read after the privilege check: root only)
if is_root; then
	for v in ' 5' '+5' '5 ' '-1' 0x10 0; do
		FIRN_STACK_MAP_ENTRIES=$v "$FIRN" record -q -o envnum.pb.gz -- true 2>err
		rc=$?
		check "FIRN_STACK_MAP_ENTRIES='$v': exit 1 (exit $rc), one line: $(head -1 err)" test "$rc" = 1 -a \
			"$(cat err)" = "firn: invalid FIRN_STACK_MAP_ENTRIES '$v' (a number of stacks, 1 to 16777216)"
	done
	FIRN_MAX_ENTRIES='+5' "$FIRN" record -q -o envnum.pb.gz -- true 2>err
	check "FIRN_MAX_ENTRIES='+5': exit 1 (exit $?), one line: $(head -1 err)" test "$(cat err)" = \
		"firn: invalid FIRN_MAX_ENTRIES '+5' (a number of entries, 1 or more)"
	FIRN_MAX_ENTRIES=0500 "$FIRN" record -q -o envnum.pb.gz -- true 2>err
	check "FIRN_MAX_ENTRIES=0500 (decimal digits) records: exit $?, stderr: $(head -1 err)" test ! -s err
else
	skip "FIRN_* numbers: recording needs root"
fi
