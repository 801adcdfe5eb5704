#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# verify --from-ostree --gpg-homedir DIR trusts DIR's keys and no others:
# a commit signed only by a key of ostree's system keyrings (here the
# directory $OSTREE_GPG_HOME, which libostree reads as it reads
# /usr/share/ostree/trusted.gpg.d) is refused, naming the key. Those
# keyrings count only with --gpg-system-keyrings.
. "$(dirname "$0")/../lib/common.sh"
command -v ostree >/dev/null || skip "no ostree (Debian package ostree)"
command -v gpg >/dev/null || skip "no gpg (Debian package gnupg)"

R=$T/repo
mkdir -p "$T/src"
echo one >"$T/src/f"
ostree --repo="$R" init --mode=bare-user || fail "ostree init"
ostree --repo="$R" commit -b main --tree=dir="$T/src" -s first >/dev/null || fail "commit"
expect_exit 0 "$CFSCTL" build --format=erofs --from-ostree --commit-digest "$R:main" "$T/img"

# K1 in the trusted home; K2 signs, and is in the system keyring directory
trap 'for h in "$T/k1" "$T/k2"; do gpgconf --homedir "$h" --kill all 2>/dev/null; done
chmod -R u+rwX "$T" 2>/dev/null; rm -rf "$T"' EXIT
for k in k1 k2; do
	mkdir -m 700 "$T/$k"
	gpg --homedir "$T/$k" --batch --passphrase '' --quick-gen-key "$k@example.com" \
		ed25519 sign never >/dev/null 2>&1 || fail "gpg --quick-gen-key $k"
done
mkdir "$T/system"
gpg --homedir "$T/k2" --export >"$T/system/k2.gpg" || fail "gpg --export k2"
ostree --repo="$R" gpg-sign --gpg-homedir="$T/k2" main k2@example.com || fail "ostree gpg-sign"
k2=$(gpg --homedir "$T/k2" --with-colons --list-keys | awk -F: '$1 == "fpr" { print $10; exit }')
export OSTREE_GPG_HOME=$T/system

expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/k1" "$R:main"
assert_contains "$T/err" "signed by key $k2, which is not in the GnuPG home '$T/k1'"
assert_contains "$T/err" "link 1, the signature failed"
grep -q "verify: OK" "$T/out" && fail "verify said OK for a key outside --gpg-homedir"

# the key's own home, or the system keyrings when asked for
expect_exit 0 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/k2" "$R:main"
assert_contains "$T/out" "^signature: good, by key $k2"
expect_exit 0 "$CFSCTL" verify --from-ostree --gpg-system-keyrings "$R:main"
assert_contains "$T/out" "^signature: good, by key $k2"
assert_contains "$T/out" "^verify: OK"
expect_exit 0 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/k1" --gpg-system-keyrings "$R:main"
# without the key in the system keyrings, asking for them is no way round DIR
rm "$T/system/k2.gpg"
expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-system-keyrings "$R:main"
expect_exit 1 "$CFSCTL" verify --from-ostree --gpg-homedir "$T/k1" --gpg-system-keyrings "$R:main"
expect_exit 2 "$CFSCTL" verify --gpg-system-keyrings "$T/img"
assert_contains "$T/err" "--gpg-system-keyrings needs --from-ostree"
