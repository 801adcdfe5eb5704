#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# README's five-minute tour, pasted into a shell, works: each of its code
# blocks runs with bash -e (a cfsctl diff that finds a difference exits 1)
# in a scratch directory holding a copy of
# examples/ and cfsctl on PATH, as the tour says (as root). The one line
# that wants a person at a terminal, the browser, runs its --help instead.
# The registry block needs 127.0.0.1:5000, which the tour names: where
# something else holds that port, it is skipped, and said.
# test: exclusive (the tour's registry listens on port 5000, as README says)
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the tour mounts: it is run as root"
command -v docker-registry >/dev/null || skip "docker-registry is not installed (make deps)"

mkdir "$T/run" "$T/bin"
cp -a "$TOP/examples" "$T/run/examples"
ln -s "$CFSCTL" "$T/bin/cfsctl"
python3 - "$TOP/README.md" "$T" <<'PY' || fail "README has no tour"
import re, sys
text = open(sys.argv[1]).read()
tour = text[text.index("## A five-minute tour"):]
tour = tour[:tour.index("\n## ", 1)]
blocks = re.findall(r"```\n(.*?)```", tour, re.S)
assert len(blocks) >= 2
for i, b in enumerate(blocks):
    b = re.sub(r"(?m)^cfsctl tui (.*?)#.*$", r"cfsctl tui --help >/dev/null", b)
    open("%s/block%d.sh" % (sys.argv[2], i), "w").write(b)
PY
for b in "$T"/block*.sh; do
	if grep -q 'docker-registry serve' "$b" && (exec 3<>/dev/tcp/127.0.0.1/5000) 2>/dev/null; then
		echo "skipped $(basename "$b"): 127.0.0.1:5000 is taken"
		continue
	fi
	(cd "$T/run" && PATH=$T/bin:$PATH bash -e "$b") >"$T/out" 2>&1 ||
		{ cat "$T/out"; umount "$T/run/mnt" 2>/dev/null; fail "README's tour: $(basename "$b") failed"; }
done
grep -q " $T/run/mnt " /proc/mounts && fail "the tour left its mount"
echo "ok: $(ls "$T"/block*.sh | wc -l) blocks"
