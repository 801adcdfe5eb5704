#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Round trips: build a tree, write the image as a dumpfile with
# 'cfsctl inspect dump', build that dumpfile, and get the identical image;
# then dump the second image and get the identical dumpfile.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/buildtree.sh"
[ "$(id -u)" -eq 0 ] || skip "needs root (devices, trusted.* xattrs)"
"$CFSCTL" inspect --help >/dev/null 2>&1 || skip "needs 'cfsctl inspect' to write dumps"

roundtrip() { # SOURCE NAME
	expect_exit 0 "$CFSCTL" build "$1" "$T/$2.img"
	expect_exit 0 "$CFSCTL" inspect dump "$T/$2.img"
	mv "$T/out" "$T/$2.dump"
	expect_exit 0 "$CFSCTL" build --from-dump "$T/$2.dump" "$T/$2-again.img"
	cmp "$T/$2.img" "$T/$2-again.img" || fail "$2: build -> dump -> build changed the image"
	expect_exit 0 "$CFSCTL" inspect dump "$T/$2-again.img"
	cmp "$T/$2.dump" "$T/out" || fail "$2: dump of the rebuilt image differs"
}

roundtrip "$TOP/examples/tree" example
make_tree "$T/src" nosparse
roundtrip "$T/src" tree
# Dump to stdin of build, as a pipeline.
"$CFSCTL" inspect dump "$T/tree.img" | "$CFSCTL" build --from-dump - "$T/pipe.img" ||
	fail "pipeline failed"
cmp "$T/tree.img" "$T/pipe.img" || fail "pipeline gives another image"
echo "ok"
