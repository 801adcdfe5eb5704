// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The image formats cfsctl builds, side by side: what each keeps inside the
 * image rather than in a backing file, and which writer encodes it. The
 * builders (dump.c, store.c, tar.c) and cfs_tree_write() ask here, so a
 * rule of one format, such as composefs 1.0's 64-byte inline files, is
 * decided in this one place.
 */
#include <errno.h>

#include "tree.h"

struct format {
	bool holds_content; /* file content may be in the image: CONTENT, no backing file */
	uint64_t inline_max; /* with @holds_content: files read from a tree or archive up to this size stay inline */
	uint64_t max_file_size;
	int (*write)(struct cfs_node *root, const struct cfs_erofs_options *opts, int fd);
};

static int write_v1(struct cfs_node *root, const struct cfs_erofs_options *opts, int fd)
{
	(void)opts;
	return cfs_tree_write_image(root, fd);
}

static const struct format formats[] = {
	[CFS_FORMAT_V1] = {
		.max_file_size = UINT64_MAX,
		.write = write_v1,
	},
	[CFS_FORMAT_EROFS] = {
		.holds_content = true,
		.inline_max = CFS_EROFS_INLINE_MAX,
		.max_file_size = CFS_EROFS_MAX_FILE_SIZE,
		.write = cfs_tree_write_erofs,
	},
};

/* The rules of the format @opts builds for; no options: v1. */
static const struct format *format_of(const struct cfs_build_options *opts)
{
	if (opts && (unsigned int)opts->format < sizeof(formats) / sizeof(formats[0]))
		return &formats[opts->format];
	return &formats[CFS_FORMAT_V1];
}

bool cfs_format_holds_content(const struct cfs_build_options *opts)
{
	return format_of(opts)->holds_content;
}

bool cfs_format_keeps_inline(const struct cfs_build_options *opts, uint64_t size)
{
	const struct format *f = format_of(opts);

	return f->holds_content && size <= f->inline_max;
}

uint64_t cfs_format_max_file_size(const struct cfs_build_options *opts)
{
	return format_of(opts)->max_file_size;
}

int cfs_tree_write(struct cfs_node *root, enum cfs_image_format format,
		   const struct cfs_erofs_options *opts, int fd)
{
	if ((unsigned int)format >= sizeof(formats) / sizeof(formats[0]))
		return -EINVAL;
	return formats[format].write(root, opts, fd);
}
