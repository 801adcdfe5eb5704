// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The image formats cfsctl builds, side by side: their names, what each
 * keeps inside the image rather than in a backing file, which writer
 * encodes it and whether that writer takes options. The
 * builders (dump.c, store.c, tar.c) and cfs_tree_write() ask here, so a
 * rule of one format, such as composefs 1.0's 64-byte inline files, is
 * decided in this one place.
 */
#include <errno.h>
#include <string.h>

#include "tree.h"

struct format {
	const char *name; /* as cfsctl build --format names it */
	bool takes_options; /* the writer takes struct cfs_write_options */
	bool holds_content; /* file content may be in the image: CONTENT, no backing file */
	uint64_t inline_max; /* with @holds_content: files read from a tree or archive up to this size stay inline */
	uint64_t max_file_size;
	int (*write)(struct cfs_node *root, const struct cfs_write_options *opts, int fd);
};

static int write_v1(struct cfs_node *root, const struct cfs_write_options *opts, int fd)
{
	(void)opts;
	return cfs_tree_write_image(root, fd);
}

static const struct format formats[] = {
	[CFS_FORMAT_V1] = {
		.name = "v1",
		.max_file_size = UINT64_MAX,
		.write = write_v1,
	},
	[CFS_FORMAT_EROFS] = {
		.name = "erofs",
		.takes_options = true,
		.holds_content = true,
		.inline_max = CFS_EROFS_INLINE_MAX,
		.max_file_size = CFS_EROFS_MAX_FILE_SIZE,
		.write = cfs_tree_write_erofs,
	},
};

_Static_assert(CFS_EROFS_INLINE_MAX <= CFS_FORMAT_INLINE_MAX,
	       "a builder keeps the content of every file a format may keep inline");

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

#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

int cfs_format_from_name(const char *name, enum cfs_image_format *out)
{
	for (unsigned int i = 0; i < N_FORMATS; i++) {
		if (strcmp(name, formats[i].name) == 0) {
			*out = (enum cfs_image_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool cfs_format_takes_options(enum cfs_image_format format)
{
	return (unsigned int)format < N_FORMATS && formats[format].takes_options;
}

int cfs_tree_write(struct cfs_node *root, enum cfs_image_format format,
		   const struct cfs_write_options *opts, int fd)
{
	const struct format *f;

	if ((unsigned int)format >= N_FORMATS)
		return -EINVAL;
	f = &formats[format];
	/* What a format does not take must be left at the defaults. */
	if (opts && !f->takes_options &&
	    (opts->min_version != 0 || opts->max_version != 1 || opts->user_xattrs)) {
		cfs_msg("a %s image takes no composefs 1.0 options (versions, user xattrs only)",
			f->name);
		return -EINVAL;
	}
	return f->write(root, opts, fd);
}
