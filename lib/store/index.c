// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The sha256 index of a repository, REPO/index, beside REPO/objects: from
 * the sha256 of an object's content to its fs-verity digest, in two files
 * (git's pack .idx is the model):
 *
 *	index/table   the entries sorted by sha256, read with mmap: a header,
 *	              a fan-out of 256 counts by the first byte, the entries,
 *	              and their positions sorted by digest (the other way)
 *	index/log     the entries added since the table was written, appended
 *	              under an exclusive flock() of the log, and merged into a
 *	              new table (written as index/table.tmp, renamed into
 *	              place, then the log emptied) once it holds an eighth of
 *	              the table
 *
 * An entry is 80 bytes: the sha256, the digest, the signature of the
 * object's inode when it was read for that sha256 (its number, size and
 * ctime, mixed into 64 bits), and a check of those 72 bytes. An entry
 * whose check fails is skipped, so a writer killed in the middle of an
 * append leaves a torn last entry that no reader believes, and the next
 * writer cuts it off; a table is whole or not there. Readers hold the
 * log's lock shared while they map the table and read the log, so a merge
 * is seen entirely or not at all. The index costs three inodes however
 * many objects the repository has.
 *
 * A partial pull looks up a TOC's file digests here to find the objects it
 * need not fetch. No entry is believed alone: an entry may name an object
 * gc removed, and a damaged one anything at all. The pull believes the
 * index without reading the object only when the object's inode is still
 * the one that was read (cfs_index_vouches()), as git believes its
 * index's stat data; otherwise it reads the object and checks its sha256
 * before an image refers to it. A lost index only costs fetching again;
 * every build, pull and fetch into the repository fills it again with
 * what it writes. The earlier form, a pair of symlinks per entry
 * (index/sha256/xx/<62 hex> and index/verity/xx/<62 hex>), is read into
 * the log on first use and removed.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/bytes.h"
#include "base/internal.h"
#include "index.h"

#define INDEX_DIR "index"
#define TABLE "table"
#define TABLE_TMP "table.tmp"
#define LOG "log"

#define SIG_SIZE 8
/* an entry: sha256, digest, inode signature (zero: none), check (le64) */
#define ENT_SIZE 80
#define ENT_CHECKED 72
#define OFF_DIGEST 32
#define OFF_SIG 64
/* the table: header, fan-out, entries, positions sorted by digest (le32) */
#define TABLE_MAGIC "cfsindex"
#define TABLE_VERSION 1
#define HDR_SIZE 32
#define FANOUT_SIZE (256 * 4)
#define TABLE_FIXED (HDR_SIZE + FANOUT_SIZE)
#define PER_ENTRY (ENT_SIZE + 4)
/* at most this many entries in a table or held in memory */
#define MAX_ENTRIES ((uint64_t)1 << 30)
/* the log is merged into the table once it holds this many entries, and
 * an eighth of the table's */
#define MERGE_MIN 512

struct cfs_index {
	int dir_fd, log_fd;
	bool writable;
	/* the table, mapped; n entries, checked at open */
	const uint8_t *map;
	size_t map_size;
	uint64_t n;
	/* the log's entries and those added since (from n_logged on), newest last */
	pthread_mutex_t lock;
	uint8_t *mem;
	size_t n_mem, cap_mem, n_logged;
	/* open addressing over mem: entry index + 1, by sha256 and by digest */
	uint32_t *by_sha, *by_digest;
	size_t hcap;
};

/*
 * splitmix64's finaliser. The signature and the check need not resist a
 * forger: whoever can write the index can write the object too (index.h).
 */
static uint64_t mix(uint64_t h)
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

/* The signature of an object's inode: its number, size and ctime. */
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

static uint64_t ent_check(const uint8_t *e)
{
	uint64_t h = 0x636673696e646578ull; /* "cfsindex" */

	for (size_t i = 0; i < ENT_CHECKED; i += 8)
		h = mix(h ^ get64(e + i)) + 0x9e3779b97f4a7c15ull;
	return h;
}

static bool ent_ok(const uint8_t *e)
{
	return get64(e + ENT_CHECKED) == ent_check(e);
}

static bool has_sig(const uint8_t *e)
{
	static const uint8_t zero[SIG_SIZE];

	return memcmp(e + OFF_SIG, zero, SIG_SIZE) != 0;
}

static void ent_make(uint8_t *e, const uint8_t sha[32], const uint8_t digest[32],
		     const uint8_t sig[SIG_SIZE])
{
	memcpy(e, sha, 32);
	memcpy(e + OFF_DIGEST, digest, 32);
	if (sig)
		memcpy(e + OFF_SIG, sig, SIG_SIZE);
	else
		memset(e + OFF_SIG, 0, SIG_SIZE);
	put64(e + ENT_CHECKED, ent_check(e));
}

/* ---- the entries in memory ---- */

static size_t slot_of(const uint8_t *key, size_t hcap)
{
	return (size_t)get64(key) & (hcap - 1);
}

/* The slot of @key (at @off of an entry) in @tab: its entry's, or an empty one. */
static size_t find_slot(const struct cfs_index *ix, const uint32_t *tab, size_t off,
			const uint8_t *key)
{
	size_t s = slot_of(key, ix->hcap);

	while (tab[s] && memcmp(ix->mem + (size_t)(tab[s] - 1) * ENT_SIZE + off, key, 32))
		s = (s + 1) & (ix->hcap - 1);
	return s;
}

static int grow_hash(struct cfs_index *ix)
{
	size_t hcap = ix->hcap ? ix->hcap * 2 : 1024;
	uint32_t *a = calloc(hcap, sizeof(*a)), *b = calloc(hcap, sizeof(*b));

	if (!a || !b) {
		free(a);
		free(b);
		return -ENOMEM;
	}
	free(ix->by_sha);
	free(ix->by_digest);
	ix->by_sha = a;
	ix->by_digest = b;
	ix->hcap = hcap;
	/* later entries replace earlier ones of the same key */
	for (size_t i = 0; i < ix->n_mem; i++) {
		const uint8_t *e = ix->mem + i * ENT_SIZE;

		a[find_slot(ix, a, 0, e)] = (uint32_t)(i + 1);
		b[find_slot(ix, b, OFF_DIGEST, e + OFF_DIGEST)] = (uint32_t)(i + 1);
	}
	return 0;
}

/* Append the entry @e to memory, newest of its keys. Under ix->lock. */
static int mem_put(struct cfs_index *ix, const uint8_t *e)
{
	size_t s;

	if (ix->n_mem >= MAX_ENTRIES)
		return -EFBIG;
	if (ix->n_mem == ix->cap_mem) {
		size_t cap = ix->cap_mem ? ix->cap_mem * 2 : 256;
		uint8_t *m = realloc(ix->mem, cap * ENT_SIZE);

		if (!m)
			return -ENOMEM;
		ix->mem = m;
		ix->cap_mem = cap;
	}
	memcpy(ix->mem + ix->n_mem * ENT_SIZE, e, ENT_SIZE);
	ix->n_mem++;
	if ((ix->n_mem + 1) * 2 > ix->hcap)
		return grow_hash(ix);
	s = find_slot(ix, ix->by_sha, 0, e);
	ix->by_sha[s] = (uint32_t)ix->n_mem;
	s = find_slot(ix, ix->by_digest, OFF_DIGEST, e + OFF_DIGEST);
	ix->by_digest[s] = (uint32_t)ix->n_mem;
	return 0;
}

/* The newest entry in memory whose key at @off is @key, or NULL. Under ix->lock. */
static const uint8_t *mem_find(const struct cfs_index *ix, size_t off, const uint8_t *key)
{
	const uint32_t *tab = off ? ix->by_digest : ix->by_sha;
	size_t s;

	if (!ix->hcap)
		return NULL;
	s = find_slot(ix, tab, off, key);
	return tab[s] ? ix->mem + (size_t)(tab[s] - 1) * ENT_SIZE : NULL;
}

/* ---- the table ---- */

static const uint8_t *table_ent(const uint8_t *map, uint64_t i)
{
	return map + TABLE_FIXED + i * ENT_SIZE;
}

/* Whether @map, @size bytes, is a table; its entry count in @n. */
static bool table_valid(const uint8_t *map, size_t size, uint64_t *n)
{
	uint32_t prev = 0;
	uint64_t count;

	if (size < TABLE_FIXED || memcmp(map, TABLE_MAGIC, 8) || get32(map + 8) != TABLE_VERSION ||
	    get32(map + 12) != ENT_SIZE)
		return false;
	count = get64(map + 16);
	if (count > MAX_ENTRIES || (size - TABLE_FIXED) / PER_ENTRY != count ||
	    (size - TABLE_FIXED) % PER_ENTRY)
		return false;
	for (size_t b = 0; b < 256; b++) {
		uint32_t f = get32(map + HDR_SIZE + 4 * b);

		if (f < prev || f > count)
			return false;
		prev = f;
	}
	if (prev != count)
		return false;
	*n = count;
	return true;
}

/* Map the table of @dir_fd, if there is a valid one. */
static void table_map(int dir_fd, const uint8_t **map, size_t *size, uint64_t *n)
{
	struct stat st;
	void *m;
	int fd;

	*map = NULL;
	*size = 0;
	*n = 0;
	fd = openat(dir_fd, TABLE, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size >= TABLE_FIXED &&
	    (uint64_t)st.st_size <= TABLE_FIXED + MAX_ENTRIES * PER_ENTRY) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
		if (m != MAP_FAILED) {
			if (table_valid(m, (size_t)st.st_size, n)) {
				*map = m;
				*size = (size_t)st.st_size;
			} else {
				munmap(m, (size_t)st.st_size);
			}
		}
	}
	close(fd);
}

/* The table's entry for @sha, or NULL. */
static const uint8_t *table_find_sha(const uint8_t *map, uint64_t n, const uint8_t sha[32])
{
	uint64_t lo = sha[0] ? get32(map + HDR_SIZE + 4 * (sha[0] - 1)) : 0;
	uint64_t hi = get32(map + HDR_SIZE + 4 * sha[0]);

	(void)n;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = table_ent(map, mid);
		int c = memcmp(e, sha, 32);

		if (c == 0)
			return ent_ok(e) ? e : NULL;
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* The table's entry at position @i of the digest order, or NULL. */
static const uint8_t *table_by_digest(const uint8_t *map, uint64_t n, uint64_t i)
{
	uint32_t pos = get32(map + TABLE_FIXED + n * ENT_SIZE + 4 * i);

	return pos < n ? table_ent(map, pos) : NULL;
}

/* The table's entry of @digest whose sha256 is @sha (any, if @sha is NULL), or NULL. */
static const uint8_t *table_find_digest(const uint8_t *map, uint64_t n, const uint8_t digest[32],
					const uint8_t *sha)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;
		const uint8_t *e = table_by_digest(map, n, mid);

		if (e && memcmp(e + OFF_DIGEST, digest, 32) < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the entries of this digest (more than one only in a damaged index) */
	for (; lo < n; lo++) {
		const uint8_t *e = table_by_digest(map, n, lo);

		if (!e || memcmp(e + OFF_DIGEST, digest, 32))
			break;
		if (ent_ok(e) && (!sha || !memcmp(e, sha, 32)))
			return e;
	}
	return NULL;
}

/* ---- writing ---- */

static int pwrite_all(int fd, const void *buf, size_t len, off_t off)
{
	const uint8_t *p = buf;

	while (len) {
		ssize_t w = pwrite(fd, p, len, off);

		if (w < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		p += w;
		len -= (size_t)w;
		off += w;
	}
	return 0;
}

/*
 * Append the entries added through @ix to the log, under its exclusive
 * lock; a torn entry a killed writer left at the end is cut off first.
 * @n_log: the entries the log then holds.
 */
static int log_append(struct cfs_index *ix, uint64_t *n_log)
{
	size_t n = ix->n_mem - ix->n_logged;
	struct stat st;
	off_t end;
	int r;

	if (fstat(ix->log_fd, &st) < 0)
		return -errno;
	end = st.st_size - st.st_size % ENT_SIZE;
	if (end != st.st_size && ftruncate(ix->log_fd, end) < 0)
		return -errno;
	r = pwrite_all(ix->log_fd, ix->mem + ix->n_logged * ENT_SIZE, n * ENT_SIZE, end);
	if (r) {
		/* no half entry left behind for the next one to follow */
		if (ftruncate(ix->log_fd, end) < 0)
			r = -errno;
		return r;
	}
	ix->n_logged = ix->n_mem;
	*n_log = (uint64_t)end / ENT_SIZE + n;
	return 0;
}

struct item {
	const uint8_t *e;
	uint64_t seq;
};

static int cmp_item(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = memcmp(x->e, y->e, 32);

	return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

struct dpos {
	uint8_t digest[32];
	uint32_t pos;
};

static int cmp_dpos(const void *a, const void *b)
{
	const struct dpos *x = a, *y = b;
	int c = memcmp(x->digest, y->digest, 32);

	return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* A buffered writer of the new table. */
struct out {
	int fd, err;
	off_t off;
	size_t len;
	uint8_t buf[1 << 16];
};

static void out_put(struct out *o, const void *p, size_t len)
{
	if (o->err)
		return;
	if (o->len + len > sizeof(o->buf)) {
		o->err = pwrite_all(o->fd, o->buf, o->len, o->off);
		o->off += (off_t)o->len;
		o->len = 0;
		if (o->err)
			return;
	}
	memcpy(o->buf + o->len, p, len);
	o->len += len;
}

static int out_flush(struct out *o)
{
	if (!o->err && o->len)
		o->err = pwrite_all(o->fd, o->buf, o->len, o->off);
	return o->err;
}

/* Read the whole of @fd: its bytes in *@buf, their count in *@len. */
static int read_whole(int fd, uint8_t **buf, size_t *len)
{
	struct stat st;
	size_t got = 0;

	*buf = NULL;
	*len = 0;
	if (fstat(fd, &st) < 0)
		return -errno;
	if ((uint64_t)st.st_size > MAX_ENTRIES * ENT_SIZE)
		return -EFBIG;
	*buf = malloc(st.st_size ? (size_t)st.st_size : 1);
	if (!*buf)
		return -ENOMEM;
	while (got < (size_t)st.st_size) {
		ssize_t n = pread(fd, *buf + got, (size_t)st.st_size - got, (off_t)got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
	}
	*len = got;
	return 0;
}

/*
 * Merge the table and the log of @ix into a new table, under the log's
 * exclusive lock: both are read again, as another process may have merged
 * or appended since @ix was opened. Of the entries of one sha256 the
 * newest is kept; an entry whose check fails is dropped.
 */
static int merge(struct cfs_index *ix)
{
	const uint8_t *map;
	size_t map_size, log_len, n_items = 0, n_out = 0;
	uint64_t n_table;
	uint8_t *log = NULL, hdr[HDR_SIZE] = { 0 }, fanout[FANOUT_SIZE];
	struct item *items = NULL;
	struct dpos *dp = NULL;
	struct out *o = NULL;
	uint32_t count[256] = { 0 }, sum = 0;
	int r, fd = -1;

	table_map(ix->dir_fd, &map, &map_size, &n_table);
	r = read_whole(ix->log_fd, &log, &log_len);
	if (r)
		goto out;
	items = malloc((n_table + log_len / ENT_SIZE + 1) * sizeof(*items));
	if (!items) {
		r = -ENOMEM;
		goto out;
	}
	/* in the order written: the table, then the log */
	for (uint64_t i = 0; i < n_table; i++)
		if (ent_ok(table_ent(map, i))) {
			items[n_items].e = table_ent(map, i);
			items[n_items].seq = n_items;
			n_items++;
		}
	for (size_t i = 0; i + ENT_SIZE <= log_len; i += ENT_SIZE)
		if (ent_ok(log + i)) {
			items[n_items].e = log + i;
			items[n_items].seq = n_items;
			n_items++;
		}
	qsort(items, n_items, sizeof(*items), cmp_item);
	/* the newest of each sha256, in place */
	for (size_t i = 0; i < n_items; i++) {
		if (i + 1 < n_items && !memcmp(items[i].e, items[i + 1].e, 32))
			continue;
		items[n_out++] = items[i];
	}
	if (n_out > MAX_ENTRIES) {
		r = -EFBIG;
		goto out;
	}
	dp = malloc((n_out ? n_out : 1) * sizeof(*dp));
	o = malloc(sizeof(*o));
	if (!dp || !o) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n_out; i++) {
		memcpy(dp[i].digest, items[i].e + OFF_DIGEST, 32);
		dp[i].pos = (uint32_t)i;
		count[items[i].e[0]]++;
	}
	qsort(dp, n_out, sizeof(*dp), cmp_dpos);
	memcpy(hdr, TABLE_MAGIC, 8);
	put32(hdr + 8, TABLE_VERSION);
	put32(hdr + 12, ENT_SIZE);
	put64(hdr + 16, n_out);
	for (size_t b = 0; b < 256; b++) {
		sum += count[b];
		put32(fanout + 4 * b, sum);
	}
	/* A new file, never one planted under the name (a hardlink to
	 * another file would be truncated through it): the writer holds the
	 * log's lock, so a leftover is a killed writer's.
	 */
	unlinkat(ix->dir_fd, TABLE_TMP, 0);
	fd = openat(ix->dir_fd, TABLE_TMP, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
		    CFS_STORE_FILE_MODE);
	if (fd < 0) {
		r = -errno;
		goto out;
	}
	*o = (struct out){ .fd = fd };
	out_put(o, hdr, sizeof(hdr));
	out_put(o, fanout, sizeof(fanout));
	for (size_t i = 0; i < n_out; i++)
		out_put(o, items[i].e, ENT_SIZE);
	for (size_t i = 0; i < n_out; i++) {
		uint8_t p[4];

		put32(p, dp[i].pos);
		out_put(o, p, 4);
	}
	r = out_flush(o);
	if (r == 0 && fsync(fd) < 0)
		r = -errno;
	if (r == 0 && renameat(ix->dir_fd, TABLE_TMP, ix->dir_fd, TABLE) < 0)
		r = -errno;
	if (r) {
		unlinkat(ix->dir_fd, TABLE_TMP, 0);
		goto out;
	}
	/* the table holds the log's entries now: a crash before this only repeats them */
	if (fsync(ix->dir_fd) < 0 || ftruncate(ix->log_fd, 0) < 0)
		r = -errno;
out:
	if (fd >= 0)
		close(fd);
	if (map)
		munmap((void *)map, map_size);
	free(o);
	free(dp);
	free(items);
	free(log);
	return r;
}

/* Read the log's entries into memory. */
static int log_read(struct cfs_index *ix)
{
	uint8_t *log;
	size_t len;
	int r = read_whole(ix->log_fd, &log, &len);

	for (size_t i = 0; r == 0 && i + ENT_SIZE <= len; i += ENT_SIZE)
		if (ent_ok(log + i))
			r = mem_put(ix, log + i);
	free(log);
	ix->n_logged = ix->n_mem;
	return r;
}

/* ---- the earlier form: a symlink per entry and direction ---- */

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

/* The (@n * 4 + 2) / 3 base64url characters at @s as @n bytes: 0, or -EINVAL. */
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
	return o == n && (acc & ((1u << bits) - 1)) == 0 ? 0 : -EINVAL;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* The key of the entry @xx/@name (2 + 62 lowercase hex digits): 0, or -EINVAL. */
static int parse_key(const char *xx, const char *name, uint8_t key[32])
{
	char hex[65];

	if (strlen(xx) != 2 || strlen(name) != 62)
		return -EINVAL;
	memcpy(hex, xx, 2);
	memcpy(hex + 2, name, 63);
	for (size_t i = 0; i < 32; i++) {
		int hi = hexval(hex[2 * i]), lo = hexval(hex[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -EINVAL;
		key[i] = (uint8_t)(hi << 4 | lo);
	}
	return 0;
}

#define KEY_CHARS 43 /* 32 bytes */
#define SIG_CHARS 11 /* SIG_SIZE bytes */

/*
 * The symlinks of KIND ("verity", then "sha256") into memory; with
 * @remove, removed instead (and their directories). A verity entry gives
 * the whole entry, its signature included (the oldest form has none); a
 * sha256 entry is taken only when no verity entry gave its sha256, without
 * a signature, so its object is read once before it is believed.
 */
static int legacy_walk(struct cfs_index *ix, const char *kind, bool remove)
{
	int kfd = openat(ix->dir_fd, kind, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	bool verity = !strcmp(kind, "verity");
	DIR *kd, *sd;
	struct dirent *x, *y;
	int r = 0;

	if (kfd < 0)
		return errno == ENOENT ? 0 : -errno;
	kd = fdopendir(kfd);
	if (!kd) {
		close(kfd);
		return -errno;
	}
	while (r == 0 && (x = readdir(kd))) {
		int sfd;

		if (x->d_name[0] == '.')
			continue;
		sfd = openat(kfd, x->d_name, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
		if (sfd < 0) {
			if (remove && unlinkat(kfd, x->d_name, 0) < 0)
				r = -errno;
			continue;
		}
		sd = fdopendir(sfd);
		if (!sd) {
			close(sfd);
			r = -errno;
			break;
		}
		while (r == 0 && (y = readdir(sd))) {
			char t[KEY_CHARS + 1 + SIG_CHARS + 2];
			uint8_t key[32], val[32], sig[SIG_SIZE], e[ENT_SIZE];
			bool signed_ = false;
			ssize_t n;

			if (!strcmp(y->d_name, ".") || !strcmp(y->d_name, ".."))
				continue;
			if (remove) {
				if (unlinkat(sfd, y->d_name, 0) < 0 && errno != ENOENT)
					r = -errno;
				continue;
			}
			if (parse_key(x->d_name, y->d_name, key))
				continue;
			n = readlinkat(sfd, y->d_name, t, sizeof(t));
			if (n != KEY_CHARS && n != KEY_CHARS + 1 + SIG_CHARS)
				continue;
			t[n] = '\0';
			if (decode(t, val, 32))
				continue;
			if (verity && n > KEY_CHARS && t[KEY_CHARS] == '.' &&
			    decode(t + KEY_CHARS + 1, sig, SIG_SIZE) == 0)
				signed_ = true;
			if (verity) {
				ent_make(e, val, key, signed_ ? sig : NULL);
			} else {
				if (mem_find(ix, 0, key))
					continue;
				ent_make(e, key, val, NULL);
			}
			r = mem_put(ix, e);
		}
		closedir(sd);
		if (r == 0 && remove && unlinkat(kfd, x->d_name, AT_REMOVEDIR) < 0 && errno != ENOENT)
			r = -errno;
	}
	closedir(kd);
	if (r == 0 && remove && unlinkat(ix->dir_fd, kind, AT_REMOVEDIR) < 0 && errno != ENOENT)
		r = -errno;
	return r;
}

/* Migrate the earlier form, under the log's exclusive lock: its entries
 * into the log, the log into a table, then the symlinks removed. */
static int migrate(struct cfs_index *ix)
{
	uint64_t n_log;
	int r = legacy_walk(ix, "verity", false);

	if (r == 0)
		r = legacy_walk(ix, "sha256", false);
	if (r == 0 && ix->n_mem > ix->n_logged)
		r = log_append(ix, &n_log);
	if (r == 0)
		r = merge(ix);
	if (r == 0)
		r = legacy_walk(ix, "verity", true);
	if (r == 0)
		r = legacy_walk(ix, "sha256", true);
	/* the entries are read again from the table */
	ix->n_mem = ix->n_logged = 0;
	if (ix->hcap) {
		memset(ix->by_sha, 0, ix->hcap * sizeof(*ix->by_sha));
		memset(ix->by_digest, 0, ix->hcap * sizeof(*ix->by_digest));
	}
	return r;
}

/* ---- the interface ---- */

/* REPO/index of the store @store_fd, made if missing: a descriptor, or -errno. */
static int index_dir(int store_fd)
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
	fd = cfs_private_mkdirat(parent, INDEX_DIR);
	if (fd < 0) {
		close(parent);
		return fd;
	}
	fd = openat(parent, INDEX_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		fd = -errno;
	close(parent);
	return fd;
}

static void index_free(struct cfs_index *ix)
{
	if (ix->map)
		munmap((void *)ix->map, ix->map_size);
	if (ix->log_fd >= 0)
		close(ix->log_fd);
	if (ix->dir_fd >= 0)
		close(ix->dir_fd);
	pthread_mutex_destroy(&ix->lock);
	free(ix->mem);
	free(ix->by_sha);
	free(ix->by_digest);
	free(ix);
}

int cfs_index_open(int store_fd, struct cfs_index **out)
{
	struct cfs_index *ix;
	struct stat st;
	bool legacy;
	int r;

	*out = NULL;
	ix = calloc(1, sizeof(*ix));
	if (!ix)
		return -ENOMEM;
	ix->log_fd = -1;
	if (pthread_mutex_init(&ix->lock, NULL)) {
		free(ix);
		return -ENOMEM;
	}
	ix->dir_fd = index_dir(store_fd);
	if (ix->dir_fd < 0) {
		r = ix->dir_fd;
		goto err;
	}
	ix->log_fd = openat(ix->dir_fd, LOG, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW,
			   CFS_STORE_FILE_MODE);
	ix->writable = ix->log_fd >= 0;
	if (ix->log_fd < 0)
		ix->log_fd = openat(ix->dir_fd, LOG, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (ix->log_fd < 0) {
		r = -errno;
		goto err;
	}
	if (fstat(ix->log_fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		r = -EUCLEAN;
		goto err;
	}
	legacy = ix->writable && (fstatat(ix->dir_fd, "verity", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
				  fstatat(ix->dir_fd, "sha256", &st, AT_SYMLINK_NOFOLLOW) == 0);
	/* shared: a merge is seen whole or not at all */
	while (flock(ix->log_fd, legacy ? LOCK_EX : LOCK_SH) < 0)
		if (errno != EINTR) {
			r = -errno;
			goto err;
		}
	/* another process may have migrated it while this one waited */
	if (legacy && (fstatat(ix->dir_fd, "verity", &st, AT_SYMLINK_NOFOLLOW) == 0 ||
		       fstatat(ix->dir_fd, "sha256", &st, AT_SYMLINK_NOFOLLOW) == 0))
		migrate(ix);
	table_map(ix->dir_fd, &ix->map, &ix->map_size, &ix->n);
	r = log_read(ix);
	flock(ix->log_fd, LOCK_UN);
	if (r)
		goto err;
	*out = ix;
	return 0;
err:
	index_free(ix);
	return r;
}

int cfs_index_close(struct cfs_index *ix)
{
	uint64_t n_log = 0, n_table = 0;
	struct stat st;
	int r = 0;

	if (!ix)
		return 0;
	if (ix->writable && ix->n_mem > ix->n_logged) {
		while (flock(ix->log_fd, LOCK_EX) < 0)
			if (errno != EINTR) {
				r = -errno;
				goto out;
			}
		r = log_append(ix, &n_log);
		/* the table now, which another process may have merged into */
		if (fstatat(ix->dir_fd, TABLE, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    st.st_size >= TABLE_FIXED)
			n_table = ((uint64_t)st.st_size - TABLE_FIXED) / PER_ENTRY;
		if (r == 0 && n_log >= MERGE_MIN && n_log * 8 >= n_table)
			r = merge(ix);
		flock(ix->log_fd, LOCK_UN);
	}
out:
	index_free(ix);
	return r;
}

/* A copy of the newest entry of @key (at @off: 0 sha256, else digest),
 * in memory or else in the table (there, of @sha if not NULL): 0, or -ENOENT. */
static int find(struct cfs_index *ix, size_t off, const uint8_t key[32], const uint8_t *sha,
		uint8_t e[ENT_SIZE])
{
	const uint8_t *m;

	if (!ix)
		return -ENOENT;
	pthread_mutex_lock(&ix->lock);
	m = mem_find(ix, off, key);
	if (m)
		memcpy(e, m, ENT_SIZE);
	pthread_mutex_unlock(&ix->lock);
	if (m)
		return 0;
	if (!ix->map)
		return -ENOENT;
	m = off ? table_find_digest(ix->map, ix->n, key, sha) : table_find_sha(ix->map, ix->n, key);
	if (!m)
		return -ENOENT;
	memcpy(e, m, ENT_SIZE);
	return 0;
}

int cfs_index_lookup(struct cfs_index *ix, const uint8_t sha256[32],
		     uint8_t digest[CFS_DIGEST_SIZE])
{
	uint8_t e[ENT_SIZE];

	if (find(ix, 0, sha256, NULL, e))
		return -ENOENT;
	memcpy(digest, e + OFF_DIGEST, CFS_DIGEST_SIZE);
	return 0;
}

bool cfs_index_vouches(struct cfs_index *ix, const uint8_t digest[CFS_DIGEST_SIZE],
		       const struct stat *st, const uint8_t sha256[32])
{
	uint8_t e[ENT_SIZE], now[SIG_SIZE], named[CFS_DIGEST_SIZE];

	/* both ways: the sha256's newest entry names the object, and the
	 * object's is of this sha256, signed */
	if (cfs_index_lookup(ix, sha256, named) || memcmp(named, digest, CFS_DIGEST_SIZE) ||
	    find(ix, OFF_DIGEST, digest, sha256, e) || memcmp(e, sha256, 32) || !has_sig(e))
		return false;
	inode_sig(st, now);
	return memcmp(e + OFF_SIG, now, SIG_SIZE) == 0;
}

int cfs_index_add(struct cfs_index *ix, const uint8_t sha256[32],
		  const uint8_t digest[CFS_DIGEST_SIZE], const struct stat *st)
{
	uint8_t e[ENT_SIZE], sig[SIG_SIZE];
	const uint8_t *m;
	int r = 0;

	if (!ix || !ix->writable)
		return -EROFS;
	inode_sig(st, sig);
	ent_make(e, sha256, digest, sig);
	pthread_mutex_lock(&ix->lock);
	m = mem_find(ix, 0, sha256);
	if (!m || memcmp(m, e, ENT_SIZE))
		r = mem_put(ix, e);
	pthread_mutex_unlock(&ix->lock);
	return r;
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

void cfs_index_learn(struct cfs_index *ix, int store_fd, const uint8_t digest[CFS_DIGEST_SIZE])
{
	uint8_t sha[32], e[ENT_SIZE], named[CFS_DIGEST_SIZE];
	struct stat st;

	if (!ix)
		return;
	/*
	 * Known: a signed entry of the object, which its sha256 names too.
	 * An entry without a signature is learnt again, to be signed, and
	 * so is one that another entry (a lie, caught) has overridden.
	 */
	if (find(ix, OFF_DIGEST, digest, NULL, e) == 0 && has_sig(e) &&
	    cfs_index_lookup(ix, e, named) == 0 && !memcmp(named, digest, CFS_DIGEST_SIZE))
		return;
	if (object_sha256(store_fd, digest, sha, &st))
		return;
	cfs_index_add(ix, sha, digest, &st);
}

/* The threads of cfs_index_fill(): each takes the next job. */
#define FILL_THREADS 4

struct filler {
	struct cfs_index *ix;
	int store_fd;
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
			cfs_index_learn(f->ix, f->store_fd, f->jobs[i]->digest);
	return NULL;
}

void cfs_index_fill(int store_fd, struct cfs_node *const *jobs, size_t n)
{
	struct filler f = { .store_fd = store_fd, .jobs = jobs, .n = n };
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	pthread_t threads[FILL_THREADS - 1];
	size_t started = 0;

	if (cfs_index_open(store_fd, &f.ix))
		return;
	/*
	 * Each object new to the index is read and hashed, and an entry
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
	cfs_index_close(f.ix);
}
