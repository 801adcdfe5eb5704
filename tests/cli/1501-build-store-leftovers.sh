#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A build killed earlier leaves temporaries in the digest store. A later
# build whose process happens to get the same PID (after a reboot, in a
# container) must not trip over one: it picks another name and succeeds,
# and the leftover is not taken for an object. The leftovers of a build
# that died are removed by the next one. A build names its temporaries only
# where it cannot use unnamed files: its builds run with too few open files.
. "$(dirname "$0")/../lib/common.sh"
command -v fsverity >/dev/null || skip "needs the fsverity tool (Debian package fsverity)"

mkdir "$T/src" "$T/store"
printf 'one\n' >"$T/src/a"
printf 'two\n' >"$T/src/b"
# few_fds and bash -c exec cfsctl, so $$ is the PID the build runs as.
few_fds bash -c 'for k in 0 1 2; do echo junk >"$1/.tmp-$$-$k"; done; exec "$2" build --threads=1 --digest-store="$1" "$3" "$4"' \
	_ "$T/store" "$CFSCTL" "$T/src" "$T/img" >"$T/out" 2>"$T/err" ||
	{ cat "$T/err"; fail "build tripped over a leftover temporary in the store"; }
[ -s "$T/img" ] || fail "no image written"
for f in a b; do
	d=$(fsverity digest --compact "$T/src/$f")
	cmp "$T/src/$f" "$T/store/${d:0:2}/${d:2}" || fail "object of $f missing or wrong"
done
# The leftovers are still there (not ours to remove), and only they.
assert_eq 3 "$(find "$T/store" -maxdepth 1 -name '.tmp-*' | wc -l)" "leftover temporaries"
assert_eq 2 "$(find "$T/store" -type f ! -name '.tmp-*' | wc -l)" "objects in the store"

# Leftovers of a build that died (its PID no longer runs) are removed by the
# next build; another live process's temporaries are not.
dead=$(sh -c 'echo $$')
echo junk >"$T/store/.tmp-$dead-0"
sleep 300 &
live=$!
echo junk >"$T/store/.tmp-$live-0"
few_fds "$CFSCTL" build --digest-store="$T/store" "$T/src" "$T/img2" 2>"$T/err"
rc=$?
kill "$live"
[ "$rc" -eq 0 ] || { cat "$T/err"; fail "second build failed"; }
[ ! -e "$T/store/.tmp-$dead-0" ] || fail "the dead build's temporary is still in the store"
[ -e "$T/store/.tmp-$live-0" ] || fail "a live process's temporary was removed"
