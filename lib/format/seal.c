// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The composefs seal of a tree (cfs_tree_seal(), include/cfs/build.h): the
 * fs-verity digest of the tree's composefs 1.0 image, written with the
 * defaults, which cfsctl push puts in a manifest's annotation and pull
 * checks. The image is written to an unnamed temporary and measured.
 *
 * A tree finished for another format can be sealed too when it kept the
 * content of the files the composefs 1.0 image holds inline (a registry
 * pull of a sealed image keeps it: cfs_tar_keep_small()); the image of a
 * tree that lacks one is not written, rather than measured wrong.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cfs/build.h"
#include "base/internal.h"
#include "base/tree.h"

/* The format whose image the seal measures (composefs-rs's "merged.erofs"). */
#define SEAL_FORMAT CFS_FORMAT_EROFS

static const struct cfs_build_options seal_opts = { .format = SEAL_FORMAT };

bool cfs_seal_keeps_inline(uint64_t size)
{
	return cfs_format_keeps_inline(&seal_opts, size);
}

bool cfs_seal_is_image(enum cfs_image_format format, const struct cfs_write_options *wo)
{
	return format == SEAL_FORMAT &&
	       (!wo || (wo->min_version == 0 && wo->max_version == 1 && !wo->user_xattrs));
}

bool cfs_tree_can_seal(const struct cfs_build_options *opts)
{
	return opts->format == SEAL_FORMAT;
}

/* cfs_tree_walk(): 1 (and the node in *ctx) at a small file without its content */
static int lacks_content(void *ctx, struct cfs_node *n)
{
	if (!S_ISREG(n->mode) || n->link_target || n->size == 0 || n->content ||
	    !cfs_seal_keeps_inline(n->size))
		return 0;
	*(struct cfs_node **)ctx = n;
	return 1;
}

int cfs_seal_write(struct cfs_node *root, const struct cfs_build_options *opts, int fd)
{
	if (!cfs_tree_can_seal(opts)) {
		struct cfs_node *n = NULL;
		int r = cfs_tree_walk(root, lacks_content, &n);

		if (r == 1) {
			char *where = cfs_node_where(n);

			cfs_msg("the seal measures a composefs 1.0 image, which holds the small file %s: this tree, finished for another format, did not keep its content",
				where ? where : "?");
			free(where);
			return -EINVAL;
		}
		if (r)
			return r;
	}
	return cfs_tree_write(root, SEAL_FORMAT, NULL, fd);
}

int cfs_tree_seal(struct cfs_node *root, const struct cfs_build_options *opts,
		  const char *tmpdir, uint8_t digest[CFS_DIGEST_SIZE])
{
	int fd, r;

	fd = cfs_tmpfile(-1, tmpdir);
	if (fd < 0)
		return fd;
	r = cfs_seal_write(root, opts, fd);
	if (r == 0)
		r = cfs_verity_digest_fd(fd, digest);
	if (r && r != -EINVAL)
		cfs_msg("the composefs 1.0 image of the tree, for its seal: %s", strerror(-r));
	close(fd);
	return r;
}
