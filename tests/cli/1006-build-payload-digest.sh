#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A backing path that encodes a digest (with or without an extension, as in
# OSTree's "xx/<62 hex>.file") gives the file that digest, stored through
# DIGEST_FROM_PAYLOAD; a path that encodes none gives no digest.
. "$(dirname "$0")/../lib/common.sh"

d=9e39c77a100ccf4d8595f912c9ad9a7fe185eace379ec03cd8cd89961d5ba820
cat > "$T/in.dump" <<EOD
/ 4096 40755 2 0 0 0 0.0 - - -
/ext 5 100644 1 0 0 0 0.0 ${d:0:2}/${d:2}.file - -
/plain 5 100644 1 0 0 0 0.0 ${d:0:2}/${d:2} - -
/other 5 100644 1 0 0 0 0.0 some/file - -
EOD
expect_exit 0 "$CFSCTL" build --from-dump "$T/in.dump" "$T/img"
for f in ext plain; do
	expect_exit 0 "$CFSCTL" inspect stat "$T/img" /$f
	assert_contains "$T/out" "^flags: .*DIGEST_FROM_PAYLOAD"
	assert_contains "$T/out" "^digest: +$d"
done
expect_exit 0 "$CFSCTL" inspect stat "$T/img" /other
grep -q '^digest:' "$T/out" && fail "/other got a digest from a path that encodes none"
expect_exit 0 "$CFSCTL" inspect dump "$T/img"
assert_contains "$T/out" "^/ext 5 100644 1 0 0 0 0.0 ${d:0:2}/${d:2}.file - $d\$"
exit 0
