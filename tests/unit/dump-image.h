/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * What the unit tests that check images share: the image of a dumpfile
 * held in memory, written to a file they hold.
 */
#ifndef CFS_TEST_DUMP_IMAGE_H
#define CFS_TEST_DUMP_IMAGE_H

#include <errno.h>
#include <stdio.h>

#include "cfs/build.h"

/* Write the @format image of the @len-byte dumpfile @dump to @fd; 0 or -errno. */
static inline int dump_image(const char *dump, size_t len, enum cfs_image_format format, int fd)
{
	struct cfs_build_options bo = { .format = format, .threads = 1 };
	struct cfs_node *root = NULL;
	FILE *in = fmemopen((void *)dump, len, "r");
	int ret;

	if (!in)
		return -errno;
	ret = cfs_tree_from_dump(in, "dump", &bo, &root);
	fclose(in);
	if (ret == 0)
		ret = cfs_tree_finish(root, &bo);
	if (ret == 0)
		ret = cfs_tree_write(root, format, NULL, fd);
	cfs_tree_free(root);
	return ret;
}

#endif /* CFS_TEST_DUMP_IMAGE_H */
