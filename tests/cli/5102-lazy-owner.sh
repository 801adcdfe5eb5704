#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl lazy serves as the user who mounted it (docs/security.md): run by
# user nobody, it makes its store private (0700), and its FUSE filesystem
# shows each object owned by nobody, mode 0400, directories 0500, with the
# kernel checking readers against those modes (default_permissions);
# nobody reads through it what the mirror serves, and the fetched object
# lands in the store 0400.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
trap 'lazy_stop; umount "$T/u/mnt" 2>/dev/null; stop_servers; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
[ -c /dev/fuse ] || skip "no /dev/fuse on this host: FUSE cannot be tested here"
command -v fusermount3 >/dev/null || skip "no fusermount3 (Debian package fuse3): user nobody cannot mount FUSE"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody "$CFSCTL" --version >/dev/null 2>&1 || skip "cfsctl cannot be run as user nobody here"
chmod 0755 "$T"

make_source "$T/src" 4 1 64
make_image "$T/src" "$T/a.img" "$T/pub"
chmod -R a+rX "$T/pub" # a mirror: published on purpose
obj=$(cd "$T/pub" && find . -type f | sed 's|^\./||' | sort | head -n 1)
mkdir -p "$T/u/mnt"
chown -R 65534:65534 "$T/u"

lazy_start "$T/u/mnt" setpriv --reuid=65534 --regid=65534 --clear-groups \
	"$CFSCTL" lazy --store "$T/u/store" --url "file://$T/pub" "$T/u/mnt"
assert_eq 700 "$(stat -c %a "$T/u/store")" "mode of the store lazy made"
assert_eq "500 65534" "$(nobody stat -c '%a %u' "$T/u/mnt/${obj%%/*}")" "the FUSE directory"
assert_eq "400 65534" "$(nobody stat -c '%a %u' "$T/u/mnt/$obj")" "the FUSE object"
nobody cat "$T/u/mnt/$obj" >"$T/got" || fail "nobody could not read the object through the mount"
cmp -s "$T/got" "$T/pub/$obj" || fail "the object read through the mount differs"
assert_eq 400 "$(stat -c %a "$T/u/store/$obj")" "mode of the fetched object"
assert_eq 65534 "$(stat -c %u "$T/u/store/$obj")" "owner of the fetched object"
grep " $T/u/mnt fuse" /proc/mounts | grep -q default_permissions ||
	fail "the FUSE mount has no default_permissions: $(grep " $T/u/mnt " /proc/mounts)"
lazy_stop
echo "ok"
