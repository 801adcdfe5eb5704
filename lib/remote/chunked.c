// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Partial pulls of zstd:chunked layers. The TOC is fetched with a range
 * request and checked against the manifest's checksum annotation before it
 * is parsed (toc.c). Each regular file it lists is looked up by its sha256
 * in the repository's index (index.c); an object found there is used
 * unread when the index vouches for its inode (both directions agree, the
 * inode unchanged), else it is read and must have that sha256, or it is
 * fetched like any other; the lookups start on the digests the TOC's text
 * names while it is parsed (start_hints()). The frames of
 * the files left are fetched with range requests, neighbours coalesced,
 * many ranges to a request, into an unnamed temporary file at their
 * places in the blob; each file is decompressed, once its frames are all
 * there, and must have its size and sha256. Nothing reaches the store or the tree before every
 * file has checked out: the layer becomes a fragment (a tar whose files
 * found in the store name their objects, the others carry their content),
 * and applying it gives the tree a full pull gives, byte for byte, since
 * the same tar rules apply to the same entries with the same metadata.
 *
 * The trust chain: the manifest (by digest, or by tag from the registry)
 * gives the TOC's sha256; the TOC gives each file's sha256. When the layer
 * has a tar-split (tarsplit.c), the tar stream it rebuilds from its own
 * segments and the files' content must have the config's diff_id, as a
 * full pull's stream must; without one, the diff_id cannot be checked, as
 * the whole blob is never read: a pull that needs that check asks for a
 * full pull.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zstd.h>

#include "cfs/store.h"
#include "chunked.h"
#include "store/index.h"
#include "tarsplit.h"
#include "base/tree.h"
#include "base/internal.h"

/* Neighbouring ranges closer than this are fetched as one. */
#define COALESCE_GAP 256
#define BUF_SIZE (128 * 1024)

struct file {
	struct cfs_toc_entry *e;
	bool have; /* its object is in the store */
	bool in_tarsplit; /* the tar-split named it already */
	bool unpacked; /* fetched, and unpacked into the content spool */
	uint8_t digest[CFS_DIGEST_SIZE]; /* then: the object */
	uint64_t at; /* else: where its content is in the content spool */
};

struct state {
	struct cfs_chunked *c;
	struct cfs_toc *toc;
	struct file *files; /* the regular files with content, in TOC order */
	size_t n_files;
	struct file **by_name; /* the same, sorted by name (the tar-split's lookups) */
	int store_fd;
	struct cfs_index *index;
	int frames_fd; /* the fetched bytes, at their offsets in the blob */
	int content_fd; /* the fetched files, decompressed and checked */
	uint64_t content_end;
	uint8_t *buf, *out;
	struct hints *hints; /* the lookups started while the TOC is parsed */
	/* while the frames come: the files to unpack, by offset, and their ranges */
	struct file **missing;
	size_t *missing_range, n_missing, next_unpack;
	const struct cfs_registry_range *ranges;
	uint64_t *got; /* of each range: the bytes received from its start */
	size_t n_ranges;
	ZSTD_DCtx *dctx;
};

/* ---- the TOC ---- */

struct membuf {
	uint8_t *data;
	uint64_t start;
};

static int to_mem(void *ctx, size_t i, uint64_t off, const void *data, size_t len)
{
	struct membuf *m = ctx;

	(void)i;
	memcpy(m->data + (off - m->start), data, len);
	return 0;
}

/*
 * The @length bytes of the blob at @offset, fetched into a new buffer in
 * *@out. Return: 0, 1 when the registry ignores Range requests (nothing
 * fetched), or -errno.
 */
static int fetch_range(struct cfs_chunked *c, uint64_t offset, uint64_t length, uint8_t **out)
{
	struct cfs_registry_range range = { offset, offset + length };
	struct membuf m = { .start = offset };
	int r;

	*out = NULL;
	m.data = malloc(length);
	if (!m.data)
		return -ENOMEM;
	r = cfs_registry_get_ranges(c->reg, c->digest, c->size, &range, 1, false, c->what, to_mem,
				    &m, &c->fetched);
	if (c->progress)
		c->progress(c->progress_ctx, c->fetched);
	if (r) {
		free(m.data);
		return r;
	}
	*out = m.data;
	return 0;
}

static void start_hints(void *ctx, const char *json, size_t len);

static int fetch_toc(struct state *s)
{
	struct cfs_chunked *c = s->c;
	uint8_t *data;
	int r;

	r = fetch_range(c, c->pos.offset, c->pos.length, &data);
	if (r == 1)
		c->fallback = "the registry ignores Range requests";
	if (r == 0)
		r = cfs_toc_decode(data, c->pos.length, &c->pos, c->what, c->max_entries,
				   start_hints, s, &s->toc); /* which frees data */
	if (r == -EFBIG) {
		c->fallback = "its TOC holds more JSON values than are read at once (1048576), or would take more than 128 MiB parsed";
		r = 1;
	}
	return r;
}

/* ---- what the store has ---- */

/*
 * Whether the object @digest has the sha256 @want (and is @size bytes), as
 * the index says; @buf: BUF_SIZE bytes. The index is believed without
 * reading the object when it vouches for the object's inode as it is now
 * (index.h); otherwise the object is read and hashed, and then, when it
 * has @want, the index learns its inode for the next time.
 */
static bool object_is(int store_fd, struct cfs_index *index, const uint8_t digest[CFS_DIGEST_SIZE],
		      uint64_t size, const uint8_t want[32], uint8_t *buf)
{
	char objpath[CFS_OBJECT_PATH_SIZE];
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int len = 0;
	EVP_MD_CTX *ctx = NULL;
	struct stat st;
	bool ok = false;
	ssize_t n;
	int fd;

	cfs_object_path(digest, objpath);
	if (fstatat(store_fd, objpath, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size != size)
		return false;
	if (cfs_index_vouches(index, digest, &st, want))
		return true;
	fd = openat(store_fd, objpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return false;
	ctx = EVP_MD_CTX_new();
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size != size || !ctx ||
	    !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL))
		goto out;
	while ((n = read(fd, buf, BUF_SIZE)) > 0)
		if (!EVP_DigestUpdate(ctx, buf, (size_t)n))
			goto out;
	ok = n == 0 && EVP_DigestFinal_ex(ctx, md, &len) && len == 32 && !memcmp(md, want, 32);
	if (ok)
		cfs_index_add(index, want, digest, &st);
out:
	EVP_MD_CTX_free(ctx);
	close(fd);
	return ok;
}

/* The threads that look the files up and check the objects found. */
#define CHECK_THREADS 4

/*
 * The index lookups, started while the TOC is parsed, on the CPUs the
 * parse leaves idle: every "digest":"sha256:<64 hex>" in the TOC's text
 * (checked against its annotation, not yet parsed) is looked up in the
 * index, its object's lstat() taken and the index asked whether it
 * vouches for it. A hint is a fact about the store alone, keyed by a
 * sha256: the index names this object for it, and vouches for it or not.
 * check_files() takes a hint only for a file of the parsed and checked TOC
 * that has its sha256, and only at the file's size; a digest the text has
 * in another place costs a lookup, no more. A file without a hint, or
 * whose object the index does not vouch for, is looked up and checked as
 * if there were no hints. At most MAX_HINTS are taken (the rest are looked
 * up after the parse): some 80 bytes each.
 */
#define MAX_HINTS ((size_t)1 << 17)

struct hint {
	uint8_t sha256[32];
	uint8_t digest[CFS_DIGEST_SIZE];
	uint64_t size;
	bool found; /* the index names an object for it, a regular file of @size */
	bool vouched; /* and vouches for it */
};

struct hints {
	struct hint *v; /* sorted by sha256, no two alike */
	size_t n;
	atomic_size_t next;
	int store_fd;
	struct cfs_index *index;
	pthread_t threads[CHECK_THREADS];
	size_t n_threads;
};

static int cmp_hint(const void *a, const void *b)
{
	return memcmp(a, b, 32);
}

static void *hint_lookups(void *arg)
{
	struct hints *h = arg;
	char objpath[CFS_OBJECT_PATH_SIZE];
	struct stat st;
	size_t i;

	while ((i = atomic_fetch_add(&h->next, 1)) < h->n) {
		struct hint *x = &h->v[i];

		if (cfs_index_lookup(h->index, x->sha256, x->digest))
			continue;
		cfs_object_path(x->digest, objpath);
		if (fstatat(h->store_fd, objpath, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    !S_ISREG(st.st_mode))
			continue;
		x->found = true;
		x->size = (uint64_t)st.st_size;
		x->vouched = cfs_index_vouches(h->index, x->digest, &st, x->sha256);
	}
	return NULL;
}

/* Wait for the lookups to end. */
static void join_hints(struct hints *h)
{
	if (!h)
		return;
	for (size_t k = 0; k < h->n_threads; k++)
		pthread_join(h->threads[k], NULL);
	h->n_threads = 0;
}

static void free_hints(struct hints *h)
{
	if (!h)
		return;
	join_hints(h);
	cfs_index_close(h->index);
	if (h->store_fd >= 0)
		close(h->store_fd);
	free(h->v);
	free(h);
}

/* One digest of the TOC's text, into the hints' array. */
static int add_hint(void *ctx, const uint8_t sha256[32])
{
	struct hints *h = ctx;

	if (h->n >= MAX_HINTS)
		return 1;
	if (h->n % 4096 == 0) {
		struct hint *v = realloc(h->v, (h->n + 4096) * sizeof(*v));

		if (!v)
			return -ENOMEM;
		h->v = v;
	}
	memset(&h->v[h->n], 0, sizeof(h->v[h->n]));
	memcpy(h->v[h->n].sha256, sha256, 32);
	h->n++;
	return 0;
}

/* The TOC's text, before it is parsed (cfs_toc_decode()): the lookups start. */
static void start_hints(void *ctx, const char *json, size_t len)
{
	struct state *s = ctx;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	struct hints *h;
	struct stat st;
	size_t n;

	if (!s->c->digest_store)
		return;
	h = calloc(1, sizeof(*h));
	if (!h)
		return;
	/* a store that is no repository's, or an index not made yet: nothing to look up */
	h->store_fd = open(s->c->digest_store, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (h->store_fd < 0 || fstatat(h->store_fd, "../index", &st, AT_SYMLINK_NOFOLLOW) < 0 ||
	    !S_ISDIR(st.st_mode))
		goto none;
	if (cfs_index_open(h->store_fd, &h->index))
		goto none;
	if (cfs_toc_scan_sha256(json, len, add_hint, h) < 0 || h->n == 0)
		goto none;
	n = h->n;
	qsort(h->v, n, sizeof(*h->v), cmp_hint);
	h->n = 1;
	for (size_t i = 1; i < n; i++)
		if (memcmp(h->v[i].sha256, h->v[h->n - 1].sha256, 32) != 0)
			h->v[h->n++] = h->v[i];
	/* the parse has this CPU: the others look up, up to CHECK_THREADS - 1 */
	for (long k = 0; k < CHECK_THREADS - 1 && (k == 0 || k < cpus - 1); k++) {
		if (pthread_create(&h->threads[k], NULL, hint_lookups, h) != 0)
			break;
		h->n_threads++;
	}
	if (h->n_threads == 0)
		goto none;
	s->hints = h;
	return;
none:
	free_hints(h);
}

/* The hint for @sha256, when the lookups ran; else NULL. */
static const struct hint *find_hint(const struct state *s, const uint8_t sha256[32])
{
	if (!s->hints)
		return NULL;
	return bsearch(sha256, s->hints->v, s->hints->n, sizeof(*s->hints->v), cmp_hint);
}

struct checker {
	struct state *s;
	pthread_t thread;
	atomic_size_t *next;
	uint64_t reused;
};

static void *check_files(void *arg)
{
	struct checker *c = arg;
	struct state *s = c->s;
	uint8_t *buf = malloc(BUF_SIZE);
	size_t i;

	while (buf && (i = atomic_fetch_add(c->next, 1)) < s->n_files) {
		struct file *f = &s->files[i];
		const struct hint *h = find_hint(s, f->e->sha256);

		if (h && !h->found)
			continue; /* the index has no object of this sha256 */
		if (h && h->vouched && h->size == f->e->size) {
			memcpy(f->digest, h->digest, CFS_DIGEST_SIZE);
			f->have = true;
			c->reused += f->e->size;
			continue;
		}
		if (cfs_index_lookup(s->index, f->e->sha256, f->digest) ||
		    !object_is(s->store_fd, s->index, f->digest, f->e->size, f->e->sha256, buf))
			continue;
		f->have = true;
		c->reused += f->e->size;
	}
	free(buf);
	return NULL;
}

static int find_files(struct state *s)
{
	struct checker c[CHECK_THREADS];
	atomic_size_t next = 0;
	size_t n = 0, started = 0;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	for (size_t i = 0; i < s->toc->n; i++)
		n += s->toc->entries[i].type == CFS_TOC_REG && s->toc->entries[i].size > 0;
	s->files = calloc(n ? n : 1, sizeof(*s->files));
	if (!s->files)
		return -ENOMEM;
	for (size_t i = 0; i < s->toc->n; i++) {
		struct cfs_toc_entry *e = &s->toc->entries[i];

		if (e->type == CFS_TOC_REG && e->size > 0)
			s->files[s->n_files++].e = e;
	}
	join_hints(s->hints);
	if (!s->index)
		return 0;
	/* Reading and hashing what the store has: one thread per CPU, up to 4. */
	for (long k = 0; k < CHECK_THREADS && (k == 0 || k < cpus); k++) {
		c[k] = (struct checker){ .s = s, .next = &next };
		if (k > 0 && pthread_create(&c[k].thread, NULL, check_files, &c[k]) != 0)
			break;
		started++;
	}
	check_files(&c[0]);
	for (size_t k = 0; k < started; k++) {
		if (k > 0)
			pthread_join(c[k].thread, NULL);
		s->c->reused += c[k].reused;
	}
	return 0;
}

/* ---- fetching what it lacks ---- */

static int unpack(struct state *s, ZSTD_DCtx *dctx, struct file *f);

/*
 * The bytes of range @i: to their place in the frames' file; and each file
 * whose frames are all there now is unpacked and checked while the rest
 * comes (each range's bytes come in order, and the ranges in theirs).
 */
static int to_frames(void *ctx, size_t i, uint64_t off, const void *data, size_t len)
{
	struct state *s = ctx;
	int r;

	r = cfs_pwrite_all(s->frames_fd, data, len, off);
	if (r)
		cfs_msg("'%s': writing a temporary file: %s", s->c->what, strerror(-r));
	if (s->c->progress)
		s->c->progress(s->c->progress_ctx, s->c->fetched + len);
	if (r || !s->got || i >= s->n_ranges)
		return r;
	if (off <= s->ranges[i].start + s->got[i] && off + len > s->ranges[i].start + s->got[i])
		s->got[i] = off + len - s->ranges[i].start;
	while (r == 0 && s->next_unpack < s->n_missing) {
		struct file *f = s->missing[s->next_unpack];
		size_t k = s->missing_range[s->next_unpack];

		if (s->ranges[k].start + s->got[k] < f->e->end)
			break;
		r = unpack(s, s->dctx, f);
		f->unpacked = r == 0;
		s->next_unpack++;
	}
	return r;
}

static int cmp_file_offset(const void *a, const void *b)
{
	const struct file *x = *(const struct file *const *)a, *y = *(const struct file *const *)b;

	return x->e->offset < y->e->offset ? -1 : x->e->offset > y->e->offset;
}

static int fetch_missing(struct state *s)
{
	struct cfs_registry_range *ranges = NULL;
	struct file **missing = NULL;
	size_t n = 0, n_ranges = 0, *in_range = NULL;
	uint64_t *got = NULL;
	int r = 0;

	missing = calloc(s->n_files ? s->n_files : 1, sizeof(*missing));
	ranges = calloc(s->n_files ? s->n_files : 1, sizeof(*ranges));
	in_range = calloc(s->n_files ? s->n_files : 1, sizeof(*in_range));
	got = calloc(s->n_files ? s->n_files : 1, sizeof(*got));
	if (!missing || !ranges || !in_range || !got) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->n_files; i++)
		if (!s->files[i].have)
			missing[n++] = &s->files[i];
	qsort(missing, n, sizeof(*missing), cmp_file_offset);
	for (size_t i = 0; i < n; i++) {
		const struct cfs_toc_entry *e = missing[i]->e;

		if (n_ranges && e->offset - ranges[n_ranges - 1].end <= COALESCE_GAP)
			ranges[n_ranges - 1].end = e->end;
		else
			ranges[n_ranges++] = (struct cfs_registry_range){ e->offset, e->end };
		in_range[i] = n_ranges - 1;
	}
	if (n_ranges == 0)
		goto out;
	s->missing = missing;
	s->missing_range = in_range;
	s->n_missing = n;
	s->next_unpack = 0;
	s->ranges = ranges;
	s->got = got;
	s->n_ranges = n_ranges;
	r = cfs_registry_get_ranges(s->c->reg, s->c->digest, s->c->size, ranges, n_ranges, true,
				    s->c->what, to_frames, s, &s->c->fetched);
	if (r == 1 && n_ranges > 1) /* perhaps one range at a time */
		r = cfs_registry_get_ranges(s->c->reg, s->c->digest, s->c->size, ranges, n_ranges,
					    false, s->c->what, to_frames, s, &s->c->fetched);
	if (r == 1)
		s->c->fallback = "the registry ignores Range requests";
out:
	s->got = NULL;
	s->n_missing = s->n_ranges = 0;
	free(missing);
	free(ranges);
	free(in_range);
	free(got);
	return r;
}

/* Decompress file @f's frames into the content spool, checking its size and sha256. */
static int unpack(struct state *s, ZSTD_DCtx *dctx, struct file *f)
{
	const struct cfs_toc_entry *e = f->e;
	uint64_t in_off = e->offset, produced = 0;
	uint8_t md[EVP_MAX_MD_SIZE];
	char got[CFS_DIGEST_HEX_SIZE], exp[CFS_DIGEST_HEX_SIZE];
	unsigned int mdlen = 0;
	EVP_MD_CTX *ctx = EVP_MD_CTX_new();
	size_t zr = 1;
	int r = 0;

	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		r = -ENOMEM;
		goto out;
	}
	ZSTD_DCtx_reset(dctx, ZSTD_reset_session_only);
	f->at = s->content_end;
	while (in_off < e->end) {
		size_t n = e->end - in_off < BUF_SIZE ? (size_t)(e->end - in_off) : BUF_SIZE;
		ZSTD_inBuffer in = { s->buf, n, 0 };

		r = cfs_pread_all(s->frames_fd, s->buf, n, in_off);
		if (r) {
			cfs_msg("'%s': reading a temporary file: %s", s->c->what, strerror(-r));
			goto out;
		}
		in_off += n;
		while (in.pos < in.size || (zr != 0 && in_off == e->end)) {
			ZSTD_outBuffer out = { s->out, BUF_SIZE, 0 };

			zr = ZSTD_decompressStream(dctx, &out, &in);
			if (ZSTD_isError(zr)) {
				cfs_msg("'%s': file '%s': its frames do not decompress: %s",
					s->c->what, e->name, ZSTD_getErrorName(zr));
				r = -EINVAL;
				goto out;
			}
			if (out.pos > e->size - produced) {
				cfs_msg("'%s': file '%s': its frames hold more than its %llu bytes",
					s->c->what, e->name, (unsigned long long)e->size);
				r = -EINVAL;
				goto out;
			}
			if (!EVP_DigestUpdate(ctx, s->out, out.pos)) {
				r = -ENOMEM;
				goto out;
			}
			r = cfs_pwrite_all(s->content_fd, s->out, out.pos, f->at + produced);
			if (r) {
				cfs_msg("'%s': writing a temporary file: %s", s->c->what,
					strerror(-r));
				goto out;
			}
			produced += out.pos;
			if (in.pos == in.size && out.pos < BUF_SIZE)
				break;
		}
	}
	if (zr != 0 || produced != e->size) {
		cfs_msg("'%s': file '%s': its frames hold %llu bytes%s, not its %llu", s->c->what,
			e->name, (unsigned long long)produced, zr ? " and end inside a frame" : "",
			(unsigned long long)e->size);
		r = -EINVAL;
		goto out;
	}
	if (!EVP_DigestFinal_ex(ctx, md, &mdlen) || mdlen != 32) {
		r = -ENOMEM;
		goto out;
	}
	if (memcmp(md, e->sha256, 32) != 0) {
		cfs_digest_to_hex(md, got);
		cfs_digest_to_hex(e->sha256, exp);
		cfs_msg("'%s': file '%s': its content has the digest sha256:%s, not the TOC's sha256:%s",
			s->c->what, e->name, got, exp);
		r = -EINVAL;
		goto out;
	}
	s->content_end += e->size;
out:
	EVP_MD_CTX_free(ctx);
	return r;
}

/* ---- the diff_id, from the tar-split ---- */

static int cmp_file_name(const void *a, const void *b)
{
	return strcmp((*(struct file *const *)a)->e->name, (*(struct file *const *)b)->e->name);
}

static int cmp_name_file(const void *key, const void *b)
{
	return strcmp(key, (*(struct file *const *)b)->e->name);
}

/* The content of the tar-split's file @name into @md: from the store or the spool. */
static int tarsplit_file(void *ctx, const char *name, uint64_t size, EVP_MD_CTX *md)
{
	struct state *s = ctx;
	struct file **fp = bsearch(name, s->by_name, s->n_files, sizeof(*s->by_name), cmp_name_file);
	char objpath[CFS_OBJECT_PATH_SIZE];
	struct file *f = fp ? *fp : NULL;
	uint64_t off = 0;
	int fd, r = 0;

	if (!f || f->in_tarsplit || f->e->size != size) {
		cfs_msg("'%s': the tar-split has the file '%s' of %llu bytes, which the TOC has %s",
			s->c->what, name, (unsigned long long)size,
			!f ? "not (or empty)" : f->in_tarsplit ? "once only" : "of another size");
		return -EINVAL;
	}
	f->in_tarsplit = true;
	if (!f->have) {
		fd = s->content_fd;
		off = f->at;
	} else {
		cfs_object_path(f->digest, objpath);
		fd = openat(s->store_fd, objpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (fd < 0) {
			r = -errno;
			cfs_msg("'%s': reading the object of '%s': %s", s->c->what, name, strerror(-r));
			return r;
		}
	}
	for (uint64_t done = 0; r == 0 && done < size;) {
		size_t n = size - done < BUF_SIZE ? (size_t)(size - done) : BUF_SIZE;

		r = cfs_pread_all(fd, s->buf, n, off + done);
		if (r == 0 && !EVP_DigestUpdate(md, s->buf, n))
			r = -ENOMEM;
		done += n;
	}
	if (r && r != -ENOMEM)
		cfs_msg("'%s': reading the content of '%s': %s", s->c->what, name,
			r == -EIO ? "it is shorter than its size" : strerror(-r));
	if (f->have)
		close(fd);
	return r;
}

/* Fetch the tar-split and check the tar stream it rebuilds against the diff_id. */
static int check_tarsplit(struct state *s)
{
	struct cfs_chunked *c = s->c;
	uint8_t *data = NULL;
	char want[CFS_DIGEST_HEX_SIZE], got[CFS_DIGEST_HEX_SIZE];
	uint8_t md[32], id[32];
	int r;

	if (strncmp(c->diff_id, "sha256:", 7) != 0 || cfs_digest_from_hex(c->diff_id + 7, id))
		return 0; /* oci.c checked it: never so */
	s->by_name = calloc(s->n_files ? s->n_files : 1, sizeof(*s->by_name));
	if (!s->by_name)
		return -ENOMEM;
	for (size_t i = 0; i < s->n_files; i++)
		s->by_name[i] = &s->files[i];
	qsort(s->by_name, s->n_files, sizeof(*s->by_name), cmp_file_name);
	r = fetch_range(c, c->pos.tarsplit.offset, c->pos.tarsplit.length, &data);
	if (r == 1) {
		cfs_msg("'%s': the registry ignored the range request for the tar-split", c->what);
		r = -EPROTO;
	}
	if (r == 0 && c->pos.tarsplit.has_sum) {
		EVP_Digest(data, c->pos.tarsplit.length, md, NULL, EVP_sha256(), NULL);
		if (memcmp(md, c->pos.tarsplit.sha256, 32) != 0) {
			cfs_digest_to_hex(md, got);
			cfs_digest_to_hex(c->pos.tarsplit.sha256, want);
			cfs_msg("'%s': the tar-split has the digest sha256:%s, not its annotation's sha256:%s",
				c->what, got, want);
			r = -EINVAL;
		}
	}
	/* the TOC's digest, checked with the TOC's own: the one current writers give */
	if (r == 0 && s->toc->has_tarsplit_digest) {
		EVP_Digest(data, c->pos.tarsplit.length, md, NULL, EVP_sha256(), NULL);
		if (memcmp(md, s->toc->tarsplit_sha256, 32) != 0) {
			cfs_digest_to_hex(md, got);
			cfs_digest_to_hex(s->toc->tarsplit_sha256, want);
			cfs_msg("'%s': the tar-split has the digest sha256:%s, not the TOC's tarSplitDigest sha256:%s",
				c->what, got, want);
			r = -EINVAL;
		}
	}
	if (r == 0)
		r = cfs_tarsplit_digest(data, c->pos.tarsplit.length, c->pos.tarsplit.ulength,
					c->what, tarsplit_file, s, md);
	free(data);
	if (r)
		return r;
	if (memcmp(md, id, 32) != 0) {
		cfs_digest_to_hex(md, got);
		cfs_msg("'%s': the tar stream its tar-split rebuilds has the digest sha256:%s, not the config's diff_id %s",
			c->what, got, c->diff_id);
		return -EINVAL;
	}
	c->diff_id_checked = true;
	return 0;
}

/* ---- the fragment ---- */

static const mode_t toc_types[] = {
	[CFS_TOC_REG] = AE_IFREG,   [CFS_TOC_DIR] = AE_IFDIR,	[CFS_TOC_SYMLINK] = AE_IFLNK,
	[CFS_TOC_HARDLINK] = AE_IFREG, [CFS_TOC_CHAR] = AE_IFCHR, [CFS_TOC_BLOCK] = AE_IFBLK,
	[CFS_TOC_FIFO] = AE_IFIFO,
};

/* Copy @len bytes at @off of @fd into the fragment's current entry. */
static int copy_data(struct state *s, struct archive *w, int fd, uint64_t off, uint64_t len)
{
	while (len) {
		size_t n = len < BUF_SIZE ? (size_t)len : BUF_SIZE;
		int r = cfs_pread_all(fd, s->buf, n, off);

		if (r)
			return r;
		if (archive_write_data(w, s->buf, n) != (la_ssize_t)n)
			return -EIO;
		off += n;
		len -= n;
	}
	return 0;
}

static int write_entry(struct state *s, struct archive *w, struct archive_entry *ae,
		       const struct cfs_toc_entry *e, struct file *f)
{
	char objpath[CFS_OBJECT_PATH_SIZE];
	int r, fd;

	archive_entry_clear(ae);
	archive_entry_set_pathname(ae, e->name);
	archive_entry_set_filetype(ae, toc_types[e->type]);
	archive_entry_set_perm(ae, e->mode);
	archive_entry_set_uid(ae, e->uid);
	archive_entry_set_gid(ae, e->gid);
	archive_entry_set_mtime(ae, e->mtime_sec, e->mtime_nsec);
	for (size_t k = 0; k < e->n_xattrs; k++) {
		if (cfs_tar_fragment_xattr(e->xattrs[k].name)) {
			cfs_msg("'%s': TOC entry '%s': the xattr '%s' is not one a layer may have",
				s->c->what, e->name, e->xattrs[k].name);
			return -EINVAL;
		}
		archive_entry_xattr_add_entry(ae, e->xattrs[k].name, e->xattrs[k].value,
					      e->xattrs[k].len);
	}
	if (e->type == CFS_TOC_SYMLINK)
		archive_entry_set_symlink(ae, e->link);
	if (e->type == CFS_TOC_HARDLINK)
		archive_entry_set_hardlink(ae, e->link);
	if (e->type == CFS_TOC_CHAR || e->type == CFS_TOC_BLOCK) {
		archive_entry_set_rdevmajor(ae, e->devmajor);
		archive_entry_set_rdevminor(ae, e->devminor);
	}
	archive_entry_set_size(ae, e->type == CFS_TOC_REG ? (la_int64_t)e->size : 0);
	if (f && f->have && e->size > CFS_FORMAT_INLINE_MAX)
		cfs_tar_fragment_entry(ae, f->digest, e->size);
	if (archive_write_header(w, ae) != ARCHIVE_OK)
		return -EIO;
	if (!f || (f->have && e->size > CFS_FORMAT_INLINE_MAX))
		return 0;
	if (!f->have)
		return copy_data(s, w, s->content_fd, f->at, e->size);
	/* a small file found in the store: its content in the fragment */
	cfs_object_path(f->digest, objpath);
	fd = openat(s->store_fd, objpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	r = copy_data(s, w, fd, 0, e->size);
	close(fd);
	return r;
}

static int write_fragment(struct state *s, int *fdp)
{
	struct archive_entry *ae = archive_entry_new();
	struct archive *w = archive_write_new();
	size_t fi = 0;
	int fd, r = 0;

	*fdp = -1;
	fd = cfs_tmpfile(s->store_fd, NULL);
	if (fd < 0 || !ae || !w || archive_write_set_format_pax(w) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(w, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(w, fd) != ARCHIVE_OK) {
		r = fd < 0 ? fd : -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < s->toc->n && r == 0; i++) {
		struct cfs_toc_entry *e = &s->toc->entries[i];
		struct file *f = NULL;

		if (fi < s->n_files && s->files[fi].e == e)
			f = &s->files[fi++];
		r = write_entry(s, w, ae, e, f);
	}
	if (r == 0 && archive_write_close(w) != ARCHIVE_OK)
		r = -EIO;
	if (r == 0 && lseek(fd, 0, SEEK_SET) < 0)
		r = -errno;
out:
	if (r && r != -EINVAL)
		cfs_msg("'%s': writing the layer's fragment to a temporary file: %s", s->c->what,
			r == -EIO && w && archive_error_string(w) ? archive_error_string(w) :
								    strerror(-r));
	if (w)
		archive_write_free(w);
	archive_entry_free(ae);
	if (r && fd >= 0)
		close(fd);
	else
		*fdp = fd;
	return r;
}

int cfs_chunked_fragment(struct cfs_chunked *c, int *fdp)
{
	struct state s = { .c = c, .store_fd = -1, .frames_fd = -1,
			   .content_fd = -1 };
	ZSTD_DCtx *dctx = NULL;
	int r;

	*fdp = -1;
	c->fallback = NULL;
	c->diff_id_checked = false;
	s.buf = malloc(BUF_SIZE);
	s.out = malloc(BUF_SIZE);
	if (!s.buf || !s.out) {
		r = -ENOMEM;
		goto out;
	}
	r = fetch_toc(&s);
	if (r)
		goto out;
	if (c->digest_store) {
		s.store_fd = cfs_store_dir_open(c->digest_store);
		if (s.store_fd < 0) {
			r = s.store_fd;
			goto out;
		}
		cfs_index_open(s.store_fd, &s.index);
	}
	r = find_files(&s);
	if (r)
		goto out;
	s.frames_fd = cfs_tmpfile(s.store_fd, NULL);
	s.content_fd = s.frames_fd < 0 ? -1 : cfs_tmpfile(s.store_fd, NULL);
	if (s.frames_fd < 0 || s.content_fd < 0) {
		r = s.frames_fd < 0 ? s.frames_fd : s.content_fd;
		goto out;
	}
	dctx = ZSTD_createDCtx();
	if (!dctx) {
		r = -ENOMEM;
		goto out;
	}
	s.dctx = dctx;
	r = fetch_missing(&s);
	if (r)
		goto out;
	/* what was not unpacked as it came */
	for (size_t i = 0; i < s.n_files && r == 0; i++)
		if (!s.files[i].have && !s.files[i].unpacked)
			r = unpack(&s, dctx, &s.files[i]);
	if (r == 0 && c->diff_id && c->pos.tarsplit.present)
		r = check_tarsplit(&s);
	if (r)
		goto out;
	c->skipped = c->size > c->fetched ? c->size - c->fetched : 0;
	r = write_fragment(&s, fdp);
	/* What the index may learn now: the objects are written when the tree is finished. */
out:
	ZSTD_freeDCtx(dctx);
	if (s.frames_fd >= 0)
		close(s.frames_fd);
	if (s.content_fd >= 0)
		close(s.content_fd);
	cfs_index_close(s.index);
	if (s.store_fd >= 0)
		close(s.store_fd);
	free_hints(s.hints);
	cfs_toc_free(s.toc);
	free(s.files);
	free(s.by_name);
	free(s.buf);
	free(s.out);
	return r;
}
