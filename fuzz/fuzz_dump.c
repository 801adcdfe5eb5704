// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the dumpfile parser, and through it the writer and the
 * reader. Any input must parse or be refused without a crash or a leak.
 * When it parses, the tree is finished without a digest store (inline
 * contents are hashed in memory; nothing is read from the filesystem),
 * written to a memfd, read back with the reader and dumped; that dump must
 * parse and build again to the very same bytes:
 * parse -> write -> read -> dump -> parse -> write is the identity on
 * images. This holds every component to the others: the writer must only
 * write what the reader accepts, and the dump must lose nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "cfs/build.h"
#include "base/internal.h"

static const struct cfs_build_options opts = { .threads = 1 };

/* Parse @len bytes of dump and build its image into *@img; 0 or -errno. */
static int build(const void *dump, size_t len, uint8_t **img, size_t *img_len)
{
	struct cfs_node *root = NULL;
	struct stat st;
	FILE *in;
	int fd = -1, r;

	*img = NULL;
	if (len == 0)
		return -EINVAL;
	in = fmemopen((void *)dump, len, "r");
	if (!in)
		fuzz_fail("fmemopen: %s", strerror(errno));
	r = cfs_tree_from_dump(in, "fuzz", &opts, &root);
	fclose(in);
	if (r)
		return r;
	r = cfs_tree_finish(root, &opts);
	if (r)
		goto out;
	fd = memfd_create("cfs-fuzz", MFD_CLOEXEC);
	if (fd < 0)
		fuzz_fail("memfd_create: %s", strerror(errno));
	r = cfs_tree_write(root, CFS_FORMAT_V1, NULL, fd);
	if (r)
		goto out;
	if (fstat(fd, &st) < 0)
		fuzz_fail("fstat: %s", strerror(errno));
	*img_len = (size_t)st.st_size;
	*img = malloc(*img_len ? *img_len : 1);
	if (!*img)
		fuzz_fail("out of memory");
	if (pread(fd, *img, *img_len, 0) != (ssize_t)*img_len)
		fuzz_fail("reading the memfd back: %s", strerror(errno));
out:
	if (fd >= 0)
		close(fd);
	cfs_tree_free(root);
	return r;
}

int fuzz_dump_one(const uint8_t *data, size_t size)
{
	uint8_t *a = NULL, *b = NULL;
	size_t a_len = 0, b_len = 0, d_len = 0;
	struct cfs_image *img;
	char *d = NULL;
	FILE *out;
	int r;

	if (build(data, size, &a, &a_len))
		goto out;

	/* The reader must accept all the writer writes. */
	r = cfs_image_open_mem(a, a_len, &img);
	if (r)
		fuzz_fail("the reader refuses a written image: %s", strerror(-r));
	out = open_memstream(&d, &d_len);
	if (!out)
		fuzz_fail("open_memstream: %s", strerror(errno));
	r = cfs_image_write_dump(img, out);
	cfs_image_close(img);
	if (fclose(out) != 0)
		fuzz_fail("closing the dump stream");
	if (r)
		fuzz_fail("dumping a written image: %s", strerror(-r));

	r = build(d, d_len, &b, &b_len);
	if (r)
		fuzz_fail("the dump of a written image does not build: %s\n%.*s", strerror(-r),
			  (int)(d_len < 4096 ? d_len : 4096), d);
	if (a_len != b_len || memcmp(a, b, a_len) != 0)
		fuzz_fail("rebuilding from the dump gives another image (%zu vs %zu bytes)\n%.*s",
			  a_len, b_len, (int)(d_len < 4096 ? d_len : 4096), d);
out:
	free(a);
	free(b);
	free(d);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_dump_one(data, size);
}
#endif
