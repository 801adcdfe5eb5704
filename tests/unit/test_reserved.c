// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of the public structs' room to grow: an option struct whose
 * reserved fields are not zero (a caller built against a later libcfs,
 * asking for an option this one lacks) is refused with -EINVAL by every
 * entry point that takes it, before anything is opened or written; the
 * same call with the fields zero gets past that check. Output structs'
 * reserved fields come back zeroed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cfs/build.h"
#include "cfs/image.h"
#include "cfs/mount.h"
#include "cfs/verify.h"
#include "check.h"

static void quiet(void *ctx, const char *msg)
{
	(void)ctx;
	(void)msg;
}

int main(void)
{
	struct cfs_verify_options vo = { 0 };
	struct cfs_verify_result res;
	struct cfs_mount_options mo = { .verity_check = -1, .userns_fd = -1 };
	struct cfs_build_options bo = { 0 };
	struct cfs_write_options wo = { .max_version = 1 };
	struct cfs_node *root = NULL;
	FILE *dump;
	int fd, r;

	cfs_set_message_handler(quiet, NULL);

	/* verify: zero reserved gets as far as opening the (missing) image */
	r = cfs_verify_image("/nonexistent/image", &vo, NULL, NULL, &res);
	CHECK(r == -ENOENT, "verify with zero reserved: %d", r);
	vo.reserved[3] = 1;
	memset(&res, 0xff, sizeof(res));
	r = cfs_verify_image("/nonexistent/image", &vo, NULL, NULL, &res);
	CHECK(r == -EINVAL, "verify with a reserved field set: %d", r);
	CHECK(res.reserved[0] == 0 && res.reserved[3] == 0, "verify result's reserved not zeroed");

	/* mount: refused before the file is even looked at */
	fd = open("/dev/null", O_RDONLY);
	CHECK(fd >= 0, "open /dev/null");
	r = cfs_image_mount_fd(fd, "/dev/null", "/nonexistent", &mo);
	CHECK(r == -EINVAL, "mount of /dev/null: %d", r); /* not a regular file */
	mo.reserved[0] = 7;
	r = cfs_image_mount_fd(fd, "/dev/null", "/nonexistent", &mo);
	CHECK(r == -EINVAL, "mount with a reserved field set: %d", r);
	close(fd);

	/* build: a dumpfile's tree, with and without a reserved field set */
	dump = fmemopen((char *)"/ 0 40755 2 0 0 0 0.0 - - -\n", 28, "r");
	CHECK(dump != NULL, "fmemopen");
	r = cfs_tree_from_dump(dump, "dump", &bo, &root);
	CHECK(r == 0 && root, "dump with zero reserved: %d", r);
	fclose(dump);
	bo.reserved[1] = 1;
	dump = fmemopen((char *)"/ 0 40755 2 0 0 0 0.0 - - -\n", 28, "r");
	r = cfs_tree_from_dump(dump, "dump", &bo, &root);
	CHECK(r == -EINVAL, "dump with a reserved field set: %d", r);
	fclose(dump);
	bo.reserved[1] = 0;
	if (root) {
		r = cfs_tree_finish(root, &bo);
		CHECK(r == 0, "finish: %d", r);
		fd = open("/dev/null", O_WRONLY);
		r = cfs_tree_write(root, CFS_FORMAT_EROFS, &wo, fd);
		CHECK(r == 0, "write with zero reserved: %d", r);
		wo.reserved[2] = 1;
		r = cfs_tree_write(root, CFS_FORMAT_EROFS, &wo, fd);
		CHECK(r == -EINVAL, "write with a reserved field set: %d", r);
		bo.reserved[0] = 1;
		r = cfs_tree_finish(root, &bo);
		CHECK(r == -EINVAL, "finish with a reserved field set: %d", r);
		close(fd);
		cfs_tree_free(root);
	}
	return check_exit("reserved-field");
}
