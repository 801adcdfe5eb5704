#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What build, verify and mount --from-ostree refuse, each with its cause
# named: a missing repository, ref or object, a partial commit, a digest
# key missing, of the wrong type or length, a digest that does not match,
# a changed object. A failed build leaves no image and no new commit.
. "$(dirname "$0")/../lib/common.sh"
command -v ostree >/dev/null || skip "no ostree (Debian package ostree)"

R=$T/repo
mkdir -p "$T/src/d"
echo one >"$T/src/d/f"
head -c 70000 /dev/urandom >"$T/src/big"
ostree --repo="$R" init --mode=bare-user || fail "ostree init"
ostree --repo="$R" commit -b main --tree=dir="$T/src" -s first >/dev/null || fail "commit"
c=$(ostree --repo="$R" rev-parse main)

refuse() { # CODE PATTERN CMD...: exit CODE, PATTERN on stderr, no image
	local code=$1 pattern=$2
	shift 2
	rm -f "$T/img"
	expect_exit "$code" "$@"
	assert_contains "$T/err" "$pattern"
	[ ! -e "$T/img" ] || fail "'$*' left an image"
}

refuse 1 "ostree repository '$T/none': no such directory" \
	"$CFSCTL" build --from-ostree "$T/none:main" "$T/img"
refuse 1 "opening ostree repository '$T/src'" "$CFSCTL" build --from-ostree "$T/src:main" "$T/img"
refuse 1 "ref 'nosuch' in '$R'" "$CFSCTL" build --from-ostree "$R:nosuch" "$T/img"
refuse 1 "commit 0{64} in '$R'" "$CFSCTL" build --from-ostree "$R:$(printf '0%.0s' {1..64})" "$T/img"
refuse 2 "is not REPO:REF" "$CFSCTL" build --from-ostree "$R" "$T/img"
refuse 1 "ref 'nosuch'" "$CFSCTL" verify --from-ostree "$R:nosuch"
refuse 2 "--gpg-homedir needs --from-ostree" "$CFSCTL" verify --gpg-homedir "$T" "$T/img"
refuse 2 "--commit-digest needs --from-ostree" "$CFSCTL" build --commit-digest "$T/src" "$T/img"

# the digest key: missing, of the wrong type, of the wrong length, wrong
ostree --repo="$R" commit -b nokey --tree=ref=main >/dev/null || fail "commit nokey"
refuse 1 "has no ostree.composefs.digest.v0" "$CFSCTL" verify --from-ostree "$R:nokey"
ostree --repo="$R" commit -b str --tree=ref=main \
	--add-metadata-string=ostree.composefs.digest.v0=abc >/dev/null || fail "commit str"
refuse 1 "ostree.composefs.digest.v0 has type 's', not 'ay'" "$CFSCTL" verify --from-ostree "$R:str"
ostree --repo="$R" commit -b short --tree=ref=main \
	--add-metadata='ostree.composefs.digest.v0=@ay [1, 2, 3]' >/dev/null || fail "commit short"
refuse 1 "ostree.composefs.digest.v0 is 3 bytes, not 32" "$CFSCTL" verify --from-ostree "$R:short"
zeros=$(printf '0,%.0s' {1..31})0
ostree --repo="$R" commit -b wrong --tree=ref=main \
	--add-metadata="ostree.composefs.digest.v0=@ay [$zeros]" >/dev/null || fail "commit wrong"
refuse 1 "says the image has digest 0{64}, but its image has [0-9a-f]{64}" \
	"$CFSCTL" verify --from-ostree "$R:wrong"
assert_contains "$T/err" "link 3, the digest in the commit failed"

# a good chain, then an object changed under it
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest "$R:main" "$T/good"
expect_exit 0 "$CFSCTL" verify --from-ostree "$R:main"
obj=$("$CFSCTL" inspect dump "$T/good" | awk '$1 == "/big" { print $9 }')
f=$R/objects/$obj
[ -f "$f" ] || fail "no object $f"
sum=${obj//\//}
sum=${sum%.file}
cp -a "$f" "$T/saved"
# the object may have fs-verity (immutable): replace it, user.ostreemeta kept
cp -a "$f" "$T/changed"
chmod u+w "$T/changed"
echo changed >>"$T/changed"
mv -f "$T/changed" "$f"
refuse 1 "file object $sum in '$R' does not match its checksum" \
	"$CFSCTL" verify --from-ostree "$R:main"
assert_contains "$T/err" "link 2, the objects failed"
# build trusts the repository (ostree keeps no size to check): its image
# differs, so the digest in the commit no longer matches it
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree "$R:main" "$T/img"
! cmp -s "$T/img" "$T/good" || fail "the image of a changed object is the same"
# a missing object
rm -f "$f"
refuse 1 "$sum" "$CFSCTL" build --from-ostree "$R:main" "$T/img"
refuse 1 "link 2, the objects failed" "$CFSCTL" verify --from-ostree "$R:main"
cp -a "$T/saved" "$f"
expect_exit 0 "$CFSCTL" verify --from-ostree "$R:main"

# a partial commit (an unfinished pull)
main=$(ostree --repo="$R" rev-parse main)
mkdir -p "$R/state" && touch "$R/state/$main.commitpartial"
refuse 1 "commit $main in '$R': partial commit" "$CFSCTL" build --from-ostree "$R:main" "$T/img"
refuse 1 "partial commit" "$CFSCTL" verify --from-ostree "$R:main"
rm "$R/state/$main.commitpartial"

# --commit-digest whose image cannot be written: no new commit
before=$(ostree --repo="$R" rev-parse nokey)
refuse 1 "'$T/nodir/img'" "$CFSCTL" build --format=erofs --from-ostree --commit-digest "$R:nokey" "$T/nodir/img"
assert_eq "$before" "$(ostree --repo="$R" rev-parse nokey)" "nokey after a failed image"
echo "ok"
