// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * fs-verity digests: computed in userspace with libfsverity, or by
 * struct cfs_verity where content comes with holes (a run of zero blocks
 * costs one hash per tree level, not one per block); measured from and
 * enabled in the kernel with the FS_IOC_* ioctls. Always sha256 with
 * 4096-byte blocks and no salt, the parameters composefs images assume.
 */
#include <endian.h>
#include <errno.h>
#include <libfsverity.h>
#include <linux/fsverity.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

struct read_ctx {
	int fd;
	uint64_t pos;
};

static int read_fd(void *opaque, void *buf, size_t count)
{
	struct read_ctx *rc = opaque;

	while (count > 0) {
		ssize_t n = pread(rc->fd, buf, count, (off_t)rc->pos);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO; /* the file shrank under us */
		buf = (char *)buf + n;
		count -= (size_t)n;
		rc->pos += (uint64_t)n;
	}
	return 0;
}

int cfs_verity_digest_stream(void *ctx, int (*read)(void *ctx, void *buf, size_t count),
			     uint64_t size, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct libfsverity_merkle_tree_params params = { 0 };
	struct libfsverity_digest *d = NULL;
	int ret;

	params.version = 1;
	params.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	params.block_size = 4096;
	params.file_size = size;
	ret = libfsverity_compute_digest(ctx, read, &params, &d);
	if (ret < 0)
		return ret;
	if (d->digest_size != CFS_DIGEST_SIZE) {
		free(d);
		return -EINVAL;
	}
	memcpy(digest, d->digest, CFS_DIGEST_SIZE);
	free(d);
	return 0;
}

int cfs_verity_digest_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct read_ctx rc = { .fd = fd, .pos = 0 };
	struct stat st;

	if (fstat(fd, &st) < 0)
		return -errno;
	return cfs_verity_digest_stream(&rc, read_fd, (uint64_t)st.st_size, digest);
}

int cfs_verity_measure_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct {
		struct fsverity_digest d;
		uint8_t buf[64];
	} m = { .d.digest_size = 64 };

	if (ioctl(fd, FS_IOC_MEASURE_VERITY, &m.d) < 0) {
		if (errno == ENOTTY)
			return -EOPNOTSUPP;
		return -errno;
	}
	if (m.d.digest_algorithm != FS_VERITY_HASH_ALG_SHA256 ||
	    m.d.digest_size != CFS_DIGEST_SIZE)
		return -EINVAL; /* verity with other parameters than ours */
	memcpy(digest, m.d.digest, CFS_DIGEST_SIZE);
	return 0;
}

int cfs_verity_enable_fd(int fd)
{
	struct libfsverity_merkle_tree_params params = { 0 };
	int ret;

	params.version = 1;
	params.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	params.block_size = 4096;
	ret = libfsverity_enable(fd, &params);
	if (ret == -ENOTTY || ret == -EINVAL)
		return -EOPNOTSUPP;
	return ret;
}

/* ---- the hashes of the data blocks, kept to check later reads ---- */

struct leaves_ctx {
	struct cfs_verity_leaves *l;
	uint64_t tree_size, leaf_off; /* where the lowest level starts in the tree */
};

static int tree_size_cb(void *ctx, uint64_t size)
{
	struct leaves_ctx *c = ctx;
	/* levels are laid out from the top down: the lowest one is last, in whole blocks */
	uint64_t lowest = c->l->n > 1 ? (c->l->n * CFS_DIGEST_SIZE + 4095) / 4096 * 4096 : 0;

	if (lowest > size)
		return -EINVAL;
	c->tree_size = size;
	c->leaf_off = size - lowest;
	return 0;
}

static int tree_block_cb(void *ctx, const void *block, size_t size, uint64_t offset)
{
	struct leaves_ctx *c = ctx;
	uint64_t have = c->l->n * CFS_DIGEST_SIZE, at;

	if (c->l->n < 2 || offset < c->leaf_off || offset >= c->leaf_off + have)
		return 0;
	at = offset - c->leaf_off;
	memcpy(c->l->hashes + at, block, size < have - at ? size : (size_t)(have - at));
	return 0;
}

/* The hash of one data block: @len bytes, zero-padded to 4096. */
static int sha256_block(const void *data, size_t len, uint8_t out[CFS_DIGEST_SIZE])
{
	uint8_t block[4096];
	unsigned int n;

	if (len < sizeof(block)) {
		memcpy(block, data, len);
		memset(block + len, 0, sizeof(block) - len);
		data = block;
	}
	if (!EVP_Digest(data, sizeof(block), out, &n, EVP_sha256(), NULL) || n != CFS_DIGEST_SIZE)
		return -ENOMEM;
	return 0;
}

int cfs_verity_leaves_fd(int fd, uint8_t digest[CFS_DIGEST_SIZE], struct cfs_verity_leaves *l)
{
	struct libfsverity_merkle_tree_params params = { 0 };
	struct libfsverity_metadata_callbacks cbs = { 0 };
	struct libfsverity_digest *d = NULL;
	struct read_ctx rc = { .fd = fd, .pos = 0 };
	struct leaves_ctx c = { .l = l };
	struct stat st;
	int ret;

	memset(l, 0, sizeof(*l));
	if (fstat(fd, &st) < 0)
		return -errno;
	l->size = (uint64_t)st.st_size;
	l->n = (l->size + 4095) / 4096;
	if (l->n > SIZE_MAX / CFS_DIGEST_SIZE)
		return -EFBIG;
	if (l->n) {
		l->hashes = malloc(l->n * CFS_DIGEST_SIZE);
		if (!l->hashes)
			return -ENOMEM;
	}
	cbs.ctx = &c;
	cbs.merkle_tree_size = tree_size_cb;
	cbs.merkle_tree_block = tree_block_cb;
	params.version = 1;
	params.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	params.block_size = 4096;
	params.file_size = l->size;
	params.metadata_callbacks = &cbs;
	ret = libfsverity_compute_digest(&rc, read_fd, &params, &d);
	if (ret == 0 && d->digest_size != CFS_DIGEST_SIZE)
		ret = -EINVAL;
	if (ret == 0 && l->n == 1) {
		/* one block has no tree: its hash is the root's, hashed again here */
		uint8_t buf[4096];

		rc.pos = 0;
		ret = read_fd(&rc, buf, (size_t)l->size);
		if (ret == 0)
			ret = sha256_block(buf, (size_t)l->size, l->hashes);
	}
	if (ret == 0)
		memcpy(digest, d->digest, CFS_DIGEST_SIZE);
	free(d);
	if (ret < 0)
		cfs_verity_leaves_free(l);
	return ret;
}

int cfs_verity_leaves_check(const struct cfs_verity_leaves *l, uint64_t off, const void *data,
			    size_t len)
{
	const uint8_t *p = data;
	uint8_t h[CFS_DIGEST_SIZE];
	int ret;

	if (off % 4096 || off > l->size || len > l->size - off ||
	    (len % 4096 && off + len != l->size))
		return -EINVAL;
	for (size_t i = 0; i < len; i += 4096) {
		size_t n = len - i < 4096 ? len - i : 4096;

		ret = sha256_block(p + i, n, h);
		if (ret < 0)
			return ret;
		if (memcmp(h, l->hashes + (off + i) / 4096 * CFS_DIGEST_SIZE, CFS_DIGEST_SIZE) != 0)
			return -EIO;
	}
	return 0;
}

void cfs_verity_leaves_free(struct cfs_verity_leaves *l)
{
	free(l->hashes);
	memset(l, 0, sizeof(*l));
}

struct read_mem {
	const uint8_t *p;
	size_t left;
};

static int read_mem(void *opaque, void *buf, size_t count)
{
	struct read_mem *rm = opaque;

	if (count > rm->left)
		return -EIO;
	memcpy(buf, rm->p, count);
	rm->p += count;
	rm->left -= count;
	return 0;
}

int cfs_verity_digest_mem(const void *buf, size_t len, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct read_mem rm = { buf, len };

	return cfs_verity_digest_stream(&rm, read_mem, len, digest);
}

/* ---- a Merkle tree fed data and runs of zeros ---- */

#define VBLOCK 4096
#define VHASHES (VBLOCK / CFS_DIGEST_SIZE)

static int sha256(struct cfs_verity *v, const void *p, size_t len, uint8_t out[CFS_DIGEST_SIZE])
{
	unsigned int n;

	if (!EVP_DigestInit_ex(v->md, EVP_sha256(), NULL) || !EVP_DigestUpdate(v->md, p, len) ||
	    !EVP_DigestFinal_ex(v->md, out, &n) || n != CFS_DIGEST_SIZE)
		return -ENOMEM;
	return 0;
}

int cfs_verity_init(struct cfs_verity *v, uint64_t size)
{
	uint64_t blocks = size / VBLOCK + (size % VBLOCK != 0);
	static const uint8_t zero[VBLOCK];

	memset(v, 0, sizeof(*v));
	v->size = size;
	/* As libfsverity counts them: levels above the data until one block holds all. */
	while (blocks > 1) {
		v->levels++;
		blocks = blocks / VHASHES + (blocks % VHASHES != 0);
	}
	v->md = EVP_MD_CTX_new();
	if (!v->md)
		return -ENOMEM;
	return sha256(v, zero, VBLOCK, v->zero_hash);
}

void cfs_verity_free(struct cfs_verity *v)
{
	EVP_MD_CTX_free(v->md);
	v->md = NULL;
}

/* The block of level @l is complete (or the last one, padded): hash it one level up. */
static int add_hashes(struct cfs_verity *v, unsigned int l, const uint8_t h[CFS_DIGEST_SIZE],
		      uint64_t count);

static int flush_level(struct cfs_verity *v, unsigned int l)
{
	uint8_t h[CFS_DIGEST_SIZE];
	int r;

	memset(v->lvl[l].buf + v->lvl[l].n * CFS_DIGEST_SIZE, 0,
	       (VHASHES - v->lvl[l].n) * CFS_DIGEST_SIZE);
	r = sha256(v, v->lvl[l].buf, VBLOCK, h);
	v->lvl[l].n = 0;
	return r ? r : add_hashes(v, l + 1, h, 1);
}

/*
 * Append @count copies of the hash @h to level @l (0: the hashes of the
 * data blocks; @v->levels: the root). Whole blocks of copies are one hash
 * of the level above, computed once: so a run of zero blocks costs one
 * hash per level, however long.
 */
static int add_hashes(struct cfs_verity *v, unsigned int l, const uint8_t h[CFS_DIGEST_SIZE],
		      uint64_t count)
{
	uint8_t block[VBLOCK], up[CFS_DIGEST_SIZE];
	int r;

	if (l == v->levels) {
		if (count != 1 || v->have_root)
			return -EINVAL; /* more data than the size said */
		memcpy(v->root, h, CFS_DIGEST_SIZE);
		v->have_root = true;
		return 0;
	}
	while (count > 0) {
		if (v->lvl[l].n == 0 && count >= VHASHES) {
			uint64_t m = count / VHASHES;

			for (unsigned int i = 0; i < VHASHES; i++)
				memcpy(block + i * CFS_DIGEST_SIZE, h, CFS_DIGEST_SIZE);
			r = sha256(v, block, VBLOCK, up);
			if (!r)
				r = add_hashes(v, l + 1, up, m);
			if (r)
				return r;
			count -= m * VHASHES;
			continue;
		}
		memcpy(v->lvl[l].buf + v->lvl[l].n * CFS_DIGEST_SIZE, h, CFS_DIGEST_SIZE);
		v->lvl[l].n++;
		count--;
		if (v->lvl[l].n == VHASHES) {
			r = flush_level(v, l);
			if (r)
				return r;
		}
	}
	return 0;
}

static int data_block_done(struct cfs_verity *v)
{
	uint8_t h[CFS_DIGEST_SIZE];
	int r;

	memset(v->data + v->data_len, 0, VBLOCK - v->data_len);
	r = sha256(v, v->data, VBLOCK, h);
	v->data_len = 0;
	return r ? r : add_hashes(v, 0, h, 1);
}

int cfs_verity_update(struct cfs_verity *v, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	int r;

	if (len > v->size - v->fed)
		return -EINVAL;
	v->fed += len;
	while (len > 0) {
		size_t k = VBLOCK - v->data_len < len ? VBLOCK - v->data_len : len;

		memcpy(v->data + v->data_len, p, k);
		v->data_len += k;
		p += k;
		len -= k;
		if (v->data_len == VBLOCK) {
			r = data_block_done(v);
			if (r)
				return r;
		}
	}
	return 0;
}

int cfs_verity_zeros(struct cfs_verity *v, uint64_t len)
{
	uint64_t blocks;
	int r;

	if (len > v->size - v->fed)
		return -EINVAL;
	v->fed += len;
	if (v->data_len) { /* finish the block begun */
		size_t k = VBLOCK - v->data_len < len ? VBLOCK - v->data_len : (size_t)len;

		memset(v->data + v->data_len, 0, k);
		v->data_len += k;
		len -= k;
		if (v->data_len < VBLOCK)
			return 0; /* all of it went into that block */
		r = data_block_done(v);
		if (r)
			return r;
	}
	blocks = len / VBLOCK;
	if (blocks) {
		r = add_hashes(v, 0, v->zero_hash, blocks);
		if (r)
			return r;
	}
	memset(v->data, 0, (size_t)(len % VBLOCK));
	v->data_len = (size_t)(len % VBLOCK);
	return 0;
}

int cfs_verity_final(struct cfs_verity *v, uint8_t digest[CFS_DIGEST_SIZE])
{
	struct fsverity_descriptor desc = { 0 };
	int r = 0;

	if (v->fed != v->size)
		return -EINVAL;
	if (v->size > 0) {
		if (v->data_len)
			r = data_block_done(v);
		for (unsigned int l = 0; r == 0 && l < v->levels; l++)
			if (v->lvl[l].n)
				r = flush_level(v, l);
		if (r == 0 && !v->have_root)
			r = -EINVAL;
		if (r)
			return r;
		memcpy(desc.root_hash, v->root, CFS_DIGEST_SIZE);
	}
	desc.version = 1;
	desc.hash_algorithm = FS_VERITY_HASH_ALG_SHA256;
	desc.log_blocksize = 12;
	desc.data_size = htole64(v->size);
	return sha256(v, &desc, sizeof(desc), digest);
}
