#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A mirror's password is never shown: a URL's USER:PASSWORD@ is in no
# message of fetch (stderr, the JSON reasons, a usage error), and a lazy
# daemon's argv, which ps shows every user, has it overwritten once read.
# Credentials come from --authfile (containers-auth.json) instead, for
# fetch and lazy, and are sent to the mirror that wants them; mount
# --lazy-url hands a URL's credentials to its daemon in a file.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
trap 'lazy_stop; umount "$T/mnt" 2>/dev/null; stop_servers; rm -rf "$T"' EXIT

make_source "$T/src" 6 0 0
make_image "$T/src" "$T/a.img" "$T/served"
store_files "$T/served" >"$T/all"

# no_secret FILE...: none of them holds the password (nor "alice:")
no_secret() {
	! grep -l -e S3cret -e 'alice:' "$@" || fail "the password is printed in $*"
}

# A mirror that is down, named with credentials: each object says so.
port=$(free_port)
expect_exit 1 "$CFSCTL" fetch -j1 --retries 0 --json --basedir "$T/s1" \
	--url "http://alice:S3cret@127.0.0.1:$port/store" "$T/a.img"
assert_contains "$T/err" "http://127.0.0.1:$port/store"
no_secret "$T/out" "$T/err"
expect_exit 2 "$CFSCTL" fetch --basedir "$T/s1" --url "ftp://alice:S3cret@127.0.0.1/store" "$T/a.img"
assert_contains "$T/err" "'ftp://127.0.0.1/store'"
no_secret "$T/out" "$T/err"

# A mirror that wants Basic credentials: refused without them, served
# with them from --authfile, keyed by HOST:PORT or by HOST:PORT/PATH.
start_server basic "$T/served" ok --basic alice:S3cret --auth-log "$T/auth.log"
hostport=${SERVER_URL#http://}
expect_exit 1 "$CFSCTL" fetch --retries 0 --basedir "$T/s2" --url "$SERVER_URL" "$T/a.img"
assert_contains "$T/err" "HTTP 401"
auth=$(printf 'alice:S3cret' | base64)
printf '{"auths": {"%s": {"auth": "%s"}}}\n' "$hostport" "$auth" >"$T/auth.json"
expect_exit 0 "$CFSCTL" fetch --authfile "$T/auth.json" --basedir "$T/s2" --url "$SERVER_URL" "$T/a.img"
assert_store "$T/s2" "$T/all"
assert_contains "$T/auth.log" "Basic $auth"
no_secret "$T/out" "$T/err"
# an entry for another path of the host is not this mirror's
printf '{"auths": {"%s/other": {"auth": "%s"}, "%s": {"auth": "%s"}}}\n' "$hostport" "$auth" \
	"$hostport" "$(printf 'alice:wrong' | base64)" >"$T/auth2.json"
expect_exit 1 "$CFSCTL" fetch --retries 0 --authfile "$T/auth2.json" --basedir "$T/s3" --url "$SERVER_URL" "$T/a.img"
mkdir -p "$T/sub"
ln -s "$T/served" "$T/sub/store"
stop_servers
start_server basic "$T/sub" ok --basic alice:S3cret
hostport=${SERVER_URL#http://}
printf '{"auths": {"%s/store": {"auth": "%s"}, "%s": {"auth": "%s"}}}\n' "$hostport" "$auth" \
	"$hostport" "$(printf 'alice:wrong' | base64)" >"$T/auth4.json"
expect_exit 0 "$CFSCTL" fetch --authfile "$T/auth4.json" --basedir "$T/s4" --url "$SERVER_URL/store" "$T/a.img"
assert_store "$T/s4" "$T/all"
# an auth file that is not one: refused, named
echo '[1, 2]' >"$T/bad.json"
expect_exit 1 "$CFSCTL" fetch --authfile "$T/bad.json" --basedir "$T/s5" --url "$SERVER_URL" "$T/a.img"
assert_contains "$T/err" "auth file '$T/bad.json'"

# lazy: the daemon's argv shows no password, and --authfile serves
first=$(head -n 1 "$T/all")
mkdir -p "$T/mnt"
lazy_start "$T/mnt" "$CFSCTL" lazy --store "$T/ls" --url "http://alice:S3cret@$hostport/store" "$T/mnt"
tr '\0' ' ' <"/proc/$LAZY_PID/cmdline" >"$T/cmdline"
no_secret "$T/cmdline"
assert_contains "$T/cmdline" "http://\*+@$hostport/store"
cmp "$T/mnt/$first" "$T/served/$first" || fail "'$first' through lazy with a URL's credentials"
lazy_stop
assert_eq 0 "$LAZY_RC" "lazy's exit status"
lazy_start "$T/mnt" "$CFSCTL" lazy --store "$T/ls2" --authfile "$T/auth4.json" --url "$SERVER_URL/store" "$T/mnt"
cmp "$T/mnt/$first" "$T/served/$first" || fail "'$first' through lazy --authfile"
lazy_stop
no_secret "$T/lazy.err" "$T/lazy.out"

# mount --lazy-url: a URL's credentials reach the daemon in a file of its
# own (mode 0600, in /run/cfs-lazy, removed once the daemon serves), never
# in its argv. strace records the daemon's exec and fails the mount's
# unlink of that file, so that it can be read here.
if command -v strace >/dev/null; then
	mkdir -p "$T/mnt2" "$T/ms"
	strace -f -qq -e trace=execve,unlink -e inject=unlink:error=EPERM -s 4096 -o "$T/trace" \
		"$CFSCTL" mount --basedir "$T/ms" --lazy-url "http://alice:S3cret@$hostport/store" \
		"$T/a.img" "$T/mnt2" >"$T/out" 2>"$T/err"
	umount "$T/mnt2" 2>/dev/null # where the module is there and the mount succeeded
	grep 'execve("/proc/self/exe"' "$T/trace" >"$T/daemon" || { cat "$T/err"; fail "mount started no cfsctl lazy"; }
	no_secret "$T/daemon" "$T/out" "$T/err"
	assert_contains "$T/daemon" "\"--url\", \"http://$hostport/store\", \"--authfile\", \"/run/cfs-lazy/auth\\."
	lazydir=$(sed -n 's/.*"--authfile", "[^"]*", "\([^"]*\)".*/\1/p' "$T/daemon")
	[ -n "$lazydir" ] && umount "$lazydir" 2>/dev/null
	af=$(sed -n 's/.*"--authfile", "\([^"]*\)".*/\1/p' "$T/daemon")
	[ -f "$af" ] || fail "no auth file '$af' (its unlink was failed on purpose)"
	grep -q "unlink(\"$af\")" "$T/trace" || { rm -f "$af"; fail "mount does not remove '$af'"; }
	assert_eq 600 "$(stat -c %a "$af")" "the auth file's mode"
	assert_eq "{\"auths\": {\"$hostport/store\": {\"auth\": \"$auth\"}}}" "$(cat "$af")" "the auth file"
	rm -f "$af"
	expect_exit 2 "$CFSCTL" mount --authfile "$T/auth4.json" "$T/a.img" "$T/mnt2"
	assert_contains "$T/err" "authfile is for the mirrors of --lazy-url"
fi
