// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Fuzz target for the image reader: opens the input as an image held in
 * memory and takes every path that cfsctl inspect takes through it. Each
 * inode is decoded, each directory listed, each name looked up again by
 * binary search (and some names that are not there: one byte changed, one
 * byte longer, one byte shorter), each path resolved, each xattr set read,
 * the whole image written as a dumpfile to /dev/null, the objects it
 * references collected as inspect objects, fetch and verify do, the image
 * compared with itself as cfsctl diff does (nothing may differ), and
 * checked as cfsctl verify does (structure only). Any crash,
 * sanitizer report, leak or hang is a bug in the reader. The same entry
 * point runs the committed regression inputs in make check.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fuzz.h"
#include "cfs-format.h"
#include "cfs/diff.h"
#include "cfs/verify.h"

/* Walks stop after this many paths, so huge fan-outs stay fast. */
#define MAX_PATHS 20000

struct ctx {
	struct cfs_image *img;
	unsigned long paths;
	uint64_t sum; /* touched bytes, so nothing is optimised away */
};

static int count_xattr(void *opaque, const struct cfs_xattr *x)
{
	struct ctx *c = opaque;

	if (x->key_len)
		c->sum += (uint8_t)x->key[x->key_len - 1];
	if (x->value_len)
		c->sum += x->value[x->value_len - 1];
	return 0;
}

/* Look up @name (@len bytes, up to 256) and a few names next to it. */
static void lookups(struct ctx *c, const struct cfs_inode *dir, const char *name, size_t len,
		    uint64_t want)
{
	char buf[CFS_MAX_NAME_LEN + 2];
	uint64_t ino;
	int r;

	r = cfs_image_lookup(c->img, dir, name, len, &ino);
	/* The iterator saw the entry; a sorted directory must find it again. */
	if (r == 0 && ino != want)
		fuzz_fail("lookup found inode %llu for an entry of inode %llu",
			  (unsigned long long)ino, (unsigned long long)want);
	if (r == -ENOENT)
		fuzz_fail("lookup does not find an entry that readdir returned");
	memcpy(buf, name, len);
	buf[len] = 'x';
	cfs_image_lookup(c->img, dir, buf, len + 1, &ino);
	if (len > 1)
		cfs_image_lookup(c->img, dir, buf, len - 1, &ino);
	buf[len - 1] ^= 0x01;
	cfs_image_lookup(c->img, dir, buf, len, &ino);
	cfs_image_lookup(c->img, dir, "", 0, &ino);
}

static int list_dir(struct ctx *c, const struct cfs_inode *dir)
{
	struct cfs_dir_iter it;
	struct cfs_dirent d;
	struct cfs_inode in;
	int r;

	r = cfs_dir_iter_init(c->img, dir, &it);
	if (r < 0)
		return r;
	while ((r = cfs_dir_iter_next(&it, &d)) > 0) {
		if (d.name_len == 0 || d.name_len > CFS_MAX_NAME_LEN)
			fuzz_fail("readdir returned a name of %zu bytes", d.name_len);
		/* What inspect ls does for each entry. */
		if (cfs_image_inode(c->img, d.ino, &in) == 0)
			c->sum += in.mode + in.size;
	}
	if (r < 0)
		return r;
	/*
	 * The whole directory read back valid, so its entries are strictly
	 * sorted: binary search must find each one, and find that one.
	 */
	cfs_dir_iter_init(c->img, dir, &it);
	while (cfs_dir_iter_next(&it, &d) > 0)
		lookups(c, dir, d.name, d.name_len, d.ino);
	return 0;
}

static int visit(void *opaque, const struct cfs_walk_entry *e)
{
	struct ctx *c = opaque;
	const struct cfs_inode *in = e->inode;
	struct cfs_inode again;

	if (++c->paths > MAX_PATHS)
		return 1;
	if (in->payload_len)
		c->sum += (uint8_t)in->payload[in->payload_len - 1];
	/* Corrupt xattrs or directories are reported; the walk goes on. */
	cfs_image_xattrs(c->img, in, count_xattr, c);
	if ((in->mode & S_IFMT) == S_IFDIR)
		list_dir(c, in);
	/*
	 * What inspect stat does. A directory on the way may be corrupt after
	 * the entry the walk came through, so any result is acceptable here.
	 */
	if (cfs_image_resolve(c->img, e->path, &again) == 0)
		c->sum += again.ino;
	return 0;
}

static int diff_entry(void *ctx, const struct cfs_diff_entry *e)
{
	bool walked = *(bool *)ctx;

	if (walked)
		fuzz_fail("an image that walks cleanly differs from itself at '%s' (%c)", e->path,
			  e->change);
	return 0;
}

/* cfs diff of the image with itself: nothing may differ. */
static void diff_self(struct cfs_image *img, bool walked)
{
	struct cfs_diff_stats st;

	if (cfs_diff_images(img, img, diff_entry, &walked, &st) == 0 && walked &&
	    (st.added || st.removed || st.modified))
		fuzz_fail("an image differs from itself");
}

/* cfs verify (structure only), which reads the image from a file. */
static void verify(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	struct cfs_verify_result res;

	if (fd < 0) {
		fd = memfd_create("cfs-fuzz-image", MFD_CLOEXEC);
		if (fd < 0)
			fuzz_fail("memfd_create: %s", strerror(errno));
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) < 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
		fuzz_fail("writing the memfd: %s", strerror(errno));
	cfs_verify_image(path, NULL, NULL, NULL, &res);
}

int fuzz_image_one(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct ctx c = { 0 };
	struct cfs_inode root;
	bool walked;
	int r;

	if (!devnull) {
		devnull = fopen("/dev/null", "w");
		if (!devnull)
			fuzz_fail("cannot open /dev/null");
	}
	r = cfs_image_open_mem(data, size, &c.img);
	if (r < 0)
		return 0;
	c.sum += cfs_image_size(c.img) + cfs_image_version(c.img);
	if (cfs_image_inode(c.img, cfs_image_root(c.img), &root) == 0) {
		if ((root.mode & S_IFMT) == S_IFDIR)
			list_dir(&c, &root);
		cfs_image_resolve(c.img, "/", &root);
		cfs_image_resolve(c.img, "a/b/../c/./d", &root);
	}
	walked = cfs_image_walk(c.img, visit, &c) == 0;
	if (c.paths <= MAX_PATHS) {
		struct cfs_objects set;

		cfs_image_write_dump(c.img, devnull);
		/* What inspect objects/missing, fetch and verify start from;
		 * twice, as for two images that share objects. */
		cfs_objects_init(&set);
		if (cfs_objects_add_image(&set, c.img) == 0)
			cfs_objects_add_image(&set, c.img);
		cfs_objects_free(&set);
		diff_self(c.img, walked);
		verify(data, size);
	}
	cfs_image_close(c.img);
	return 0;
}

#ifndef CFS_FUZZ_REPLAY
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_image_one(data, size);
}
#endif
