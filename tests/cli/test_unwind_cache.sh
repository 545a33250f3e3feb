# The unwind table cache: a first recording stores the tables it builds (one file per build id,
# 0600, in a 0700 folder), a second reads them from the cache and still unwinds completely; a
# damaged or symlinked table file is ignored and rebuilt; FIRN_UNWIND_CACHE=0 turns it off; a
# cache folder open to others is not used; past the bound firn's own old tables go but a user's
# files in the folder (notes.tbl, myapp.dbg, a foreign file under a build-id name) stay
# byte-identical; FIRN_UNWIND_CACHE=/ and =/usr are refused with a message and nothing is written
# there (the recording goes on without the cache); a program of nobody's carrying deep's build id
# lends its table neither to deep's later recordings nor to deep beside it.
. "$(dirname "$0")/lib.sh"

DEEP="$FIX/deep"
if ! is_root; then skip "recording tests need root"; exit 0; fi
CHAIN="worker;d00;d01;d02;d03;d04;d05;d06;d07;d08;d09;d10;d11;d12;d13;d14;d15;d16;d17;d18;d19;d20;d21;d22;d23;d24;d25;d26;d27;d28;d29;d30;d31;(bottom(_\\[i\\])?;)?hot"
CACHE="$TMP/cache/unwind"
ID=$(readelf -n "$DEEP" | awk '/Build ID/ { print $3 }')

# complete FOLDED: percentage of deep's samples whose user stack reaches main through the chain.
complete() {
	python3 - "$1" "(^|;)main;$CHAIN$" <<'PY'
import re, sys
tot = ok = 0
for line in open(sys.argv[1]):
    stack, _, n = line.rstrip("\n").rpartition(" ")
    frames = stack.split(";")
    if frames[0] != "deep":
        continue
    n = int(n); tot += n
    if re.search(sys.argv[2], ";".join(f for f in frames[1:] if not f.endswith("_[k]"))):
        ok += n
print("%.1f %d" % (100.0 * ok / tot if tot else 0, tot))
PY
}
# run NAME [ENV...]: records deep (300 ms) with the cache in $CACHE; prints "cached pct samples".
run() {
	local name=$1; shift
	env FIRN_UNWIND_CACHE="$CACHE" "$@" "$FIRN" record -F 999 -o "$TMP/$name.pb.gz" -- "$DEEP" 300 \
		2>"$TMP/$name.err"
	"$FIRN" report --folded "$TMP/$name.pb.gz" >"$TMP/$name.folded"
	local cached
	cached=$(sed -nE 's/.*dwarf unwinding:.*, ([0-9]+) from the cache$/\1/p' "$TMP/$name.err")
	echo "${cached:--1} $(complete "$TMP/$name.folded")"
}
ok_pct() { python3 -c "import sys; sys.exit(0 if float(sys.argv[1]) >= 98 else 1)" "$1"; }

# 1. a fresh cache: nothing read, deep's table stored (owner-only) in an owner-only folder
read -r c1 p1 n1 < <(run first)
echo "# first: $c1 tables from the cache, $p1% of $n1 samples complete"
[ "$c1" = 0 ] && pass "first recording reads nothing from an empty cache" || fail "first: '$c1' from the cache"
[ -f "$CACHE/$ID.tbl" ] && [ "$(stat -c %a "$CACHE/$ID.tbl")" = 600 ] && [ "$(stat -c %a "$CACHE")" = 700 ] \
	&& pass "deep's table stored as $ID.tbl (0600, folder 0700)" \
	|| { fail "no table file for deep's build id $ID"; ls -la "$CACHE"; }
nfiles=$(ls "$CACHE" | grep -c '\.tbl$')

# 2. the second recording reads its tables from the cache (deep, libc, ld.so at least) and its
# stacks are as complete as with built tables
read -r c2 p2 n2 < <(run second)
echo "# second: $c2 tables from the cache ($nfiles files cached), $p2% of $n2 samples complete"
[ "$c2" -ge 3 ] && pass "second recording reads $c2 tables from the cache" || fail "second: '$c2' from the cache"
[ "$n2" -ge 200 ] && ok_pct "$p2" && pass "stacks from cached tables complete ($p2% of $n2)" \
	|| fail "stacks from cached tables: $p2% of $n2 complete"

# 3. a damaged table is ignored (one fewer read from the cache), still unwinds, and is rewritten
printf '\377' | dd of="$CACHE/$ID.tbl" bs=1 seek=300 conv=notrunc status=none
read -r c3 p3 n3 < <(run damaged)
read -r c4 _ _ < <(run repaired)
[ "$c3" -eq $((c2 - 1)) ] && [ "$c4" -eq "$c2" ] && ok_pct "$p3" \
	&& pass "damaged table rebuilt ($c3 then $c4 from the cache, $p3% complete)" \
	|| fail "damaged table: $c3 then $c4 from the cache (want $((c2 - 1)), $c2), $p3% complete"

# 4. a symlink in place of a table file is not followed (and replaced by a real file)
mv "$CACHE/$ID.tbl" "$TMP/good.tbl"
ln -s "$TMP/good.tbl" "$CACHE/$ID.tbl"
read -r c5 _ _ < <(run symlink)
[ "$c5" -eq $((c2 - 1)) ] && [ -f "$CACHE/$ID.tbl" ] && [ ! -L "$CACHE/$ID.tbl" ] \
	&& pass "symlinked table file ignored and replaced ($c5 from the cache)" \
	|| fail "symlinked table file: $c5 from the cache, $(ls -l "$CACHE/$ID.tbl")"

# 5. FIRN_UNWIND_CACHE=0: nothing read
read -r c6 p6 _ < <(run off FIRN_UNWIND_CACHE=0)
[ "$c6" = 0 ] && ok_pct "$p6" && pass "FIRN_UNWIND_CACHE=0 reads no table ($p6% complete)" \
	|| fail "FIRN_UNWIND_CACHE=0: $c6 from the cache"

# 6. a cache folder writable by others is not used (and not written)
chmod 777 "$CACHE"
rm -f "$CACHE"/*.tbl
read -r c7 p7 _ < <(run open)
[ "$c7" = 0 ] && [ -z "$(ls "$CACHE")" ] && ok_pct "$p7" \
	&& pass "cache folder open to others not used ($p7% complete)" \
	|| fail "open cache folder: $c7 read, $(ls "$CACHE" | wc -l) files written"

# 7. past the bound (256 MiB) firn's own oldest table goes; the user's files stay as they were,
# though old and large (sparse: no disk used) and under firn's suffix or name pattern
chmod 700 "$CACHE"
rm -f "$CACHE"/*
head -c 5000 /dev/urandom >"$CACHE/notes.tbl"; truncate -s 300M "$CACHE/notes.tbl"
head -c 5000 /dev/urandom >"$CACHE/myapp.dbg"
head -c 5000 /dev/urandom >"$CACHE/cafe0123.tbl"; truncate -s 300M "$CACHE/cafe0123.tbl"
chmod 600 "$CACHE"/*
touch -d 2000-01-01 "$CACHE"/*
(cd "$CACHE" && md5sum notes.tbl myapp.dbg cafe0123.tbl) >"$TMP/planted.md5"
# a table firn wrote (deep's, under another id), grown past the bound: firn's own, goes first
run fill >/dev/null
cp "$CACHE/$ID.tbl" "$CACHE/0123abcd.tbl"; truncate -s 300M "$CACHE/0123abcd.tbl"
rm -f "$CACHE/$ID.tbl"
touch -d 2000-01-01 "$CACHE/0123abcd.tbl"
read -r c8 p8 _ < <(run evict)
(cd "$CACHE" && md5sum -c --quiet "$TMP/planted.md5") >/dev/null 2>&1 \
	&& pass "a user's notes.tbl, myapp.dbg and cafe0123.tbl stay byte-identical past the bound" \
	|| { fail "planted files changed or removed"; ls -la "$CACHE"; }
[ ! -e "$CACHE/0123abcd.tbl" ] && [ -f "$CACHE/$ID.tbl" ] && ok_pct "$p8" \
	&& pass "firn's own oldest table evicted, deep's stored ($p8% complete)" \
	|| { fail "eviction: $p8% complete"; ls -la "$CACHE"; }

# 8. FIRN_UNWIND_CACHE=/ and =/usr: refused with one line, nothing written there, stacks complete
for dir in / /usr; do
	before=$(ls -a "$dir" | grep '\.tbl$')
	read -r _ p9 n9 < <(run "sys${dir//\//_}" FIRN_UNWIND_CACHE="$dir")
	after=$(ls -a "$dir" | grep '\.tbl$')
	msg=$(grep -c "cannot use the cache folder '$dir' (FIRN_UNWIND_CACHE): a system" "$TMP/sys${dir//\//_}.err")
	[ "$before" = "$after" ] && [ "$msg" = 1 ] && ok_pct "$p9" \
		&& pass "FIRN_UNWIND_CACHE=$dir refused with one message, nothing written ($p9% of $n9 complete)" \
		|| { fail "FIRN_UNWIND_CACHE=$dir: $msg messages, tables there: $after"; cat "$TMP/sys${dir//\//_}.err"; }
	# the old code wrote its tables there: take back only what this recording added
	for f in $after; do grep -qx "$f" <<<"$before" || rm -f "${dir%/}/$f"; done
done

# 9. a build id is anyone's to copy: another user's program built with deep's build id (other
# code and CFI, padded to deep's size) runs as nobody while root records. Its table must serve
# neither deep in the same recording (copies share rows) nor deep's later recordings (the
# cache): deep's stacks still reach main through the chain, and the summary's completeness
# says what the stacks show.
PUB="$TMP/pub"
mkdir -p "$PUB" && chmod 711 "$TMP" && chmod 755 "$PUB"
cat >"$PUB/forged.c" <<'C'
#include <stdlib.h>
#include <time.h>
/* spins for argv[1] ms in one large function over the addresses deep's code has */
int main(int argc, char **argv)
{
	struct timespec t0, t;
	long ms = argc > 1 ? atol(argv[1]) : 500;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do {
		__asm__ volatile(".rept 3000\n\tnop\n\t.endr" ::: "memory");
		clock_gettime(CLOCK_MONOTONIC, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	return 0;
}
C
if ! gcc -O2 -fomit-frame-pointer -Wl,--build-id=0x"$ID" -o "$PUB/forged" "$PUB/forged.c"; then
	fail "cannot build the forged program"
else
	[ "$(stat -c %s "$PUB/forged")" -lt "$(stat -c %s "$DEEP")" ] && truncate -s "$(stat -c %s "$DEEP")" "$PUB/forged"
	chown nobody "$PUB/forged"
	fid=$(readelf -n "$PUB/forged" | awk '/Build ID/ { print $3 }')
	echo "# forged: build id $fid (deep's $ID), $(stat -c '%s bytes, owner %U' "$PUB/forged")"
	NOBODY="setpriv --reuid=nobody --regid=nogroup --clear-groups"
	# summary_pct ERR: the summary's "N% complete" of the dwarf unwinding line
	summary_pct() { sed -nE 's/^firn: dwarf unwinding: .*: ([0-9.]+)% complete.*/\1/p' "$1" | grep . || echo -1; }
	# within_pp A B: the two percentages differ by 2 points at most
	within_pp() { python3 -c "import sys; sys.exit(0 if abs(float(sys.argv[1]) - float(sys.argv[2])) <= 2 else 1)" "$@"; }
	CACHE="$TMP/cache9/unwind"
	env FIRN_UNWIND_CACHE="$CACHE" "$FIRN" record -F 999 -o "$TMP/forged.pb.gz" -- $NOBODY "$PUB/forged" 600 \
		2>"$TMP/forged.err"
	[ -f "$CACHE/$ID.tbl" ] || echo "# no table cached from the forged program"
	read -r c10 p10 n10 < <(run after_forged)
	s10=$(summary_pct "$TMP/after_forged.err")
	echo "# deep after the forged program: $c10 from the cache, $p10% of $n10 complete, summary $s10%"
	[ "$n10" -ge 200 ] && ok_pct "$p10" && within_pp "$p10" "$s10" \
		&& pass "deep's later recording not served the forged table ($p10% of $n10 complete, summary $s10%)" \
		|| fail "deep after a forged build id: $p10% of $n10 complete, summary says $s10%"
	# the same recording: the forged program first, deep while it runs
	env FIRN_UNWIND_CACHE=0 "$FIRN" record -F 999 -o "$TMP/both.pb.gz" -- \
		sh -c "$NOBODY '$PUB/forged' 1500 & sleep 0.5; '$DEEP' 300; wait" 2>"$TMP/both.err"
	"$FIRN" report --folded "$TMP/both.pb.gz" >"$TMP/both.folded"
	read -r p11 n11 < <(complete "$TMP/both.folded")
	echo "# deep beside the forged program: $p11% of $n11 complete"
	[ "$n11" -ge 200 ] && ok_pct "$p11" \
		&& pass "deep beside the forged program unwinds with its own table ($p11% of $n11 complete)" \
		|| fail "deep beside a forged build id: $p11% of $n11 complete"
fi
