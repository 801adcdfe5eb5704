#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# build --repo and pull --repo check the name before any work: a name
# that is a directory of names, or under a name, is refused before the
# source is read or the registry asked, leaving no image and no object.
# A name that becomes unusable while the build works is found before the
# new objects are published: the failed build leaves no image, no new
# object, and the names as they were.
. "$(dirname "$0")/../lib/common.sh"
umask 022

R=$T/repo
mkdir -p "$T/a" "$T/b"
printf 'one\n' >"$T/a/f"
printf 'two\n' >"$T/b/g"
expect_exit 0 "$CFSCTL" build --repo "$R" "$T/a" app/1
# state: what is in the repository, but the temporaries of a build at work
state() { (cd "$R" && find . ! -name . ! -name '.tmp-*' -print | sort); }
state >"$T/before"

# A tar on stdin that never ends: a build that reads its source waits for ever.
for name in app app/1/x; do
	expect_exit 1 timeout 10 "$CFSCTL" build --repo "$R" --from-tar - "$name" < <(sleep 30)
	assert_contains "$T/err" "naming '$name' in repository '$R': (it is a directory of names|a part of it is a name)"
	assert_eq 1 "$(wc -l <"$T/err")" "lines of the refusal of '$name'"
	state | diff "$T/before" - || fail "a refused build of '$name' changed the repository"
done
# A pull: refused before the registry (nothing listens there) is asked.
expect_exit 1 timeout 10 "$CFSCTL" pull --plain-http --repo "$R" 127.0.0.1:9/img:v1 app
assert_contains "$T/err" "naming 'app' in repository '$R': it is a directory of names"
assert_eq 1 "$(wc -l <"$T/err")" "lines of the pull's refusal"
state | diff "$T/before" - || fail "a refused pull changed the repository"

# The name becomes a directory of names while the build reads its tar.
mkfifo "$T/fifo"
"$CFSCTL" build --repo "$R" --from-tar "$T/fifo" late 2>"$T/late.err" &
pid=$!
exec 3>"$T/fifo"
# One member, without the end of the archive: the build waits for more.
python3 -c 'import sys, tarfile
i = tarfile.TarInfo("g"); i.size = 4
sys.stdout.buffer.write(i.tobuf(tarfile.PAX_FORMAT) + b"two\n".ljust(512, b"\0"))' >&3
sleep 0.5
kill -0 $pid 2>/dev/null || { cat "$T/late.err"; fail "the build did not wait for its tar"; }
da=$(readlink "$R/images/refs/app/1")
expect_exit 0 "$CFSCTL" images --repo "$R" --tag late/x "${da##*/}"
state >"$T/before"
head -c 1024 /dev/zero >&3
exec 3>&-
wait $pid
rc=$?
assert_eq 1 "$rc" "exit status of the build whose name became a directory"
assert_contains "$T/late.err" "naming 'late' in repository '$R': it is a directory of names"
state | diff "$T/before" - || fail "the failed build left an image, an object or a name"
[ -z "$(find "$R" -name '.tmp-*')" ] || fail "the failed build left a temporary"
