// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The list of formats, and what the shared code asks of it: a format by its
 * number, its name or an image's magic, and the builders' rules of what a
 * format keeps inside the image. The builders (dump.c, store.c, tar.c) and
 * cfs_tree_write() ask here, and this file asks each format's table
 * (format.h), so a rule of one format, such as composefs 1.0's 64-byte
 * inline files, is decided in that format's directory.
 */
#include <errno.h>
#include <string.h>

#include "format.h"
#include "base/tree.h"
#include "base/internal.h"

/*
 * By number; the formats with a magic are tried in this order, and the one
 * without (v1) takes any image the others do not.
 */
static const struct cfs_format *const formats[] = {
	[CFS_FORMAT_V1] = &cfs_format_v1,
	[CFS_FORMAT_EROFS] = &cfs_format_erofs,
};

#define N_FORMATS (sizeof(formats) / sizeof(formats[0]))

const struct cfs_format *cfs_format_get(enum cfs_image_format id)
{
	return (unsigned int)id < N_FORMATS ? formats[id] : NULL;
}

const struct cfs_format *cfs_format_probe(const uint8_t *data, uint64_t size)
{
	const struct cfs_format *rest = NULL;

	for (size_t i = 0; i < N_FORMATS; i++) {
		if (!formats[i]->magic)
			rest = formats[i];
		else if (formats[i]->magic(data, size))
			return formats[i];
	}
	return rest;
}

/* The rules of the format @opts builds for; no options: v1. */
static const struct cfs_format *format_of(const struct cfs_build_options *opts)
{
	const struct cfs_format *f = opts ? cfs_format_get(opts->format) : NULL;

	return f ? f : formats[CFS_FORMAT_V1];
}

bool cfs_format_holds_content(const struct cfs_build_options *opts)
{
	return format_of(opts)->holds_content;
}

bool cfs_format_keeps_inline(const struct cfs_build_options *opts, uint64_t size)
{
	const struct cfs_format *f = format_of(opts);

	return f->holds_content && size <= f->inline_max;
}

uint64_t cfs_format_max_file_size(const struct cfs_build_options *opts)
{
	return format_of(opts)->max_file_size;
}

int cfs_format_from_name(const char *name, enum cfs_image_format *out)
{
	for (unsigned int i = 0; i < N_FORMATS; i++) {
		if (strcmp(name, formats[i]->name) == 0) {
			*out = (enum cfs_image_format)i;
			return 0;
		}
	}
	return -EINVAL;
}

bool cfs_format_takes_options(enum cfs_image_format format)
{
	const struct cfs_format *f = cfs_format_get(format);

	return f && f->takes_options;
}

int cfs_tree_write(struct cfs_node *root, enum cfs_image_format format,
		   const struct cfs_write_options *opts, int fd)
{
	const struct cfs_format *f = cfs_format_get(format);

	if (!f)
		return -EINVAL;
	if (opts && !cfs_reserved_ok(opts->reserved, sizeof(opts->reserved), "write options"))
		return -EINVAL;
	/* What a format does not take must be left at the defaults. */
	if (opts && !f->takes_options &&
	    (opts->min_version != 0 || opts->max_version != 1 || opts->user_xattrs)) {
		cfs_msg("a %s image takes no composefs 1.0 options (versions, user xattrs only)",
			f->name);
		return -EINVAL;
	}
	return f->write(root, opts, fd);
}
