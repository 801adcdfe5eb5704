#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# What is not there is said by what it is: a docker-registry's 404 for a
# repository it lacks (NAME_UNKNOWN, which its tags/list says when the
# manifest's 404 does not) and for a tag a repository lacks
# (MANIFEST_UNKNOWN, with the tags it has) read differently; a tag an OCI
# layout lacks is said with the tags it has, a few at most; a 404 without
# the registry's error body stays "not found".
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
umask 022

mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
cat >"$T/spec.json" <<EOS
[{"tag": "v1", "layers": [["$T/L/1.tar", "gzip"]]},
 {"tag": "v2", "layers": [["$T/L/2.tar", "zstd"]]}]
EOS
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"

start_registry reg
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "http://$REG" cfs/test v1 >/dev/null || fail "pushing v1"
expect_exit 1 "$CFSCTL" pull --plain-http --repo "$T/r" "$REG/cfs/nosuch:v1" a
assert_eq "cfsctl: '$REG/cfs/nosuch:v1': HTTP 404: the registry has no such repository (NAME_UNKNOWN)" \
	"$(cat "$T/err")" "a repository the registry lacks"
expect_exit 1 "$CFSCTL" pull --plain-http --repo "$T/r" "$REG/cfs/test:nosuch" a
assert_eq "cfsctl: '$REG/cfs/test:nosuch': HTTP 404: the repository has no manifest of that tag (MANIFEST_UNKNOWN); its tags: 'v1'" \
	"$(cat "$T/err")" "a tag the repository lacks"
expect_exit 1 "$CFSCTL" pull --plain-http --repo "$T/r" "$REG/cfs/test" a
assert_eq "cfsctl: '$REG/cfs/test': HTTP 404: the repository has no manifest of that tag (MANIFEST_UNKNOWN) (no tag was given, so 'latest' was tried); its tags: 'v1'" \
	"$(cat "$T/err")" "no tag, and no latest"
# Five tags at most.
for i in 1 2 3 4 5 6; do
	python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "http://$REG" cfs/test "t$i" >/dev/null ||
		fail "pushing t$i"
done
expect_exit 1 "$CFSCTL" pull --plain-http --repo "$T/r" "$REG/cfs/test:nosuch" a
assert_contains "$T/err" "\(MANIFEST_UNKNOWN\); its tags: ('[tv][1-6]', ){5}\.\.\.\$"
stop_servers

# A fake registry's 404 has no error body.
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
start_server fake "$T/fake" ok
expect_exit 1 "$CFSCTL" pull --plain-http --repo "$T/r" "${SERVER_URL#http://}/img:nosuch" a
assert_eq "cfsctl: '${SERVER_URL#http://}/img:nosuch': HTTP 404: not found" "$(cat "$T/err")" \
	"a 404 without the registry's words"
stop_servers

expect_exit 1 "$CFSCTL" build --from-oci "oci:$T/lay:nope" "$T/x.img"
assert_contains "$T/err" "lay/index\.json': no manifest is tagged 'nope' \(its tags: 'v1', 'v2'\)\$"
