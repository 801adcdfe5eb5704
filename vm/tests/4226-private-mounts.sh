# SPDX-License-Identifier: GPL-2.0 OR MIT
# A private repository, mounted by root, serves an ordinary user what the
# image's modes allow and nothing more (docs/security.md): through the v1
# module's mount and through overlayfs over EROFS, uid 1000 reads a 0644
# file, and is refused a 0600 file (one an object, one small enough to be
# inline in the EROFS image) and a file below a 0700 directory; it cannot
# list the repository nor read an object or an image there. The backing
# files are 0400 in 0700 directories: the module and overlayfs open them
# with the mounter's credentials, never the reader's.
SUITE=private-mounts
. /tests/lib.sh
command -v cfsctl > /dev/null || { skip all "no cfsctl in the guest"; exit 0; }

P=$W/private
rm -rf $P && mkdir -p $P/src/priv
head -c 6000 /dev/urandom > $P/src/pub
chmod 0644 $P/src/pub
head -c 6000 /dev/urandom > $P/src/secret
chmod 0600 $P/src/secret
printf 'a token of 36 bytes, inline in erofs\n' | head -c 36 > $P/src/small
chmod 0600 $P/src/small
printf 'below a private directory\n' > $P/src/priv/f
chmod 0644 $P/src/priv/f
chmod 0700 $P/src/priv
chmod 0755 $P $P/src
u() { cfs-vmtool asuser 1000 "$@"; }

cfsctl build --repo $P/repo $P/src v1 > /dev/null 2>&1 || { fail build-v1 "cfsctl build"; exit 0; }
cfsctl build --format=erofs --repo $P/repo $P/src erofs > /dev/null 2>&1 ||
	{ fail build-erofs "cfsctl build --format=erofs"; exit 0; }
expect repo-mode 700 "$(stat -c %a $P/repo)"
obj=$(find $P/repo/objects -type f | head -n 1)
expect object-mode 400 "$(stat -c %a "$obj")"
img=$(find $P/repo/images -maxdepth 1 -type f | head -n 1)
expect image-mode 400 "$(stat -c %a "$img")"

# The store: nothing to list or read, even knowing the names.
expect user-lists-repo "fail" "$(u ls $P/repo > /dev/null 2>&1 && echo listed || echo fail)"
expect user-reads-object "open EACCES" "$(u cfs-vmtool read "$obj")"
expect user-reads-image "open EACCES" "$(u cfs-vmtool read "$img")"

for fmt in v1 erofs; do
	M=/mnt/private-$fmt
	mkdir -p $M
	opt=
	[ $fmt = v1 ] && opt=--verity-check=0
	if ! out=$(cfsctl mount $opt --repo $P/repo $fmt $M 2>&1); then
		fail $fmt-mount "$out"
		continue
	fi
	pass $fmt-mount
	expect $fmt-root-reads-secret OK "$(readfile $M/secret)"
	expect $fmt-user-reads-pub OK "$(u cfs-vmtool read $M/pub)"
	expect $fmt-user-pub-content "$(md5sum < $P/src/pub)" "$(u cat $M/pub | md5sum)"
	expect $fmt-user-secret "open EACCES" "$(u cfs-vmtool read $M/secret)"
	expect $fmt-user-small "open EACCES" "$(u cfs-vmtool read $M/small)"
	expect $fmt-user-priv "open EACCES" "$(u cfs-vmtool read $M/priv/f)"
	expect $fmt-user-stat-secret 6000 "$(u stat -c %s $M/secret)"
	umount $M && pass $fmt-umount || fail $fmt-umount busy
done
rm -rf $P
