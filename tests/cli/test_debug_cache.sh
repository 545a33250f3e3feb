# The debug section cache: a recording that samples libc (sort in memcmp) with libc6-dbg's
# compressed debug file stores its decompressed sections (one 0600 file per build id in a 0700
# folder); the next recording maps that file instead of inflating (the file is read, mtime
# touched, not rewritten: same inode) and libc's frames still have source lines; a damaged file
# is ignored and rewritten, and so is one whose section bytes were changed (a function's name:
# the changed name is never shown); FIRN_DEBUG_CACHE=0 writes nothing; a user's myapp.dbg and a
# foreign file under a build-id name in the folder stay byte-identical past the bound while firn's
# own old file goes; FIRN_DEBUG_CACHE=/ is refused with a message. (The unit test
# test_debug_cache checks that mapped and inflated sections give the same frames at every address.)
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

# 3b. a changed name in the cached sections is not served: a program spending its time in
# libc's qsort (msort_with_tmp, a name from the cached DWARF) shows the real name after its
# cached copy was changed to EVIL_WITH_TMP!, and the file is rewritten without it
cat >"$TMP/qs.c" <<'EOF'
#include <stdlib.h>
#include <time.h>
static int cmp(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }
int main(void)
{
	static int v[1 << 18];
	for (clock_t end = clock() + CLOCKS_PER_SEC / 3; clock() < end;) {
		for (int i = 0; i < 1 << 18; i++)
			v[i] = rand() >> 1;
		qsort(v, 1 << 18, sizeof(v[0]), cmp);
	}
	return 0;
}
EOF
gcc -O2 -o "$TMP/qs" "$TMP/qs.c"
python3 - "$ENTRY" <<'PY2'
import sys
b = open(sys.argv[1], 'rb').read()
assert b.count(b'msort_with_tmp\0') == 1
open(sys.argv[1], 'wb').write(b.replace(b'msort_with_tmp\0', b'EVIL_WITH_TMP!\0'))
PY2
ino=$(stat -c %i "$ENTRY")
FIRN_DEBUG_CACHE="$CACHE" "$FIRN" record -F 999 -q -o "$TMP/evil.pb.gz" -- "$TMP/qs" 2>"$TMP/evil.err"
"$FIRN" report --top 0 "$TMP/evil.pb.gz" >"$TMP/evil.txt" 2>&1
real=$(awk '$NF == "msort_with_tmp" { print $2 }' "$TMP/evil.txt")
if ! grep -q EVIL "$TMP/evil.txt" && [ -n "$real" ] && [ "$(stat -c %i "$ENTRY")" != "$ino" ] \
	&& ! grep -q EVIL_WITH_TMP "$ENTRY"; then
	pass "changed name in the cached sections not shown (msort_with_tmp in $real% of samples), file rewritten"
else
	fail "changed name in the cached sections: $(grep -m1 -E 'EVIL|msort_with_tmp' "$TMP/evil.txt"), inode $ino -> $(stat -c %i "$ENTRY")"
fi

# 4. FIRN_DEBUG_CACHE=0: nothing written, lines still there
rm -f "$CACHE"/*.dbg
n4=$(run off FIRN_DEBUG_CACHE=0)
[ -z "$(ls "$CACHE")" ] && [ "$n4" -ge 20 ] \
	&& pass "FIRN_DEBUG_CACHE=0 writes nothing ($n4 libc samples with lines)" \
	|| fail "FIRN_DEBUG_CACHE=0: $(ls "$CACHE" | wc -l) files written, $n4 libc samples with lines"

# 5. past the bound (512 MiB): firn's own oldest file goes, a user's myapp.dbg (600 MB, sparse)
# and a foreign file under a build id's name stay byte-identical
head -c 5000 /dev/urandom >"$CACHE/myapp.dbg"; truncate -s 600M "$CACHE/myapp.dbg"
head -c 5000 /dev/urandom >"$CACHE/0123abcd.dbg"
chmod 600 "$CACHE"/*
touch -d 2000-01-01 "$CACHE"/*
(cd "$CACHE" && md5sum myapp.dbg 0123abcd.dbg) >"$TMP/planted.md5"
run fill >/dev/null
cp "$ENTRY" "$CACHE/4567cdef.dbg"; truncate -s 600M "$CACHE/4567cdef.dbg" # firn's, another id
rm -f "$ENTRY"
touch -d 2000-01-01 "$CACHE/4567cdef.dbg"
n5=$(run evict)
(cd "$CACHE" && md5sum -c --quiet "$TMP/planted.md5") >/dev/null 2>&1 \
	&& pass "a user's myapp.dbg and 0123abcd.dbg stay byte-identical past the bound" \
	|| { fail "planted files changed or removed"; ls -la "$CACHE"; }
[ ! -e "$CACHE/4567cdef.dbg" ] && [ -f "$ENTRY" ] && [ "$n5" -ge 20 ] \
	&& pass "firn's own oldest file evicted, libc's stored ($n5 libc samples with lines)" \
	|| { fail "eviction: $n5 libc samples with lines"; ls -la "$CACHE"; }

# 6. FIRN_DEBUG_CACHE=/: refused with one line, nothing written there, lines still there
before=$(ls -a / | grep '\.dbg$')
n6=$(run root FIRN_DEBUG_CACHE=/)
after=$(ls -a / | grep '\.dbg$')
msg=$(grep -c "cannot use the cache folder '/' (FIRN_DEBUG_CACHE): a system" "$TMP/root.err")
[ "$before" = "$after" ] && [ "$msg" = 1 ] && [ "$n6" -ge 20 ] \
	&& pass "FIRN_DEBUG_CACHE=/ refused with one message, nothing written ($n6 libc samples with lines)" \
	|| { fail "FIRN_DEBUG_CACHE=/: $msg messages, files there: $after"; cat "$TMP/root.err"; }
for f in $after; do grep -qx "$f" <<<"$before" || rm -f "/$f"; done
