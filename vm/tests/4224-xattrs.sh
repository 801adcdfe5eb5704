# SPDX-License-Identifier: GPL-2.0 OR MIT
# Xattr namespaces: a handler each for user, trusted and security, none
# for a name of another namespace the image holds (EOPNOTSUPP, never
# listed), and listxattr listing exactly what getxattr answers: no user.*
# on a symlink or a device (where the VFS refuses them), no trusted.* for
# a user without CAP_SYS_ADMIN. trusted.overlay.* are shown as the image
# holds them (docs/kernel.md).
SUITE=xattrs
. /tests/lib.sh
need /disk/xattrs.cfs

M=/mnt/xa
expect mount OK "$(cfsmount /disk/xattrs.cfs $M basedir=/disk/store-xattrs,verity_check=0)"
expect file "list xattr:security.s=73 xattr:trusted.t=74 xattr:user.file=66 get:foo.bar:EOPNOTSUPP get:system.other:EOPNOTSUPP get:user.file=66" \
	"$(cfs-vmtool xattrs $M/f foo.bar system.other user.file)"
expect dir "list xattr:trusted.overlay.opaque=79 xattr:user.dir=64" "$(cfs-vmtool xattrs $M/d)"
expect symlink-no-user "list xattr:security.ls=6c73 get:user.link:ENODATA" "$(cfs-vmtool xattrs $M/l user.link)"
expect device-no-user "list xattr:security.cs=6373 get:user.dev:ENODATA" "$(cfs-vmtool xattrs $M/c user.dev)"
expect file-as-user "list xattr:security.s=73 xattr:user.file=66 get:trusted.t:ENODATA" \
	"$(cfs-vmtool asuser 1000 cfs-vmtool xattrs $M/f trusted.t)"
umount $M && pass umount || fail umount busy
