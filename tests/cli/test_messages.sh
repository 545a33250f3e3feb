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
