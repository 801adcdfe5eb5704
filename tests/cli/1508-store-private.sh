#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0 OR MIT
# Every digest store and repository that cfsctl makes is its owner's alone
# (docs/security.md): mode 0700 at its top and in every directory, made so
# (no chmod, even under umask 000), its objects and a repository's images
# 0400, and user nobody reads nothing under it. Each verb that makes one:
# build (a directory, --from-oci, --from-ostree) into --digest-store and
# --repo, pull --repo and its --layers-cache, fetch.
. "$(dirname "$0")/../lib/common.sh"
. "$TESTS_DIR/lib/fetch.sh"
command -v setpriv >/dev/null || skip "needs setpriv (util-linux)"
command -v strace >/dev/null || skip "needs strace (make deps)"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }
nobody "$CFSCTL" --version >/dev/null 2>&1 || skip "cfsctl cannot be run as user nobody here"
chmod 0755 "$T"

# a tree with a secret that only root may read, and files to store
umask 022
mkdir -p "$T/tree/etc" "$T/tree/usr/lib"
echo 'root:$6$salt$hash:19000:0:99999:7:::' >"$T/tree/etc/shadow"
chmod 0600 "$T/tree/etc/shadow"
head -c 20000 /dev/urandom >"$T/tree/usr/lib/big"
chmod 0755 "$T/tree/usr/lib/big"
head -c 300 /dev/urandom >"$T/tree/etc/key"
chmod 0600 "$T/tree/etc/key"

# check_private DIR WHAT: DIR and every directory in it 0700, every file
# without a write, exec or set-id bit and no access for others (objects and
# images 0400, the index's files 0600); nobody can list DIR or read a file
check_private() {
	local dir=$1 what=$2 m f n=0
	assert_eq 700 "$(stat -c %a "$dir")" "mode of $what '$dir'"
	while read -r m f; do
		assert_eq 700 "$m" "mode of the directory '$f' in $what"
	done < <(find "$dir" -mindepth 1 -type d -printf '%m %p\n')
	while read -r m f; do
		case $f in
		*/index/*) assert_eq 600 "$m" "mode of the index file '$f'" ;;
		*) assert_eq 400 "$m" "mode of '$f' in $what" ;;
		esac
		n=$((n + 1))
		! nobody cat "$f" >/dev/null 2>&1 || fail "nobody read '$f' in $what"
	done < <(find "$dir" -type f -printf '%m %p\n')
	[ "$n" -gt 0 ] || fail "$what '$dir' holds no file: nothing was checked"
	! nobody ls "$dir" >/dev/null 2>&1 || fail "nobody listed $what '$dir'"
	! nobody find "$dir" -type f >/dev/null 2>&1 || fail "nobody walked $what '$dir'"
}

# traced WHAT CMD...: run CMD under umask 000 and strace; it must succeed,
# change the mode of no path (only of a file it made, by its fd: an image's
# or a fetched object's temporary), and make no directory with access for
# others: every directory is made private, not made and then closed
traced() {
	local what=$1
	shift
	# (LeakSanitizer cannot run under ptrace)
	(umask 000 && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		exec strace -f -qq -o "$T/strace.log" \
		-e trace=%file,fchmod,mkdir,mkdirat "$@") >"$T/out" 2>"$T/err" ||
		{ cat "$T/err"; fail "$what failed"; }
	! grep -E 'chmod(at2?)?\(' "$T/strace.log" |
		grep -vE '^[0-9]+ +fchmod\([0-9]+, 0(644|600|400)\)' | grep . ||
		fail "$what changed a mode after the fact"
	local line mode
	while read -r line; do
		mode=${line##*, }
		mode=${mode%%)*}
		[ $((mode & 077)) -eq 0 ] || fail "$what made a directory with access for others: $line"
	done < <(grep -E '^[0-9]+ +mkdir(at)?\(' "$T/strace.log" | grep -v ' = -1 ')
	grep -qE '^[0-9]+ +mkdir(at)?\(' "$T/strace.log" || fail "$what made no directory: nothing checked"
}

# build of a directory: a digest store, a repository
traced "build --digest-store" "$CFSCTL" build --digest-store="$T/s1" "$T/tree" "$T/s1.img"
check_private "$T/s1" "build's digest store"
traced "build --repo" "$CFSCTL" build --repo "$T/r1" "$T/tree" app
check_private "$T/r1" "build's repository"
assert_eq 400 "$(stat -c %a "$T/r1/images/$(basename "$(readlink "$T/r1/images/refs/app")")")" \
	"mode of the repository's image"
# a second write into a private repository changes nothing, says nothing
traced "build --repo again" "$CFSCTL" build --repo "$T/r1" "$T/tree" app2
[ ! -s "$T/err" ] || { cat "$T/err"; fail "a build into a private repository warned"; }
check_private "$T/r1" "build's repository"

# build --from-oci: the tar stream's objects
mkdir "$T/L"
python3 "$TESTS_DIR/lib/oci-layers.py" "$T/L" || fail "writing the layers"
echo "[{\"tag\": \"v1\", \"layers\": [[\"$T/L/1.tar\", \"gzip\"], [\"$T/L/2.tar\", \"zstd\"]]}]" \
	>"$T/spec.json"
python3 "$TESTS_DIR/lib/mkoci.py" "$T/lay" "$T/spec.json" || fail "writing the image layout"
traced "build --from-oci --digest-store" "$CFSCTL" build --from-oci --digest-store="$T/s2" \
	"oci:$T/lay:v1" "$T/s2.img"
check_private "$T/s2" "build --from-oci's digest store"
traced "build --from-oci --repo" "$CFSCTL" build --from-oci --repo "$T/r2" "oci:$T/lay:v1" v1
check_private "$T/r2" "build --from-oci's repository"

# fetch: objects of an image from a mirror (file://)
traced "fetch" "$CFSCTL" fetch --basedir "$T/s3" --url "file://$T/s1" "$T/s1.img"
check_private "$T/s3" "fetch's digest store"
cmp -s <(cd "$T/s1" && find . -type f | sort) <(cd "$T/s3" && find . -type f | sort) ||
	fail "fetch did not fetch every object"

# build --from-ostree of an archive repository: objects unpacked into the store
if command -v ostree >/dev/null; then
	ostree --repo="$T/ost" init --mode=archive || fail "ostree init"
	ostree --repo="$T/ost" commit -b main --tree=dir="$T/tree" -s test >/dev/null ||
		fail "ostree commit"
	traced "build --from-ostree --digest-store" "$CFSCTL" build --from-ostree \
		--digest-store="$T/s4" "$T/ost:main" "$T/s4.img"
	check_private "$T/s4" "build --from-ostree's digest store"
	traced "build --from-ostree --repo" "$CFSCTL" build --from-ostree --repo "$T/r4" \
		"$T/ost:main" main
	check_private "$T/r4" "build --from-ostree's repository"
else
	echo "no ostree (Debian package ostree): build --from-ostree not checked"
fi

# pull --repo from a registry, with a layers cache
start_registry reg
python3 "$TESTS_DIR/lib/oci-push.py" "$T/lay" v1 "http://$REG" cfs/test v1 >/dev/null ||
	fail "pushing v1"
traced "pull --repo" "$CFSCTL" pull --plain-http --repo "$T/r5" --layers-cache="$T/lc" \
	"$REG/cfs/test:v1" v1
check_private "$T/r5" "pull's repository"
assert_eq 700 "$(stat -c %a "$T/lc")" "mode of pull's layers cache"
! nobody ls "$T/lc" >/dev/null 2>&1 || fail "nobody listed the layers cache"
echo "ok"
