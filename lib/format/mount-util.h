/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the format backends' mounts share (mount-util.c): the kernel log quoted
 * for a refused mount, loop devices, and idmapping a mount in place.
 * Private to libcfs.
 */
#ifndef CFS_LIB_MOUNT_H
#define CFS_LIB_MOUNT_H

#include <stdbool.h>
#include <stddef.h>

#include "cfs/mount.h"

/** cfs_kmsg_open() - /dev/kmsg at its end, or -1 where the log is not readable */
int cfs_kmsg_open(void);

/** cfs_kmsg_skip() - pass over what the kernel logged since, on @fd */
void cfs_kmsg_skip(int fd);

/**
 * cfs_mount_refused() - report that @layer ("erofs", "overlayfs") refused
 * to mount @src with @err, quoting the kernel's last line on @kfd
 */
void cfs_mount_refused(const char *layer, const char *src, int kfd, int err);

/**
 * cfs_loop_attach() - attach the open image @fd read-only to a free loop
 * device: the file itself, not whatever its name points at by now
 *
 * Its path goes to @dev. The device goes away by itself once unmounted
 * (autoclear) and *@loopfd closed. Return: 0 or -errno.
 */
int cfs_loop_attach(int fd, char *dev, size_t size, int *loopfd);

/**
 * cfs_mount_idmap() - make the mount on @mnt idmapped with @o's user
 * namespace: a clone is made, the mount itself detached, the mapping set
 * on the clone, and the clone attached in its place
 *
 * On failure nothing stays mounted on @mnt. Return: 0 or -errno with a
 * message.
 */
int cfs_mount_idmap(const char *mnt, const struct cfs_mount_options *o);

#endif /* CFS_LIB_MOUNT_H */
