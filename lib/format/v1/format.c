// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The v1 format's table: all that the shared code asks of a v1 image, for
 * writing, reading, checking and mounting (struct cfs_format, format.h).
 */
#include "format/format.h"
#include "v1.h"

const struct cfs_format cfs_format_v1 = {
	.name = "v1",
	.max_file_size = UINT64_MAX,
	.write = cfs_v1_write,

	/* No magic: v1 takes any image no other format claims, and refuses what is not one. */
	.open = cfs_v1_open,
	.inode = cfs_v1_inode,
	.dir_iter_init = cfs_v1_dir_iter_init,
	.dir_iter_next = cfs_v1_dir_iter_next,
	.dir_iter_skip = cfs_v1_dir_iter_skip,
	.lookup = cfs_v1_lookup,
	.xattrs = cfs_v1_xattrs,
	.describe = cfs_v1_describe,
	.inode_describe = cfs_v1_inode_describe,

	.verify = cfs_v1_verify,

	.mount_caps = {
		.format = "v1",
		.verity_check = true,
		.extra_basedir = true,
	},
	.mount = cfs_v1_mount,
};
