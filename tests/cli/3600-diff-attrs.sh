#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl diff: images that differ in one attribute of one path give exactly
# that one change (and a summary); identical images give exit 0 and no
# output at all; added and removed subtrees list every path below them;
# --json, alone or with --stat, is a document that parses.
. "$(dirname "$0")/../lib/common.sh"
"$CFSCTL" diff --help >/dev/null 2>&1 || skip "cfsctl diff is not available"

D1=1111111111111111111111111111111111111111111111111111111111111111
D2=2222222222222222222222222222222222222222222222222222222222222222
base='/ 0 40755 3 0 0 0 10.0 - - -
/d 0 40755 2 0 0 0 10.0 - - -
/d/f 5 100644 1 0 0 0 10.0 - - '$D1' user.k=v
/h 5 100644 1 0 0 0 10.0 - - '$D2'
/l 1 120777 1 0 0 0 10.0 d - -
/c 0 20644 1 0 0 259 10.0 - - -'
printf '%s\n' "$base" >"$T/base.dump"
"$CFSCTL" build --from-dump "$T/base.dump" "$T/base.img" || fail "build failed"

expect_exit 0 "$CFSCTL" diff "$T/base.img" "$T/base.img"
assert_eq "" "$(cat "$T/out" "$T/err")" "output for identical images"

# sed expression on the base dump | the one line diff must print
n=0
while IFS='#' read -r edit want; do
	n=$((n + 1))
	printf '%s\n' "$base" | sed -E "$edit" >"$T/v$n.dump"
	"$CFSCTL" build --from-dump "$T/v$n.dump" "$T/v$n.img" || fail "build of variant $n ($edit)"
	expect_exit 1 "$CFSCTL" diff "$T/base.img" "$T/v$n.img"
	head -n -2 "$T/out" >"$T/lines"
	assert_eq "$want" "$(cat "$T/lines")" "diff for '$edit'"
	assert_contains "$T/out" "^[0-9]+ added, [0-9]+ removed, [0-9]+ changed$"
	assert_contains "$T/out" "^objects: [0-9]+ in both, [0-9]+ only in OLD, [0-9]+ only in NEW; [0-9]+ bytes to fetch to have NEW$"
done <<TABLE
s|^/d/f 5 100644|/d/f 5 100600|#M /d/f mode=0644->0600
s|^/d/f 5 100644 1 0 0|/d/f 5 100644 1 7 8|#M /d/f owner=0:0->7:8
s|^(/h .*) 10.0 |\1 10.5 |#M /h mtime=10.0->10.5
s|^/h 5 100644 1 0 0 0 10.0 - - $D2|/h 6 100644 1 0 0 0 10.0 - - $D2|#M /h content size=5->6
s|$D2|$D1|#M /h content digest=2222222222222222->1111111111111111
s| user.k=v| user.k=w|#M /d/f xattrs=~user.k
s| user.k=v| user.k=v user.n=1|#M /d/f xattrs=+user.n
s| user.k=v||#M /d/f xattrs=-user.k
s|^/l 1 120777 1 0 0 0 10.0 d|/l 1 120777 1 0 0 0 10.0 h|#M /l target=d->h
s|^/c 0 20644 1 0 0 259|/c 0 20644 1 0 0 260|#M /c rdev=1,3->1,4
s|^/l 1 120777 1 0 0 0 10.0 d - -|/l 0 100644 1 0 0 0 10.0 - - -|#M /l type=symlink->regular
TABLE

# /h becomes a second name of /d/f: /d/f's grouping changes; /h takes on
# the inode of /d/f, with its content and xattrs.
printf '%s\n' "$base" | sed -E "s|^/h .*|/h 5 @100644 1 0 0 0 10.0 /d/f - -|" >"$T/link.dump"
"$CFSCTL" build --from-dump "$T/link.dump" "$T/link.img" || fail "build failed"
expect_exit 1 "$CFSCTL" diff "$T/base.img" "$T/link.img"
assert_eq "M /d/f hardlink=none->/d/f[2]
M /h content digest=2222222222222222->1111111111111111 hardlink=none->/d/f[2] xattrs=+user.k" "$(head -n -2 "$T/out")" "hardlink grouping"

# Added and removed subtrees.
printf '%s\n' "$base" '/n 0 40755 2 0 0 0 10.0 - - -' '/n/x 0 100644 1 0 0 0 10.0 - - -' >"$T/add.dump"
"$CFSCTL" build --from-dump "$T/add.dump" "$T/add.img" || fail "build failed"
expect_exit 1 "$CFSCTL" diff "$T/base.img" "$T/add.img"
assert_eq "+ /n
+ /n/x" "$(head -n 2 "$T/out")" "added subtree"
expect_exit 1 "$CFSCTL" diff "$T/add.img" "$T/base.img"
assert_eq "- /n
- /n/x" "$(head -n 2 "$T/out")" "removed subtree"
assert_contains "$T/out" "^0 added, 2 removed, 0 changed$"

# Objects: only in NEW are fetched.
expect_exit 1 "$CFSCTL" diff --stat "$T/base.img" "$T/v5.img"
assert_eq "0 added, 0 removed, 1 changed
objects: 1 in both, 1 only in OLD, 0 only in NEW; 0 bytes to fetch to have NEW" "$(cat "$T/out")" "--stat"
expect_exit 1 "$CFSCTL" diff --stat "$T/v5.img" "$T/base.img"
assert_contains "$T/out" "^objects: 1 in both, 0 only in OLD, 1 only in NEW; 5 bytes to fetch to have NEW$"
# --json --stat: the counts alone, as a document that parses.
expect_exit 1 "$CFSCTL" diff --json --stat "$T/v5.img" "$T/base.img"
python3 - "$T/out" <<'PY' || fail "diff --json --stat"
import json, sys
d = json.load(open(sys.argv[1]))
assert "changes" not in d and d["changed"] == 1 and d["fetch_bytes"] == 5, d
assert d["objects"] == {"both": 1, "only_old": 0, "only_new": 1}, d
PY

# JSON: the same change, both sides in full.
expect_exit 1 "$CFSCTL" diff --json "$T/base.img" "$T/v1.img"
python3 - "$T/out" <<'PY' || fail "diff --json"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["changes"]) == 1, d
c = d["changes"][0]
assert c["change"] == "M" and c["path"] == "/d/f" and c["what"] == ["mode"], c
assert c["old"]["mode"] == "0644" and c["new"]["mode"] == "0600", c
assert d["changed"] == 1 and d["added"] == 0 and d["removed"] == 0, d
PY

# Names are escaped as in dumpfiles.
printf '%s\n' "$base" '/with\x20space 0 100644 1 0 0 0 10.0 - - -' >"$T/esc.dump"
"$CFSCTL" build --from-dump "$T/esc.dump" "$T/esc.img" || fail "build failed"
expect_exit 1 "$CFSCTL" diff "$T/base.img" "$T/esc.img"
assert_eq '+ /with\x20space' "$(head -n 1 "$T/out")" "escaped name"

# Errors exit 2.
expect_exit 2 "$CFSCTL" diff "$T/base.img"
expect_exit 2 "$CFSCTL" diff "$T/base.img" "$T/nothing"
assert_contains "$T/err" "^cfsctl: diff: '$T/nothing': No such file or directory$"
head -c 100 "$T/base.img" >"$T/short.img"
expect_exit 2 "$CFSCTL" diff "$T/base.img" "$T/short.img"
exit 0
