# The debug package cache (issue 51): Debian's stripped python3.11 recorded twice with the cache
# in $TMP: the first recording finds its debug package from dpkg's .list files (strace: opened)
# and stores one 0600 .pkg file; the second opens no .list file and prints the same hint; a
# record whose dpkg status stamp no longer matches (as after an install) is not used: the .list
# files are read again and the same hint stored again; FIRN_DEBUGPKG_CACHE=0 reads them every
# time and writes nothing. (test_debugpkg_cache, the unit test, changes a made-up dpkg's status,
# info folder and apt lists folder and sees each one make the answer be found again.)
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "recording tests need root"; exit 0; fi
PY=/usr/bin/python3.11
if ! command -v strace >/dev/null; then skip "no strace: cannot count the .list files read"; exit 0; fi
if [ ! -x "$PY" ] || ! dpkg -S "$PY" >/dev/null 2>&1 || readelf -SW "$PY" | grep -q ' \.symtab ' ||
	dpkg -s python3.11-dbg >/dev/null 2>&1; then
	skip "no stripped $PY from a Debian package without its debug package"; exit 0
fi
CACHE="$TMP/cache/debugpkg"

# run NAME CACHE: records python3.11 for 1 s under strace; prints how many dpkg .list files
# were opened; the summary's no-symbols line goes to $TMP/NAME.line.
run() {
	env -u DEBUGINFOD_URLS FIRN_DEBUGPKG_CACHE="$2" strace -f -qq -e trace=openat \
		-o "$TMP/$1.strace" "$FIRN" record -F 199 -o "$TMP/$1.pb.gz" -- "$PY" -c '
import time
t = time.time()
while time.time() - t < 1: sum(i * i for i in range(1000))' >/dev/null 2>"$TMP/$1.err"
	grep "^firn: no symbols: '$PY'" "$TMP/$1.err" | sed 's/ in [0-9,]* samples ([0-9.]*%)//' \
		>"$TMP/$1.line"
	grep -c '"/var/lib/dpkg/info/[^"]*\.list"' "$TMP/$1.strace"
}
hint() { sed -n 's/.*; for names install \([^ ,]*\).*/\1/p' "$TMP/$1.line"; }

n1=$(run first "$CACHE")
check "first recording: a debug package found ('$(hint first)') from dpkg's lists ($n1 .list opened)" \
	test -n "$(hint first)" -a "$n1" -gt 0
entry=$(ls "$CACHE"/*.pkg 2>/dev/null)
check "one .pkg record stored, 0600: '$entry'" \
	test "$(echo "$entry" | grep -c .)" = 1 -a "$(stat -c %a "$entry" 2>/dev/null)" = 600
n2=$(run second "$CACHE")
check "second recording opens no .list file ($n2) and says the same: '$(cat "$TMP/second.line")'" \
	test "$n2" = 0 -a -s "$TMP/second.line"
check "second recording's no-symbols line is the first's" cmp -s "$TMP/first.line" "$TMP/second.line"
# dpkg's status stamp in the record (key: 4 identities of 40 bytes at 16; the status's mtime at
# 16 + 2 * 40 + 24) made older: as if a package was installed since
python3 -c "
import sys
with open(sys.argv[1], 'r+b') as f:
    f.seek(120); s = int.from_bytes(f.read(8), 'little', signed=True)
    f.seek(120); f.write((s - 1).to_bytes(8, 'little', signed=True))" "$entry"
n3=$(run changed "$CACHE")
check "a record of another dpkg status is not used: .list files read again ($n3), same line" \
	test "$n3" -gt 0 -a "$(cat "$TMP/changed.line")" = "$(cat "$TMP/first.line")"
n4=$(run again "$CACHE")
check "and is stored again: the next recording opens no .list file ($n4)" \
	test "$n4" = 0 -a "$(cat "$TMP/again.line")" = "$(cat "$TMP/first.line")"
sys_entry=/var/cache/firn/debugpkg/$(basename "$entry") # the default folder's, for root
before=$(stat -c %i.%y "$sys_entry" 2>/dev/null)
n5=$(run none 0)
check "FIRN_DEBUGPKG_CACHE=0: the .list files read ($n5), the same line, no cache written" \
	test "$n5" -gt 0 -a "$(cat "$TMP/none.line")" = "$(cat "$TMP/first.line")" \
	-a "$(stat -c %i.%y "$sys_entry" 2>/dev/null)" = "$before"
