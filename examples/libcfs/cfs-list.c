// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs-list: a program outside cfs that links libcfs. It lists every path of
 * an image of either format, with its type and size, then checks the
 * image (and, given a store, the objects its files use) as cfsctl verify
 * does. Build it against an installed libcfs:
 *
 *	cc -o cfs-list cfs-list.c $(pkg-config --cflags --libs libcfs)
 *
 * usage: cfs-list IMAGE [STORE]; exit 0 when the image verifies, 1 when
 * it does not, 2 on bad usage.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <cfs/image.h>
#include <cfs/store.h>
#include <cfs/verify.h>
#include <cfs/version.h>

static int show(void *ctx, const struct cfs_walk_entry *e)
{
	(void)ctx;
	printf("%s %s %" PRIu64 "\n", cfs_type_name(e->inode->mode), e->path, e->inode->size);
	return 0;
}

static void problem(void *ctx, const struct cfs_verify_problem *p)
{
	(void)ctx;
	fprintf(stderr, "cfs-list: %s: %s: %s\n",
		p->severity == CFS_VERIFY_ERROR ? "error" : "warning",
		p->path ? p->path : "-", p->message);
}

int main(int argc, char **argv)
{
	struct cfs_verify_options vo = { 0 };
	struct cfs_basedirs dirs = { 0 };
	struct cfs_verify_result res;
	struct cfs_image *img;
	int r;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: cfs-list IMAGE [STORE] (libcfs %d.%d)\n",
			CFS_VERSION_MAJOR, CFS_VERSION_MINOR);
		return 2;
	}
	r = cfs_image_open(argv[1], &img);
	if (r < 0)
		return 1; /* libcfs said why on stderr */
	r = cfs_image_walk(img, show, NULL);
	cfs_image_close(img);
	if (r != 0)
		return 1;
	if (argc == 3) {
		if (cfs_basedirs_add(&dirs, argv[2]) < 0)
			return 1;
		vo.basedirs = &dirs;
	}
	r = cfs_verify_image(argv[1], &vo, problem, NULL, &res);
	cfs_basedirs_free(&dirs);
	if (r < 0)
		return 1;
	printf("verify: %" PRIu64 " errors, %" PRIu64 " inodes, %" PRIu64 " objects checked\n",
	       res.errors, res.inodes, res.objects_ok);
	return res.errors ? 1 : 0;
}
