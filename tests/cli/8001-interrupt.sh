#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# SIGINT, SIGTERM and SIGHUP in the middle of a build --from-tar (a file
# half read from a pipe), a pull (a layer stalled by the registry) and a
# fetch (large objects stalled): the command removes every temporary it
# made in the store, leaves no image, and exits 130, 143 or 129 (128 + the
# signal). A signal ignored when the command starts (nohup) stays ignored.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
umask 022

# A shell script's background commands ignore SIGINT: start them with the
# default dispositions, as a terminal would.
DFL=(python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
    signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])')

# target PID: the process to signal (under valgrind, PID is a wrapper shell)
target() { local c; c=$(pgrep -P "$1" | head -n 1); echo "${c:-$1}"; }
# wait_for WHAT CMD...: until CMD succeeds (10 s at most)
wait_for() {
	local what=$1 i
	shift
	for i in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	fail "$what"
}
has_tmp() { [ -n "$(find "$1" -name '.tmp-*' 2>/dev/null)" ]; }
# interrupted SIG STATUS STORE IMAGE PID: PID, signalled, exits STATUS and leaves nothing
interrupted() {
	local sig=$1 want=$2 store=$3 image=$4 pid=$5 rc
	kill -s "$sig" "$(target "$pid")"
	wait "$pid"
	rc=$?
	[ "$rc" = "$want" ] || { cat "$T/cmd.err"; fail "SIG$sig: exit status $rc, expected $want"; }
	[ -z "$(find "$store" -type f 2>/dev/null)" ] ||
		{ find "$store" -type f; fail "SIG$sig left files in the store '$store'"; }
	[ ! -e "$image" ] || fail "SIG$sig left an image"
	[ -z "$(find "$(dirname "$image")" -maxdepth 1 -name ".$(basename "$image").tmp*")" ] ||
		fail "SIG$sig left a temporary image"
}

# A tar on a pipe: two whole files, then half of a third, and no more.
cat >"$T/slow.py" <<'PY'
import io, sys, tarfile, time
out = sys.stdout.buffer
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    for k in range(2):
        data = bytes([65 + k]) * (3 << 20)
        i = tarfile.TarInfo("f%d" % k); i.size = len(data)
        t.addfile(i, io.BytesIO(data))
    i = tarfile.TarInfo("big"); i.size = 64 << 20
    t.addfile(i)  # a header only: its content follows by hand
out.write(buf.getvalue()[:-1024])  # less the end-of-archive blocks
out.write(b"C" * (5 << 20))
out.flush()
time.sleep(60)
PY
mkfifo "$T/fifo"
n=0
for case in INT:130 TERM:143 HUP:129; do
	sig=${case%:*} want=${case#*:}
	n=$((n + 1))
	python3 "$T/slow.py" >"$T/fifo" &
	writer=$!
	"${DFL[@]}" "$CFSCTL" build --from-tar --digest-store="$T/s$n" "$T/fifo" "$T/tar$n.img" \
		2>"$T/cmd.err" &
	pid=$!
	wait_for "build --from-tar made no temporary" has_tmp "$T/s$n"
	sleep 0.3
	interrupted "$sig" "$want" "$T/s$n" "$T/tar$n.img" $pid
	kill $writer 2>/dev/null
	wait $writer 2>/dev/null
done

# A signal ignored at the start stays ignored.
python3 "$T/slow.py" >"$T/fifo" &
writer=$!
(trap '' HUP && exec "$CFSCTL" build --from-tar --digest-store="$T/ign" "$T/fifo" "$T/ign.img") \
	2>"$T/cmd.err" &
pid=$!
wait_for "build --from-tar made no temporary" has_tmp "$T/ign"
kill -s HUP "$(target $pid)"
sleep 0.5
kill -0 "$(target $pid)" 2>/dev/null || fail "a build that ignored SIGHUP (nohup) died of it"
kill -s KILL "$(target $pid)"
wait $pid 2>/dev/null
kill $writer 2>/dev/null
wait $writer 2>/dev/null

# A pull, its last layer stalled by the registry.
mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
cat >"$T/spec.json" <<EOF
[{"tag": "v1", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/2.tar", "zstd"], ["$T/L/3.tar", "none"]]}]
EOF
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
start_server stall "$T/fake" stall --min-size 1000
"${DFL[@]}" "$CFSCTL" pull --plain-http --digest-store="$T/ps" "${SERVER_URL#http://}/img:v1" \
	"$T/p.img" 2>"$T/cmd.err" &
pid=$!
wait_for "the pull did not reach the stalling layer" grep -q '^stall ' "$T/stall.log"
sleep 0.3
has_tmp "$T/ps" || fail "no temporaries: the signal came too late to test"
interrupted TERM 143 "$T/ps" "$T/p.img" $pid
stop_servers

# A fetch, its large objects stalled.
make_source "$T/src" 20 3 4096
make_image "$T/src" "$T/a.img" "$T/served"
start_server fstall "$T/served" stall --min-size 1048576
"${DFL[@]}" "$CFSCTL" fetch --timeout 600 --basedir "$T/fs" --url "$SERVER_URL" "$T/a.img" \
	>/dev/null 2>"$T/cmd.err" &
pid=$!
wait_for "fetch did not request the large objects" \
	sh -c "[ \$(grep -c '^stall ' '$T/fstall.log') -ge 3 ]"
sleep 0.3
kill -s INT "$(target $pid)"
wait $pid
rc=$?
assert_eq 130 "$rc" "fetch's exit status after SIGINT"
[ -z "$(find "$T/fs" -name '.cfs-fetch.*')" ] || fail "SIGINT left fetch's temporaries"
stop_servers
