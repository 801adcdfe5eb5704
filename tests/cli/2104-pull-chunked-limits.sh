#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The limits of a zstd:chunked pull: a TOC listing more entries than
# --max-entries fails the pull before any file is fetched, naming the
# layer and the cap (exit 1, nothing added to the repository), as a gzip
# layer of as many entries fails; a TOC of more JSON values than are read
# at once (2^20), or one whose parse would take more than 128 MiB, is not
# parsed, and the layer is pulled whole, with a
# notice, to the same image.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"

push_images
get_toc B "$T/toc.B"
n=$(python3 -c 'import json, sys; print(sum(e["type"] != "chunk" for e in json.load(open(sys.argv[1]))["entries"]))' "$T/toc.B")
[ "$n" -gt 20 ] || fail "the TOC of B lists only $n entries"
max=$((n / 2))

expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/gzip:B" app/want
state() {
	(cd "$T/repo" && find objects images -type f | sort)
}
state >"$T/state.0"
off=$(stat -c %s "$T/reg/log")
expect_exit 1 "$CFSCTL" pull --plain-http --max-entries=$max --repo "$T/repo" "$REG/t/chunked:B" app/cur
assert_contains "$T/err" "^cfsctl: '$REG/t/chunked@sha256:[0-9a-f]{64}': the TOC lists $n entries, more than $max \(--max-entries\)$"
pos=$(layer_json B io.containers.zstd-chunked.manifest-position) || fail "no TOC position"
len=${pos#*:}
config=$(curl -sf -H 'Accept: application/vnd.oci.image.manifest.v1+json' \
	"http://$REG/v2/t/chunked/manifests/B" |
	python3 -c 'import json, sys; print(json.load(sys.stdin)["config"]["size"])') || fail "no config size"
assert_eq $((${len%%:*} + config)) "$(sent_since "$off")" "bytes of blobs sent (the config and the TOC alone)"
[ ! -e "$T/repo/images/refs/app/cur" ] || fail "a refused pull named an image"
state >"$T/state.1"
cmp -s "$T/state.0" "$T/state.1" || fail "a refused pull left files in the repository"
# the gzip layer of the same entries: refused as it is read
expect_exit 1 "$CFSCTL" pull --plain-http --max-entries=$max --digest-store "$T/s" "$REG/t/gzip:B" "$T/x.img"
assert_contains "$T/err" "^cfsctl: '$REG/t/gzip@sha256:[0-9a-f]{64}' \(layer 1 of '$REG/t/gzip:B'\), entry '[^']+': the tree would hold more than $max entries \(--max-entries\)$"
[ -z "$(find "$T/s" -type f 2>/dev/null)" ] || fail "a refused pull left files in the store"
[ ! -e "$T/x.img" ] || fail "a refused pull left an image"

# B's TOC with a member of 2^20 values more: pulled whole.
python3 - "$T/toc.B" "$T/huge.json" <<'PY' || fail "writing the TOC"
import json, sys
t = json.load(open(sys.argv[1]))
t["padding"] = [0] * (1 << 20)
json.dump(t, open(sys.argv[2], "w"), separators=(",", ":"))
PY
start_proxy toc-digest "$T/huge.json"
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$PROXY/t/chunked:B" app/cur
stop_proxy
assert_contains "$T/err" "its TOC holds more JSON values than are read at once \(1048576\), or would take more than 128 MiB parsed: pulled whole"
assert_eq "$(readlink "$T/repo/images/refs/app/want")" "$(readlink "$T/repo/images/refs/app/cur")" \
	"B pulled whole for its TOC"

# B's TOC with 2^20 values less a few, each third an object of two long
# random strings: under the value count, over what a parse may take
# (CFS_JSON_MAX_MEMORY): pulled whole, the pull under 256 MiB.
python3 - "$T/toc.B" "$T/costly.json" <<'PY' || fail "writing the TOC"
import json, random, string, sys
t = json.load(open(sys.argv[1]))
def count(v):
    if isinstance(v, dict): return 1 + sum(count(x) for x in v.values())
    if isinstance(v, list): return 1 + sum(count(x) for x in v)
    return 1
n = ((1 << 20) - count(t) - 8) // 3
r = random.Random(39)
a = (string.ascii_letters + string.digits).encode()
def s(k): return bytes(r.choices(a, k=k)).decode()
t["padding"] = [{"n": s(56), "v": s(110)} for _ in range(n)]
json.dump(t, open(sys.argv[2], "w"), separators=(",", ":"))
PY
start_proxy toc-digest "$T/costly.json"
expect_exit 0 /usr/bin/time -f '%M' -o "$T/peak" "$CFSCTL" pull --plain-http --repo "$T/repo" "$PROXY/t/chunked:B" app/costly
stop_proxy
assert_contains "$T/err" "or would take more than 128 MiB parsed: pulled whole"
# (not under a sanitizer, whose shadow memory counts)
if ! grep -q __asan_init "$CFSCTL" 2>/dev/null; then
	[ "$(tail -n 1 "$T/peak")" -lt $((256 * 1024)) ] || fail "the pull of a costly TOC took $(tail -n 1 "$T/peak") KiB"
fi
assert_eq "$(readlink "$T/repo/images/refs/app/want")" "$(readlink "$T/repo/images/refs/app/costly")" \
	"B pulled whole for its costly TOC"
echo ok
