# record --cuda checks the library it hands the command before recording: a link to a file that
# is no ELF (/etc/shadow), to a device (/dev/zero), or junk bytes each get one line naming what
# it is not and exit 1 (they read "Bad file descriptor" before); under sudo, a library the
# invoking user (whom the command runs as) cannot read is refused (the driver would load
# nothing, silently); a CUDA_INJECTION64_PATH the user set is not replaced (exit 2) unless it
# names the same library. Needs no GPU: the library builds from the CUDA toolkit.
. "$(dirname "$0")/lib.sh"

LIB="$ROOT/$BUILD/libfirn-cuda.so"
if [ ! -f "$LIB" ]; then skip "libfirn-cuda.so is not built (no CUDA toolkit)"; exit 0; fi
if ! is_root; then skip "recording tests need root"; exit 0; fi

# bad NAME WHAT TARGET...: firn next to a libfirn-cuda.so made by TARGET (ln -s PATH, or a
# command writing it) exits 1 with one line saying WHAT
bad() {
	local name=$1 what=$2 d="$TMP/$1"
	shift 2
	mkdir -p "$d" && cp "$FIRN" "$d/firn"
	"$@" "$d/libfirn-cuda.so"
	"$d/firn" record --cuda -q -o "$TMP/o.pb.gz" -- true >/dev/null 2>"$TMP/err"
	local rc=$? n
	n=$(wc -l <"$TMP/err")
	if [ "$rc" -eq 1 ] && [ "$n" -eq 1 ] && grep -q -- "$what" "$TMP/err"; then
		pass "--cuda, library $name: exit 1, '$(cat "$TMP/err")'"
	else fail "--cuda, library $name: exit $rc, $n lines: $(head -2 "$TMP/err")"; fi
}
bad shadow "is not an ELF file" ln -s /etc/shadow
bad zero "is not a regular file" ln -s /dev/zero
junk() { head -c 4096 /dev/urandom >"$1"; }
bad junk "is not an ELF file" junk
obj() { cp "$ROOT/$BUILD/cmd/main.o" "$1"; } # ELF, but a relocatable object
bad object "is not a 64-bit ELF shared object" obj

# under sudo (SUDO_UID, as sudo sets it): the invoking user cannot read the library in a
# root-only folder; once it can, the command (run as that user) gets it
d="$TMP/sudo" && mkdir -m 700 "$d" && cp "$FIRN" "$LIB" "$d/"
SUDO_UID=65534 SUDO_GID=65534 "$d/firn" record --cuda -q -o "$TMP/o.pb.gz" -- true 2>"$TMP/err"
rc=$?
[ "$rc" -eq 1 ] && grep -q "the invoking user (uid 65534), as whom the command runs, cannot read '$d/libfirn-cuda.so': Permission denied" "$TMP/err" \
	&& pass "--cuda under sudo, a library the user cannot read: exit 1, said so" \
	|| { fail "--cuda under sudo, unreadable library: exit $rc"; cat "$TMP/err"; }
chmod 755 "$TMP" "$d"
got=$(SUDO_UID=65534 SUDO_GID=65534 "$d/firn" record --cuda -q -o "$TMP/o.pb.gz" -- sh -c 'echo "$(id -u) $CUDA_INJECTION64_PATH"' 2>"$TMP/err")
[ "$got" = "65534 $d/libfirn-cuda.so" ] && pass "--cuda under sudo, a readable library: the user's command gets it" \
	|| { fail "--cuda under sudo, readable: '$got'"; cat "$TMP/err"; }
chmod 700 "$TMP"

# a CUDA_INJECTION64_PATH of the user's own is refused, the same library (by another path) kept
CUDA_INJECTION64_PATH=/opt/mine.so "$FIRN" record --cuda -q -o "$TMP/o.pb.gz" -- true 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q "CUDA_INJECTION64_PATH is set already ('/opt/mine.so')" "$TMP/err" \
	&& pass "--cuda with CUDA_INJECTION64_PATH set to another library: exit 2, not replaced" \
	|| { fail "--cuda, CUDA_INJECTION64_PATH set: exit $rc"; cat "$TMP/err"; }
ln -s "$LIB" "$TMP/same.so"
got=$(CUDA_INJECTION64_PATH="$TMP/same.so" "$FIRN" record --cuda -q -o "$TMP/o.pb.gz" -- sh -c 'echo "$CUDA_INJECTION64_PATH"' 2>"$TMP/err")
[ "$(readlink -f "$got")" = "$(readlink -f "$LIB")" ] && pass "--cuda with CUDA_INJECTION64_PATH naming the same library: recorded" \
	|| { fail "--cuda, CUDA_INJECTION64_PATH the same: '$got'"; cat "$TMP/err"; }
