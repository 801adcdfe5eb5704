#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl tui never crashes on a corrupt image: an image with each of its
# bytes in turn set to 0xff is opened, searched for a name no entry has
# (which reads every directory), walked from the last row to the first and
# left with q. Each run must end with status 0 and nothing on stderr, or,
# when the header itself is broken, status 1 and one "cfsctl: tui:
# 'IMAGE': <reason>" line. Keys are typed ahead, so runs need no waits.
# test: early (it tries thousands of damaged images)
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/tmux.sh"

cat >"$T/in.dump" <<'DUMP'
/ 0 40755 3 0 0 0 0.0 - - - user.a=1
/d 0 40755 2 1 2 0 5.5 - - - user.a=1
/d/f 3 100644 2 0 0 0 0.0 ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e - abcd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e
/d/g 3 @100644 2 0 0 0 0.0 /d/f - -
/d/h 0 20666 1 0 0 259 0.0 - - - user.k=v\x00w
/e 0 40700 2 0 0 0 0.0 - - -
/e/s 0 120777 1 0 0 0 0.0 ../d/f - -
DUMP
"$CFSCTL" build --from-dump "$T/in.dump" "$T/img" >/dev/null || fail "build failed"
size=$(stat -c %s "$T/img")
mkdir "$T/v" "$T/r"
python3 - "$T/img" "$T/v" <<'PY'
import sys
data = open(sys.argv[1], "rb").read()
for n in range(len(data)):
    if data[n] != 0xff:
        open(f"{sys.argv[2]}/ff-{n}", "wb").write(data[:n] + b"\xff" + data[n + 1:])
PY
k=$(sample_variants "$T/v")

start_shell 80 24
keys "done_() { tmux -S $TMUX_SOCK wait-for -S done; }; clear" Enter
for f in "$T"/v/*; do
	r=$T/r/$(basename "$f")
	# what is left of the typed-ahead keys after a refusal is read away
	keys "$CFSCTL tui $f 2>$r.err; rc=\$?; echo \$rc >$r.rc; [ \$rc = 0 ] || read -rs -t 0.1 -N 4096 _; clear; done_" Enter \
		/ zzzz Enter End Up Up Enter Home Down Enter q
	tm wait-for done
done

total=0 opened=0 refused=0 bad=0
for f in "$T"/v/*; do
	r=$T/r/$(basename "$f")
	total=$((total + 1))
	case $(cat "$r.rc" 2>/dev/null) in
	0)
		opened=$((opened + 1))
		[ -s "$r.err" ] && { echo "$f: $(head -c 300 "$r.err")"; bad=$((bad + 1)); }
		;;
	1)
		refused=$((refused + 1))
		[ "$(wc -l <"$r.err")" -eq 1 ] && grep -q "^cfsctl: tui: '$f': " "$r.err" ||
			{ echo "$f: $(head -c 300 "$r.err")"; bad=$((bad + 1)); }
		;;
	*) echo "$f: exit $(cat "$r.rc" 2>/dev/null): $(head -c 300 "$r.err")"; bad=$((bad + 1)) ;;
	esac
done
echo "$total variants of a $size-byte image: $opened opened, $refused refused"
[ $bad -eq 0 ] || fail "$bad variants misbehaved"
[ $total -gt $((size / 2 / k)) ] || fail "only $total variants"
[ $opened -gt $((total / 2)) ] || fail "only $opened of $total variants opened"
exit 0
