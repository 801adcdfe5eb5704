// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The composefs seal of a tree (cfs_tree_seal(), include/cfs/build.h): the
 * fs-verity digest of the tree's composefs 1.0 image, written with the
 * defaults, which cfsctl push puts in a manifest's annotation and pull
 * checks. The image is written to an unnamed temporary and measured.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "cfs/build.h"
#include "base/internal.h"

/* The format whose image the seal measures (composefs-rs's "merged.erofs"). */
#define SEAL_FORMAT CFS_FORMAT_EROFS

bool cfs_tree_can_seal(const struct cfs_build_options *opts)
{
	return opts->format == SEAL_FORMAT;
}

int cfs_tree_seal(struct cfs_node *root, const struct cfs_build_options *opts,
		  const char *tmpdir, uint8_t digest[CFS_DIGEST_SIZE])
{
	int fd, r;

	if (!cfs_tree_can_seal(opts)) {
		cfs_msg("the seal measures a composefs 1.0 image: this tree was finished for another format");
		return -EINVAL;
	}
	fd = cfs_tmpfile(-1, tmpdir);
	if (fd < 0)
		return fd;
	r = cfs_tree_write(root, SEAL_FORMAT, NULL, fd);
	if (r == 0)
		r = cfs_verity_digest_fd(fd, digest);
	if (r)
		cfs_msg("the composefs 1.0 image of the tree, for its seal: %s", strerror(-r));
	close(fd);
	return r;
}
