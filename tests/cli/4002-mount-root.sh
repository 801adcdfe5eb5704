# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfs-mount-root, the initramfs's mounts (boot/mount-root.c), on the host:
# its arguments, and in a private mount namespace the steps that need no
# fs-verity: the device moved off the root and made writable, a missing
# image, an image the mount refuses (the host's files have no fs-verity),
# a second run after a failed one, and the root left with nothing mounted.
# The boots in vm/boot-test.sh mount real images with it.
. "$(dirname "$0")/../lib/common.sh"

MR=$(dirname "$CFSCTL")/cfs-mount-root
[ -x "$MR" ] || skip "no cfs-mount-root beside $CFSCTL (make builds it)"
D=$(printf '0%.0s' $(seq 64))

expect_exit 2 "$MR"
assert_contains "$T/err" '^usage: cfs-mount-root \[--repo=PATH\] \[--init=PATH\] DIGEST ROOT DEVICE$'
expect_exit 2 "$MR" 0123 /root /run/dev
assert_contains "$T/err" "^cfs-mount-root: the digest must be 64 hex digits: '0123'$"
expect_exit 2 "$MR" "$D" root /run/dev
assert_contains "$T/err" 'must be absolute paths'
expect_exit 2 "$MR" --repo=cfs "$D" /root /run/dev
expect_exit 2 "$MR" --bogus "$D" /root /run/dev
assert_contains "$T/err" "unknown option '--bogus'"
[ -s "$T/out" ] && fail "a usage error printed steps: $(cat "$T/out")"

[ "$(id -u)" = 0 ] || skip "the mount namespace needs root"
unshare -m --propagation private true 2>/dev/null || skip "unshare -m is not allowed here"

# An EROFS image in a repository on a tmpfs "device", mounted read-only on
# $T/root as initramfs-tools' local script leaves it.
mkdir -p "$T/tree/etc" "$T/tree/var/lib" "$T/tree/sbin" "$T/root" "$T/run"
printf 'init\n' > "$T/tree/sbin/init"
erofs=$("$CFSCTL" build --format=erofs --digest-store="$T/objects" --print-digest "$T/tree" "$T/img") ||
	fail "cfsctl build failed"
cat > "$T/inner.sh" <<'EOF'
set -u
T=$1 MR=$2 D=$3 E=$4
mount -t tmpfs -o size=64m dev "$T/root" || exit 9
mkdir -p "$T/root/cfs/images" && cp -a "$T/objects" "$T/root/cfs/objects" && cp "$T/img" "$T/root/cfs/images/$E"
mount -o remount,ro,nosuid "$T/root" || exit 9
step() { # NAME ARGS...: stdout, stderr and status of one run
	local n=$1
	shift
	"$MR" "$@" > "$T/$n.out" 2> "$T/$n.err"
	echo $? > "$T/$n.rc"
}
step missing --repo=/cfs "$D" "$T/root" "$T/run/cfs/device"
mountpoint -q "$T/run/cfs/device" && echo moved > "$T/moved"
mountpoint -q "$T/root" && echo mounted > "$T/root-after-missing"
findmnt -n -o OPTIONS "$T/run/cfs/device" > "$T/device-options"
step refused --repo=/cfs "$E" "$T/root" "$T/run/cfs/device"
mountpoint -q "$T/root" && echo mounted > "$T/root-after-refused"
findmnt -n -o TARGET "$T/run/cfs/device" | wc -l > "$T/device-mounts"
exit 0
EOF
unshare -m --propagation private bash "$T/inner.sh" "$T" "$MR" "$D" "$erofs" ||
	fail "the namespace's setup failed ($?)"

# A missing image: the device is moved and writable (its other flags kept),
# and the step the script reads is "device" alone.
assert_eq 1 "$(cat "$T/missing.rc")" "cfs-mount-root's status for a missing image"
assert_eq device "$(cat "$T/missing.out")" "the steps done before a missing image"
assert_contains "$T/missing.err" "^cfs-mount-root: '$T/run/cfs/device/cfs/images/$D': No such file or directory$"
[ -f "$T/moved" ] || fail "the device was not moved to $T/run/cfs/device"
[ -f "$T/root-after-missing" ] && fail "something stayed mounted on the root after a missing image"
assert_contains "$T/device-options" '^rw,nosuid'

# The image the kernel refuses (no fs-verity here): the format is printed
# before, nothing is left on the root, and the device, already moved by the
# first run, is not moved again.
assert_eq 1 "$(cat "$T/refused.rc")" "cfs-mount-root's status for a refused image"
assert_eq "device
format EROFS" "$(cat "$T/refused.out")" "the steps done before the refused mount"
assert_contains "$T/refused.err" "^cfs-mount-root: measuring '$T/run/cfs/device/cfs/images/$erofs': "
assert_eq 1 "$(wc -l < "$T/refused.err")" "lines of cfs-mount-root's message for the refused mount"
[ -f "$T/root-after-refused" ] && fail "something stayed mounted on the root after a refused image"
assert_eq 1 "$(cat "$T/device-mounts")" "mounts on $T/run/cfs/device after two runs"
exit 0
