#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl lazy --stats FILE writes FILE through a temporary beside it that no
# one can plant in advance: with a symlink at FILE.tmp.PID (PID the daemon's,
# known here because the daemon is exec'd) pointing to another file, that
# file is left as it was, and FILE holds the counts.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
trap 'lazy_stop; umount "$T/mnt" 2>/dev/null; stop_servers; rm -rf "$T"' EXIT

make_source "$T/src" 4 0 0
make_image "$T/src" "$T/a.img" "$T/served"
first=$(store_files "$T/served" | head -n 1)
mkdir -p "$T/mnt" "$T/pub"
echo "precious" >"$T/victim"

# The symlink the daemon's temporary would have had as its name, made by
# the shell that then becomes the daemon.
lazy_start "$T/mnt" sh -c 'ln -s "$0" "$1.tmp.$$" && shift && exec "$@"' "$T/victim" "$T/pub/stats.json" \
	"$CFSCTL" lazy --store "$T/store" --url "file://$T/served" --stats "$T/pub/stats.json" "$T/mnt"
pid=$LAZY_PID
[ -L "$T/pub/stats.json.tmp.$pid" ] || fail "the planted symlink is not there"
cmp "$T/mnt/$first" "$T/served/$first" || fail "'$first' through the mount differs"
for i in $(seq 50); do
	[ -e "$T/pub/stats.json" ] && break
	sleep 0.1
done
lazy_stop
assert_eq 0 "$LAZY_RC" "exit status after SIGTERM"
assert_eq "precious" "$(cat "$T/victim")" "the symlink's target"
assert_eq 1 "$(json_get "$T/pub/stats.json" fetched)" "fetched in --stats FILE"
[ ! -L "$T/pub/stats.json" ] && [ -f "$T/pub/stats.json" ] || fail "--stats FILE is not a regular file"
# no temporary of ours is left beside it (the planted symlink is the attacker's)
assert_eq "" "$(cd "$T/pub" && ls | grep -v -x -e stats.json -e "stats.json.tmp.$pid" || true)" \
	"files left beside --stats FILE"
