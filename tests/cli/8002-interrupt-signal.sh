#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# After SIGINT or SIGTERM has removed its temporaries, a build or a pull
# dies of the signal (the parent sees WIFSIGNALED, so a shell loop stops
# on Ctrl-C), and a progress line left open on the terminal gets its
# newline first.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
umask 022

# signalled.py SIG WAITFOR OUT CMD...: run CMD with default dispositions and
# stderr on a pseudo-terminal (copied to OUT), send it SIG once WAITFOR,
# FILE:WORD, holds a line that starts with WORD, and print how it ended:
# "signal N" or "exit N".
cat >"$T/signalled.py" <<'PY'
import os, pty, select, signal, sys, time
sig, (waitfor, word), out = int(sys.argv[1]), sys.argv[2].rsplit(":", 1), sys.argv[3]
master, slave = pty.openpty()
pid = os.fork()
if pid == 0:
    for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(s, signal.SIG_DFL)
    os.dup2(slave, 2)
    os.execvp(sys.argv[4], sys.argv[4:])
os.close(slave)
data = b""
def drain(timeout):
    global data
    while select.select([master], [], [], timeout)[0]:
        try:
            chunk = os.read(master, 4096)
        except OSError:
            return False
        if not chunk:
            return False
        data += chunk
        timeout = 0
    return True
def reached():
    try:
        return any(l.startswith(word) for l in open(waitfor))
    except OSError:
        return False
deadline = time.time() + 20
while not reached():
    if time.time() > deadline:
        os.kill(pid, signal.SIGKILL)
        sys.exit("never reached " + waitfor)
    drain(0.1)
end = time.time() + 0.5
while time.time() < end:
    drain(0.1)
os.kill(pid, sig)
for _ in range(30):  # until the terminal's last writer is gone
    if not drain(1):
        break
else:
    os.kill(pid, signal.SIGKILL)
_, status = os.waitpid(pid, 0)
open(out, "wb").write(data)
print("signal %d" % os.WTERMSIG(status) if os.WIFSIGNALED(status)
      else "exit %d" % os.WEXITSTATUS(status))
PY

# A tar on a pipe: one whole file, then half of a second, and no more.
cat >"$T/slow.py" <<'PY'
import io, sys, tarfile, time
out = sys.stdout.buffer
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
    data = b"A" * (1 << 20)
    i = tarfile.TarInfo("f0"); i.size = len(data)
    t.addfile(i, io.BytesIO(data))
    i = tarfile.TarInfo("big"); i.size = 64 << 20
    t.addfile(i)
out.write(buf.getvalue()[:-1024])
out.write(b"C" * (1 << 20))
out.flush()
open(sys.argv[1], "w").write("sent\n")
time.sleep(60)
PY
mkfifo "$T/fifo"
python3 "$T/slow.py" "$T/sent" >"$T/fifo" &
writer=$!
how=$(python3 "$T/signalled.py" 2 "$T/sent:sent" "$T/build.tty" \
	"$CFSCTL" build --from-tar --digest-store="$T/s" "$T/fifo" "$T/tar.img") ||
	fail "running the build: $how"
kill $writer 2>/dev/null
wait $writer 2>/dev/null
assert_eq "signal 2" "$how" "how a build ended by SIGINT ended"
[ ! -e "$T/tar.img" ] || fail "SIGINT left an image"
[ -z "$(find "$T/s" -type f 2>/dev/null)" ] || fail "SIGINT left files in the store"

# A pull, its last layer stalled: the progress line is open when SIGTERM comes.
mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
cat >"$T/spec.json" <<EOS
[{"tag": "v1", "layers": [["$T/L/1.tar", "gzip"], ["$T/L/2.tar", "zstd"], ["$T/L/3.tar", "none"]]}]
EOS
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "dir:$T/fake" img v1 >/dev/null || fail "fake tree"
start_server stall "$T/fake" stall --min-size 1000
how=$(python3 "$T/signalled.py" 15 "$T/stall.log:stall " "$T/pull.tty" \
	"$CFSCTL" pull --plain-http --digest-store="$T/ps" "${SERVER_URL#http://}/img:v1" "$T/p.img") ||
	fail "running the pull: $how"
stop_servers
assert_eq "signal 15" "$how" "how a pull ended by SIGTERM ended"
[ ! -e "$T/p.img" ] || fail "SIGTERM left an image"
grep -q 'pull: layers' "$T/pull.tty" || { cat -v "$T/pull.tty"; fail "no progress line was drawn"; }
# The last thing on the terminal: the progress line, then a newline.
python3 - "$T/pull.tty" <<'PY' || fail "the progress line was left without its newline"
import sys
data = open(sys.argv[1], "rb").read()
last = data.rsplit(b"\x1b[K", 1)[-1]
sys.exit(0 if last.startswith(b"pull: layers") and last.endswith(b"\n") else 1)
PY
