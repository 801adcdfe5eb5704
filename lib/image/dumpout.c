// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Writes an image as a composefs-dump(5) file: one line per path, in the
 * order of cfs_image_walk() (depth first, each directory's entries in byte
 * order, parents first), so that parsing the output and building it again
 * gives the same image. Hardlinks after the first path of their inode are
 * written as "@" entries that name that first path and repeat the inode's
 * fields. The lines are those composefs-info writes: an empty xattr value
 * is nothing after the '=', and '=' in a value is escaped as in a key.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "format/reader.h"

struct dump_ctx {
	struct cfs_image *img;
	FILE *out;
};

static int put_xattr(void *opaque, const struct cfs_xattr *x)
{
	FILE *out = opaque;
	int ret;

	if (fputc(' ', out) == EOF)
		return -EIO;
	ret = cfs_escape(out, x->key, x->key_len, CFS_ESCAPE_EQUAL);
	if (ret < 0)
		return ret;
	if (fputc('=', out) == EOF)
		return -EIO;
	if (x->value_len == 0)
		return 0;
	return cfs_escape(out, x->value, x->value_len, CFS_ESCAPE_EQUAL | CFS_ESCAPE_LONE_DASH);
}

static int dump_one(void *opaque, const struct cfs_walk_entry *e)
{
	struct dump_ctx *c = opaque;
	const struct cfs_inode *in = e->inode;
	uint32_t type = in->mode & S_IFMT;
	FILE *out = c->out;
	int ret;

	ret = cfs_escape(out, e->path, e->path_len, 0);
	if (ret < 0)
		return ret;
	/* SIZE is st_size as the image records it (0 unless a regular file,
	 * for images this project writes). */
	if (fprintf(out, " %" PRIu64 " %s%o %" PRIu32 " %" PRIu32 " %" PRIu32 " %" PRIu32
			 " %" PRId64 ".%" PRIu32 " ",
		    in->size, e->first_path ? "@" : "", in->mode, in->nlink, in->uid, in->gid,
		    in->rdev, in->mtime_sec, in->mtime_nsec) < 0)
		return -EIO;
	if (e->first_path)
		ret = cfs_escape(out, e->first_path, strlen(e->first_path), 0);
	else if ((type == S_IFREG || type == S_IFLNK) && in->payload_len)
		ret = cfs_escape(out, in->payload, in->payload_len, CFS_ESCAPE_LONE_DASH);
	else
		ret = fputc('-', out) == EOF ? -EIO : 0;
	if (ret < 0)
		return ret;
	if (fputc(' ', out) == EOF)
		return -EIO;
	if (cfs_inode_content_in_image(c->img, in)) {
		/* CONTENT: a composefs 1.0 image holds small files itself. */
		uint8_t *buf = malloc(in->size ? in->size : 1);

		if (!buf)
			return -ENOMEM;
		ret = cfs_image_read(c->img, in, 0, buf, in->size);
		if (ret == 0)
			ret = cfs_escape(out, buf, in->size, CFS_ESCAPE_LONE_DASH);
		free(buf);
		if (ret < 0)
			return ret;
	} else if (fputc('-', out) == EOF) {
		return -EIO;
	}
	if (fputc(' ', out) == EOF)
		return -EIO;
	if (in->has_digest) {
		char hex[CFS_DIGEST_HEX_SIZE];

		cfs_digest_to_hex(in->digest, hex);
		ret = fputs(hex, out);
	} else {
		ret = fputc('-', out);
	}
	if (ret == EOF)
		return -EIO;
	ret = cfs_image_xattrs(c->img, in, put_xattr, out);
	if (ret < 0)
		return ret;
	return fputc('\n', out) == EOF ? -EIO : 0;
}

int cfs_image_write_dump(struct cfs_image *img, FILE *out)
{
	struct dump_ctx c = { .img = img, .out = out };
	int ret;

	ret = cfs_image_walk(img, dump_one, &c);
	if (ret > 0)
		ret = -EIO;
	if (ret == 0 && (fflush(out) == EOF || ferror(out)))
		ret = -EIO;
	return ret;
}
