// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit tests of the image reader (reader.c, walk.c, dumpout.c) on images
 * built here by a small independent encoder that can choose layouts this
 * project's writer never would: inodes in any order, the root anywhere,
 * junk padding between items, every optional field stored, chunks packed
 * one entry each. Valid images must all read the same; each format rule
 * broken by a patch must give -EFSCORRUPTED; and no truncation or byte flip
 * of a small image may crash the reader (this also runs under ASan/UBSan).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "base/bytes.h"
#include "format/v1/v1.h"
#include "format/reader.h"

static int failures;
static char last_msg[1024];

#define CHECK(cond)                                                                  \
	do {                                                                         \
		if (!(cond)) {                                                       \
			fprintf(stderr, "%s:%d: check failed: %s (last message: %s)\n", \
				__FILE__, __LINE__, #cond, last_msg);                \
			failures++;                                                  \
		}                                                                    \
	} while (0)

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(last_msg, sizeof(last_msg), "%s", msg);
}

/* ---- a small image encoder with selectable layout ---- */

struct tx {
	const char *key;
	const char *val;
	size_t vlen;
};

struct tn {
	const char *name;
	uint32_t mode, nlink, uid, gid, rdev;
	uint64_t size;
	int64_t mtime;
	uint32_t nsec;
	const char *payload;
	const uint8_t *digest;
	bool from_payload;
	const struct tx *xattrs;
	int n_xattrs;
	struct tn **kids;
	int n_kids;
	struct tn *link; /* a hardlink to this node's inode */
	/* assigned by the encoder */
	uint64_t ino, payload_pos, fixed_pos, xoff;
	uint32_t xlen, n_chunks;
	uint64_t *chunk_off;
	uint16_t *chunk_n, *chunk_size;
};

struct layout {
	bool reverse; /* inodes in reverse pre-order (root last) */
	bool all_flags; /* store every optional field */
	int pad; /* junk bytes before each inode and each data item */
	int per_chunk; /* max entries per chunk, 0: as many as fit */
	int data_align; /* align the data section start */
	int tail; /* junk bytes after the last item */
};

struct img {
	uint8_t *buf;
	size_t len;
};

static struct tn *nodes[1024];
static int n_nodes;

static void collect(struct tn *n)
{
	nodes[n_nodes++] = n;
	for (int i = 0; i < n->n_kids; i++)
		if (!n->kids[i]->link)
			collect(n->kids[i]);
}

static int cmp_kid(const void *a, const void *b)
{
	const struct tn *x = *(struct tn *const *)a, *y = *(struct tn *const *)b;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	int r = memcmp(x->name, y->name, lx < ly ? lx : ly);

	return r ? r : (lx < ly ? -1 : lx > ly);
}

static struct tn *inode_of(struct tn *n)
{
	return n->link ? n->link : n;
}

static uint32_t flags_of(const struct tn *n, const struct layout *l)
{
	uint32_t f = 0;
	bool dir = S_ISDIR(n->mode);

	if (l->all_flags)
		f = CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_MODE | CFS_INODE_FLAGS_NLINK |
		    CFS_INODE_FLAGS_UIDGID | CFS_INODE_FLAGS_RDEV | CFS_INODE_FLAGS_TIMES |
		    CFS_INODE_FLAGS_TIMES_NSEC | CFS_INODE_FLAGS_LOW_SIZE |
		    CFS_INODE_FLAGS_HIGH_SIZE | CFS_INODE_FLAGS_XATTRS;
	if (n->payload || (dir && n->n_kids))
		f |= CFS_INODE_FLAGS_PAYLOAD;
	if (n->mode != CFS_INODE_DEFAULT_MODE)
		f |= CFS_INODE_FLAGS_MODE;
	if (n->nlink != (dir ? 2U : 1U))
		f |= CFS_INODE_FLAGS_NLINK;
	if (n->uid || n->gid)
		f |= CFS_INODE_FLAGS_UIDGID;
	if (n->rdev)
		f |= CFS_INODE_FLAGS_RDEV;
	if (n->mtime)
		f |= CFS_INODE_FLAGS_TIMES;
	if (n->nsec)
		f |= CFS_INODE_FLAGS_TIMES_NSEC;
	if (n->size & 0xffffffffU)
		f |= CFS_INODE_FLAGS_LOW_SIZE;
	if (n->size >> 32)
		f |= CFS_INODE_FLAGS_HIGH_SIZE;
	if (n->n_xattrs)
		f |= CFS_INODE_FLAGS_XATTRS;
	if (n->digest && !n->from_payload)
		f |= CFS_INODE_FLAGS_DIGEST;
	if (n->from_payload)
		f |= CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD;
	return f;
}

/* Split @n's entries into chunks; fills n_chunks and chunk_n. */
static void split_chunks(struct tn *n, const struct layout *l)
{
	int i = 0;

	n->n_chunks = 0;
	n->chunk_n = calloc((size_t)n->n_kids + 1, sizeof(*n->chunk_n));
	n->chunk_size = calloc((size_t)n->n_kids + 1, sizeof(*n->chunk_size));
	n->chunk_off = calloc((size_t)n->n_kids + 1, sizeof(*n->chunk_off));
	while (i < n->n_kids) {
		uint32_t cnt = 0, size = 0;

		while (i < n->n_kids && (!l->per_chunk || cnt < (uint32_t)l->per_chunk) &&
		       size + 12 + strlen(n->kids[i]->name) <= 4096) {
			size += 12 + (uint32_t)strlen(n->kids[i]->name);
			cnt++;
			i++;
		}
		n->chunk_n[n->n_chunks] = (uint16_t)cnt;
		n->chunk_size[n->n_chunks] = (uint16_t)size;
		n->n_chunks++;
	}
}

static uint32_t payload_len(const struct tn *n)
{
	if (S_ISDIR(n->mode))
		return n->n_chunks ? (uint32_t)cfs_dir_header_size(n->n_chunks) : 0;
	return n->payload ? (uint32_t)strlen(n->payload) : 0;
}

static size_t xattr_set(const struct tn *n, uint8_t *out)
{
	size_t o = 2 + 4 * (size_t)n->n_xattrs;

	put16(out, (uint16_t)n->n_xattrs);
	for (int i = 0; i < n->n_xattrs; i++) {
		size_t kl = strlen(n->xattrs[i].key), vl = n->xattrs[i].vlen;

		put16(out + 2 + 4 * i, (uint16_t)kl);
		put16(out + 4 + 4 * i, (uint16_t)vl);
		memcpy(out + o, n->xattrs[i].key, kl);
		memcpy(out + o + kl, n->xattrs[i].val, vl);
		o += kl + vl;
	}
	return o;
}

/* Place an item of @len bytes at or after @pos (absolute), not crossing a page. */
static uint64_t place(uint64_t *pos, size_t len, const struct layout *l)
{
	uint64_t at = *pos + (uint64_t)l->pad;

	if (at % 4096 + len > 4096)
		at = (at + 4095) / 4096 * 4096;
	*pos = at + len;
	return at;
}

static struct img encode(struct tn *root, const struct layout *l)
{
	uint8_t xbuf[4096], *b;
	uint64_t pos = CFS_INODE_SECTION_OFFSET, data_offset, end;
	struct tn *order[1024];
	struct img im;
	int i, j;

	n_nodes = 0;
	collect(root);
	for (i = 0; i < n_nodes; i++) {
		order[i] = nodes[l->reverse ? n_nodes - 1 - i : i];
		if (S_ISDIR(order[i]->mode)) {
			if (order[i]->n_kids)
				qsort(order[i]->kids, (size_t)order[i]->n_kids, sizeof(struct tn *), cmp_kid);
			split_chunks(order[i], l);
		}
	}
	/* Inode section: padding, payload, fixed chunk. */
	for (i = 0; i < n_nodes; i++) {
		struct tn *n = order[i];

		pos += (uint64_t)l->pad;
		n->payload_pos = pos;
		pos += payload_len(n);
		n->fixed_pos = pos;
		n->ino = pos - CFS_INODE_SECTION_OFFSET;
		pos += cfs_inode_encoded_size(flags_of(n, l));
	}
	data_offset = pos;
	if (l->data_align)
		data_offset = (data_offset + (uint64_t)l->data_align - 1) / (uint64_t)l->data_align *
			      (uint64_t)l->data_align;
	/* Data section: xattr sets (identical ones shared), then chunks. */
	end = data_offset;
	for (i = 0; i < n_nodes; i++) {
		struct tn *n = order[i];

		if (!n->n_xattrs)
			continue;
		n->xlen = (uint32_t)xattr_set(n, xbuf);
		for (j = 0; j < i; j++) {
			if (order[j]->n_xattrs && order[j]->xattrs == n->xattrs) {
				n->xoff = order[j]->xoff;
				break;
			}
		}
		if (j == i)
			n->xoff = place(&end, n->xlen, l) - data_offset;
	}
	for (i = 0; i < n_nodes; i++)
		for (uint32_t c = 0; S_ISDIR(order[i]->mode) && c < order[i]->n_chunks; c++)
			order[i]->chunk_off[c] = place(&end, order[i]->chunk_size[c], l) - data_offset;

	end += (uint64_t)l->tail;
	im.len = (size_t)end;
	im.buf = b = malloc(im.len);
	memset(b, 0xa5, im.len); /* junk in every gap */
	memset(b, 0, CFS_INODE_SECTION_OFFSET);
	b[0] = CFS_VERSION;
	put32(b + 4, CFS_MAGIC);
	put64(b + 8, data_offset);
	put64(b + 16, root->ino);

	for (i = 0; i < n_nodes; i++) {
		struct tn *n = order[i];
		uint32_t f = flags_of(n, l);
		uint8_t *p = b + n->fixed_pos;

		if (S_ISDIR(n->mode) && n->n_chunks) {
			uint8_t *d = b + n->payload_pos;
			int k = 0;

			put32(d, n->n_chunks);
			for (uint32_t c = 0; c < n->n_chunks; c++) {
				uint8_t *ch = b + data_offset + n->chunk_off[c];
				uint32_t names = 0;

				put16(d + 4 + 12 * c, n->chunk_n[c]);
				put16(d + 6 + 12 * c, n->chunk_size[c]);
				put64(d + 8 + 12 * c, n->chunk_off[c]);
				for (int e = 0; e < n->chunk_n[c]; e++, k++) {
					struct tn *kid = n->kids[k];
					size_t nl = strlen(kid->name);

					put64(ch + 12 * e, inode_of(kid)->ino);
					ch[12 * e + 8] = (uint8_t)(inode_of(kid)->mode >> 12);
					ch[12 * e + 9] = (uint8_t)nl;
					put16(ch + 12 * e + 10, (uint16_t)names);
					memcpy(ch + 12 * n->chunk_n[c] + names, kid->name, nl);
					names += (uint32_t)nl;
				}
			}
		} else if (n->payload) {
			memcpy(b + n->payload_pos, n->payload, strlen(n->payload));
		}
		put32(p, f);
		p += 4;
		if (f & CFS_INODE_FLAGS_PAYLOAD)
			put32(p, payload_len(n)), p += 4;
		if (f & CFS_INODE_FLAGS_MODE)
			put32(p, n->mode), p += 4;
		if (f & CFS_INODE_FLAGS_NLINK)
			put32(p, n->nlink), p += 4;
		if (f & CFS_INODE_FLAGS_UIDGID)
			put32(p, n->uid), put32(p + 4, n->gid), p += 8;
		if (f & CFS_INODE_FLAGS_RDEV)
			put32(p, n->rdev), p += 4;
		if (f & CFS_INODE_FLAGS_TIMES)
			put64(p, (uint64_t)n->mtime), put64(p + 8, (uint64_t)n->mtime), p += 16;
		if (f & CFS_INODE_FLAGS_TIMES_NSEC)
			put32(p, n->nsec), put32(p + 4, n->nsec), p += 8;
		if (f & CFS_INODE_FLAGS_LOW_SIZE)
			put32(p, (uint32_t)n->size), p += 4;
		if (f & CFS_INODE_FLAGS_HIGH_SIZE)
			put32(p, (uint32_t)(n->size >> 32)), p += 4;
		if (f & CFS_INODE_FLAGS_XATTRS)
			put64(p, n->xoff), put32(p + 8, n->xlen), p += 12;
		if (f & CFS_INODE_FLAGS_DIGEST)
			memcpy(p, n->digest, 32), p += 32;
		if (n->n_xattrs) {
			uint8_t *x = b + data_offset + n->xoff;

			xattr_set(n, x);
		}
	}
	for (i = 0; i < n_nodes; i++) {
		free(order[i]->chunk_n);
		free(order[i]->chunk_off);
		free(order[i]->chunk_size);
		order[i]->chunk_n = NULL;
		order[i]->chunk_off = NULL;
		order[i]->chunk_size = NULL;
	}
	return im;
}

/* ---- the sample tree ---- */

static const uint8_t digest_a[32] = { 0xab, 0xcd, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14,
				      15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30 };
static const struct tx shared_x[] = { { "user.a", "1", 1 }, { "security.selinux", "x\0y", 3 } };
static const struct tx trusted_x[] = { { "trusted.overlay.opaque", "y", 1 }, { "user.dash", "-", 1 } };

#define HEX_A "abcd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e"

static struct tn f_plain = { .name = "plain", .mode = 0100644, .nlink = 1 };
static struct tn f_big = { .name = "big", .mode = 0100600, .nlink = 2, .uid = 1000, .gid = 100,
			   .size = 5ULL * 1024 * 1024 * 1024 + 3, .mtime = 1700000000, .nsec = 999999999,
			   .payload = "ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e",
			   .digest = digest_a, .from_payload = true, .xattrs = shared_x, .n_xattrs = 2 };
static struct tn f_link = { .name = "big-link", .link = &f_big };
static struct tn f_4g = { .name = "exactly4g", .mode = 0100644, .nlink = 1, .size = 1ULL << 32,
			  .payload = "other/file", .digest = digest_a };
static struct tn f_sym = { .name = "sym", .mode = 0120777, .nlink = 1, .payload = "../some target", .mtime = -5 };
static struct tn f_chr = { .name = "chr", .mode = 020644, .nlink = 1, .rdev = 0x0103 };
static struct tn f_wh = { .name = "whiteout", .mode = 020000, .nlink = 1 };
static struct tn f_fifo = { .name = "fifo", .mode = 010600, .nlink = 1, .xattrs = shared_x, .n_xattrs = 2 };
static struct tn f_blk = { .name = "blk", .mode = 060660, .nlink = 1, .rdev = 0x0801, .gid = 6 };
static struct tn f_sock = { .name = "sock", .mode = 0140755, .nlink = 1 };
static struct tn f_sp = { .name = "with space\n=", .mode = 0104755, .nlink = 1 };
static struct tn *sub_kids[] = { &f_sp, &f_sock };
static struct tn d_sub = { .name = "sub", .mode = 040755, .nlink = 2, .kids = sub_kids, .n_kids = 2,
			   .xattrs = trusted_x, .n_xattrs = 2 };
static struct tn d_empty = { .name = "empty", .mode = 041777, .nlink = 2 };
static struct tn *root_kids[] = { &f_plain, &f_big, &f_link, &f_4g, &f_sym, &f_chr, &f_wh,
				  &f_fifo, &f_blk, &d_sub, &d_empty };
static struct tn d_root = { .name = "", .mode = 040755, .nlink = 4, .kids = root_kids, .n_kids = 11,
			    .mtime = 1, .nsec = 1 };

static const char sample_dump[] =
	"/ 0 40755 4 0 0 0 1.1 - - -\n"
	"/big 5368709123 100600 2 1000 100 0 1700000000.999999999 ab/cd0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e - " HEX_A " user.a=1 security.selinux=x\\x00y\n"
	"/big-link 5368709123 @100600 2 1000 100 0 1700000000.999999999 /big - " HEX_A
	" user.a=1 security.selinux=x\\x00y\n"
	"/blk 0 60660 1 0 6 2049 0.0 - - -\n"
	"/chr 0 20644 1 0 0 259 0.0 - - -\n"
	"/empty 0 41777 2 0 0 0 0.0 - - -\n"
	"/exactly4g 4294967296 100644 1 0 0 0 0.0 other/file - " HEX_A "\n"
	"/fifo 0 10600 1 0 0 0 0.0 - - - user.a=1 security.selinux=x\\x00y\n"
	"/plain 0 100644 1 0 0 0 0.0 - - -\n"
	"/sub 0 40755 2 0 0 0 0.0 - - - trusted.overlay.opaque=y user.dash=\\x2d\n"
	"/sub/sock 0 140755 1 0 0 0 0.0 - - -\n"
	"/sub/with\\x20space\\n= 0 104755 1 0 0 0 0.0 - - -\n"
	"/sym 0 120777 1 0 0 0 -5.0 ../some\\x20target - -\n"
	"/whiteout 0 20000 1 0 0 0 0.0 - - -\n";

/* ---- helpers ---- */

static char *dump_of(struct cfs_image *img, int *ret)
{
	char *s = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&s, &n);

	*ret = cfs_image_write_dump(img, f);
	fclose(f);
	return s;
}

struct touch_ctx {
	struct cfs_image *img;
	bool strict; /* valid image: lookups must find what readdir lists */
	int bad;
};

static int touch_xattr(void *ctx, const struct cfs_xattr *x)
{
	volatile uint8_t sum = 0;

	(void)ctx;
	for (size_t i = 0; i < x->key_len; i++)
		sum += (uint8_t)x->key[i];
	for (size_t i = 0; i < x->value_len; i++)
		sum += x->value[i];
	return 0;
}

/* Everything a user of the library may do with one path. */
static int touch(void *opaque, const struct cfs_walk_entry *e)
{
	struct touch_ctx *c = opaque;
	const struct cfs_inode *in = e->inode;
	struct cfs_dir_iter it;
	struct cfs_dirent d;
	volatile uint8_t sum = 0;
	int ret;

	for (uint32_t i = 0; i < in->payload_len && in->payload; i++)
		sum += (uint8_t)in->payload[i];
	ret = cfs_image_xattrs(c->img, in, touch_xattr, NULL);
	if (ret < 0)
		return ret;
	if (!S_ISDIR(in->mode))
		return 0;
	ret = cfs_dir_iter_init(c->img, in, &it);
	if (ret < 0)
		return ret;
	while ((ret = cfs_dir_iter_next(&it, &d)) > 0) {
		uint64_t ino = ~0ULL;
		int r = cfs_image_lookup(c->img, in, d.name, d.name_len, &ino);

		if (r < 0 && r != -ENOENT)
			return r;
		if (c->strict && (r != 0 || ino != d.ino))
			c->bad++;
	}
	return ret;
}

/* Walk and touch everything, then dump; the first error. */
static int read_all(const uint8_t *buf, size_t len, bool strict, int *bad)
{
	struct cfs_image *img;
	struct touch_ctx c = { .strict = strict };
	FILE *null;
	int ret;

	ret = cfs_image_open_mem(buf, len, &img);
	if (ret < 0)
		return ret;
	c.img = img;
	ret = cfs_image_walk(img, touch, &c);
	if (ret == 0) {
		null = fopen("/dev/null", "w");
		ret = cfs_image_write_dump(img, null);
		fclose(null);
	}
	if (bad)
		*bad = c.bad;
	cfs_image_close(img);
	return ret;
}

/* ---- tests ---- */

static void test_decode(void)
{
	struct layout l = { 0 };
	struct img im = encode(&d_root, &l);
	struct cfs_image *img;
	struct cfs_inode in;
	char *dump;
	int ret;

	CHECK(cfs_image_open_mem(im.buf, im.len, &img) == 0);
	CHECK(cfs_image_version(img) == 1);
	CHECK(cfs_image_root(img) == d_root.ino);
	CHECK(cfs_image_size(img) == im.len);

	CHECK(cfs_image_resolve(img, "/big", &in) == 0);
	CHECK(CFS_V1_I(&in)->flags == (CFS_INODE_FLAGS_PAYLOAD | CFS_INODE_FLAGS_MODE | CFS_INODE_FLAGS_NLINK |
			   CFS_INODE_FLAGS_UIDGID | CFS_INODE_FLAGS_TIMES | CFS_INODE_FLAGS_TIMES_NSEC |
			   CFS_INODE_FLAGS_LOW_SIZE | CFS_INODE_FLAGS_HIGH_SIZE | CFS_INODE_FLAGS_XATTRS |
			   CFS_INODE_FLAGS_DIGEST_FROM_PAYLOAD));
	CHECK(in.size == 5ULL * 1024 * 1024 * 1024 + 3);
	CHECK(in.mode == 0100600 && in.nlink == 2 && in.uid == 1000 && in.gid == 100);
	CHECK(in.mtime_sec == 1700000000 && in.mtime_nsec == 999999999);
	CHECK(in.ctime_sec == 1700000000 && in.ctime_nsec == 999999999);
	CHECK(in.has_digest && memcmp(in.digest, digest_a, 32) == 0);
	CHECK(in.payload_len == strlen(f_big.payload) &&
	      memcmp(in.payload, f_big.payload, in.payload_len) == 0);
	CHECK(in.xattrs_len == f_big.xlen);

	/* Defaults when the flags leave fields out. */
	CHECK(cfs_image_resolve(img, "plain", &in) == 0);
	CHECK(CFS_V1_I(&in)->flags == 0);
	CHECK(in.mode == CFS_INODE_DEFAULT_MODE && in.nlink == 1 && in.uid == 0 && in.gid == 0);
	CHECK(in.rdev == 0 && in.size == 0 && in.mtime_sec == 0 && in.mtime_nsec == 0);
	CHECK(!in.has_digest && in.payload_len == 0 && in.xattrs_len == 0);
	CHECK(cfs_image_resolve(img, "/empty", &in) == 0);
	CHECK(in.nlink == 2 && CFS_V1_I(&in)->n_chunks == 0 && CFS_V1_I(&in)->flags == CFS_INODE_FLAGS_MODE);

	/* Only HIGH_SIZE for exactly 4 GiB; DIGEST stored. */
	CHECK(cfs_image_resolve(img, "/exactly4g", &in) == 0);
	CHECK(in.size == 1ULL << 32);
	CHECK((CFS_V1_I(&in)->flags & CFS_INODE_FLAGS_LOW_SIZE) == 0 && (CFS_V1_I(&in)->flags & CFS_INODE_FLAGS_HIGH_SIZE));
	CHECK((CFS_V1_I(&in)->flags & CFS_INODE_FLAGS_DIGEST) && in.has_digest);
	CHECK(cfs_image_resolve(img, "/chr", &in) == 0);
	CHECK(in.rdev == 0x0103 && (CFS_V1_I(&in)->flags & CFS_INODE_FLAGS_RDEV));
	CHECK(cfs_image_resolve(img, "/sym", &in) == 0);
	CHECK(in.mtime_sec == -5 && in.payload_len == 14);
	CHECK(cfs_image_resolve(img, "/sub/sock", &in) == 0 && S_ISSOCK(in.mode));
	CHECK(cfs_image_resolve(img, "/./sub//sock", &in) == 0 && S_ISSOCK(in.mode));
	CHECK(cfs_image_resolve(img, "/", &in) == 0 && in.ino == d_root.ino);
	CHECK(cfs_image_resolve(img, "/nope", &in) == -ENOENT);
	CHECK(cfs_image_resolve(img, "/plain/x", &in) == -ENOTDIR);
	CHECK(cfs_image_resolve(img, "/big-link", &in) == 0 && in.ino == f_big.ino);

	dump = dump_of(img, &ret);
	CHECK(ret == 0);
	if (strcmp(dump, sample_dump) != 0) {
		fprintf(stderr, "dump differs:\n%s---- expected:\n%s", dump, sample_dump);
		failures++;
	}
	free(dump);
	cfs_image_close(img);
	free(im.buf);
}

/* Any valid layout reads the same as the canonical one. */
static void test_layouts(void)
{
	static const struct layout ls[] = {
		{ .reverse = true },
		{ .all_flags = true },
		{ .pad = 7 },
		{ .per_chunk = 1 },
		{ .data_align = 4096 },
		{ .reverse = true, .all_flags = true, .pad = 13, .per_chunk = 2, .data_align = 4096 },
	};

	for (size_t i = 0; i < sizeof(ls) / sizeof(ls[0]); i++) {
		struct img im = encode(&d_root, &ls[i]);
		struct cfs_image *img;
		char *dump;
		int ret, bad = 0;

		CHECK(cfs_image_open_mem(im.buf, im.len, &img) == 0);
		if (ls[i].reverse)
			CHECK(cfs_image_root(img) != 0);
		dump = dump_of(img, &ret);
		CHECK(ret == 0);
		if (strcmp(dump, sample_dump) != 0) {
			fprintf(stderr, "layout %zu: dump differs:\n%s", i, dump);
			failures++;
		}
		free(dump);
		cfs_image_close(img);
		CHECK(read_all(im.buf, im.len, true, &bad) == 0 && bad == 0);
		free(im.buf);
	}
}

/* Lookups across many chunks, with names that are prefixes of others. */
static void test_lookup(void)
{
	static char names[600][16];
	static struct tn kids[600];
	static struct tn *kp[600];
	struct tn root = { .name = "", .mode = 040755, .nlink = 2 };
	int n = 0;

	for (int i = 0; i < 200; i++) {
		snprintf(names[n], 16, "%d", i);
		snprintf(names[n + 1], 16, "%da", i);
		snprintf(names[n + 2], 16, "%d\x01", i);
		n += 3;
	}
	for (int i = 0; i < n; i++) {
		kids[i] = (struct tn){ .name = names[i], .mode = 0100644, .nlink = 1 };
		kp[i] = &kids[i];
	}
	root.kids = kp;
	root.n_kids = n;
	for (int per = 0; per <= 7; per += 7) {
		struct layout l = { .per_chunk = per ? per : 0 };
		struct img im;
		struct cfs_image *img;
		struct cfs_inode dir;
		uint64_t ino;
		int found = 0;

		if (per == 0)
			l.per_chunk = 1;
		im = encode(&root, &l);
		CHECK(cfs_image_open_mem(im.buf, im.len, &img) == 0);
		CHECK(cfs_image_inode(img, cfs_image_root(img), &dir) == 0);
		CHECK(CFS_V1_I(&dir)->n_chunks == (per ? (600 + 6) / 7 : 600));
		for (int i = 0; i < n; i++) {
			if (cfs_image_lookup(img, &dir, names[i], strlen(names[i]), &ino) == 0 &&
			    ino == kids[i].ino)
				found++;
		}
		CHECK(found == n);
		/* Absent: before all, after all, between, prefixes, extensions. */
		CHECK(cfs_image_lookup(img, &dir, "!", 1, &ino) == -ENOENT);
		CHECK(cfs_image_lookup(img, &dir, "~", 1, &ino) == -ENOENT);
		CHECK(cfs_image_lookup(img, &dir, "1b", 2, &ino) == -ENOENT);
		CHECK(cfs_image_lookup(img, &dir, "1aa", 3, &ino) == -ENOENT);
		CHECK(cfs_image_lookup(img, &dir, "1\x01\x01", 3, &ino) == -ENOENT);
		CHECK(cfs_image_lookup(img, &dir, "", 0, &ino) == -ENOENT);
		CHECK(cfs_image_lookup(img, &dir, "1999", 4, &ino) == -ENOENT);
		CHECK(read_all(im.buf, im.len, true, NULL) == 0);
		cfs_image_close(img);
		free(im.buf);
	}
}

/* ---- corruption ---- */

static struct img base;

/* Patch a copy of the sample image and require -EFSCORRUPTED with a message. */
static void expect_corrupt(const char *what, size_t off, const void *bytes, size_t n)
{
	uint8_t *b = malloc(base.len);
	int ret;

	memcpy(b, base.buf, base.len);
	memcpy(b + off, bytes, n);
	last_msg[0] = '\0';
	ret = read_all(b, base.len, false, NULL);
	if (getenv("VERBOSE"))
		fprintf(stderr, "%-32s %s\n", what, last_msg);
	if (ret != -EFSCORRUPTED || !strstr(last_msg, "offset")) {
		fprintf(stderr, "%s: got %d, message '%s'\n", what, ret, last_msg);
		failures++;
	}
	free(b);
}

static void p16(const char *what, uint64_t off, uint16_t v)
{
	uint8_t b[2];
	put16(b, v);
	expect_corrupt(what, (size_t)off, b, 2);
}
static void p32(const char *what, uint64_t off, uint32_t v)
{
	uint8_t b[4];
	put32(b, v);
	expect_corrupt(what, (size_t)off, b, 4);
}
static void p64(const char *what, uint64_t off, uint64_t v)
{
	uint8_t b[8];
	put64(b, v);
	expect_corrupt(what, (size_t)off, b, 8);
}
static void p8(const char *what, uint64_t off, uint8_t v)
{
	expect_corrupt(what, (size_t)off, &v, 1);
}

/* File offset of dentry @e of chunk @c of directory @d. */
static uint64_t dent(const struct tn *d, uint32_t c, uint32_t e)
{
	return get64(base.buf + 8) + get64(base.buf + d->payload_pos + 8 + 12 * c) + 12 * e;
}

static void test_corrupt(void)
{
	struct layout l = { .per_chunk = 4, .tail = 8192 };
	uint64_t data_off, chunk0, xo;
	struct cfs_image *img;
	struct tn *last = &d_root;

	base = encode(&d_root, &l);
	CHECK(read_all(base.buf, base.len, true, NULL) == 0);
	data_off = get64(base.buf + 8);
	chunk0 = d_root.payload_pos + 4;
	for (int i = 0; i < n_nodes; i++)
		if (nodes[i]->fixed_pos > last->fixed_pos)
			last = nodes[i];

	/* Header */
	CHECK(cfs_image_open_mem(base.buf, 0, &img) == -EFSCORRUPTED);
	CHECK(cfs_image_open_mem(base.buf, 43, &img) == -EFSCORRUPTED);
	p32("bad magic", 4, 0x12345678);
	p8("bad version", 0, 2);
	p64("data offset past end", 8, base.len + 1);
	p64("data offset inside header", 8, 39);
	p64("root outside inode section", 16, data_off);
	p64("root huge", 16, ~0ULL);

	/* Inodes */
	p32("unknown flag", f_plain.fixed_pos, 1U << 12);
	p32("high unknown flag", f_plain.fixed_pos, 1U << 31);
	p32("payload before section", f_sym.fixed_pos + 4, (uint32_t)f_sym.ino + 1);
	p32("symlink target empty", f_sym.fixed_pos + 4, 0);
	p32("bad mode type", d_sub.fixed_pos + 8, 0170755);
	CHECK(cfs_inode_encoded_size(flags_of(last, &l)) < 104);
	p32("fixed chunk past section", last->fixed_pos, 0xfff);
	p32("digest from non-hex payload", f_big.payload_pos, 0x7a7a7a7a);
	p8("NUL in symlink target", f_sym.payload_pos + 2, 0);
	p32("dir payload size mismatch", d_root.fixed_pos + 4, 4 + 12 * 2);
	p32("dir n_chunks 0", d_root.payload_pos, 0);
	p32("dir n_chunks huge", d_root.payload_pos, 0x40000000);
	p32("dir payload 2 bytes", d_root.fixed_pos + 4, 2);

	/* Chunks */
	p16("chunk with no entries", chunk0, 0);
	p16("chunk too small for entries", chunk0 + 2, 12 * 4 - 1);
	p16("chunk over 4096", chunk0 + 2, 4097);
	p64("chunk past end", chunk0 + 4, base.len);
	p64("chunk offset huge", chunk0 + 4, ~0ULL - 2);
	p64("chunk crossing a page", chunk0 + 4, 4096 - data_off % 4096 - 10);

	/* Entries: the first chunk holds big, big-link, blk, chr */
	p16("name past chunk", dent(&d_root, 0, 0) + 10, 4000);
	p8("name empty", dent(&d_root, 0, 1) + 9, 0);
	p8("name with slash", dent(&d_root, 0, 0) + 12 * 4, '/');
	p8("name with NUL", dent(&d_root, 0, 0) + 12 * 4 + 1, 0);
	for (int dots = 1; dots <= 2; dots++) {
		/* "big" becomes "." or ".." */
		uint8_t *b = malloc(base.len);

		memcpy(b, base.buf, base.len);
		b[dent(&d_root, 0, 0) + 9] = (uint8_t)dots;
		memcpy(b + dent(&d_root, 0, 0) + 48, "..", 2);
		last_msg[0] = 0;
		CHECK(read_all(b, base.len, false, NULL) == -EFSCORRUPTED);
		CHECK(strstr(last_msg, "invalid name") != NULL);
		free(b);
	}
	p8("entries out of order", dent(&d_root, 0, 0) + 12 * 4, 'z');
	p64("entry names a bad inode", dent(&d_root, 0, 2), data_off);
	p64("entry names the root: a cycle", dent(&d_root, 0, 2), d_root.ino);
	p64("entry names a directory twice", dent(&d_root, 0, 0), d_sub.ino);

	/* Xattrs */
	xo = f_big.fixed_pos + 4 + 4 + 4 + 4 + 8 + 16 + 8 + 4 + 4;
	p32("xattr set of 1 byte", xo + 8, 1);
	p32("xattr set over 4096", xo + 8, 4097);
	p64("xattr set past end", xo, base.len);
	p64("xattr set crossing a page", xo, 4096 - data_off % 4096 - 2);
	p16("xattr count too large", data_off + f_big.xoff, 200);
	p16("xattr key over 255", data_off + f_big.xoff + 2, 256);
	p16("xattr value past set", data_off + f_big.xoff + 4, 100);

	/* Root not a directory */
	p64("root is a file", 16, f_plain.ino);
}

/* Truncate everywhere and change every byte: never crash, never hang. */
static void test_brute(void)
{
	static const struct tx x[] = { { "user.k", "v", 1 } };
	struct tn f1 = { .name = "f", .mode = 0100644, .nlink = 2, .size = 9, .payload = "ab/cd",
			 .xattrs = x, .n_xattrs = 1 };
	struct tn f2 = { .name = "g", .link = &f1 };
	struct tn s = { .name = "s", .mode = 0120777, .nlink = 1, .payload = "f" };
	struct tn *sk[] = { &s };
	struct tn d = { .name = "d", .mode = 040755, .nlink = 2, .kids = sk, .n_kids = 1 };
	struct tn *rk[] = { &d, &f1, &f2 };
	struct tn r = { .name = "", .mode = 040755, .nlink = 3, .kids = rk, .n_kids = 3,
			.xattrs = x, .n_xattrs = 1 };
	struct layout l = { .per_chunk = 2 };
	struct img im = encode(&r, &l);
	static const int ops[] = { 0xff, 0x00, -1 };
	size_t ok = 0, n = 0;

	CHECK(read_all(im.buf, im.len, true, NULL) == 0);
	cfs_set_message_handler(NULL, NULL);
	for (size_t len = 0; len < im.len; len++) {
		uint8_t *b = malloc(len ? len : 1);

		memcpy(b, im.buf, len);
		CHECK(read_all(b, len, false, NULL) < 0);
		free(b);
	}
	for (size_t i = 0; i < im.len; i++) {
		for (size_t o = 0; o < 3; o++) {
			uint8_t *b = malloc(im.len);
			int ret;

			memcpy(b, im.buf, im.len);
			b[i] = ops[o] < 0 ? (uint8_t)(b[i] + 1) : (uint8_t)ops[o];
			ret = read_all(b, im.len, false, NULL);
			CHECK(ret == 0 || ret == -EFSCORRUPTED || ret == -ENOTDIR || ret == -ENOENT ||
			      ret == -ELOOP);
			ok += ret == 0;
			n++;
			free(b);
		}
	}
	cfs_set_message_handler(on_msg, NULL);
	printf("brute force: %zu-byte image, %zu variants, %zu read without error\n", im.len, n, ok);
	free(im.buf);
}

int main(void)
{
	cfs_set_message_handler(on_msg, NULL);
	test_decode();
	test_layouts();
	test_lookup();
	test_corrupt();
	test_brute();
	free(base.buf);
	if (failures) {
		fprintf(stderr, "%d checks failed\n", failures);
		return 1;
	}
	printf("all reader checks passed\n");
	return 0;
}
