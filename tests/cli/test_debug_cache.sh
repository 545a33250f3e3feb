# The debug section cache: a recording that samples libc (sort in memcmp) with libc6-dbg's
# compressed debug file stores its decompressed sections (one 0600 file per build id in a 0700
# folder); the next recording maps that file instead of inflating (the file is read, mtime
# touched, not rewritten: same inode) and libc's frames still have source lines; a damaged file
# is ignored and rewritten; FIRN_DEBUG_CACHE=0 writes nothing. (The unit test test_debug_cache
# checks that mapped and inflated sections give the same frames at every address.)
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
LIBC=$(ldd /bin/sort | awk '/libc\.so/ { print $3 }')
ID=$(readelf -n "$LIBC" 2>/dev/null | awk '/Build ID/ { print $3 }')
DBG="/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug"
if [ -z "$ID" ] || [ ! -f "$DBG" ] || ! readelf -SW "$DBG" 2>/dev/null | grep -q 'debug_info.* C '; then
	skip "no libc6-dbg with compressed sections for $LIBC"; exit 0
fi
CACHE="$TMP/cache/debug"
ENTRY="$CACHE/$ID.dbg"
python3 -c "
import random
random.seed(1)
with open('$TMP/in', 'w') as f:
    for i in range(400000): f.write('%x %d\n' % (random.getrandbits(64), i))
"

# run NAME [ENV...]: records sort with the cache in $CACHE; prints how many samples fall on libc
# rows that have a source line.
run() {
	local name=$1; shift
	env FIRN_DEBUG_CACHE="$CACHE" "$@" "$FIRN" record -F 999 -q -o "$TMP/$name.pb.gz" -- \
		env LC_ALL=C sort -o /dev/null "$TMP/in" 2>"$TMP/$name.err"
	"$FIRN" report --lines --top 0 "$TMP/$name.pb.gz" 2>/dev/null |
		awk '$4 == "libc.so.6" && $NF ~ /:[0-9]+\)$/ { n += $3 } END { print n + 0 }'
}

# 1. an empty cache: libc's sections inflated and stored
n1=$(run first)
[ -f "$ENTRY" ] && [ "$(stat -c %a "$ENTRY")" = 600 ] && [ "$(stat -c %a "$CACHE")" = 700 ] \
	&& pass "libc's debug sections stored as $ID.dbg (0600, folder 0700)" \
	|| { fail "no cache file for libc's build id $ID"; ls -la "$CACHE"; }
[ "$n1" -ge 20 ] && pass "first recording: $n1 libc samples with source lines" \
	|| fail "first recording: $n1 libc samples with source lines"

# 2. the next recording maps the file: read (mtime touched), not rewritten (same inode)
touch -d 2000-01-01 "$ENTRY"
ino=$(stat -c %i "$ENTRY")
n2=$(run second)
[ "$(stat -c %i "$ENTRY")" = "$ino" ] && [ "$(stat -c %Y "$ENTRY")" -gt 946771200 ] \
	&& pass "second recording reads the cache file and does not rewrite it" \
	|| fail "second recording: inode $ino -> $(stat -c %i "$ENTRY"), mtime $(stat -c %y "$ENTRY")"
[ "$n2" -ge 20 ] && pass "from the cache: $n2 libc samples with source lines" \
	|| fail "from the cache: $n2 libc samples with source lines"

# 3. a damaged file (its build id) is not used: inflated again and rewritten (a new inode)
printf 'z' | dd of="$ENTRY" bs=1 seek=20 conv=notrunc status=none
ino=$(stat -c %i "$ENTRY")
n3=$(run damaged)
[ "$(stat -c %i "$ENTRY")" != "$ino" ] && [ "$n3" -ge 20 ] \
	&& pass "damaged cache file ignored and rewritten ($n3 libc samples with lines)" \
	|| fail "damaged cache file: inode $ino -> $(stat -c %i "$ENTRY"), $n3 libc samples with lines"

# 4. FIRN_DEBUG_CACHE=0: nothing written, lines still there
rm -f "$CACHE"/*.dbg
n4=$(run off FIRN_DEBUG_CACHE=0)
[ -z "$(ls "$CACHE")" ] && [ "$n4" -ge 20 ] \
	&& pass "FIRN_DEBUG_CACHE=0 writes nothing ($n4 libc samples with lines)" \
	|| fail "FIRN_DEBUG_CACHE=0: $(ls "$CACHE" | wc -l) files written, $n4 libc samples with lines"
