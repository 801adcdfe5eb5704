# SPDX-License-Identifier: GPL-2.0 OR MIT
# Sourced by the tests of cfsctl mount --fuse (4004-4006): a source tree
# with every kind of file, a walk that compares a mount with it, and the
# checks that a FUSE mount went away with its daemon.
. "$TESTS_DIR/lib/buildtree.sh"

[ -c /dev/fuse ] || skip "no /dev/fuse on this host: FUSE cannot be tested here"
command -v fusermount3 >/dev/null || skip "no fusermount3 (Debian's fuse3, which make deps installs)"

WALK=$TESTS_DIR/lib/treewalk.py
# a test that fails leaves no mount behind it
trap 'awk -v t="$T/" '"'"'index($2, t) == 1 && $3 ~ /^fuse/ { print $2 }'"'"' /proc/mounts |
	xargs -r -n 1 umount -l 2>/dev/null; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)

# fuse_tree DIR: make_tree's tree (without its 5 GiB sparse file) and
# more: content over many blocks, a file only its owner may read, an ACL.
fuse_tree() {
	make_tree "$1" nosparse
	head -c 300000 /dev/urandom >"$1/blocks"
	ln "$1/blocks" "$1/sticky/blocks-link"
	printf 'secret\n' >"$1/secret"
	chown 1234:5678 "$1/secret"
	chmod 0600 "$1/secret"
	printf 'acl\n' >"$1/acl"
	setfacl -m u:65534:--- "$1/acl" || fail "setfacl on $1/acl"
	mkdir -m 0700 "$1/private"
	printf 'p\n' >"$1/private/inside"
}

# walk_eq SRC MNT [CMD...]: the walk of MNT equals SRC's, both walked by CMD
walk_eq() {
	local src=$1 mnt=$2
	shift 2
	"$@" python3 "$WALK" "$src" >"$T/walk.src" 2>&1 || fail "walking '$src' failed: $(tail -n 3 "$T/walk.src")"
	"$@" python3 "$WALK" "$mnt" >"$T/walk.mnt" 2>&1 || fail "walking '$mnt' failed: $(tail -n 3 "$T/walk.mnt")"
	diff -u "$T/walk.src" "$T/walk.mnt" >"$T/walk.diff" || {
		head -n 40 "$T/walk.diff"
		fail "the mount '$mnt' shows another tree than '$src'"
	}
}

# fuse_pid MNT: the daemon serving MNT (empty: none)
fuse_pid() {
	local p
	for p in $(pgrep -x cfsctl); do
		{ tr '\0' '\n' <"/proc/$p/cmdline"; } 2>/dev/null | grep -qxF -- "$1" && echo "$p"
	done
}

# running PID: PID is a process that has not exited (a zombie has: its
# reaper, which may be any subreaper above the test, reaps it when it will)
running() {
	local st
	st=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
	st=${st##*) }
	[ "${st%% *}" != Z ]
}

# fuse_gone MNT [PID]: within 10 s MNT is no mount (in this mount
# namespace), the daemon PID has exited, and no cfsctl serves MNT
fuse_gone() {
	local i
	for i in $(seq 100); do
		if ! grep -q " $1 fuse" /proc/mounts && { [ -z "${2:-}" ] || ! running "$2"; } &&
			[ -z "$(fuse_pid "$1")" ]; then
			return 0
		fi
		sleep 0.1
	done
	grep " $1 " /proc/mounts
	fail "'$1' is still mounted, or a daemon for it still runs"
}
