#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl verify and diff on an image truncated at every length and with
# every byte set to 0xff: verify exits 0 or 1 and diff 0, 1 or 2, never
# crashing (the sanitizer build runs this too); a truncated image is always
# an error for verify.
# test: early (it tries thousands of damaged images)
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" verify --help >/dev/null 2>&1 || skip "cfsctl verify is not available"

"$CFSCTL" build --from-dump "$TOP/tests/data/verify/base.dump" "$T/base.img" || fail "build failed"
# The zeros that pad the image to whole sectors hold nothing: cut them,
# so that every truncation below cuts something the image needs.
truncate -s "$(python3 -c 'import sys; print(len(open(sys.argv[1], "rb").read().rstrip(b"\0")))' "$T/base.img")" "$T/base.img"
python3 - "$T/base.img" "$T/v" <<'PY'
import os, sys
data = open(sys.argv[1], "rb").read()
os.mkdir(sys.argv[2])
for n in range(len(data)):
    open(f"{sys.argv[2]}/trunc-{n}", "wb").write(data[:n])
    if data[n] != 0xff:
        open(f"{sys.argv[2]}/ff-{n}", "wb").write(data[:n] + b"\xff" + data[n + 1:])
PY
k=$(sample_variants "$T/v")
bad=0 total=0 flagged=0
for f in "$T"/v/*; do
	total=$((total + 1))
	"$CFSCTL" verify "$f" >"$T/out" 2>"$T/err"
	rc=$?
	[ $rc -le 1 ] || { echo "verify $f: exit $rc: $(head -c 300 "$T/err")"; bad=$((bad + 1)); }
	[ $rc -eq 1 ] && flagged=$((flagged + 1))
	case $f in */trunc-*) [ $rc -eq 1 ] || { echo "verify passed truncated $f"; bad=$((bad + 1)); } ;; esac
	"$CFSCTL" diff "$T/base.img" "$f" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -le 2 ] || { echo "diff $f: exit $rc: $(head -c 300 "$T/err")"; bad=$((bad + 1)); }
done
echo "$total variants, $flagged with errors"
[ $bad -eq 0 ] || fail "$bad variants misbehaved"
[ $total -gt $((500 / k)) ] || fail "only $total variants"
exit 0
