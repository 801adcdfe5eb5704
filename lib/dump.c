// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_from_dump(): the composefs-dump(5) parser (not written yet).
 */
#include <errno.h>

#include "tree.h"

int cfs_tree_from_dump(FILE *in, const char *name, const struct cfs_build_options *opts,
		       struct cfs_node **root)
{
	(void)in;
	(void)opts;
	(void)root;
	cfs_msg("%s: reading dumpfiles is not supported yet", name);
	return -EOPNOTSUPP;
}
