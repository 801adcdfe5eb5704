// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * One table of v1 inodes, valid and corrupt, that the three decoders of a
 * v1 inode must judge alike: the kernel module's (kmod/reader.c, built for
 * userspace on fuzz/kshim/), the library reader's and cfsctl verify's
 * (format/v1/inode.c in its two modes). Each row is one inode, written
 * into a small image whose root names it; a valid one must be used by all
 * three (verify reports no error), a corrupt one refused by all three
 * (verify reports an error). A rule changed in one decoder and not in the
 * others fails here.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "check.h"
#include "kreader/kinode.h"
#include "cfs/verify.h"

#define F(x) CFS_INODE_FLAGS_##x
#define HEX62 "cdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789"
/* A chunk table of one chunk: 1 entry, 13 bytes, at data offset 16 (below). */
#define TABLE1 "\x01\0\0\0" "\x01\0\x0d\0" "\x10\0\0\0\0\0\0\0"

struct row {
	const char *what;
	bool corrupt;
	uint32_t flags; /* the fields written */
	uint32_t mode, nlink, rdev, nsec;
	uint64_t size;
	const char *payload; /* the bytes before the fixed chunk */
	uint32_t pbytes; /* their number, when not strlen(payload) */
	uint32_t fill; /* or this many bytes of 'a' */
	bool plen_set; /* the PAYLOAD field is @plen, not the bytes' number */
	uint32_t plen;
	uint64_t xoff; /* XATTRS: 0 and 0 name a valid set */
	uint32_t xlen;
	uint32_t cut; /* the inode section ends this many bytes before the fixed chunk does */
};

static const struct row rows[] = {
	/* what all three use */
	{ "a file of defaults", false, .flags = 0 },
	{ "a file with a backing path", false, .flags = F(PAYLOAD) | F(LOW_SIZE), .size = 5, .payload = "ab/cd" },
	{ "a digest spelled by the backing path", false,
	  .flags = F(PAYLOAD) | F(LOW_SIZE) | F(DIGEST_FROM_PAYLOAD), .size = 5, .payload = "ab/" HEX62 },
	{ "a stored digest", false, .flags = F(PAYLOAD) | F(LOW_SIZE) | F(DIGEST), .size = 5, .payload = "ab/cd" },
	{ "an empty file without a backing path", false, .flags = F(MODE), .mode = 0100600 },
	{ "DIGEST_FROM_PAYLOAD on an empty file without a backing path", false,
	  .flags = F(DIGEST_FROM_PAYLOAD) },
	{ "the largest size", false, .flags = F(PAYLOAD) | F(LOW_SIZE) | F(HIGH_SIZE),
	  .size = INT64_MAX, .payload = "ab/cd" },
	{ "a symlink", false, .flags = F(PAYLOAD) | F(MODE), .mode = 0120777, .payload = "../t" },
	{ "a symlink target of 4096 bytes", false, .flags = F(PAYLOAD) | F(MODE), .mode = 0120777, .fill = 4096 },
	{ "a directory with a chunk table", false, .flags = F(PAYLOAD) | F(MODE), .mode = 040755,
	  .payload = TABLE1, .pbytes = 16 },
	{ "an empty directory", false, .flags = F(MODE), .mode = 041777 },
	{ "a device", false, .flags = F(MODE) | F(RDEV), .mode = 020644, .rdev = 0x0103 },
	{ "a fifo's payload is ignored", false, .flags = F(PAYLOAD) | F(MODE), .mode = 010644, .payload = "x\0y",
	  .pbytes = 3 },
	{ "an xattr set", false, .flags = F(XATTRS) },
	{ "a link count of 2", false, .flags = F(NLINK), .nlink = 2 },
	{ "nanoseconds 999999999", false, .flags = F(TIMES) | F(TIMES_NSEC), .nsec = 999999999 },

	/* what all three refuse */
	{ "an unknown flag", true, .flags = 1U << 12 },
	{ "the highest unknown flag", true, .flags = 1U << 31 },
	{ "a fixed chunk past the inode section", true, .flags = F(MODE) | F(NLINK), .mode = 0100644,
	  .nlink = 1, .cut = 4 },
	{ "a mode of no file type", true, .flags = F(MODE), .mode = 0170644 },
	{ "a mode with unknown bits", true, .flags = F(MODE), .mode = 0300644 },
	{ "a link count of 0", true, .flags = F(NLINK), .nlink = 0 },
	{ "a directory's link count of 0", true, .flags = F(MODE) | F(NLINK), .mode = 040755, .nlink = 0 },
	{ "nanoseconds 1000000000", true, .flags = F(TIMES) | F(TIMES_NSEC), .nsec = 1000000000 },
	{ "a size beyond the largest", true, .flags = F(PAYLOAD) | F(LOW_SIZE) | F(HIGH_SIZE),
	  .size = (uint64_t)INT64_MAX + 1, .payload = "ab/cd" },
	{ "a non-empty file without a backing path", true, .flags = F(LOW_SIZE), .size = 5 },
	{ "a payload starting before the inode section", true, .flags = F(PAYLOAD), .size = 0,
	  .plen_set = true, .plen = 0x10000 },
	{ "a backing path of 4097 bytes", true, .flags = F(PAYLOAD) | F(LOW_SIZE), .size = 1, .fill = 4097 },
	{ "a NUL in a backing path", true, .flags = F(PAYLOAD) | F(LOW_SIZE), .size = 5, .payload = "ab\0cd",
	  .pbytes = 5 },
	{ "a backing path not spelling its digest", true,
	  .flags = F(PAYLOAD) | F(LOW_SIZE) | F(DIGEST_FROM_PAYLOAD), .size = 5, .payload = "ab/zz" },
	{ "an empty symlink target", true, .flags = F(MODE), .mode = 0120777 },
	{ "a symlink target of 4097 bytes", true, .flags = F(PAYLOAD) | F(MODE), .mode = 0120777, .fill = 4097 },
	{ "a NUL in a symlink target", true, .flags = F(PAYLOAD) | F(MODE), .mode = 0120777, .payload = "a\0b",
	  .pbytes = 3 },
	{ "an xattr set of 1 byte", true, .flags = F(XATTRS), .xoff = 32, .xlen = 1 },
	{ "an xattr set of 4097 bytes", true, .flags = F(XATTRS), .xoff = 0, .xlen = 4097 },
	{ "an xattr set past the end", true, .flags = F(XATTRS), .xoff = 1U << 20, .xlen = 13 },
	{ "a directory payload of 2 bytes", true, .flags = F(PAYLOAD) | F(MODE), .mode = 040755,
	  .payload = "\x01\0", .pbytes = 2 },
	{ "a chunk table of 0 chunks", true, .flags = F(PAYLOAD) | F(MODE), .mode = 040755,
	  .payload = "\0\0\0\0" "\x01\0\x0d\0" "\x10\0\0\0\0\0\0\0", .pbytes = 16 },
	{ "a chunk table of 2 chunks in room for 1", true, .flags = F(PAYLOAD) | F(MODE), .mode = 040755,
	  .payload = "\x02\0\0\0" "\x01\0\x0d\0" "\x10\0\0\0\0\0\0\0", .pbytes = 16 },
};

struct image {
	uint8_t *buf;
	size_t len;
	uint64_t ino; /* the row's inode */
};

static void dentry(uint8_t *p, uint64_t ino, uint8_t d_type, char name)
{
	put64(p, ino);
	p[8] = d_type;
	p[9] = 1; /* name_len */
	put16(p + 10, 0); /* name_offset */
	p[12] = (uint8_t)name;
}

/*
 * The image: the header; the root (a chunk table and its fixed chunk, at
 * 0 and 16), a file of defaults (at 28) and the row's payload and fixed
 * chunk in the inode section; then the root's chunk naming the row's inode
 * "f" (data offset 0), a chunk naming the file "g" (16) for a directory
 * row, and a valid xattr set (32).
 */
static struct image build(const struct row *r)
{
	uint32_t pbytes = r->fill ? r->fill : r->pbytes ? r->pbytes : r->payload ? (uint32_t)strlen(r->payload) : 0;
	uint32_t esize = cfs_inode_encoded_size(r->flags);
	uint64_t ino = 32 + pbytes, doff = CFS_INODE_SECTION_OFFSET + ino + esize - r->cut;
	struct image im = { .len = doff + 64, .ino = ino };
	uint8_t *s, *p, *d;

	im.buf = calloc(1, im.len);
	if (!im.buf)
		abort();
	im.buf[0] = CFS_VERSION;
	put32(im.buf + 4, CFS_MAGIC);
	put64(im.buf + 8, doff);
	put64(im.buf + 16, 16); /* the root */
	s = im.buf + CFS_INODE_SECTION_OFFSET;
	memcpy(s, TABLE1, 16);
	put64(s + 8, 0); /* the root's chunk is at data offset 0 */
	put32(s + 16, F(PAYLOAD) | F(MODE));
	put32(s + 20, 16);
	put32(s + 24, 040755);
	put32(s + 28, 0); /* "g": a file of defaults */

	if (r->fill)
		memset(s + 32, 'a', pbytes);
	else if (pbytes)
		memcpy(s + 32, r->payload, pbytes);
	p = s + ino;
	put32(p, r->flags), p += 4;
	if (r->flags & F(PAYLOAD))
		put32(p, r->plen_set ? r->plen : pbytes), p += 4;
	if (r->flags & F(MODE))
		put32(p, r->mode), p += 4;
	if (r->flags & F(NLINK))
		put32(p, r->nlink), p += 4;
	if (r->flags & F(UIDGID))
		p += 8;
	if (r->flags & F(RDEV))
		put32(p, r->rdev), p += 4;
	if (r->flags & F(TIMES))
		put64(p, 1000), put64(p + 8, 1000), p += 16;
	if (r->flags & F(TIMES_NSEC))
		put32(p, r->nsec), put32(p + 4, r->nsec), p += 8;
	if (r->flags & F(LOW_SIZE))
		put32(p, (uint32_t)r->size), p += 4;
	if (r->flags & F(HIGH_SIZE))
		put32(p, (uint32_t)(r->size >> 32)), p += 4;
	if (r->flags & F(XATTRS)) {
		put64(p, r->xlen ? r->xoff : 32);
		put32(p + 8, r->xlen ? r->xlen : 13);
		p += 12;
	}
	if (r->flags & F(DIGEST))
		memset(p, 0xab, CFS_DIGEST_SIZE);

	d = im.buf + doff;
	dentry(d, ino, (r->flags & F(MODE)) ? IFTODT(r->mode) : DT_REG, 'f');
	dentry(d + 16, 28, DT_REG, 'g');
	put16(d + 32, 1); /* an xattr set: user.a=b */
	put16(d + 34, 6);
	put16(d + 36, 1);
	memcpy(d + 38, "user.ab", 7);
	return im;
}

static int lib_reader(const struct image *im)
{
	struct cfs_image *img;
	struct cfs_inode in;
	int ret;

	ret = cfs_image_open_mem(im->buf, im->len, &img);
	if (ret < 0)
		return ret;
	ret = cfs_image_inode(img, im->ino, &in);
	cfs_image_close(img);
	return ret;
}

static void on_problem(void *ctx, const struct cfs_verify_problem *p)
{
	if (ctx && p->severity == CFS_VERIFY_ERROR)
		fprintf(stderr, "    verify: %s: %s\n", p->kind, p->message);
}

/* The errors verify reports for the image, or -1. */
static long lib_verify(const struct image *im, bool show)
{
	char path[] = "/tmp/cfs-test-v1-inodes-XXXXXX";
	struct cfs_verify_options o = { 0 };
	struct cfs_verify_result res = { 0 };
	int fd = mkstemp(path), ret;

	if (fd < 0 || write(fd, im->buf, im->len) != (ssize_t)im->len) {
		perror("test image");
		exit(1);
	}
	close(fd);
	ret = cfs_verify_image(path, &o, on_problem, show ? (void *)1 : NULL, &res);
	unlink(path);
	return ret < 0 ? -1 : (long)res.errors;
}

static char last_msg[1024];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

int main(void)
{
	size_t bad = 0;

	cfs_set_message_handler(on_msg, NULL);
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct row *r = &rows[i];
		struct image im = build(r);
		int k = kreader_inode(im.buf, im.len, im.ino), l;
		long v;

		last_msg[0] = '\0';
		l = lib_reader(&im);
		v = lib_verify(&im, false);
		CHECK(r->corrupt ? k == -EFSCORRUPTED : k == 0, "%s: the module says %d", r->what, k);
		CHECK(r->corrupt ? l == -EFSCORRUPTED : l == 0, "%s: the reader says %d (%s)", r->what,
		      l, last_msg);
		CHECK(r->corrupt ? v > 0 : v == 0, "%s: verify reports %ld errors", r->what, v);
		if ((v > 0) != r->corrupt)
			lib_verify(&im, true);
		if (r->corrupt)
			bad++;
		if (getenv("VERBOSE"))
			fprintf(stderr, "%-60s module %d, reader %d, verify %ld errors: %s\n", r->what, k,
				l, v, last_msg);
		free(im.buf);
	}
	CHECK(bad >= 20, "only %zu corrupt inodes", bad);
	return check_exit("v1 inode rule");
}
