// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the tar reader (build --from-tar, and every layer of an
 * image): the input, as an archive in any compression libarchive detects,
 * read into a tree without a digest store; a tree that reads is finished
 * and written as an image, which the reader must then accept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fuzz.h"
#include "cfs/oci.h"
#include "base/internal.h"

static const struct cfs_build_options opts = { .threads = 1 };

int fuzz_tar_one(const uint8_t *data, size_t size)
{
	struct cfs_node *root = NULL;
	struct cfs_image *img = NULL;
	int in, out, r;

	in = memfd_create("cfs-fuzz-tar", MFD_CLOEXEC);
	out = memfd_create("cfs-fuzz-img", MFD_CLOEXEC);
	if (in < 0 || out < 0)
		fuzz_fail("memfd_create: %s", strerror(errno));
	if (write(in, data, size) != (ssize_t)size || lseek(in, 0, SEEK_SET) != 0)
		fuzz_fail("write: %s", strerror(errno));
	r = cfs_tree_from_tar(in, "fuzz.tar", &opts, &root);
	if (r == 0)
		r = cfs_tree_finish(root, &opts);
	if (r == 0 && cfs_tree_write(root, CFS_FORMAT_V1, NULL, out) == 0) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/self/fd/%d", out);
		r = cfs_image_open(path, &img);
		if (r)
			fuzz_fail("the image of a tree read from a tar does not open: %d", r);
		cfs_image_close(img);
	}
	cfs_tree_free(root);
	close(in);
	close(out);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_tar_one(data, size);
}
#endif
