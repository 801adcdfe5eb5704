/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * Mounting an image, however its format is mounted: v1 by this project's
 * composefs module, composefs 1.0 (EROFS) as erofs with overlayfs on top.
 * The caller learns what a format's mount takes from cfs_image_mount_caps()
 * and never which format it is.
 */
#ifndef CFS_MOUNT_H
#define CFS_MOUNT_H

#include <stdbool.h>
#include <stdint.h>

#include "cfs/store.h"

/* What this header declares is libcfs.so's API: exported (the library
 * is built with -fvisibility=hidden), and nothing else is. */
#pragma GCC visibility push(default)

/**
 * struct cfs_mount_caps - what mounting an image of some format takes
 * @format: the format's short name, for messages ("v1", "EROFS")
 * @verity_check: the kernel checks each backing file's recorded digest
 *	itself, with a level to choose (struct cfs_mount_options.verity_check)
 * @upper: a writable upper directory may be stacked on the image
 * @extra_basedir: a directory may be appended to the basedir list that is
 *	no store of fs-verity files (cfsctl lazy's FUSE directory)
 */
struct cfs_mount_caps {
	const char *format;
	bool verity_check;
	bool upper;
	bool extra_basedir;
};

/**
 * cfs_image_mount_caps() - what mounting the image file at @path takes
 *
 * Reads only the image's magic: the image is not checked, so that the
 * kernel has the verdict on the rest. A file without the magic of another
 * format counts as v1, whose module then refuses it.
 *
 * Return: 0 and *@caps, or -errno when the file cannot be read.
 */
int cfs_image_mount_caps(const char *path, struct cfs_mount_caps *caps);

/**
 * struct cfs_mount_options - how cfs_image_mount() mounts an image
 * @basedirs: the base directories, in lookup order (no name holding a
 *	',', which mount(2) cannot pass), or NULL
 * @digest: the fs-verity digest the image must have, or NULL
 * @verity_check: 0 to 2 where the caps allow it; -1 for the default (1, or
 *	with @digest the kernel's own, 2)
 * @upperdir, @workdir: a writable layer on top (both or neither), or NULL
 * @userns_fd: a user namespace whose mapping the mount takes, or -1
 * @userns: its name, for messages
 */
struct cfs_mount_options {
	const struct cfs_basedirs *basedirs;
	const uint8_t *digest;
	int verity_check;
	const char *upperdir, *workdir;
	int userns_fd;
	const char *userns;
	uint64_t reserved[4]; /* zero: room for options to come (libcfs refuses others) */
};

/**
 * cfs_image_mount() - mount the image file @image on @mnt, read-only (or
 * with a writable upper directory)
 *
 * A mount the kernel refuses is reported with the last line the kernel
 * logged for it, where /dev/kmsg can be read. On failure nothing stays
 * mounted on @mnt.
 *
 * Return: 0, or -errno with a message.
 */
int cfs_image_mount(const char *image, const char *mnt, const struct cfs_mount_options *o);

/**
 * cfs_image_mount_fd() - mount the open image file @fd, named @image in
 * messages, on @mnt, as cfs_image_mount() does
 *
 * What is measured against @o->digest is what is mounted: the file @fd,
 * never whatever @image names by then (a composefs 1.0 image through
 * /proc/self/fd/N or a loop device made from @fd; a v1 image by the
 * module, which checks the digest of the file it opens itself). @fd stays
 * the caller's: a mount holds the image by itself.
 *
 * Return: 0, or -errno with a message.
 */
int cfs_image_mount_fd(int fd, const char *image, const char *mnt,
		       const struct cfs_mount_options *o);

#pragma GCC visibility pop

#endif /* CFS_MOUNT_H */
