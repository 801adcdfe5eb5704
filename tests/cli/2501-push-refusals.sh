#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A registry cannot hurt a push (tests/lib/push-bad-registry.py): an upload
# Location on another host, a 202 without Location, an answer with 100 KiB
# of headers, a redirect: each is refused with exit 1 and a message that
# says why, nothing is sent anywhere after it, and no manifest is written.
# An absolute Location on the registry itself is taken. And cfsctl pull
# reads the tar-split's digest from the TOC (tarSplitDigest, as
# containers/storage writes it now): a pushed layer whose tar-split was
# changed is refused in a partial pull, naming the TOC's digest.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/push.sh"

for mode in other-host no-location huge redirect absolute; do
	rm -f "$T/bad.port" "$T/bad.log"
	python3 "$TESTS_DIR/lib/push-bad-registry.py" $mode "$T/bad.port" "$T/bad.log" 2>"$T/bad.err" &
	FETCH_PIDS+=($!)
	for i in $(seq 100); do [ -s "$T/bad.port" ] && break; sleep 0.1; done
	[ -s "$T/bad.port" ] || { cat "$T/bad.err"; fail "push-bad-registry.py did not start"; }
	bad=127.0.0.1:$(cat "$T/bad.port")
	if [ $mode = absolute ]; then
		expect_exit 0 "$CFSCTL" push --plain-http --retries=0 "$T/tree" "$bad/t:v1"
		grep -q '^PUT /v2/t/manifests/v1' "$T/bad.log" || fail "absolute: no manifest was written"
		continue
	fi
	expect_exit 1 "$CFSCTL" push --plain-http --retries=0 "$T/tree" "$bad/t:v1"
	case $mode in
	other-host) want="the registry's upload Location 'http://127.0.0.2:[0-9]*/v2/t/uploads/x' is not on http://$bad: refused" ;;
	no-location) want="HTTP 202 without a Location to upload to" ;;
	huge) want="the registry's answer has more than 65536 bytes of headers" ;;
	redirect) want="HTTP 307: a push follows no redirect" ;;
	esac
	grep -q "cfsctl: 'layer': $want" "$T/err" || fail "$mode: no '$want': $(cat "$T/err")"
	! grep -q '^\(PUT\|PATCH\)' "$T/bad.log" || fail "$mode: something was sent after the refusal: $(cat "$T/bad.log")"
	! grep -q '127.0.0.2' "$T/bad.log" || fail "$mode: a request went to the other host"
	[ "$(wc -l <"$T/err")" -le 3 ] || fail "$mode: too many lines: $(cat "$T/err")"
done

# the TOC's tarSplitDigest: a tar-split changed under it is refused
expect_exit 0 "$CFSCTL" push --plain-http "$T/tree" "$REG/t/good:v1"
python3 - "$REG" <<'PY' || fail "writing the image with a changed tar-split"
import hashlib, json, sys, urllib.request
reg = sys.argv[1]
MT = "application/vnd.oci.image.manifest.v1+json"
def get(p):
    return urllib.request.urlopen(urllib.request.Request(f"http://{reg}{p}", headers={"Accept": MT})).read()
def put_blob(data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    loc = urllib.request.urlopen(urllib.request.Request(f"http://{reg}/v2/t/bad/blobs/uploads/", method="POST")).headers["Location"]
    if loc.startswith("/"):
        loc = f"http://{reg}{loc}"
    urllib.request.urlopen(urllib.request.Request(loc + ("&" if "?" in loc else "?") + "digest=" + d, data=data, method="PUT", headers={"Content-Type": "application/octet-stream"})).read()
    return d
man = json.loads(get("/v2/t/good/manifests/v1"))
layer = man["layers"][0]
blob = bytearray(get(f"/v2/t/good/blobs/{layer['digest']}"))
off, length, _ = map(int, layer["annotations"]["io.github.containers.zstd-chunked.tarsplit-position"].split(":"))
blob[off + length // 2] ^= 1
layer.update({"digest": put_blob(bytes(blob)), "size": len(blob)})
put_blob(get(f"/v2/t/good/blobs/{man['config']['digest']}"))
urllib.request.urlopen(urllib.request.Request(f"http://{reg}/v2/t/bad/manifests/v1", data=json.dumps(man).encode(), method="PUT", headers={"Content-Type": MT})).read()
PY
expect_exit 1 "$CFSCTL" pull --plain-http "$REG/t/bad:v1" "$T/bad.img"
grep -q "the tar-split has the digest sha256:[0-9a-f]*, not the TOC's tarSplitDigest sha256:[0-9a-f]*" "$T/err" ||
	fail "no message naming the TOC's tarSplitDigest: $(cat "$T/err")"
[ ! -e "$T/bad.img" ] || fail "an image was left after the refusal"
expect_exit 0 "$CFSCTL" pull --plain-http "$REG/t/good:v1" "$T/good.img"
cmp -s "$T/want.img" "$T/good.img" || fail "the unchanged image: not build's"
echo ok
