#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Small things a newcomer meets: a directory of names given where a name
# is wanted is said to be one; one object is "1 object"; an ostree SOURCE
# without ':REF' is a usage error (2); an unsigned local commit checked
# with --gpg-homedir is told to be signed with ostree gpg-sign, not to set
# gpg-verify=false in a remote's config.
. "$(dirname "$0")/../lib/common.sh"

R=$T/repo
mkdir -p "$T/src"
echo one >"$T/src/f"
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/src" app/1
for verb in verify inspect; do
	expect_exit 1 "$CFSCTL" "$verb" --repo "$R" app
	assert_contains "$T/err" "'app' in repository '$R' is a directory of names, not a name: give one of the names in it"
done

# One object, said in the singular.
expect_exit 0 "$CFSCTL" build --digest-store "$T/s" "$T/src" "$T/one.img"
expect_exit 0 "$CFSCTL" verify --basedir "$T/s" "$T/one.img"
assert_contains "$T/out" "^verify: 1 object in 1 basedir: 1 ok"
expect_exit 0 "$CFSCTL" gc --basedir "$T/s" "$T/one.img"
assert_contains "$T/out" "^kept: 1 object, "
assert_contains "$T/out" "^removed: 0 objects, 0 temporaries, "
echo two >"$T/src/g"
expect_exit 0 "$CFSCTL" build --digest-store "$T/s" "$T/src" "$T/two.img"
expect_exit 0 "$CFSCTL" gc --basedir "$T/s" "$T/one.img"
assert_contains "$T/out" "^removed: 1 object, 0 temporaries, "
mkdir "$T/s/odd"
expect_exit 0 "$CFSCTL" gc --basedir "$T/s" "$T/two.img"
assert_contains "$T/out" "^left alone: 1 entry that is not an object$"
assert_contains "$T/out" "^missing: 1 object an image references is not in the store$"

# REPO:REF, or a usage error.
for verb in verify build mount; do
	args=("$T/ostree")
	[ $verb = verify ] || args+=("$T/x")
	expect_exit 2 "$CFSCTL" "$verb" --from-ostree "${args[@]}"
	assert_contains "$T/err" "'$T/ostree' is not REPO:REF"
done

command -v ostree >/dev/null || skip "no ostree (Debian package ostree): the signature case is not run"
command -v gpg >/dev/null || skip "no gpg (Debian package gnupg): the signature case is not run"
O=$T/ostree
ostree --repo="$O" init --mode=bare-user >/dev/null || fail "ostree init"
ostree --repo="$O" commit -b main --tree=dir="$T/src" >/dev/null || fail "ostree commit"
mkdir -m 700 "$T/gpg"
trap 'gpgconf --homedir "$T/gpg" --kill all 2>/dev/null; chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
gpg --homedir "$T/gpg" --batch --passphrase '' --quick-gen-key k@example.com ed25519 sign never \
	>/dev/null 2>&1 || fail "gpg --quick-gen-key"
expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/gpg" "$O:main"
assert_contains "$T/err" "no signatures found: sign it with ostree gpg-sign --repo=REPO COMMIT KEY-ID"
! grep -q 'remote config' "$T/err" || fail "a remote's advice for a local commit: $(cat "$T/err")"
