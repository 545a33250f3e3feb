# sid_root: prints the path of a Debian unstable root with python3.14, golang-go and OpenJDK 21
# and 25 in it (the current CPython, Go and JDKs for tests of newer runtimes than the host's, run
# as `chroot ROOT python3.14 ...`: also the case of a container whose interpreter differs from
# the host's; Go's toolchain runs from the host as ROOT/usr/lib/go/bin/go; a JVM needs the root's
# /proc mounted: test_java mounts it in a mount namespace of its own). One root for every such test, so a
# fresh machine pays one download. Made once with mmdebstrap
# (~30 s and ~800 MB when the network is fast; ~1.3 GB with the JDKs, 214 s here) and kept at $FIRN_SID_ROOT
# (/var/cache/firn-tests/sid) for the next runs: made in a temporary folder beside it and renamed
# into place only when complete, so an interrupted run leaves nothing a later one would take
# for a root, and two runs at once each make their own (the second rename fails: its copy goes).
# When it cannot be made, prints the reason instead and returns 1 (the caller skips with it).
: "${FIRN_SID_ROOT:=/var/cache/firn-tests/sid}"
SID_PACKAGES="python3.14,golang-go,openjdk-21-jdk-headless,openjdk-25-jdk-headless"
# sid_complete DIR: whether DIR holds every program the tests take from the root
sid_complete() {
	[ -x "$1/usr/bin/python3.14" ] && [ -x "$1/usr/lib/go/bin/go" ] &&
		[ -x "$1/usr/lib/jvm/java-21-openjdk-amd64/bin/javac" ] &&
		[ -x "$1/usr/lib/jvm/java-25-openjdk-amd64/bin/javac" ]
}
sid_root() {
	local dir=$FIRN_SID_ROOT tmp log
	if sid_complete "$dir"; then echo "$dir"; return 0; fi
	if ! command -v mmdebstrap >/dev/null; then
		echo "mmdebstrap is not installed (make deps installs it)"; return 1
	fi
	mkdir -p "$(dirname "$dir")" && tmp=$(mktemp -d "$dir.tmp.XXXXXX") ||
		{ echo "cannot make a folder beside '$dir'"; return 1; }
	log="$tmp.log"
	# sid's Release file is older than this machine's clock: apt must not refuse it as expired
	if ! timeout 900 mmdebstrap --variant=apt --aptopt='Acquire::Check-Valid-Until "false"' \
		--include=$SID_PACKAGES sid "$tmp" >"$log" 2>&1; then
		echo "mmdebstrap of Debian unstable failed: $(grep -v '^I:' "$log" | tail -1)"
		rm -rf "$tmp" "$log"; return 1
	fi
	rm -f "$log"
	# a root kept from an older list of packages gives way to the complete one
	sid_complete "$dir" || rm -rf "$dir"
	mv -T "$tmp" "$dir" 2>/dev/null || rm -rf "$tmp" # another run's root got there first
	if sid_complete "$dir"; then echo "$dir"; return 0; fi
	echo "the root made at '$dir' lacks python3.14, golang-go or a JDK"; return 1
}
