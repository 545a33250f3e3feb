# make install puts the binary, the man pages, the three completions, libfirn-alloc.so (and
# libfirn-cuda.so where it was built) under PREFIX, and
# make uninstall removes exactly those files again (nothing else in the tree is touched).
. "$(dirname "$0")/lib.sh"

dest="$TMP/dest" prefix=/usr/local
mkdir -p "$dest$prefix/bin" && echo keep >"$dest$prefix/bin/other-tool"
# -o all: the binary under test is already built (the sanitizer run must not relink it)
inst() { make -s -C "$ROOT" -o all BUILD="$BUILD" DESTDIR="$dest" PREFIX="$prefix" "$1" >/dev/null 2>&1; }
check "make install exits 0" inst install
files="bin/firn share/bash-completion/completions/firn share/zsh/site-functions/_firn
	share/fish/vendor_completions.d/firn.fish"
for m in "$ROOT"/man/*.1; do files="$files share/man/man1/$(basename "$m")"; done
# the allocation sampler (not in the sanitizer build's folder: `make -o all` builds nothing)
if [ -f "$ROOT/$BUILD/libfirn-alloc.so" ]; then files="$files lib/firn/libfirn-alloc.so"; fi
# the CUDA injection library, where the CUDA toolkit was found and it was built
if [ -f "$ROOT/$BUILD/libfirn-cuda.so" ]; then files="$files lib/firn/libfirn-cuda.so"; fi
missing=
for f in $files; do [ -f "$dest$prefix/$f" ] || missing="$missing $f"; done
check "install put every file in place${missing:+ (missing:$missing)}" [ -z "$missing" ]
check "the installed firn runs" sh -c '"$1" --version >/dev/null' _ "$dest$prefix/bin/firn"
# record --cuda finds the installed library (PREFIX/lib/firn/ from PREFIX/bin/firn) and names it
# in the command's CUDA_INJECTION64_PATH
if [ -f "$ROOT/$BUILD/libfirn-cuda.so" ] && is_root; then
	got=$("$dest$prefix/bin/firn" record --cuda -q -o "$TMP/i.pb.gz" -- sh -c 'echo "$CUDA_INJECTION64_PATH"' 2>"$TMP/i.err")
	[ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$dest$prefix/lib/firn/libfirn-cuda.so")" ] \
		&& pass "installed record --cuda: CUDA_INJECTION64_PATH is PREFIX/lib/firn/libfirn-cuda.so" \
		|| { fail "installed record --cuda: CUDA_INJECTION64_PATH '$got'"; cat "$TMP/i.err"; }
fi
# record -e alloc preloads the installed allocation sampler
if [ -f "$ROOT/$BUILD/libfirn-alloc.so" ] && is_root; then
	got=$("$dest$prefix/bin/firn" record -e alloc -q -o "$TMP/a.pb.gz" -- sh -c 'echo "$LD_PRELOAD"' 2>"$TMP/a.err")
	[ -n "$got" ] && [ "$(readlink -f "$got")" = "$(readlink -f "$dest$prefix/lib/firn/libfirn-alloc.so")" ] \
		&& pass "installed record -e alloc: LD_PRELOAD is PREFIX/lib/firn/libfirn-alloc.so" \
		|| { fail "installed record -e alloc: LD_PRELOAD '$got'"; cat "$TMP/a.err"; }
fi
check "make uninstall exits 0" inst uninstall
left=$(cd "$dest$prefix" && find . -type f ! -name other-tool | sort | tr '\n' ' ')
check "uninstall removed every installed file${left:+ (left: $left)}" [ -z "$left" ]
check "uninstall left other files alone" [ -f "$dest$prefix/bin/other-tool" ]
