#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# docs/cfsctl.md's cfsctl inspect example, pasted into a shell, prints what it
# shows: each "$ COMMAND" line of the block is run (in a scratch directory
# that sees examples/), and its output must be the lines under it.
. "$(dirname "$0")/../lib/common.sh"
[ "$(id -u)" = 0 ] || skip "the example is built as root (owners 0:0): not root"

mkdir "$T/run" "$T/bin"
ln -s "$TOP/examples" "$T/run/examples"
ln -s "$CFSCTL" "$T/bin/cfsctl"
python3 - "$TOP/docs/cfsctl.md" "$T/cases" <<'PY' || fail "docs/cfsctl.md has no cfsctl inspect example"
import os, sys
lines = open(sys.argv[1]).read().split("\n")
start = lines.index("$ cfsctl inspect img.cfs")
while lines[start - 1] != "```":
    start -= 1
n = 0
cmd, out = None, []
def flush():
    global n
    if cmd is None:
        return
    n += 1
    open(os.path.join(sys.argv[2], "%02d.cmd" % n), "w").write(cmd + "\n")
    open(os.path.join(sys.argv[2], "%02d.out" % n), "w").write("".join(l + "\n" for l in out))
os.makedirs(sys.argv[2])
for line in lines[start:]:
    if line == "```":
        break
    if line.startswith("$ "):
        flush()
        cmd, out = line[2:], []
    else:
        out.append(line)
flush()
sys.exit(0 if n >= 2 else 1)
PY
for c in "$T"/cases/*.cmd; do
	(cd "$T/run" && PATH=$T/bin:$PATH bash -c "$(cat "$c")") >"$T/got" 2>&1 ||
		{ cat "$T/got"; fail "docs/cfsctl.md's '$(cat "$c")' failed"; }
	diff -u "${c%.cmd}.out" "$T/got" || fail "docs/cfsctl.md's '$(cat "$c")' prints otherwise"
done
