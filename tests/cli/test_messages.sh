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
