#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl inspect ls and stat: ls -l style lines with escaped names, devices
# shown as major, minor, symlink targets, JSON that parses (a name that is
# not UTF-8 becomes an array of bytes, control bytes and DEL are escaped),
# and errors for missing paths.
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" build --help >/dev/null 2>&1 || skip "cfsctl build is not available"

# A dumpfile gives devices and owners without root.
cat >"$T/in.dump" <<'DUMP'
/ 0 40755 2 0 0 0 0.0 - - -
/dir 0 40700 2 1000 1000 0 1700000000.5 - - - user.k=v
/dir/bad\xffname 0 100644 1 0 0 0 0.0 - - -
/dir/del\x7fesc\x1b 0 100644 1 0 0 0 0.0 - - -
/dir/with\x20space 0 104755 1 0 0 0 0.0 - - -
/dir/null 0 20666 1 0 0 259 0.0 - - -
/dir/link 0 120777 1 0 0 0 0.0 ../some\x20where - -
DUMP
"$CFSCTL" build --from-dump "$T/in.dump" "$T/img" || fail "build failed"

expect_exit 0 "$CFSCTL" inspect ls "$T/img"
assert_eq 1 "$(wc -l <"$T/out")" "entries of /"
assert_contains "$T/out" '^drwx------ 2 1000 1000 0 2023-11-14 22:13:20 dir$'
expect_exit 0 "$CFSCTL" inspect ls "$T/img" /dir
assert_eq 5 "$(wc -l <"$T/out")" "entries of /dir"
assert_contains "$T/out" '^-rw-r--r-- 1 0 0 0 1970-01-01 00:00:00 bad\\xffname$'
assert_contains "$T/out" '^crw-rw-rw- 1 0 0 1, 3 1970-01-01 00:00:00 null$'
assert_contains "$T/out" '^lrwxrwxrwx 1 0 0 0 1970-01-01 00:00:00 link -> \.\./some\\x20where$'
assert_contains "$T/out" '^-rwsr-xr-x 1 0 0 0 1970-01-01 00:00:00 with\\x20space$'
# entries come in byte order
assert_eq "bad\\ del\\ link null with" "$(sed 's/.* 00:00:00 \(....\).*/\1/' "$T/out" | tr '\n' ' ' | sed 's/ $//')" "order"

expect_exit 0 "$CFSCTL" inspect ls --json "$T/img" /dir
python3 - "$T/out" <<'PY' || fail "ls JSON is wrong"
import json, sys
raw = open(sys.argv[1], "rb").read()
assert not [c for c in raw if (c < 0x20 and c != 0x0a) or c == 0x7f], raw
v = json.loads(raw)
names = [e["name"] for e in v]
assert names[0] == list(b"bad\xffname"), names
assert names[1:] == ["del\x7fesc\x1b", "link", "null", "with space"], names
null = v[3]
assert null["type"] == "chardev" and null["major"] == 1 and null["minor"] == 3, null
assert v[2]["target"] == "../some where"
assert v[4]["permissions"] == "4755"
PY
# a path that is not a directory lists that entry alone
expect_exit 0 "$CFSCTL" inspect ls "$T/img" /dir/link
assert_eq 1 "$(wc -l <"$T/out")" "lines for a symlink"

expect_exit 0 "$CFSCTL" inspect stat "$T/img" /dir
assert_contains "$T/out" '^type: +directory$'
assert_contains "$T/out" '^mode: +040700 \(drwx------\)$'
assert_contains "$T/out" '^uid: +1000$'
assert_contains "$T/out" '^mtime: +1700000000\.000000005 '
assert_contains "$T/out" '^  user\.k=v$'
expect_exit 0 "$CFSCTL" inspect stat --json "$T/img" /dir/null
python3 - "$T/out" <<'PY' || fail "stat JSON is wrong"
import json, sys
v = json.load(open(sys.argv[1]))
assert v["path"] == "/dir/null" and v["rdev"] == 259 and v["xattrs"] == []
PY
expect_exit 0 "$CFSCTL" inspect stat --json "$T/img" /dir
python3 -c 'import json,sys; v=json.load(open(sys.argv[1])); assert v["xattrs"]==[{"key":"user.k","value":"v"}], v' "$T/out" ||
	fail "stat JSON xattrs"

expect_exit 1 "$CFSCTL" inspect stat "$T/img" /dir/nope
assert_contains "$T/err" "^cfsctl: inspect: '$T/img': '/dir/nope': No such file or directory$"
expect_exit 1 "$CFSCTL" inspect ls "$T/img" /dir/link/x
assert_contains "$T/err" "Not a directory$"
expect_exit 2 "$CFSCTL" inspect stat "$T/img"
expect_exit 2 "$CFSCTL" inspect ls "$T/img" / extra
exit 0
