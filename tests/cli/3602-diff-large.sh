#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl diff on two images of a whole distribution (64k files, from the
# shared test data beside the checkout): an image against itself is empty;
# an image against a copy with a few changes lists exactly those. The time
# taken is printed for the log (benchmarks measure it, this test does not).
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" diff --help >/dev/null 2>&1 || skip "cfsctl diff is not available"
data=$TOP/../shared/data/cs9-x86_64-developer.dump.gz
[ -r "$data" ] || skip "no shared test data at ../shared/data/ beside the checkout"

gzip -dc "$data" >"$T/a.dump"
"$CFSCTL" build --from-dump "$T/a.dump" "$T/a.img" || fail "build failed"
# three changes: one file's mode, one path removed, one added
python3 - "$T/a.dump" "$T/b.dump" <<'PY'
import sys
lines = open(sys.argv[1], "rb").read().split(b"\n")
out, changed, removed = [], None, None
for line in lines:
    f = line.split(b" ")
    if len(f) > 10 and changed is None and f[2] == b"100644":
        f[2] = b"100600"; changed = f[0]; line = b" ".join(f)
    elif len(f) > 10 and removed is None and changed is not None and f[2].startswith(b"100") and not f[2].startswith(b"@") and f[3] == b"1":
        removed = f[0]; continue
    out.append(line)
out.insert(1, b"/zz-added 0 100644 1 0 0 0 0.0 - - -")
open(sys.argv[2], "wb").write(b"\n".join(out))
print(changed.decode(errors="replace"), removed.decode(errors="replace"))
PY
"$CFSCTL" build --from-dump "$T/b.dump" "$T/b.img" || fail "build failed"

start=$(date +%s.%N)
expect_exit 0 "$CFSCTL" diff "$T/a.img" "$T/a.img"
mid=$(date +%s.%N)
expect_exit 1 "$CFSCTL" diff "$T/a.img" "$T/b.img"
end=$(date +%s.%N)
echo "diff of identical images: $(echo "$mid - $start" | bc) s; of changed ones: $(echo "$end - $mid" | bc) s"
cat "$T/out"
assert_contains "$T/out" "^M .* mode=0644->0600$"
assert_contains "$T/out" "^- "
assert_contains "$T/out" "^\+ /zz-added$"
assert_contains "$T/out" "^1 added, 1 removed, 1 changed$"
exit 0
