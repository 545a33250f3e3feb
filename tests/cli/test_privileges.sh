# Privileges and files. Unprivileged record and top name the capability they miss; report, diff
# and usdt-list read files with no privileges. Under sudo (SUDO_UID/SUDO_GID/SUDO_USER of a test
# user created here), the command after -- runs as that user with their groups, no capabilities
# and no descriptor of firn's, unless --as-root (and so does top's); output files belong to that
# user. An output path in a sticky world-writable directory where another user planted a symlink
# never writes through the link, and never gives its target away.
. "$(dirname "$0")/lib.sh"

if ! is_root; then skip "privilege tests need root (to drop it)"; exit 0; fi
for tool in setpriv useradd userdel groupadd groupdel; do
	command -v "$tool" >/dev/null || { fail "$tool is not installed"; exit 0; }
done
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all)
USER_NAME=firn-test-$$ GROUP_NAME=firn-tgrp-$$
VICTIM=$TMP/private/victim # a root file in a directory only root can open
cleanup() {
	userdel "$USER_NAME" 2>/dev/null
	groupdel "$GROUP_NAME" 2>/dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT
groupadd "$GROUP_NAME" && useradd -M -N -g nogroup -G "$GROUP_NAME" -s /bin/sh "$USER_NAME" ||
	{ fail "cannot create the test user"; exit 0; }
U=$(id -u "$USER_NAME") G=$(id -g "$USER_NAME") XG=$(getent group "$GROUP_NAME" | cut -d: -f3)
AS_USER=(setpriv --reuid="$U" --regid="$G" --init-groups --inh-caps=-all)
chmod 711 "$TMP"
mkdir -m 1777 "$TMP/shared"
mkdir -m 755 "$TMP/pub"
mkdir -m 700 "$TMP/private"

# valid FILE: firn report reads FILE whole
valid() { "$FIRN" report --folded "$1" >/dev/null 2>&1; }

# ---- unprivileged record and top ----
# unpriv NAME CAPS WANT CMD...: as nobody with only CAPS (e.g. "+bpf", "" for none), CMD exits 1
# with exactly the line WANT on stderr
unpriv() {
	local name=$1 caps=$2 want=$3; shift 3
	local c=(--inh-caps=-all)
	[ -n "$caps" ] && c=(--inh-caps="$caps" --ambient-caps="$caps")
	(cd "$TMP/pub" && setpriv --reuid=65534 --regid=65534 --clear-groups "${c[@]}" "$@") \
		>"$TMP/out" 2>"$TMP/err"
	local rc=$?
	if [ "$rc" -eq 1 ] && [ "$(cat "$TMP/err")" = "$want" ]; then pass "$name"; else
		fail "$name: exit $rc"; sed 's/^/    stderr: /' "$TMP/err"; fi
}
unpriv "record as nobody names both capabilities" "" \
	"firn: record needs root, or CAP_BPF and CAP_PERFMON" "$FIRN" record -o x.pb.gz -- true
unpriv "record with CAP_BPF only names CAP_PERFMON" +bpf \
	"firn: record needs root, or CAP_PERFMON" "$FIRN" record -o x.pb.gz -- true
unpriv "record with CAP_PERFMON only names CAP_BPF" +perfmon \
	"firn: record needs root, or CAP_BPF" "$FIRN" record -o x.pb.gz -a
if "$FIRN" help --commands | grep -qx top; then
	unpriv "top as nobody names both capabilities" "" \
		"firn: top needs root, or CAP_BPF and CAP_PERFMON" "$FIRN" top --stdio -n 1 -a
fi
check "nothing written by the refused recordings" [ -z "$(ls -A "$TMP/pub")" ]
# with CAP_BPF and CAP_PERFMON but not CAP_SYSLOG, kallsyms shows zeros (kptr_restrict): one
# warning says the kernel frames go unnamed (dd's reads of /dev/zero run in the kernel)
KCAPS=(setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+bpf,+perfmon
	--ambient-caps=+bpf,+perfmon)
if ! "${KCAPS[@]}" head -1 /proc/kallsyms | grep -q '^0\+ '; then
	skip "kallsyms shows addresses without CAP_SYSLOG here (kptr_restrict 0, paranoid <= 1)"
else
	(cd "$TMP/shared" && "${KCAPS[@]}" "$FIRN" record -q -o k.pb.gz -- \
		timeout 1.5 dd if=/dev/zero of=/dev/null bs=64k) >/dev/null 2>"$TMP/err"
	rc=$?
	want="firn: warning: kernel symbols are hidden (kptr_restrict): kernel frames unnamed; run as root"
	if [ "$rc" -eq 124 ] && [ "$(grep -c kptr_restrict "$TMP/err")" -eq 1 ] &&
		grep -qxF "$want" "$TMP/err"; then
		pass "record with CAP_BPF and CAP_PERFMON only says once that kernel symbols are hidden"
	else
		fail "record with CAP_BPF and CAP_PERFMON only: exit $rc, no single kptr_restrict warning"
		sed 's/^/    stderr: /' "$TMP/err" | head -5
	fi
	rm -f "$TMP/shared/k.pb.gz"
fi
# another user's file in a sticky folder (as /tmp) cannot be replaced: refused before recording
mkdir -p "$TMP/sticky" && chmod 1777 "$TMP/sticky" && echo keep >"$TMP/sticky/root.pb.gz"
unpriv "record refuses another user's file in a sticky folder at once" +bpf,+perfmon \
	"firn: cannot write '$TMP/sticky/root.pb.gz': Operation not permitted" \
	"$FIRN" record -o "$TMP/sticky/root.pb.gz" -- touch "$TMP/sticky/ran"
check "the refused recording did not run its command" [ ! -e "$TMP/sticky/ran" ]
check "the other user's file is intact" [ "$(cat "$TMP/sticky/root.pb.gz")" = keep ]

# ---- file commands need no privileges ----
cp "$ROOT/tests/fixtures/simple.folded" "$TMP/pub/a.folded"
"$FIRN" report --pprof -o "$TMP/pub/a.pb.gz" "$TMP/pub/a.folded"
chmod 644 "$TMP/pub"/*
# as_nobody_same NAME CMD...: CMD as nobody exits 0 with the stdout it has as root
as_nobody_same() {
	local name=$1; shift
	"$@" >"$TMP/root.out" 2>&1
	"${NOBODY[@]}" "$@" >"$TMP/nobody.out" 2>&1
	local rc=$?
	if [ "$rc" -eq 0 ] && [ -s "$TMP/root.out" ] && cmp -s "$TMP/root.out" "$TMP/nobody.out"; then
		pass "$name"; else fail "$name: exit $rc"; head -3 "$TMP/nobody.out" | sed 's/^/    /'; fi
}
as_nobody_same "report as nobody" "$FIRN" report "$TMP/pub/a.pb.gz"
as_nobody_same "report --svg as nobody" "$FIRN" report --svg "$TMP/pub/a.folded"
as_nobody_same "diff as nobody" "$FIRN" diff "$TMP/pub/a.folded" "$TMP/pub/a.pb.gz"
if "$FIRN" help --commands | grep -qx usdt-list && [ -e "$FIX/usdtfix" ]; then
	cp "$FIX/usdtfix" "$TMP/pub/usdtfix" && chmod 755 "$TMP/pub/usdtfix"
	as_nobody_same "usdt-list as nobody" "$FIRN" usdt-list "$TMP/pub/usdtfix"
fi

# ---- under sudo: the command runs as the invoking user ----
SUDO=(env SUDO_UID="$U" SUDO_GID="$G" SUDO_USER="$USER_NAME")
# what the command reports about itself: ids, groups, capabilities, open descriptors
PROBE='id -u; id -g; id -G | tr " " "\n" | sort -n | tr "\n" " "; echo;
grep -E "^(Uid|Gid|CapEff|CapPrm):" /proc/self/status | tr -s "\t" " ";
ls /proc/self/fd | sort -n | tr "\n" " "'
sh -c "$PROBE" >"$TMP/direct.txt"
direct_fds=$(tail -1 "$TMP/direct.txt")
cd "$TMP/shared" || exit 1
"${SUDO[@]}" "$FIRN" record -q -o "$TMP/shared/user.pb.gz" -- sh -c "$PROBE" >"$TMP/sudo.txt"
check "under sudo: record exits 0" [ $? -eq 0 ]
{ read -r uid; read -r gid; read -r groups; read -r uids; read -r gids; read -r capprm
	read -r capeff; read -r fds; } <"$TMP/sudo.txt"
check "under sudo: the command runs as the invoking user (uid $uid)" [ "$uid" = "$U" ]
check "under sudo: real, effective, saved and fs uids are the user's" \
	[ "$uids" = "Uid: $U $U $U $U" ]
check "under sudo: and the gids ($gids)" [ "$gids" = "Gid: $G $G $G $G" ]
check "under sudo: the user's groups ($groups)" \
	[ "$groups" = "$(printf '%s\n' "$G" "$XG" | sort -n | xargs)" ]
check "under sudo: no capabilities" \
	[ "$capeff $capprm" = "CapEff: 0000000000000000 CapPrm: 0000000000000000" ]
check "under sudo: no descriptor of firn's ($fds)" [ "$fds" = "$(echo $direct_fds)" ]
check "under sudo: the output belongs to the user" [ "$(stat -c %u:%g user.pb.gz)" = "$U:$G" ]
check "under sudo: the output is a complete profile" valid user.pb.gz
"${SUDO[@]}" "$FIRN" record -q --format folded -o "$TMP/shared/user.folded" -- true
check "under sudo: a folded output belongs to the user" [ "$(stat -c %u:%g user.folded)" = "$U:$G" ]
"${SUDO[@]}" "$FIRN" record -q --as-root -o "$TMP/shared/root.pb.gz" -- sh -c "$PROBE" \
	>"$TMP/root.txt"
check "--as-root: the command keeps root" [ "$(head -1 "$TMP/root.txt")" = 0 ]
check "--as-root: the output still belongs to the user" [ "$(stat -c %u:%g root.pb.gz)" = "$U:$G" ]
env SUDO_UID=0 SUDO_GID=0 SUDO_USER=root "$FIRN" record -q -o "$TMP/shared/r.pb.gz" -- id -u \
	>"$TMP/r.txt"
check "sudo from root: the command stays root" [ "$(cat "$TMP/r.txt")" = 0 ]

if "$FIRN" help --commands | grep -qx top; then
	"${SUDO[@]}" timeout 60 "$FIRN" top --stdio -n 1 -d 0.3 -- sh -c "id -u >$TMP/shared/top.txt" \
		>/dev/null
	check "top under sudo: the command runs as the invoking user" [ "$(cat top.txt)" = "$U" ]
fi

# ---- planted symlinks in a shared directory ----
echo victim >"$VICTIM"
chmod 600 "$VICTIM"
"${AS_USER[@]}" ln -s "$VICTIM" "$TMP/shared/planted.pb.gz"
"${AS_USER[@]}" ln -s "$VICTIM-new" "$TMP/shared/dangling.pb.gz"
for f in planted dangling; do
	"${SUDO[@]}" "$FIRN" record -q -o "$TMP/shared/$f.pb.gz" -- true 2>"$TMP/err"
	rc=$?
	if [ "$rc" -eq 0 ]; then
		check "$f symlink: replaced by a regular file" test -f "$f.pb.gz" -a ! -L "$f.pb.gz"
		check "$f symlink: the new file is a complete profile" valid "$f.pb.gz"
	else
		check "$f symlink: refused with one message" [ "$(wc -l <"$TMP/err")" -eq 1 ]
	fi
	check "$f symlink: the target is untouched" [ "$(cat "$VICTIM")" = victim ]
	check "$f symlink: the target still belongs to root" [ "$(stat -c %u:%g:%a "$VICTIM")" = 0:0:600 ]
	check "$f symlink: no file created through the link" [ ! -e "$VICTIM-new" ]
done
left=$(ls -A "$TMP/shared" | grep -v -e '\.pb\.gz$' -e '\.pb\.gz\.old$' -e '\.folded$' -e '^top\.txt$')
check "no temporary file left in the shared directory ($left)" [ -z "$left" ]
