#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull of a zstd:chunked image refuses bad input: a registry in
# front of the real one (chunked-proxy.py) serves a TOC that does not match
# its checksum annotation, one that does not decompress or parse, one whose
# file does not hash to its TOC digest, frames outside the blob or
# overlapping, names the tar rules refuse ('..', absolute, twice), and
# range answers that are not the ranges asked for. Each is an error that
# says what, exit 1, into a repository that holds A under the name being
# pulled: the name still points at A, and no image, no object is added.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/chunked.sh"

push_images
get_toc B "$T/toc.B"
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/chunked:A" app/cur
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/chunked:A" app/other
nameA=$(readlink "$T/repo/images/refs/app/cur")
state() {
	(cd "$T/repo" && find objects images -type f | sort)
}
state >"$T/state.0"

# refused MODE [TOC] PATTERN: the pull of B through the proxy fails saying PATTERN
refused() {
	local mode=$1 toc=${2:-} pat=$3 raw=${4:-}
	start_proxy "$mode" "$toc" $raw
	expect_exit 1 "$CFSCTL" pull --plain-http --retries=0 --repo "$T/repo" "$PROXY/t/chunked:B" app/cur
	stop_proxy
	assert_contains "$T/err" "$pat"
	assert_eq "$nameA" "$(readlink "$T/repo/images/refs/app/cur")" "the name after a refused pull ($mode)"
	state >"$T/state.1"
	cmp -s "$T/state.0" "$T/state.1" || {
		diff "$T/state.0" "$T/state.1" | head
		fail "a refused pull ($mode $(basename "$toc")) left files in the repository"
	}
}

# edit NAME PYTHON: $T/NAME.json, B's TOC as the Python statements change
# the list of entries 'es' (and the TOC 't')
edit() {
	python3 - "$T/toc.B" "$T/$1.json" "$2" <<'PY' || fail "editing the TOC"
import json, sys
t = json.load(open(sys.argv[1]))
es = t["entries"]
regs = [e for e in es if e["type"] == "reg" and e.get("size")]
new = [e for e in regs if e["name"].startswith("./usr/new/") and e["size"] > 1000]
exec(sys.argv[3])
json.dump(t, open(sys.argv[2], "w"))
PY
}

what="'127\.0\.0\.1:[0-9]+/t/chunked@sha256:[0-9a-f]{64}'"
refused badsum "" "$what: the TOC has the digest sha256:[0-9a-f]{64}, not the one its annotation gives"

printf '{"version": 1, "entries": [' >"$T/truncated.json"
refused toc "$T/truncated.json" "$what: invalid JSON at byte"
printf 'not zstd at all' >"$T/garbage.json"
refused toc "$T/garbage.json" "$what: the TOC does not decompress" raw
edit version 't["version"] = 2'
refused toc "$T/version.json" "$what: the TOC is not of version 1"

# A file the store lacks whose frames do not hash to the TOC's sha256.
edit digest 'new[0]["digest"] = "sha256:" + "0" * 64'
refused toc "$T/digest.json" "$what: file '\./usr/new/n[0-9]+': its content has the digest sha256:[0-9a-f]{64}, not the TOC's sha256:0{64}"
# Or whose frames are another file's (the sizes differ).
edit swap 'a, b = new[0], new[1]; a["offset"], a["endOffset"], b["offset"], b["endOffset"] = b["offset"], b["endOffset"], a["offset"], a["endOffset"]'
refused toc "$T/swap.json" "$what: file '\./usr/new/n[0-9]+': its (frames hold|content has)"

edit outside 'new[0]["endOffset"] = 1 << 40'
refused toc "$T/outside.json" "$what: TOC entry [0-9]+ \('\./usr/new/n[0-9]+'\): its frames [0-9]+-1099511627776 are outside the blob"
edit overlap 'regs[1]["offset"] = regs[0]["offset"] + 1'
refused toc "$T/overlap.json" "$what: the frames of '[^']+' and '[^']+' overlap"
edit dotdot 'es.append({"type": "reg", "name": "./usr/../../etc/passwd", "mode": 420})'
refused toc "$T/dotdot.json" "$what: TOC entry [0-9]+ \('\./usr/\.\./\.\./etc/passwd'\): a name the tar rules refuse"
edit absolute 'es.append({"type": "symlink", "name": "/etc/evil", "linkName": "x"})'
refused toc "$T/absolute.json" "$what: TOC entry [0-9]+ \('/etc/evil'\): a name the tar rules refuse"
edit twice 'es.append({"type": "dir", "name": "usr/new/"})'
refused toc "$T/twice.json" "$what: the TOC names 'usr/new' twice"
edit type 'es.append({"type": "socket", "name": "./s"})'
refused toc "$T/type.json" "$what: TOC entry [0-9]+ \('\./s'\): unknown type 'socket'"
edit xattr 'regs[0]["xattrs"] = {"cfs.digest": "YQ=="}'
refused toc "$T/xattr.json" "$what: TOC entry '[^']+': the xattr 'cfs\.digest' is not one a layer may have"

# Range answers that are not what was asked for: the TOC's (one range),
# then the files' (many ranges in one request).
refused wrong-range "" "$what: asked for bytes [0-9]+-[0-9]+, the registry answered with bytes [0-9]+-[0-9]+"
refused wrong-multi "" "$what: asked for bytes [0-9]+-[0-9]+, the registry answered with bytes [0-9]+-[0-9]+"

# The honest proxy gives B, which the refusals did not leave half-made.
start_proxy pass
expect_exit 0 "$CFSCTL" pull --plain-http --json --repo "$T/repo" "$PROXY/t/chunked:B" app/cur
stop_proxy
expect_exit 0 "$CFSCTL" pull --plain-http --repo "$T/repo" "$REG/t/gzip:B" app/gz
assert_eq "$(readlink "$T/repo/images/refs/app/gz")" "$(readlink "$T/repo/images/refs/app/cur")" \
	"B through the honest proxy"
echo ok
