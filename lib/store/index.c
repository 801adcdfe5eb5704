// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The sha256 index of a repository, REPO/index, beside REPO/objects:
 *
 *	index/sha256/xx/<62 hex>   a symlink to the fs-verity digest of the
 *	                           object whose content has this sha256, in
 *	                           base64url without padding (43 characters)
 *	index/verity/xx/<62 hex>   the other way: the object's sha256, a dot
 *	                           and the signature of the object's inode
 *	                           when it was read for it (its inode number,
 *	                           size and ctime, mixed into 64 bits), in
 *	                           base64url (43 + 1 + 11 characters)
 *
 * The targets are short enough for ext4 (and most filesystems) to keep them
 * in the inode: a lookup reads no data block.
 *
 * A partial pull looks up a TOC's file digests here to find the objects it
 * need not fetch. No entry is believed alone: an entry may name an object
 * gc removed, and a damaged one anything at all. The pull believes the
 * index without reading the object only when both directions agree and
 * the object's inode is still the one that was read (cfs_index_vouches()),
 * as git believes its index's stat data; otherwise it reads the object
 * and checks its sha256 before an image refers to it. A lost index only costs
 * fetching again; every build, pull and fetch into the repository fills it
 * again with what it writes.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "index.h"

#define INDEX_DIR "index"

int cfs_index_open(int store_fd)
{
	struct stat st_store, st_obj, st;
	int parent, fd;

	if (fstat(store_fd, &st_store) < 0)
		return -errno;
	parent = openat(store_fd, "..", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (parent < 0)
		return -errno;
	if (fstatat(parent, "objects", &st_obj, AT_SYMLINK_NOFOLLOW) < 0 ||
	    st_obj.st_ino != st_store.st_ino || st_obj.st_dev != st_store.st_dev ||
	    fstatat(parent, "images", &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISDIR(st.st_mode)) {
		close(parent);
		return -ENOENT;
	}
	if (mkdirat(parent, INDEX_DIR, 0755) < 0 && errno != EEXIST) {
		fd = -errno;
		close(parent);
		return fd;
	}
	fd = openat(parent, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		fd = -errno;
	close(parent);
	return fd;
}

/* "KIND/xx/<62 hex>" of @key */
static void entry_path(const char *kind, const uint8_t key[32], char *path, size_t size)
{
	char hex[CFS_DIGEST_HEX_SIZE];

	cfs_digest_to_hex(key, hex);
	snprintf(path, size, "%s/%.2s/%s", kind, hex, hex + 2);
}

static const char b64url[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

/* @n bytes as base64url without padding, and a NUL */
static void encode(const uint8_t *v, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i += 3) {
		uint32_t x = (uint32_t)v[i] << 16 | (i + 1 < n ? (uint32_t)v[i + 1] << 8 : 0) |
			     (i + 2 < n ? v[i + 2] : 0);

		out[o++] = b64url[x >> 18];
		out[o++] = b64url[(x >> 12) & 63];
		if (i + 1 < n)
			out[o++] = b64url[(x >> 6) & 63];
		if (i + 2 < n)
			out[o++] = b64url[x & 63];
	}
	out[o] = '\0';
}

/* The value of the base64url character @c, or -1. */
static int b64url_value(unsigned char c)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	return c == '-' ? 62 : c == '_' ? 63 : -1;
}

/* The (@n * 4 + 2) / 3 characters at @s as @n bytes: 0, or -EINVAL. */
static int decode(const char *s, uint8_t *v, size_t n)
{
	uint32_t acc = 0;
	size_t o = 0;
	int bits = 0;

	for (size_t i = 0; i < (n * 4 + 2) / 3; i++) {
		int c = b64url_value((unsigned char)s[i]);

		if (c < 0)
			return -EINVAL;
		acc = acc << 6 | (uint32_t)c;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			v[o++] = (uint8_t)(acc >> bits);
		}
	}
	/* the bits left over must be zero */
	return o == n && (acc & ((1u << bits) - 1)) == 0 ? 0 : -EINVAL;
}

#define SIG_SIZE 8
#define KEY_CHARS 43 /* 32 bytes */
#define SIG_CHARS 11 /* SIG_SIZE bytes */

/*
 * The signature of an object's inode: its number, size and ctime, mixed
 * into 64 bits (splitmix64's finaliser over each field in turn). It need
 * not resist a forger: whoever can write the index can write both
 * directions of an entry and the object (index.h); it only has to change
 * when the inode does, and costs nothing beside the lookup. Entries signed
 * by the earlier form (64 bits of a sha256) do not match it: their objects
 * are read once and the entries signed anew.
 */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static void inode_sig(const struct stat *st, uint8_t sig[SIG_SIZE])
{
	uint64_t f[4] = { (uint64_t)st->st_ino, (uint64_t)st->st_size,
			  (uint64_t)st->st_ctim.tv_sec, (uint64_t)st->st_ctim.tv_nsec };
	uint64_t h = 0x636673696e6f6465ull; /* "cfsinode" */

	for (size_t i = 0; i < 4; i++)
		h = mix(h ^ f[i]) + 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < SIG_SIZE; i++)
		sig[i] = (uint8_t)(h >> (8 * i));
}

/* The entry KIND/@key: its value, and its signature (if @sig, and then
 * only when it has one). 0, or -ENOENT. */
static int lookup(int index_fd, const char *kind, const uint8_t key[32], uint8_t value[32],
		  uint8_t sig[SIG_SIZE])
{
	char path[80], target[KEY_CHARS + 1 + SIG_CHARS + 2];
	ssize_t n;

	entry_path(kind, key, path, sizeof(path));
	n = readlinkat(index_fd, path, target, sizeof(target));
	if (n != KEY_CHARS && n != KEY_CHARS + 1 + SIG_CHARS)
		return -ENOENT;
	target[n] = '\0';
	if (decode(target, value, 32))
		return -ENOENT;
	if (!sig)
		return 0;
	if (n == KEY_CHARS || target[KEY_CHARS] != '.' ||
	    decode(target + KEY_CHARS + 1, sig, SIG_SIZE))
		return -ENOENT;
	return 0;
}

int cfs_index_lookup(int index_fd, const uint8_t sha256[32], uint8_t digest[CFS_DIGEST_SIZE])
{
	return lookup(index_fd, "sha256", sha256, digest, NULL);
}

bool cfs_index_vouches(int index_fd, const uint8_t digest[CFS_DIGEST_SIZE], const struct stat *st,
		       const uint8_t sha256[32])
{
	uint8_t sha[32], sig[SIG_SIZE], now[SIG_SIZE];

	if (lookup(index_fd, "verity", digest, sha, sig) || memcmp(sha, sha256, 32))
		return false;
	inode_sig(st, now);
	return memcmp(sig, now, SIG_SIZE) == 0;
}

static atomic_uint tmp_counter;

/*
 * Open the directory @name of @dirfd, making it first; -ENOTDIR for a
 * symlink or a non-directory, as cfs_object_dir_open() does for a store.
 */
static int open_subdir(int dirfd, const char *name)
{
	int fd;

	for (int tries = 0;; tries++) {
		fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			return fd;
		if (errno != ENOENT || tries > 0)
			return errno == ELOOP ? -ENOTDIR : -errno;
		if (mkdirat(dirfd, name, 0755) < 0 && errno != EEXIST)
			return -errno;
	}
}

static int put(int index_fd, const char *kind, const uint8_t key[32], const uint8_t value[32],
	       const struct stat *st)
{
	char hex[CFS_DIGEST_HEX_SIZE], dir[3], tmp[64], text[KEY_CHARS + 1 + SIG_CHARS + 1];
	int kind_fd, fd, r = 0;

	cfs_digest_to_hex(key, hex);
	snprintf(dir, sizeof(dir), "%.2s", hex);
	encode(value, 32, text);
	if (st) {
		uint8_t sig[SIG_SIZE];

		inode_sig(st, sig);
		text[KEY_CHARS] = '.';
		encode(sig, SIG_SIZE, text + KEY_CHARS + 1);
	}
	/* KIND and KIND/xx by their files: either may be another user's symlink */
	kind_fd = open_subdir(index_fd, kind);
	if (kind_fd < 0)
		return kind_fd;
	fd = open_subdir(kind_fd, dir);
	close(kind_fd);
	if (fd < 0)
		return fd;
	snprintf(tmp, sizeof(tmp), ".tmp-%d-%u", (int)getpid(), atomic_fetch_add(&tmp_counter, 1));
	if (symlinkat(text, fd, tmp) < 0) {
		r = -errno;
	} else if (renameat(fd, tmp, fd, hex + 2) < 0) {
		r = -errno;
		unlinkat(fd, tmp, 0);
	}
	close(fd);
	return r;
}

int cfs_index_add(int index_fd, const uint8_t sha256[32], const uint8_t digest[CFS_DIGEST_SIZE],
		  const struct stat *st)
{
	int r = put(index_fd, "sha256", sha256, digest, NULL);

	return r ? r : put(index_fd, "verity", digest, sha256, st);
}

/* The sha256 of the object @digest in the store, and its fstat() once
 * read: 0, or -errno. */
static int object_sha256(int store_fd, const uint8_t digest[CFS_DIGEST_SIZE], uint8_t sha[32],
			 struct stat *st)
{
	char objpath[CFS_OBJECT_PATH_SIZE];
	unsigned char buf[128 * 1024];
	unsigned int len = 0;
	EVP_MD_CTX *md;
	ssize_t n;
	int fd, r = 0;

	cfs_object_path(digest, objpath);
	fd = openat(store_fd, objpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	md = EVP_MD_CTX_new();
	if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
		r = -ENOMEM;
		goto out;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		if (!EVP_DigestUpdate(md, buf, (size_t)n)) {
			r = -ENOMEM;
			goto out;
		}
	if (n < 0 || fstat(fd, st) < 0)
		r = -errno;
	else if (!EVP_DigestFinal_ex(md, sha, &len) || len != 32)
		r = -ENOMEM;
out:
	EVP_MD_CTX_free(md);
	close(fd);
	return r;
}

void cfs_index_learn(int index_fd, int store_fd, const uint8_t digest[CFS_DIGEST_SIZE])
{
	uint8_t sha[32], sig[SIG_SIZE];
	struct stat st;

	if (index_fd < 0 || lookup(index_fd, "verity", digest, sha, sig) == 0 ||
	    object_sha256(store_fd, digest, sha, &st))
		return;
	cfs_index_add(index_fd, sha, digest, &st);
}

/* The threads of cfs_index_fill(): each takes the next job. */
#define FILL_THREADS 4

struct filler {
	int index_fd, store_fd;
	struct cfs_node *const *jobs;
	size_t n;
	atomic_size_t next;
};

static void *fill_jobs(void *arg)
{
	struct filler *f = arg;
	size_t i;

	while ((i = atomic_fetch_add(&f->next, 1)) < f->n)
		if (f->jobs[i]->has_digest)
			cfs_index_learn(f->index_fd, f->store_fd, f->jobs[i]->digest);
	return NULL;
}

void cfs_index_fill(int store_fd, struct cfs_node *const *jobs, size_t n)
{
	struct filler f = { .store_fd = store_fd, .jobs = jobs, .n = n };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t threads[FILL_THREADS - 1];
	size_t started = 0;

	f.index_fd = cfs_index_open(store_fd);
	if (f.index_fd < 0)
		return;
	/*
	 * Each object new to the index is read and hashed, and two entries
	 * made: the pull's last step before its name; on a thread per CPU
	 * (up to FILL_THREADS) when there are enough.
	 */
	for (long k = 1; n >= 64 && k < FILL_THREADS && k < cpus; k++) {
		if (pthread_create(&threads[started], NULL, fill_jobs, &f) != 0)
			break;
		started++;
	}
	fill_jobs(&f);
	for (size_t k = 0; k < started; k++)
		pthread_join(threads[k], NULL);
	close(f.index_fd);
}
