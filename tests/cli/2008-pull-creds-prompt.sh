#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cfsctl pull --creds USER on a terminal: the password is asked for there
# with echo off, and the pull then logs in with it (a fake registry that
# wants Basic credentials checks them); a wrong one is refused.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
. "$TESTS_DIR/lib/pull.sh"

start_server basic "$T/fake" ok --basic 'cfs:pass word' --auth-log "$T/basic.auth"
u=${SERVER_URL#http://}

# on_tty PASSWORD ARGS...: run cfsctl ARGS on a new terminal, type PASSWORD
# at the prompt; what the terminal showed goes to $T/tty, the exit status
# is the script's
on_tty() {
	python3 - "$CFSCTL" "$@" >"$T/tty" 2>&1 <<'EOF'
import os, pty, select, sys, time
cfsctl, password, args = sys.argv[1], sys.argv[2], sys.argv[3:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(cfsctl, [cfsctl] + args)
seen, typed, end = b"", False, time.time() + 60
while time.time() < end:
    r, _, _ = select.select([fd], [], [], 0.2)
    if r:
        try:
            data = os.read(fd, 4096)
        except OSError:
            break
        if not data:
            break
        seen += data
    if not typed and b"Password for cfs at " in seen:
        # echo went off before the prompt showed
        os.write(fd, password.encode() + b"\n")
        typed = True
_, status = os.waitpid(pid, 0)
sys.stdout.write(seen.decode(errors="replace"))
sys.exit(os.waitstatus_to_exitcode(status))
EOF
}

on_tty 'pass word' pull --plain-http --creds=cfs "$u/img:v1" "$T/ok.img" ||
	{ cat "$T/tty"; fail "pull with the password typed on the terminal failed"; }
cmp -s "$T/want.v1" "$T/ok.img" || fail "the image pulled with a typed password differs"
assert_contains "$T/tty" "^Password for cfs at $u: "
grep -q 'pass word' "$T/tty" && fail "the password was echoed on the terminal"
assert_contains "$T/basic.auth" "^/v2/img/manifests/v1 Basic $(printf 'cfs:pass word' | base64 -w0)\$"

on_tty 'wrong' pull --plain-http --creds=cfs "$u/img:v1" "$T/bad.img" &&
	fail "a wrong password typed on the terminal was taken"
assert_contains "$T/tty" "HTTP 401: the registry refused the credentials"
[ ! -e "$T/bad.img" ] || fail "a refused pull left an image"
stop_servers
echo ok
