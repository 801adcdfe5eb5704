// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The composefs 1.0 (EROFS) format's table: all that the shared code asks
 * of such an image, for writing, reading, checking and mounting (struct
 * cfs_format, format.h).
 */
#include "erofs.h"
#include "format/format.h"
#include "base/tree.h"

_Static_assert(CFS_EROFS_INLINE_MAX <= CFS_FORMAT_INLINE_MAX,
	       "a builder keeps the content of every file a format may keep inline");

const struct cfs_format cfs_format_erofs = {
	.name = "erofs",
	.takes_options = true,
	.holds_content = true,
	.inline_max = CFS_EROFS_INLINE_MAX,
	.max_file_size = CFS_EROFS_MAX_FILE_SIZE,
	.write = cfs_erofs_write,

	.magic = cfs_erofs_magic,
	.open = cfs_erofs_open,
	.close = cfs_erofs_close,
	.inode = cfs_erofs_inode,
	.dir_iter_init = cfs_erofs_dir_iter_init,
	.dir_iter_next = cfs_erofs_dir_iter_next,
	.dir_iter_skip = cfs_erofs_dir_iter_skip,
	/* No lookup: the front end's scan of the entries; blocks are small. */
	.xattrs = cfs_erofs_xattrs,
	.read = cfs_erofs_read,
	.content_in_image = cfs_erofs_content_in_image,
	.describe = cfs_erofs_describe,
	.inode_describe = cfs_erofs_inode_describe,

	.verify = cfs_erofs_verify,

	.mount_caps = {
		.format = "EROFS",
		.upper = true,
	},
	.mount = cfs_erofs_mount,
};
