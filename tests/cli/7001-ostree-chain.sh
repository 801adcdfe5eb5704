#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The signed chain of an ostree commit: build --commit-digest writes a new
# commit of the same tree with ostree.composefs.digest.v0 (parent, subject,
# body, timestamp and metadata kept), the user signs it with ostree
# gpg-sign, and verify --from-ostree checks the signature by a key of
# --gpg-homedir, every object, and the digest against the image rebuilt
# from the commit; each refusal names the link that failed.
. "$(dirname "$0")/../lib/common.sh"
command -v ostree >/dev/null || skip "no ostree (Debian package ostree)"
command -v gpg >/dev/null || skip "no gpg (Debian package gnupg)"

R=$T/repo
mkdir -p "$T/src/d"
echo one >"$T/src/d/f"
head -c 70000 /dev/urandom >"$T/src/big"
ostree --repo="$R" init --mode=bare-user || fail "ostree init"
ostree --repo="$R" commit -b main --tree=dir="$T/src" -s first >/dev/null || fail "first commit"
echo two >"$T/src/d/g"
ostree --repo="$R" commit -b main --tree=dir="$T/src" -s second -m "the body" \
	--add-metadata-string=version=1.2 >/dev/null || fail "second commit"
old=$(ostree --repo="$R" rev-parse main)
parent=$(ostree --repo="$R" rev-parse "main^")

# a GnuPG home of one key without passphrase, and another one; their
# gpg-agents stop with the test
trap 'for h in "$T/signer" "$T/stranger"; do gpgconf --homedir "$h" --kill all 2>/dev/null; done
chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
for who in signer stranger; do
	mkdir -m 700 "$T/$who"
	gpg --homedir "$T/$who" --batch --passphrase '' --quick-gen-key "$who@example.com" \
		ed25519 sign never >/dev/null 2>&1 || fail "gpg --quick-gen-key $who"
done

# no digest yet
expect_exit 1 "$CFSCTL" verify --from-ostree "$R:main"
assert_contains "$T/err" "has no ostree.composefs.digest.v0"
assert_contains "$T/err" "link 3, the digest in the commit failed"

expect_exit 2 "$CFSCTL" build --from-ostree --commit-digest "$R:main" "$T/v1.img"
assert_contains "$T/err" "needs --format=erofs"
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest "$R:main" "$T/img"
new=$(cat "$T/out")
assert_eq "$new" "$(ostree --repo="$R" rev-parse main)" "main moved to the new commit"
[ "$new" != "$old" ] || fail "no new commit"
assert_eq "$parent" "$(ostree --repo="$R" rev-parse "main^")" "parent of the new commit"
ostree --repo="$R" show main >"$T/show" || fail "ostree show"
assert_contains "$T/show" "second"
assert_contains "$T/show" "the body"
ostree --repo="$R" show "$old" | grep '^Date' >"$T/d1"
grep '^Date' "$T/show" >"$T/d2"
cmp "$T/d1" "$T/d2" || fail "timestamp of the new commit"
assert_eq "'1.2'" "$(ostree --repo="$R" show main --print-metadata-key=version)" "metadata kept"
want=$(fsverity digest --compact "$T/img")
got=$(ostree --repo="$R" show main --print-metadata-key=ostree.composefs.digest.v0 |
	tr -d '[], ' | sed 's/^byte//; s/0x//g')
assert_eq "$want" "$got" "the digest in the new commit"
# the same tree: the new commit's image is the image
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree "$R:main" "$T/img2"
cmp "$T/img" "$T/img2" || fail "image of the new commit differs"
# once more on the new commit: the same commit again (idempotent)
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest "$R:main" "$T/img3"
assert_eq "$new" "$(cat "$T/out")" "a second --commit-digest"

# REF a checksum: a new commit, and no branch moves
ostree --repo="$R" commit -b other --tree=ref=main -s third >/dev/null || fail "third commit"
third=$(ostree --repo="$R" rev-parse other)
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest "$R:$third" "$T/img4"
bysum=$(cat "$T/out")
[[ $bysum =~ ^[0-9a-f]{64}$ ]] && [ "$bysum" != "$third" ] || fail "commit by checksum: '$bysum'"
assert_eq "$third" "$(ostree --repo="$R" rev-parse other)" "branch other after a commit by checksum"
expect_exit 0 "$CFSCTL" verify --from-ostree "$R:$bysum"

# without --gpg-homedir: the objects and the digest
expect_exit 0 "$CFSCTL" verify --from-ostree "$R:main"
assert_contains "$T/out" "^signature: not checked"
assert_contains "$T/out" "^digest: $want, as the commit says$"
assert_contains "$T/out" "^verify: OK$"

# unsigned, with --gpg-homedir
expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/signer" "$R:main"
assert_contains "$T/err" "link 1, the signature failed"
ostree --repo="$R" gpg-sign --gpg-homedir="$T/signer" main signer@example.com || fail "ostree gpg-sign"
expect_exit 0 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/signer" "$R:main"
fpr=$(gpg --homedir "$T/signer" --with-colons --list-keys | awk -F: '$1 == "fpr" { print $10; exit }')
assert_contains "$T/out" "^signature: good, by key $fpr"
assert_contains "$T/out" "^objects: [0-9]+ match their checksums$"
assert_contains "$T/out" "^verify: OK$"
# by a key the home does not hold
expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/stranger" "$R:main"
assert_contains "$T/err" "public key not found"
assert_contains "$T/err" "link 1, the signature failed"
# a home that is none
expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/nohome" "$R:main"
assert_contains "$T/err" "GnuPG home '.*nohome'"
echo "ok"
