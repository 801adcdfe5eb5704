#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# The owner of a source tree swaps a regular file for a FIFO between the
# scan and the read (renameat2(RENAME_EXCHANGE), over and over, from another
# process): build --digest-store never blocks on the FIFO with the store's
# lock held, but refuses the file, naming it, and exits 1.
. "$(dirname "$0")/../lib/common.sh"
command -v python3 >/dev/null || skip "python3 is not installed (make deps)"

mkdir -p "$T/src" "$T/alt"
head -c 5000 /dev/urandom >"$T/src/file"
mkfifo "$T/alt/file"
python3 - "$T/src/file" "$T/alt/file" "$T/stop" <<'EOF' &
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = (p.encode() for p in sys.argv[1:4])
n = 0
while True:
    if libc.renameat2(-100, a, -100, b, 2) != 0:  # RENAME_EXCHANGE
        sys.exit("renameat2: " + os.strerror(ctypes.get_errno()))
    n += 1
    if n % 1000 == 0 and os.path.exists(stop):
        break
EOF
swapper=$!
trap 'touch "$T/stop"; wait "$swapper"; rm -rf "$T"' EXIT

# Each try the scan sees a regular file or a FIFO, and so does the read: in
# one try of four, a regular file scanned is a FIFO when it is opened.
refused=0
for try in $(seq 60); do
	rm -rf "$T/store" "$T/img"
	timeout 10 "$CFSCTL" build --digest-store="$T/store" "$T/src" "$T/img" >"$T/out" 2>"$T/err"
	rc=$?
	[ "$rc" -ne 124 ] || fail "build --digest-store blocked on a FIFO for 10 s (try $try)"
	if [ "$rc" -ne 0 ]; then
		assert_eq 1 "$rc" "exit status of a refused build"
		assert_contains "$T/err" "'$T/src/file': not the regular file that was scanned"
		[ ! -e "$T/img" ] || fail "a refused build left an image"
		refused=$((refused + 1))
	fi
	[ "$refused" -ge 3 ] && break
done
kill -0 "$swapper" 2>/dev/null || fail "the swapper died"
[ "$refused" -ge 1 ] || fail "no try of 60 read a FIFO where a file was scanned: nothing was raced"
echo "refused $refused times in $try tries"
