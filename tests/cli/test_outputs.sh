# How firn writes its files (record, report, diff -o; --palette): a device node or FIFO at -o is
# written through, never replaced nor moved to FILE.old; a FIFO with no reader fails at once;
# a planted PALETTE.tmp link (or a planted palette) does not make firn write through it;
# profiles are 0600 (text outputs 0644), under sudo owned by the user; a write that fails at
# the end of a recording (full disk, FILE.old a directory) saves the profile in $TMPDIR and
# says where; palette errors name the palette; a palette rewrite keeps the lines firn did not
# parse. Device nodes, ownership, tmpfs and recording need root (is_root); the rest does not.
. "$(dirname "$0")/lib.sh"

umask 022
cp "$ROOT/tests/fixtures/simple.folded" "$TMP/simple.folded"
cp "$ROOT/tests/fixtures/diff/base.folded" "$ROOT/tests/fixtures/diff/new.folded" "$TMP/"
export TMPDIR="$TMP/tmpdir"
mkdir "$TMPDIR"
cd "$TMP" || exit 1
"$FIRN" report --pprof -o simple.pb.gz simple.folded || exit 1
"$FIRN" report -o table.want simple.pb.gz || exit 1
"$FIRN" diff -o diff.want base.folded new.folded || exit 1

# is_null_dev PATH: still a character device with /dev/null's numbers (1, 3)
is_null_dev() { [ "$(stat -c '%F %t:%T' "$1")" = "character special file 1:3" ]; }
# no_debris PATH: no PATH.old and no temporary file next to PATH
no_debris() { [ ! -e "$1.old" ] && ! ls -A "$(dirname "$1")" | grep -q "^$(basename "$1")\.tmp"; }
# fifo_intact PATH / null_intact PATH / full_intact PATH: still that node, no debris next to it
fifo_intact() { [ -p "$1" ] && no_debris "$1"; }
null_intact() { is_null_dev "$1" && no_debris "$1"; }
full_intact() { [ "$(stat -c '%F %t:%T' "$1")" = "character special file 1:7" ] && no_debris "$1"; }
# first_err_is NAME WANT: the first stderr line of the last expect_rc is WANT
first_err_is() {
	local got
	got=$(grep -v 'warning: cannot park' "$TMP/err" | head -1)
	[ "$got" = "$2" ] && pass "$1" || fail "$1: '$got', wanted '$2'"
}

# ---- item 1: FIFOs (no root needed) ----
mkfifo fifo
timeout 20 cat fifo >fifo.got &
reader=$!
expect_rc "report -o FIFO with a reader: exit 0" 0 timeout 10 "$FIRN" report -o fifo simple.pb.gz
wait "$reader"
check "report -o FIFO: the reader got the table" cmp -s fifo.got table.want
check "report -o FIFO: still a FIFO, no .old" fifo_intact fifo
timeout 20 cat fifo >fifo.got &
reader=$!
expect_rc "diff -o FIFO with a reader: exit 0" 0 timeout 10 "$FIRN" diff -o fifo base.folded new.folded
wait "$reader"
check "diff -o FIFO: the reader got the table" cmp -s fifo.got diff.want
start=$(date +%s)
expect_rc "report -o FIFO without a reader: exit 1 at once" 1 timeout 10 "$FIRN" report -o fifo simple.pb.gz
check "report -o FIFO without a reader: within 5 s" [ $(($(date +%s) - start)) -lt 5 ]
first_err_is "report -o FIFO without a reader: message" \
	"firn: cannot write 'fifo': no process has the FIFO open for reading"
check "report -o FIFO without a reader: still a FIFO" fifo_intact fifo
# a link of one's own to /proc/self/fd/1 (as /dev/stdout is) is written through
ln -s /proc/self/fd/1 mystdout
"$FIRN" report -o mystdout simple.pb.gz >stdout.got
check "report -o LINK to /proc/self/fd/1: written to stdout" cmp -s stdout.got table.want
check "report -o LINK to /proc/self/fd/1: the link stays" [ -L mystdout ]

# ---- item 4: modes ----
"$FIRN" report --pprof -o mode.pb.gz simple.folded
check "report --pprof -o: mode 600 (addresses)" [ "$(stat -c %a mode.pb.gz)" = 600 ]
"$FIRN" report --svg -o mode.svg simple.folded
check "report --svg -o: mode 644 (umask 022)" [ "$(stat -c %a mode.svg)" = 644 ]

# ---- items 2 and 13: the palette ----
echo victim >victim
ln -s "$TMP/victim" pal.map.tmp
expect_rc "--palette with a planted PALETTE.tmp link: exit 0" 0 \
	"$FIRN" report --svg --palette pal.map -o p.svg simple.folded
check "--palette: the planted link's target is untouched" [ "$(cat victim)" = victim ]
check "--palette: the planted link is still a link to it" [ "$(readlink pal.map.tmp)" = "$TMP/victim" ]
check "--palette: the palette was written" grep -q '^hot_loop->rgb(' pal.map
check "--palette: no temporary file left" [ -z "$(ls -A | grep '^pal\.map\.tmp\.')" ]
printf '# my colors\n\nnot a color line\nhot_loop->rgb(1,2,3)\nbad->rgb(300,0,0)\n' >pal2.map
expect_rc "--palette with lines firn does not parse: exit 0" 0 \
	"$FIRN" report --svg --palette pal2.map -o p2.svg simple.folded
check "--palette: the unparsed lines are kept verbatim, in order" \
	[ "$(head -4 pal2.map)" = "$(printf '# my colors\n\nnot a color line\nbad->rgb(300,0,0)')" ]
check "--palette: the parsed color is kept and used" \
	grep -q '^hot_loop->rgb(1,2,3)$' pal2.map
check "--palette: a new color is added" grep -q '^fib->rgb(' pal2.map
expect_rc "--palette in a missing folder: exit 1" 1 \
	"$FIRN" report --svg --palette nodir/pal.map -o p3.svg simple.folded
first_err_is "--palette in a missing folder: the message names the palette" \
	"firn: cannot write palette 'nodir/pal.map': No such file or directory"
mkdir paldir
expect_rc "--palette that is a folder: exit 1" 1 \
	"$FIRN" report --svg --palette paldir -o p3.svg simple.folded
first_err_is "--palette that is a folder: the message names the palette" \
	"firn: cannot read palette 'paldir': Is a directory"

if ! is_root; then
	skip "device nodes, ownership, full disk and recording (need root)"
	exit 0
fi

# ---- item 1: device nodes ----
mknod -m 666 mynull c 1 3
expect_rc "report -o NULLDEV: exit 0" 0 "$FIRN" report -o mynull simple.pb.gz
check "report -o NULLDEV: still the device, no .old" null_intact mynull
expect_rc "report --pprof -o NULLDEV: exit 0" 0 "$FIRN" report --pprof -o mynull simple.pb.gz
check "report --pprof -o NULLDEV: still the device" null_intact mynull
expect_rc "diff -o NULLDEV: exit 0" 0 "$FIRN" diff -o mynull base.folded new.folded
check "diff -o NULLDEV: still the device, no .old" null_intact mynull
expect_rc "record -o NULLDEV: exit 0" 0 "$FIRN" record -q -a -d 0.3 -o mynull
check "record -o NULLDEV: still the device, no .old" null_intact mynull
mknod -m 600 myblk b 7 250
expect_rc "report -o BLOCKDEV: refused" 1 "$FIRN" report -o myblk simple.pb.gz
first_err_is "report -o BLOCKDEV: message" \
	"firn: cannot write 'myblk': not a regular file, character device or FIFO"
check "report -o BLOCKDEV: still the device" [ -b myblk ]
timeout 20 cat fifo >rec.got &
reader=$!
expect_rc "record -o FIFO with a reader: exit 0" 0 timeout 60 "$FIRN" record -q -a -d 0.3 -o fifo
wait "$reader"
check "record -o FIFO: the reader got a profile" "$FIRN" report -o /dev/null rec.got
check "record -o FIFO: still a FIFO, no .old" fifo_intact fifo

# ---- item 2: a planted palette link (another user's) is neither followed nor copied ----
echo 'secret line' >secret
ln -s "$TMP/secret" planted.map
chown -h 65534:65534 planted.map
expect_rc "planted palette link: exit 1" 1 \
	"$FIRN" report --svg --palette planted.map -o p4.svg simple.folded
first_err_is "planted palette link: not followed" \
	"firn: cannot read palette 'planted.map': Permission denied"
check "planted palette link: its target is untouched" [ "$(cat secret)" = 'secret line' ]
check "planted palette link: left as it was" [ "$(readlink planted.map)" = "$TMP/secret" ]

# ---- item 4: record's mode and owner ----
"$FIRN" record -q -a -d 0.3 -o rec.pb.gz
check "record -o: mode 600" [ "$(stat -c %a rec.pb.gz)" = 600 ]
env SUDO_UID=65534 SUDO_GID=65533 "$FIRN" record -q -a -d 0.3 -o sudo.pb.gz
check "record under sudo: owned by SUDO_UID:SUDO_GID, mode 600" \
	[ "$(stat -c %u:%g:%a sudo.pb.gz)" = 65534:65533:600 ]

# ---- item 8: the output fails at the end: the profile is saved in $TMPDIR ----
# saved_ok NAME: the last stderr names a saved file in $TMPDIR: a 0600 profile firn reads, with
# as many samples as the summary line says
saved_ok() {
	local saved n got
	saved=$(sed -n "s/.*; the profile was saved as '\(.*\)'$/\1/p" "$TMP/err")
	case "$saved" in "$TMPDIR"/firn-??????.pb.gz) pass "$1: saved in \$TMPDIR ($saved)" ;;
		*) fail "$1: no saved file named"; sed 's/^/    stderr: /' "$TMP/err"; return ;; esac
	check "$1: the saved file is mode 600" [ "$(stat -c %a "$saved")" = 600 ]
	n=$(sed -n 's/^firn: \([0-9]*\) samples, .*/\1/p' "$TMP/err")
	# report writes counts from 1,000 up with thousands separators
	got=$("$FIRN" report "$saved" | sed -n 's/^# .*: \([0-9,]*\) samples.*/\1/p' | tr -d ,)
	check "$1: the saved file is a profile of the $n samples" [ -n "$n" -a "$got" = "$n" ]
	rm -f "$saved"
}
mknod -m 666 myfull c 1 7
expect_rc "record -o FULLDEV: exit 1" 1 "$FIRN" record -a -d 0.3 -o myfull
check "record -o FULLDEV: one error line" [ "$(grep -c '^firn: cannot' "$TMP/err")" -eq 1 ]
check "record -o FULLDEV: the message says why and where" \
	grep -q "^firn: cannot write 'myfull': No space left on device; the profile was saved as '$TMPDIR/firn-" "$TMP/err"
saved_ok "record -o FULLDEV"
check "record -o FULLDEV: still the device, no .old" full_intact myfull

mkdir small
if mount -t tmpfs -o size=64k tmpfs small; then
	trap 'umount "$TMP/small" 2>/dev/null; rm -rf "$TMP"' EXIT
	cat /dev/zero >small/fill 2>/dev/null # until the disk is full
	expect_rc "record -o on a full disk: exit 1" 1 "$FIRN" record -a -d 0.5 -o small/out.pb.gz
	check "record -o on a full disk: the message says why and where" \
		grep -q "^firn: cannot write 'small/out.pb.gz': No space left on device; the profile was saved as '$TMPDIR/firn-" "$TMP/err"
	saved_ok "record -o on a full disk"
	check "record -o on a full disk: no temporary file left" [ "$(ls -A small)" = fill ]
	umount small
else
	skip "full disk (cannot mount a tmpfs)"
fi

echo old >out.pb.gz
mkdir out.pb.gz.old
start=$(date +%s)
expect_rc "record with FILE.old a folder: refused before recording" 1 \
	"$FIRN" record -a -d 5 -o out.pb.gz
check "record with FILE.old a folder: at once" [ $(($(date +%s) - start)) -lt 4 ]
first_err_is "record with FILE.old a folder: the message names FILE.old" \
	"firn: cannot replace 'out.pb.gz.old': Is a directory"
rmdir out.pb.gz.old
expect_rc "FILE.old made a folder while recording: exit 1" 1 \
	"$FIRN" record -F 999 -o out.pb.gz -- sh -c \
	'mkdir out.pb.gz.old; i=0; while [ $i -lt 300000 ]; do i=$((i + 1)); done'
check "FILE.old made a folder while recording: the message names FILE.old and the saved file" \
	grep -q "^firn: cannot replace 'out.pb.gz.old': Is a directory; the profile was saved as '$TMPDIR/firn-" "$TMP/err"
saved_ok "FILE.old made a folder while recording"
check "FILE.old made a folder while recording: FILE is untouched" [ "$(cat out.pb.gz)" = old ]
