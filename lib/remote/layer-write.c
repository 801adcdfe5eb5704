// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A layer blob from a scanned tree, for cfs_push_dir(), or from another
 * layer's tar stream, for cfs_push_oci() asked to recompress (at the end:
 * the stream's ustar, GNU and pax headers parsed here, since libarchive
 * gives no header's raw bytes, and each header and content put where a
 * tree's would go, so that the tar stream stays byte for byte). For a
 * tree, libarchive writes
 * the tar stream (restricted pax: ustar headers, with a pax header only
 * for what ustar cannot hold: long names, large ids, sub-second mtimes,
 * xattrs as SCHILY.xattr.*); each byte it writes comes here unbuffered, so
 * that what is a tar header and what is a file's content is known.
 *
 * The stream is the tree in cfs_name_cmp() order, depth first, the root
 * as "./" and every other name under "./"; each entry has its type, mode
 * bits, uid, gid, mtime (with nanoseconds), xattrs, a symlink's target, a
 * device's numbers; a second name of an inode is a hardlink to the first.
 * Nothing else (no user or group names, no atime or ctime), so the same
 * tree always gives the same bytes.
 *
 * zstd:chunked is laid out as containers/storage's compressor does it:
 * the tar stream in zstd frames, each regular file's content in a frame of
 * its own; then three skippable frames: the TOC (zstd-compressed JSON,
 * every entry with its metadata, a file's sha256 and where its frame is,
 * and the tar-split's digest), the tar-split (zstd-compressed JSON lines:
 * the tar stream's bytes between contents, and an entry for each file
 * with its size and CRC-64), and the 64-byte footer that says where both
 * are. A file's content is cut into chunks as the compressor cuts it, each
 * chunk a frame and listed in the TOC: a run of at least 1 KiB of zeros is
 * a chunk of type "zeros" (its zeros are in the stream too, so that the
 * layer stays a plain zstd tar), and between them the data is cut after
 * each byte at which the rolling checksum (bup's, as rollsum.go has it:
 * a 64-byte window) has its 16 low bits set, some 64 KiB apart. The zeros
 * of a run are rolled into the checksum as well, so the cuts are where
 * containers/storage makes them, and depend on the content alone.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "http-parse.h"
#include "layer-write.h"
#include "base/internal.h"
#include "cfs/util.h"

#define ZSTD_LEVEL 3
#define IO_BUF (128u * 1024)
/* containers/storage's chunking: rollsum.go, and compressor.go's constants */
#define ROLL_WINDOW 64
#define ROLL_OFFSET 31
#define ROLL_BITS 16 /* a cut where the checksum's 16 low bits are all set */
#define HOLE_MIN 1024 /* zeros that make a "zeros" chunk */

struct lw {
	enum cfs_push_compression comp;
	int fd;
	const char *what;
	int err;
	EVP_MD_CTX *blob_md, *tar_md, *file_md;
	uint64_t off; /* bytes of the blob written */
	unsigned char *out; /* IO_BUF bytes of compressed output */

	ZSTD_CCtx *z;
	bool frame_open;
	z_stream gz;
	bool gz_open;

	/* zstd:chunked */
	bool data; /* the bytes coming are a file's content */
	uint64_t crc; /* of that content, for the tar-split */
	json_t *entries; /* the TOC's */
	unsigned char *seg; /* tar bytes since the last file's content */
	size_t seg_len, seg_cap;
	char *ts; /* the tar-split's JSON lines */
	size_t ts_len, ts_cap;
	uint64_t ts_pos;
	uint64_t crc_table[256];

	/* the chunks of the file being written (zstd:chunked) */
	EVP_MD_CTX *chunk_md;
	uint32_t s1, s2; /* the rolling checksum */
	uint8_t window[ROLL_WINDOW];
	unsigned int wofs;
	uint64_t zrun; /* zeros seen and not yet written */
	uint64_t chunk_start; /* where the chunk began: in the file, in the blob */
	uint64_t chunk_off;
	uint64_t file_start; /* where the file's frames begin in the blob */
	uint64_t done; /* of the file's content, written */
	json_t *chunks; /* the chunks ended, as TOC entries */
	unsigned char *pend; /* data of the chunk not yet given to libarchive */
	size_t pend_len;
};

static int put(struct lw *w, const void *data, size_t len)
{
	const unsigned char *p = data;

	if (!EVP_DigestUpdate(w->blob_md, data, len))
		return -ENOMEM;
	while (len) {
		ssize_t n = write(w->fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;

			cfs_msg("writing the layer '%s': %s", w->what, strerror(e));
			return -e;
		}
		p += n;
		len -= (size_t)n;
		w->off += (uint64_t)n;
	}
	return 0;
}

/* Compress @len bytes into the current zstd frame, and end it with @end. */
static int zfeed(struct lw *w, const void *data, size_t len, bool end)
{
	ZSTD_inBuffer in = { data, len, 0 };
	size_t left;
	int r;

	if (!len && !end)
		return 0;
	if (!len && !w->frame_open)
		return 0;
	w->frame_open = !end;
	do {
		ZSTD_outBuffer o = { w->out, IO_BUF, 0 };

		left = ZSTD_compressStream2(w->z, &o, &in, end ? ZSTD_e_end : ZSTD_e_continue);
		if (ZSTD_isError(left)) {
			cfs_msg("'%s': zstd: %s", w->what, ZSTD_getErrorName(left));
			return -EIO;
		}
		r = put(w, w->out, o.pos);
		if (r)
			return r;
	} while (in.pos < in.size || (end && left));
	return 0;
}

static int gzfeed(struct lw *w, const void *data, size_t len, bool end)
{
	int zr;

	w->gz.next_in = (unsigned char *)data;
	w->gz.avail_in = (unsigned int)len;
	do {
		int r;

		w->gz.next_out = w->out;
		w->gz.avail_out = IO_BUF;
		zr = deflate(&w->gz, end ? Z_FINISH : Z_NO_FLUSH);
		if (zr == Z_STREAM_ERROR) {
			cfs_msg("'%s': gzip: %s", w->what, w->gz.msg ? w->gz.msg : "error");
			return -EIO;
		}
		r = put(w, w->out, IO_BUF - w->gz.avail_out);
		if (r)
			return r;
	} while (w->gz.avail_in || (end && zr != Z_STREAM_END) || w->gz.avail_out == 0);
	return 0;
}

static int append(void *bufp, size_t *len, size_t *cap, const void *data, size_t n)
{
	unsigned char **buf = bufp;

	if (*len + n > *cap) {
		size_t nc = *cap ? *cap : 4096;
		unsigned char *nb;

		while (nc < *len + n)
			nc *= 2;
		nb = realloc(*buf, nc);
		if (!nb)
			return -ENOMEM;
		*buf = nb;
		*cap = nc;
	}
	memcpy(*buf + *len, data, n);
	*len += n;
	return 0;
}

/* One line of the tar-split, @j (taken) with its position added. */
static int ts_line(struct lw *w, json_t *j)
{
	char *s;
	int r;

	if (!j || json_object_set_new(j, "position", json_integer((json_int_t)w->ts_pos++))) {
		json_decref(j);
		return -ENOMEM;
	}
	s = cfs_json_dump(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	if (!s)
		return -ENOMEM;
	r = append(&w->ts, &w->ts_len, &w->ts_cap, s, strlen(s));
	if (!r)
		r = append(&w->ts, &w->ts_len, &w->ts_cap, "\n", 1);
	free(s);
	return r;
}

/* The tar bytes since the last file's content, as a tar-split segment. */
static int ts_segment(struct lw *w)
{
	char *b64;
	int r;

	if (!w->seg_len)
		return 0;
	b64 = cfs_base64_encode(w->seg, w->seg_len);
	if (!b64)
		return -ENOMEM;
	r = ts_line(w, json_pack("{s:i, s:s}", "type", 2, "payload", b64));
	free(b64);
	w->seg_len = 0;
	return r;
}

static void crc_init(struct lw *w)
{
	/* CRC-64 of ISO 3309, reflected, as Go's hash/crc64 (tar-split's) */
	for (unsigned int i = 0; i < 256; i++) {
		uint64_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0xD800000000000000ull : c >> 1;
		w->crc_table[i] = c;
	}
}

static uint64_t crc_update(const struct lw *w, uint64_t crc, const unsigned char *p, size_t n)
{
	crc = ~crc;
	while (n--)
		crc = w->crc_table[(uint8_t)crc ^ *p++] ^ (crc >> 8);
	return ~crc;
}

/* libarchive's output: a tar header or padding, or a file's content. */
static la_ssize_t tar_out(struct archive *a, void *ctx, const void *data, size_t len)
{
	struct lw *w = ctx;
	int r = 0;

	(void)a;
	if (w->err)
		return -1;
	if (!EVP_DigestUpdate(w->tar_md, data, len)) {
		r = -ENOMEM;
		goto out;
	}
	switch (w->comp) {
	case CFS_PUSH_GZIP:
		r = gzfeed(w, data, len, false);
		break;
	case CFS_PUSH_ZSTD:
		r = zfeed(w, data, len, false);
		break;
	case CFS_PUSH_ZSTD_CHUNKED:
		if (w->data) {
			if (!EVP_DigestUpdate(w->file_md, data, len) ||
			    !EVP_DigestUpdate(w->chunk_md, data, len))
				r = -ENOMEM;
			w->crc = crc_update(w, w->crc, data, len);
			w->done += len;
		} else {
			r = append(&w->seg, &w->seg_len, &w->seg_cap, data, len);
		}
		if (!r)
			r = zfeed(w, data, len, false);
		break;
	}
out:
	if (r) {
		w->err = r;
		return -1;
	}
	return (la_ssize_t)len;
}

/* "YYYY-MM-DDTHH:MM:SS[.fraction]Z", as Go writes a time (RFC 3339, nanoseconds) */
static void rfc3339(int64_t sec, uint32_t nsec, char *buf, size_t size)
{
	time_t t = (time_t)sec;
	struct tm tm;
	size_t n;

	gmtime_r(&t, &tm);
	n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
	if (nsec) {
		char frac[16];
		int k = snprintf(frac, sizeof(frac), ".%09u", nsec);

		while (k > 1 && frac[k - 1] == '0')
			frac[--k] = '\0';
		snprintf(buf + n, size - n, "%sZ", frac);
	} else {
		snprintf(buf + n, size - n, "Z");
	}
}

static const char *toc_type(const struct cfs_node *n)
{
	if (n->link_target)
		return "hardlink";
	switch (n->mode & S_IFMT) {
	case S_IFREG:
		return "reg";
	case S_IFDIR:
		return "dir";
	case S_IFLNK:
		return "symlink";
	case S_IFCHR:
		return "char";
	case S_IFBLK:
		return "block";
	default:
		return "fifo";
	}
}

/* The TOC entry of @n, named @name; its content's digest and frames set later. */
static json_t *toc_entry(const struct cfs_node *n, const char *name, const char *link)
{
	const struct cfs_node *in = cfs_node_inode((struct cfs_node *)n);
	json_t *e = json_object();
	char t[64];

	if (!e)
		return NULL;
	json_object_set_new(e, "type", json_string(toc_type(n)));
	json_object_set_new(e, "name", json_string(name));
	if (link)
		json_object_set_new(e, "linkName", json_string(link));
	if (in->mode & 07777)
		json_object_set_new(e, "mode", json_integer(in->mode & 07777));
	if (!n->link_target && S_ISREG(in->mode) && in->size)
		json_object_set_new(e, "size", json_integer((json_int_t)in->size));
	if (in->uid)
		json_object_set_new(e, "uid", json_integer(in->uid));
	if (in->gid)
		json_object_set_new(e, "gid", json_integer(in->gid));
	rfc3339(in->mtime_sec, in->mtime_nsec, t, sizeof(t));
	json_object_set_new(e, "modtime", json_string(t));
	if (!n->link_target && (S_ISCHR(in->mode) || S_ISBLK(in->mode))) {
		if (major(in->rdev))
			json_object_set_new(e, "devMajor", json_integer(major(in->rdev)));
		if (minor(in->rdev))
			json_object_set_new(e, "devMinor", json_integer(minor(in->rdev)));
	}
	if (!n->link_target && in->n_xattrs) {
		json_t *x = json_object();

		for (size_t i = 0; x && i < in->n_xattrs; i++) {
			char *v = cfs_base64_encode(in->xattrs[i].value ? (void *)in->xattrs[i].value :
									   (void *)"",
						    in->xattrs[i].value_len);

			if (!v || json_object_set_new(x, in->xattrs[i].key, json_string(v))) {
				free(v);
				json_decref(x);
				x = NULL;
				break;
			}
			free(v);
		}
		if (!x || json_object_set_new(e, "xattrs", x)) {
			json_decref(e);
			return NULL;
		}
	}
	return e;
}

struct walk {
	struct lw *w;
	struct archive *a;
	struct archive_entry *e;
	const char *root_path, *objects;
	unsigned char *buf;
};

static char *node_name(const struct cfs_node *n)
{
	char *p, *s = NULL;

	if (!n->parent)
		return strdup("./");
	p = cfs_node_path(n);
	if (!p)
		return NULL;
	if (asprintf(&s, ".%s%s", p, cfs_node_is_dir(n) ? "/" : "") < 0)
		s = NULL;
	free(p);
	return s;
}

/* ---- a file's chunks (zstd:chunked) ---- */

static void roll_init(struct lw *w)
{
	w->s1 = ROLL_WINDOW * ROLL_OFFSET;
	w->s2 = ROLL_WINDOW * (ROLL_WINDOW - 1) * ROLL_OFFSET;
	memset(w->window, 0, sizeof(w->window));
	w->wofs = 0;
}

/* Roll @c into the checksum (in 32 bits, wrapping, as rollsum.go); true: cut after it. */
static inline bool roll(struct lw *w, uint8_t c)
{
	uint32_t drop = w->window[w->wofs];

	w->s1 = w->s1 + c - drop;
	w->s2 += w->s1 - ROLL_WINDOW * (drop + ROLL_OFFSET);
	w->window[w->wofs] = c;
	w->wofs = (w->wofs + 1) & (ROLL_WINDOW - 1);
	return (w->s2 & ((1u << ROLL_BITS) - 1)) == (1u << ROLL_BITS) - 1;
}

/*
 * @len bytes of the file's content to libarchive, and so to tar_out();
 * straight to tar_out() when a tar stream is recompressed (no archive).
 */
static int emit(struct walk *k, const void *data, size_t len, const char *name)
{
	if (!k->a) {
		if (len && tar_out(NULL, k->w, data, len) < 0)
			return k->w->err;
		return 0;
	}
	if (!len || archive_write_data(k->a, data, len) == (la_ssize_t)len)
		return 0;
	if (!k->w->err)
		cfs_msg("'%s': %s", name, archive_error_string(k->a));
	return k->w->err ? k->w->err : -EIO;
}

static int pend_flush(struct walk *k, const char *name)
{
	int r = emit(k, k->w->pend, k->w->pend_len, name);

	k->w->pend_len = 0;
	return r;
}

/* End the chunk being written (a run of zeros if @zeros): its frame, its TOC entry. */
static int chunk_end(struct walk *k, const char *name, bool zeros)
{
	struct lw *w = k->w;
	unsigned char md[32];
	char hex[7 + 65];
	json_t *e;
	int r = pend_flush(k, name);

	if (r || w->done == w->chunk_off)
		return r;
	r = zfeed(w, NULL, 0, true);
	if (r)
		return r;
	if (!EVP_DigestFinal_ex(w->chunk_md, md, NULL) ||
	    !EVP_DigestInit_ex(w->chunk_md, EVP_sha256(), NULL))
		return -ENOMEM;
	memcpy(hex, "sha256:", 7);
	cfs_digest_to_hex(md, hex + 7);
	/* the members in the order containers/storage writes them */
	e = json_pack("{s:s, s:s, s:I, s:I, s:I, s:s}", "type", "chunk", "name", name, "offset",
		      (json_int_t)w->chunk_start, "chunkSize", (json_int_t)(w->done - w->chunk_off),
		      "chunkOffset", (json_int_t)w->chunk_off, "chunkDigest", hex);
	if (!e || (zeros && json_object_set_new(e, "chunkType", json_string("zeros"))) ||
	    json_array_append_new(w->chunks, e))
		return -ENOMEM;
	w->chunk_start = w->off;
	w->chunk_off = w->done;
	return 0;
}

/* Data of the file: each byte rolled, and the chunk cut where the checksum says. */
static int data_bytes(struct walk *k, const unsigned char *p, size_t n, const char *name)
{
	struct lw *w = k->w;
	int r = 0;

	while (n && !r) {
		size_t i = 0, room = IO_BUF - w->pend_len, lim = n < room ? n : room;
		bool cut = false;

		while (i < lim && !cut)
			cut = roll(w, p[i++]);
		memcpy(w->pend + w->pend_len, p, i);
		w->pend_len += i;
		p += i;
		n -= i;
		if (cut)
			r = chunk_end(k, name, false);
		else if (w->pend_len == IO_BUF)
			r = pend_flush(k, name);
	}
	return r;
}

/*
 * The zeros seen since the last data: fewer than HOLE_MIN are data; more
 * are a chunk of their own, after the data before them. Their rolling
 * stops after ROLL_WINDOW zeros: then the window holds only zeros, s1 is
 * ROLL_WINDOW * ROLL_OFFSET, and another zero changes neither sum.
 */
static int zeros_out(struct walk *k, const char *name)
{
	static const unsigned char zero[HOLE_MIN * 4];
	struct lw *w = k->w;
	uint64_t n = w->zrun;
	int r;

	w->zrun = 0;
	if (n < HOLE_MIN)
		return data_bytes(k, zero, (size_t)n, name);
	r = chunk_end(k, name, false);
	for (uint64_t i = 0; i < n && i < ROLL_WINDOW; i++)
		roll(w, 0);
	while (!r && n) {
		size_t m = n < sizeof(zero) ? (size_t)n : sizeof(zero);

		r = emit(k, zero, m, name);
		n -= m;
	}
	return r ?: chunk_end(k, name, true);
}

/* @n bytes of the file's content, into chunks. */
static int chunk_feed(struct walk *k, const unsigned char *p, size_t n, const char *name)
{
	size_t i = 0, j;
	int r = 0;

	while (i < n && !r) {
		for (j = i; j < n && p[j] == 0; j++)
			;
		k->w->zrun += j - i;
		if (j == n)
			break;
		if (k->w->zrun)
			r = zeros_out(k, name);
		for (i = j; j < n && p[j] != 0; j++)
			;
		if (!r)
			r = data_bytes(k, p + i, j - i, name);
		i = j;
	}
	return r;
}

/*
 * The chunks into the TOC, after the file's entry @te: when there are
 * several, the first one's size, digest and type on @te, the others as
 * "chunk" entries; one chunk is the file, and says nothing more.
 */
static int chunks_to_toc(struct lw *w, json_t *te)
{
	size_t n = json_array_size(w->chunks);
	json_t *first = json_array_get(w->chunks, 0);
	int r = 0;

	if (n > 1) {
		r |= json_object_set(te, "chunkSize", json_object_get(first, "chunkSize"));
		r |= json_object_set(te, "chunkDigest", json_object_get(first, "chunkDigest"));
		if (json_object_get(first, "chunkType"))
			r |= json_object_set(te, "chunkType", json_object_get(first, "chunkType"));
		for (size_t i = 1; i < n; i++)
			r |= json_array_append(w->entries, json_array_get(w->chunks, i));
	}
	json_array_clear(w->chunks);
	return r ? -ENOMEM : 0;
}

/*
 * A file's content begins: with zstd:chunked, the tar-split's segment of
 * the headers before it, the frame of those headers ended, and its chunks
 * begun.
 */
static int content_begin(struct lw *w)
{
	int r;

	w->data = true;
	w->crc = 0;
	if (w->comp != CFS_PUSH_ZSTD_CHUNKED)
		return 0;
	r = ts_segment(w);
	if (!r)
		r = zfeed(w, NULL, 0, true);
	if (r)
		return r;
	if (!EVP_DigestInit_ex(w->file_md, EVP_sha256(), NULL) ||
	    !EVP_DigestInit_ex(w->chunk_md, EVP_sha256(), NULL))
		return -ENOMEM;
	roll_init(w);
	w->zrun = w->done = w->chunk_off = 0;
	w->chunk_start = w->file_start = w->off;
	return 0;
}

/*
 * The content of @name (@size bytes) ended: with zstd:chunked, its last
 * chunk and frame, its digest, frames and chunks in its TOC entry (the
 * last one), and its tar-split entry with the CRC-64.
 */
static int content_end(struct walk *k, const char *name, uint64_t size)
{
	struct lw *w = k->w;
	json_t *te = json_array_get(w->entries, json_array_size(w->entries) - 1);
	unsigned char md[32];
	char hex[7 + 65], crc[8], *b64;
	int r;

	if (w->comp != CFS_PUSH_ZSTD_CHUNKED) {
		w->data = false;
		return 0;
	}
	/* the content's last bytes, still data */
	r = w->zrun ? zeros_out(k, name) : 0;
	if (!r)
		r = chunk_end(k, name, false);
	if (!r)
		r = zfeed(w, NULL, 0, true);
	w->data = false;
	if (r)
		return r;
	EVP_DigestFinal_ex(w->file_md, md, NULL);
	memcpy(hex, "sha256:", 7);
	cfs_digest_to_hex(md, hex + 7);
	if (json_object_set_new(te, "digest", json_string(hex)) ||
	    json_object_set_new(te, "offset", json_integer((json_int_t)w->file_start)) ||
	    json_object_set_new(te, "endOffset", json_integer((json_int_t)w->off)))
		return -ENOMEM;
	r = chunks_to_toc(w, te);
	if (r)
		return r;
	for (int i = 0; i < 8; i++)
		crc[i] = (char)(w->crc >> (56 - 8 * i));
	b64 = cfs_base64_encode(crc, 8);
	if (!b64)
		return -ENOMEM;
	r = ts_line(w, json_pack("{s:i, s:s, s:I, s:s}", "type", 1, "name", name, "size",
				 (json_int_t)size, "payload", b64));
	free(b64);
	return r;
}

/* Copy the content of @n into the archive: from the scanned file, the object, or inline. */
static int write_content(struct walk *k, const struct cfs_node *n, const char *name)
{
	struct lw *w = k->w;
	char *path = NULL, obj[CFS_OBJECT_PATH_SIZE];
	uint64_t left = n->size;
	int fd = -1, r = 0;
	struct stat st;

	if (n->content)
		path = strdup(name);
	else if (n->src_path && k->root_path)
		r = asprintf(&path, "%s/%s", k->root_path, n->src_path);
	else if (cfs_node_payload(n, obj) && k->objects)
		r = asprintf(&path, "%s/%s", k->objects, cfs_node_payload(n, obj));
	else {
		cfs_msg("'%s': a file whose content is nowhere to read", name);
		return -EINVAL;
	}
	if (r < 0 || !path)
		return -ENOMEM;
	r = 0;
	if (!n->content) {
		fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 || fstat(fd, &st) < 0) {
			r = -errno;
			cfs_msg("cannot read '%s' (of '%s'): %s", path, name, strerror(errno));
			goto out;
		}
		if ((uint64_t)st.st_size != n->size || (n->src_path && st.st_ino != n->src_ino)) {
			cfs_msg("'%s' (of '%s') %s", path, name,
				n->src_path ? "changed while it was read" :
					      "has another size than the image says");
			r = -ESTALE;
			goto out;
		}
	}
	r = content_begin(w);
	if (r)
		goto out;
	while (left) {
		ssize_t got = n->content ? (ssize_t)(left < IO_BUF ? left : IO_BUF) :
				 read(fd, k->buf, left < IO_BUF ? (size_t)left : IO_BUF);

		if (n->content)
			memcpy(k->buf, n->content + (n->size - left), (size_t)got);

		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0) {
			r = got < 0 ? -errno : -ESTALE;
			cfs_msg("cannot read '%s': %s", path,
				got < 0 ? strerror(errno) : "it shrank while it was read");
			goto out;
		}
		if (w->comp == CFS_PUSH_ZSTD_CHUNKED)
			r = chunk_feed(k, k->buf, (size_t)got, name);
		else
			r = emit(k, k->buf, (size_t)got, name);
		if (r)
			goto out;
		left -= (uint64_t)got;
	}
	r = content_end(k, name, n->size);
out:
	w->data = false;
	if (fd >= 0)
		close(fd);
	free(path);
	return r;
}

static int write_node(struct walk *k, struct cfs_node *n)
{
	struct lw *w = k->w;
	struct cfs_node *in = cfs_node_inode(n);
	char *name = node_name(n), *link = NULL;
	int r = 0;

	if (!name)
		return -ENOMEM;
	if (!n->link_target && !S_ISREG(in->mode) && !S_ISDIR(in->mode) && !S_ISLNK(in->mode) &&
	    !S_ISCHR(in->mode) && !S_ISBLK(in->mode) && !S_ISFIFO(in->mode)) {
		cfs_msg("'%s': a socket, which a tar layer cannot hold", name);
		r = -EINVAL;
		goto out;
	}
	archive_entry_clear(k->e);
	archive_entry_copy_pathname(k->e, name);
	archive_entry_set_mode(k->e, in->mode);
	archive_entry_set_uid(k->e, in->uid);
	archive_entry_set_gid(k->e, in->gid);
	archive_entry_set_mtime(k->e, in->mtime_sec, in->mtime_nsec);
	if (n->link_target) {
		link = node_name(n->link_target);
		if (!link) {
			r = -ENOMEM;
			goto out;
		}
		archive_entry_set_filetype(k->e, AE_IFREG);
		archive_entry_copy_hardlink(k->e, link);
		archive_entry_set_size(k->e, 0);
	} else {
		if (S_ISREG(in->mode))
			archive_entry_set_size(k->e, (la_int64_t)in->size);
		if (S_ISLNK(in->mode)) {
			link = strndup(in->payload ? in->payload : "", in->payload_len);
			if (!link) {
				r = -ENOMEM;
				goto out;
			}
			archive_entry_copy_symlink(k->e, link);
		}
		if (S_ISCHR(in->mode) || S_ISBLK(in->mode))
			archive_entry_set_rdev(k->e, in->rdev);
		for (size_t i = 0; i < in->n_xattrs; i++)
			archive_entry_xattr_add_entry(k->e, in->xattrs[i].key, in->xattrs[i].value,
						      in->xattrs[i].value_len);
	}
	if (w->comp == CFS_PUSH_ZSTD_CHUNKED) {
		json_t *te = toc_entry(n, name, link);

		if (!te || json_array_append_new(w->entries, te)) {
			r = -ENOMEM;
			goto out;
		}
	}
	if (archive_write_header(k->a, k->e) != ARCHIVE_OK) {
		r = w->err ? w->err : -EINVAL;
		if (!w->err)
			cfs_msg("'%s': %s", name, archive_error_string(k->a));
		goto out;
	}
	if (!n->link_target && S_ISREG(in->mode) && in->size) {
		r = write_content(k, in, name);
	} else if (w->comp == CFS_PUSH_ZSTD_CHUNKED) {
		r = ts_segment(w);
		if (!r)
			r = ts_line(w, json_pack("{s:i, s:s, s:n}", "type", 1, "name", name,
						 "payload"));
	}
	if (!r && archive_write_finish_entry(k->a) != ARCHIVE_OK)
		r = w->err ? w->err : -EIO;
	for (size_t i = 0; !r && !n->link_target && S_ISDIR(n->mode) && i < n->n_children; i++)
		r = write_node(k, n->children[i]);
out:
	free(name);
	free(link);
	return r;
}

/* zstd:chunked's end: the TOC, the tar-split and the footer, and their annotations. */
static int write_trailer(struct lw *w, struct cfs_layer_out *out)
{
	json_t *toc = NULL;
	char *text = NULL, *zts = NULL, *ztoc = NULL, hex[7 + 65], buf[128];
	size_t zts_len, ztoc_len, text_len;
	unsigned char md[32], frame[8], footer[64];
	uint64_t toc_off, ts_off;
	int r = -ENOMEM;

	r = ts_segment(w);
	if (r)
		return r;
	r = -ENOMEM;
	/* the tar-split, compressed: its digest goes in the TOC */
	zts_len = ZSTD_compressBound(w->ts_len);
	zts = malloc(zts_len);
	if (!zts)
		goto out;
	zts_len = ZSTD_compress(zts, zts_len, w->ts, w->ts_len, ZSTD_LEVEL);
	if (ZSTD_isError(zts_len))
		goto out;
	EVP_Digest(zts, zts_len, md, NULL, EVP_sha256(), NULL);
	memcpy(hex, "sha256:", 7);
	cfs_digest_to_hex(md, hex + 7);
	toc = json_pack("{s:i, s:O, s:s}", "version", 1, "entries", w->entries, "tarSplitDigest",
			hex);
	if (!toc)
		goto out;
	text = cfs_json_dump(toc, JSON_COMPACT | JSON_PRESERVE_ORDER);
	if (!text)
		goto out;
	text_len = strlen(text);
	ztoc_len = ZSTD_compressBound(text_len);
	ztoc = malloc(ztoc_len);
	if (!ztoc)
		goto out;
	ztoc_len = ZSTD_compress(ztoc, ztoc_len, text, text_len, ZSTD_LEVEL);
	if (ZSTD_isError(ztoc_len))
		goto out;

	/* skippable frames: magic 0x184D2A50 and the length, little-endian */
	memcpy(frame, "\x50\x2a\x4d\x18", 4);
	toc_off = w->off + 8;
	for (int i = 0; i < 4; i++)
		frame[4 + i] = (unsigned char)(ztoc_len >> (8 * i));
	r = put(w, frame, 8);
	if (!r)
		r = put(w, ztoc, ztoc_len);
	ts_off = w->off + 8;
	for (int i = 0; i < 4; i++)
		frame[4 + i] = (unsigned char)(zts_len >> (8 * i));
	if (!r)
		r = put(w, frame, 8);
	if (!r)
		r = put(w, zts, zts_len);
	{
		const uint64_t f[7] = { toc_off, ztoc_len, text_len, 1, ts_off, zts_len, w->ts_len };

		for (int i = 0; i < 7; i++)
			for (int b = 0; b < 8; b++)
				footer[8 * i + b] = (unsigned char)(f[i] >> (8 * b));
		memcpy(footer + 56, "GNUlInUx", 8);
	}
	frame[4] = 64;
	frame[5] = frame[6] = frame[7] = 0;
	if (!r)
		r = put(w, frame, 8);
	if (!r)
		r = put(w, footer, 64);
	if (r)
		goto out;
	r = -ENOMEM;
	EVP_Digest(ztoc, ztoc_len, md, NULL, EVP_sha256(), NULL);
	cfs_digest_to_hex(md, hex + 7);
	out->annotations = json_object();
	if (!out->annotations ||
	    json_object_set_new(out->annotations,
				"io.github.containers.zstd-chunked.manifest-checksum", json_string(hex)))
		goto out;
	snprintf(buf, sizeof(buf), "%llu:%zu:%zu:1", (unsigned long long)toc_off, ztoc_len,
		 text_len);
	if (json_object_set_new(out->annotations,
				"io.github.containers.zstd-chunked.manifest-position",
				json_string(buf)))
		goto out;
	snprintf(buf, sizeof(buf), "%llu:%zu:%zu", (unsigned long long)ts_off, zts_len, w->ts_len);
	if (json_object_set_new(out->annotations,
				"io.github.containers.zstd-chunked.tarsplit-position",
				json_string(buf)))
		goto out;
	r = 0;
out:
	if (r == -ENOMEM)
		cfs_msg("'%s': the TOC: %s", w->what, strerror(ENOMEM));
	json_decref(toc);
	free(text);
	free(zts);
	free(ztoc);
	return r;
}

/* The writer's state for @comp, to @fd: 0, or -ENOMEM (lw_close() either way). */
static int lw_open(struct lw *w, enum cfs_push_compression comp, int fd, const char *what)
{
	w->comp = comp;
	w->fd = fd;
	w->what = what;
	crc_init(w);
	w->blob_md = EVP_MD_CTX_new();
	w->tar_md = EVP_MD_CTX_new();
	w->file_md = EVP_MD_CTX_new();
	w->chunk_md = EVP_MD_CTX_new();
	w->chunks = json_array();
	w->pend = malloc(IO_BUF);
	w->out = malloc(IO_BUF);
	w->entries = json_array();
	if (!w->blob_md || !w->tar_md || !w->file_md || !w->chunk_md || !w->chunks || !w->pend ||
	    !w->out || !w->entries || !EVP_DigestInit_ex(w->blob_md, EVP_sha256(), NULL) ||
	    !EVP_DigestInit_ex(w->tar_md, EVP_sha256(), NULL))
		return -ENOMEM;
	if (comp == CFS_PUSH_GZIP) {
		/* windowBits 16 + 15: a gzip header, with no name and mtime 0 */
		if (deflateInit2(&w->gz, 6, Z_DEFLATED, 16 + 15, 8, Z_DEFAULT_STRATEGY) != Z_OK)
			return -ENOMEM;
		w->gz_open = true;
	} else {
		w->z = ZSTD_createCCtx();
		if (!w->z || ZSTD_isError(ZSTD_CCtx_setParameter(w->z, ZSTD_c_compressionLevel,
								  ZSTD_LEVEL)))
			return -ENOMEM;
	}
	return 0;
}

/* The tar stream ended: the compression's end, zstd:chunked's trailer, the digests. */
static int lw_finish(struct lw *w, struct cfs_layer_out *out)
{
	unsigned int len;
	int r;

	if (w->comp == CFS_PUSH_GZIP)
		r = gzfeed(w, NULL, 0, true);
	else if (w->comp == CFS_PUSH_ZSTD)
		r = zfeed(w, NULL, 0, true);
	else
		r = zfeed(w, NULL, 0, true) ?: write_trailer(w, out);
	if (r)
		return r;
	EVP_DigestFinal_ex(w->blob_md, out->digest, &len);
	EVP_DigestFinal_ex(w->tar_md, out->diff_id, &len);
	out->size = w->off;
	return 0;
}

static void lw_close(struct lw *w)
{
	if (w->gz_open)
		deflateEnd(&w->gz);
	ZSTD_freeCCtx(w->z);
	EVP_MD_CTX_free(w->blob_md);
	EVP_MD_CTX_free(w->tar_md);
	EVP_MD_CTX_free(w->file_md);
	EVP_MD_CTX_free(w->chunk_md);
	json_decref(w->chunks);
	free(w->pend);
	json_decref(w->entries);
	free(w->seg);
	free(w->ts);
	free(w->out);
}

int cfs_layer_write(struct cfs_node *root, const char *objects, enum cfs_push_compression comp,
		    int fd, const char *what, struct cfs_layer_out *out)
{
	struct lw w = { 0 };
	struct walk k = { .w = &w, .root_path = root->src_path, .objects = objects };
	int r;

	memset(out, 0, sizeof(*out));
	r = lw_open(&w, comp, fd, what);
	k.buf = malloc(IO_BUF);
	k.a = archive_write_new();
	k.e = archive_entry_new();
	if (r || !k.buf || !k.a || !k.e) {
		r = -ENOMEM;
		goto out;
	}
	if (archive_write_set_format_pax(k.a) != ARCHIVE_OK ||
	    archive_write_set_format_option(k.a, "pax", "xattrheader", "SCHILY") != ARCHIVE_OK ||
	    archive_write_set_bytes_per_block(k.a, 0) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(k.a, 1) != ARCHIVE_OK ||
	    archive_write_open2(k.a, &w, NULL, tar_out, NULL, NULL) != ARCHIVE_OK) {
		cfs_msg("'%s': %s", what, archive_error_string(k.a));
		r = -EIO;
		goto out;
	}
	r = write_node(&k, root);
	if (r)
		goto out;
	if (archive_write_close(k.a) != ARCHIVE_OK) {
		r = w.err ? w.err : -EIO;
		if (!w.err)
			cfs_msg("'%s': %s", what, archive_error_string(k.a));
		goto out;
	}
	r = lw_finish(&w, out);
out:
	if (r == -ENOMEM)
		cfs_msg("writing the layer '%s': %s", what, strerror(ENOMEM));
	if (r) {
		json_decref(out->annotations);
		out->annotations = NULL;
	}
	if (k.a)
		archive_write_free(k.a);
	archive_entry_free(k.e);
	lw_close(&w);
	free(k.buf);
	return r;
}

/* ---- a layer's tar stream, recompressed ---- */

/* The layer read: its tar stream, through gzip or zstd when it is compressed. */
struct src {
	int fd;
	const char *what;
	enum { SRC_TAR, SRC_GZIP, SRC_ZSTD } kind;
	z_stream gz;
	bool gz_open, gz_end;
	ZSTD_DCtx *zd;
	size_t zd_left; /* ZSTD_decompressStream()'s last hint: 0 at a frame's end */
	unsigned char *in;
	size_t in_pos, in_len;
	bool in_eof;
	uint64_t pos; /* of the tar stream, read */
};

static int src_fill(struct src *s)
{
	ssize_t n;

	if (s->in_pos < s->in_len || s->in_eof)
		return 0;
	do
		n = read(s->fd, s->in, IO_BUF);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		cfs_msg("reading the layer '%s': %s", s->what, strerror(errno));
		return -errno;
	}
	s->in_pos = 0;
	s->in_len = (size_t)n;
	s->in_eof = n == 0;
	return 0;
}

/* Up to @len bytes of the tar stream into @buf: how many (0 at its end), or -errno. */
static ssize_t src_read(struct src *s, unsigned char *buf, size_t len)
{
	size_t got = 0;
	int r;

	while (got < len) {
		r = src_fill(s);
		if (r)
			return r;
		if (s->in_pos == s->in_len) {
			if (s->kind == SRC_ZSTD && s->zd_left) {
				cfs_msg("the layer '%s': its zstd stream is cut short", s->what);
				return -EINVAL;
			}
			if (s->kind == SRC_GZIP && !s->gz_end) {
				cfs_msg("the layer '%s': its gzip stream is cut short", s->what);
				return -EINVAL;
			}
			break;
		}
		if (s->kind == SRC_TAR) {
			size_t m = s->in_len - s->in_pos < len - got ? s->in_len - s->in_pos : len - got;

			memcpy(buf + got, s->in + s->in_pos, m);
			s->in_pos += m;
			got += m;
		} else if (s->kind == SRC_ZSTD) {
			ZSTD_inBuffer in = { s->in, s->in_len, s->in_pos };
			ZSTD_outBuffer o = { buf, len, got };

			s->zd_left = ZSTD_decompressStream(s->zd, &o, &in);
			if (ZSTD_isError(s->zd_left)) {
				cfs_msg("the layer '%s': zstd: %s", s->what,
					ZSTD_getErrorName(s->zd_left));
				return -EINVAL;
			}
			s->in_pos = in.pos;
			got = o.pos;
		} else {
			int zr;

			if (s->gz_end) {
				/* another gzip member after the first */
				if (inflateReset(&s->gz) != Z_OK)
					return -ENOMEM;
				s->gz_end = false;
			}
			s->gz.next_in = s->in + s->in_pos;
			s->gz.avail_in = (unsigned int)(s->in_len - s->in_pos);
			s->gz.next_out = buf + got;
			s->gz.avail_out = (unsigned int)(len - got);
			zr = inflate(&s->gz, Z_NO_FLUSH);
			if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR) {
				cfs_msg("the layer '%s': gzip: %s", s->what,
					s->gz.msg ? s->gz.msg : "corrupt data");
				return -EINVAL;
			}
			s->in_pos = s->in_len - s->gz.avail_in;
			got = len - s->gz.avail_out;
			s->gz_end = zr == Z_STREAM_END;
		}
	}
	s->pos += got;
	return (ssize_t)got;
}

static int src_open(struct src *s, int fd, const char *what)
{
	static const unsigned char zmagic[4] = { 0x28, 0xb5, 0x2f, 0xfd };
	int r;

	s->fd = fd;
	s->what = what;
	s->in = malloc(IO_BUF);
	if (!s->in)
		return -ENOMEM;
	r = src_fill(s);
	if (r)
		return r;
	/* the compression from the first bytes, as the layer's media type may not say */
	if (s->in_len >= 2 && s->in[0] == 0x1f && s->in[1] == 0x8b) {
		s->kind = SRC_GZIP;
		if (inflateInit2(&s->gz, 16 + 15) != Z_OK)
			return -ENOMEM;
		s->gz_open = true;
	} else if (s->in_len >= 4 &&
		   (memcmp(s->in, zmagic, 4) == 0 ||
		    /* a skippable frame first: 0x184D2A5? */
		    ((s->in[0] & 0xf0) == 0x50 && s->in[1] == 0x2a && s->in[2] == 0x4d &&
		     s->in[3] == 0x18))) {
		s->kind = SRC_ZSTD;
		s->zd = ZSTD_createDCtx();
		if (!s->zd)
			return -ENOMEM;
	}
	return 0;
}

static void src_close(struct src *s)
{
	if (s->gz_open)
		inflateEnd(&s->gz);
	ZSTD_freeDCtx(s->zd);
	free(s->in);
}

/* One entry of the tar stream, as its headers (ustar, GNU, pax) say. */
struct tarh {
	char type;
	char *name, *link; /* from a pax or GNU long name header, else the ustar fields */
	uint64_t mode, uid, gid, size, devmajor, devminor;
	int64_t mtime;
	uint32_t mtime_nsec;
	bool pax_size, pax_uid, pax_gid, pax_mtime;
	json_t *xattrs; /* SCHILY.xattr.*: name -> base64 of the value */
};

static void tarh_reset(struct tarh *h)
{
	free(h->name);
	free(h->link);
	json_decref(h->xattrs);
	memset(h, 0, sizeof(*h));
}

/* A numeric field: octal (NUL or space ended), or base-256 when its top bit is set. */
static int tar_num(const unsigned char *f, size_t len, uint64_t *v)
{
	size_t i = 0;

	*v = 0;
	if (f[0] & 0x80) {
		if (f[0] & 0x40)
			return -1; /* negative */
		*v = f[0] & 0x3f;
		for (i = 1; i < len; i++) {
			if (*v >> 56)
				return -1;
			*v = *v << 8 | f[i];
		}
		return 0;
	}
	while (i < len && f[i] == ' ')
		i++;
	for (; i < len && f[i] >= '0' && f[i] <= '7'; i++) {
		if (*v >> 61)
			return -1;
		*v = *v << 3 | (uint64_t)(f[i] - '0');
	}
	for (; i < len; i++)
		if (f[i] != ' ' && f[i] != '\0')
			return -1;
	return 0;
}

static char *field(const unsigned char *f, size_t len)
{
	return strndup((const char *)f, len);
}

/* The records "LEN key=value\n" of a pax header's @len bytes into @h. */
static int pax_parse(struct tarh *h, const char *p, size_t len, const char *what, uint64_t at)
{
	size_t i = 0;

	while (i < len) {
		size_t rl = 0, j = i, klen;
		const char *key, *eq, *val;
		size_t vlen;

		while (j < len && p[j] >= '0' && p[j] <= '9' && rl < len)
			rl = rl * 10 + (size_t)(p[j++] - '0');
		if (j == i || j >= len || p[j] != ' ' || rl > len - i || rl < j - i + 3 ||
		    p[i + rl - 1] != '\n')
			goto bad;
		key = p + j + 1;
		eq = memchr(key, '=', (size_t)(p + i + rl - 1 - key));
		if (!eq)
			goto bad;
		klen = (size_t)(eq - key);
		val = eq + 1;
		vlen = (size_t)(p + i + rl - 1 - val);
		if (klen == 4 && memcmp(key, "path", 4) == 0) {
			free(h->name);
			h->name = strndup(val, vlen);
			if (!h->name)
				return -ENOMEM;
		} else if (klen == 8 && memcmp(key, "linkpath", 8) == 0) {
			free(h->link);
			h->link = strndup(val, vlen);
			if (!h->link)
				return -ENOMEM;
		} else if ((klen == 4 && memcmp(key, "size", 4) == 0) ||
			   (klen == 3 && memcmp(key, "uid", 3) == 0) ||
			   (klen == 3 && memcmp(key, "gid", 3) == 0) ||
			   (klen == 5 && memcmp(key, "mtime", 5) == 0)) {
			char num[64], *end;
			uint64_t v;

			if (vlen == 0 || vlen >= sizeof(num))
				goto bad;
			memcpy(num, val, vlen);
			num[vlen] = '\0';
			if (num[0] == '-')
				goto bad;
			errno = 0;
			v = strtoull(num, &end, 10);
			if (errno || (*end && !(key[0] == 'm' && *end == '.')))
				goto bad;
			if (key[0] == 's') {
				h->size = v;
				h->pax_size = true;
			} else if (key[0] == 'u') {
				h->uid = v;
				h->pax_uid = true;
			} else if (key[0] == 'g') {
				h->gid = v;
				h->pax_gid = true;
			} else {
				uint32_t ns = 0, scale = 100000000;

				if (v > INT64_MAX)
					goto bad;
				for (end += *end == '.'; *end >= '0' && *end <= '9'; end++) {
					ns += (uint32_t)(*end - '0') * scale;
					scale /= 10;
				}
				if (*end)
					goto bad;
				h->mtime = (int64_t)v;
				h->mtime_nsec = ns;
				h->pax_mtime = true;
			}
		} else if (klen > 13 && memcmp(key, "SCHILY.xattr.", 13) == 0) {
			char *k = strndup(key + 13, klen - 13), *v = cfs_base64_encode(val, vlen);
			int r = -ENOMEM;

			if (!h->xattrs)
				h->xattrs = json_object();
			if (k && v && h->xattrs && !json_object_set_new(h->xattrs, k, json_string(v)))
				r = 0;
			else if (k && v && h->xattrs)
				r = -EINVAL; /* a name jansson refuses: not UTF-8 */
			free(k);
			free(v);
			if (r == -EINVAL)
				goto bad;
			if (r)
				return r;
		}
		i += rl;
	}
	return 0;
bad:
	cfs_msg("the layer '%s': a bad pax header record at byte %llu of its tar stream", what,
		(unsigned long long)at);
	return -EINVAL;
}

/* The TOC entry of @h, as toc_entry() writes one of a tree's. */
static json_t *toc_entry_tar(const struct tarh *h)
{
	static const struct { char flag; const char *type; } types[] = {
		{ '0', "reg" }, { '\0', "reg" }, { '7', "reg" }, { '1', "hardlink" },
		{ '2', "symlink" }, { '3', "char" }, { '4', "block" }, { '5', "dir" },
		{ '6', "fifo" },
	};
	const char *type = NULL;
	json_t *e = json_object();
	char t[64];

	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (types[i].flag == h->type)
			type = types[i].type;
	if (!e || !type)
		goto err;
	if (json_object_set_new(e, "type", json_string(type)) ||
	    json_object_set_new(e, "name", json_string(h->name)))
		goto err;
	if (h->link && h->link[0] && json_object_set_new(e, "linkName", json_string(h->link)))
		goto err;
	if ((h->mode & 07777) && json_object_set_new(e, "mode", json_integer(h->mode & 07777)))
		goto err;
	if (type[0] == 'r' && h->size &&
	    json_object_set_new(e, "size", json_integer((json_int_t)h->size)))
		goto err;
	if (h->uid && json_object_set_new(e, "uid", json_integer((json_int_t)h->uid)))
		goto err;
	if (h->gid && json_object_set_new(e, "gid", json_integer((json_int_t)h->gid)))
		goto err;
	rfc3339(h->mtime, h->mtime_nsec, t, sizeof(t));
	if (json_object_set_new(e, "modtime", json_string(t)))
		goto err;
	if (h->type == '3' || h->type == '4') {
		if (h->devmajor && json_object_set_new(e, "devMajor",
						       json_integer((json_int_t)h->devmajor)))
			goto err;
		if (h->devminor && json_object_set_new(e, "devMinor",
						       json_integer((json_int_t)h->devminor)))
			goto err;
	}
	if (h->xattrs && json_object_set(e, "xattrs", h->xattrs))
		goto err;
	return e;
err:
	json_decref(e);
	return NULL;
}

/* Header bytes (headers, extended headers, padding) to the writer. */
static int hdr_out(struct lw *w, const void *p, size_t n)
{
	return n && tar_out(NULL, w, p, n) < 0 ? w->err : 0;
}

/* @n bytes of extended header data (pax, GNU long name) read into *@buf, as header bytes. */
static int ext_data(struct src *s, struct lw *w, uint64_t n, unsigned char **buf)
{
	uint64_t padded = (n + 511) & ~(uint64_t)511;
	ssize_t got;

	*buf = NULL;
	if (n > (1u << 20)) {
		cfs_msg("the layer '%s': an extended header of %llu bytes (more than 1 MiB)",
			s->what, (unsigned long long)n);
		return -EFBIG;
	}
	*buf = malloc(padded + 1);
	if (!*buf)
		return -ENOMEM;
	got = src_read(s, *buf, padded);
	if (got < 0)
		return (int)got;
	if ((uint64_t)got != padded) {
		cfs_msg("the layer '%s': its tar stream ends inside an extended header", s->what);
		return -EINVAL;
	}
	(*buf)[n] = '\0';
	return hdr_out(w, *buf, padded);
}

/* The entries of the tar stream, each header and file content where layer_write() puts them. */
static int recompress_chunked(struct src *s, struct walk *k)
{
	struct lw *w = k->w;
	struct tarh h = { 0 };
	unsigned char hdr[512];
	int r = 0;

	for (;;) {
		uint64_t at = s->pos, sum = 0, want, v;
		int64_t ssum = 0;
		ssize_t got = src_read(s, hdr, sizeof(hdr));
		bool zero = true;

		if (got < 0) {
			r = (int)got;
			break;
		}
		if (got == 0)
			break; /* no end-of-archive blocks: as Go's archive/tar, an end all the same */
		if (got != sizeof(hdr)) {
			cfs_msg("the layer '%s': its tar stream ends inside a header", s->what);
			r = -EINVAL;
			break;
		}
		r = hdr_out(w, hdr, sizeof(hdr));
		if (r)
			break;
		for (size_t i = 0; i < sizeof(hdr) && zero; i++)
			zero = hdr[i] == 0;
		if (zero) {
			/* the end: what follows (the second block, a writer's padding) as it is */
			while (!r && (got = src_read(s, k->buf, IO_BUF)) > 0)
				r = hdr_out(w, k->buf, (size_t)got);
			r = r ?: got < 0 ? (int)got : 0;
			break;
		}
		for (size_t i = 0; i < sizeof(hdr); i++) {
			sum += i >= 148 && i < 156 ? ' ' : hdr[i];
			ssum += i >= 148 && i < 156 ? ' ' : (signed char)hdr[i];
		}
		/* the sum of unsigned bytes, or of signed ones as some old writers made it */
		if (tar_num(hdr + 148, 8, &want) || (want != sum && (int64_t)want != ssum)) {
			cfs_msg("the layer '%s': not a tar header at byte %llu of its tar stream "
				"(its checksum)", s->what, (unsigned long long)at);
			r = -EINVAL;
			break;
		}
		if (tar_num(hdr + 124, 12, &v)) {
			cfs_msg("the layer '%s': a bad size field at byte %llu", s->what,
				(unsigned long long)at);
			r = -EINVAL;
			break;
		}
		if (hdr[156] == 'x' || hdr[156] == 'g' || hdr[156] == 'L' || hdr[156] == 'K') {
			unsigned char *data;

			r = ext_data(s, w, v, &data);
			if (!r && hdr[156] == 'x')
				r = pax_parse(&h, (char *)data, (size_t)v, s->what, at);
			else if (!r && hdr[156] != 'g') {
				/* GNU's long name or link target; a global pax header is kept as bytes */
				char **dst = hdr[156] == 'L' ? &h.name : &h.link;

				free(*dst);
				*dst = strdup((char *)data);
				if (!*dst)
					r = -ENOMEM;
			}
			free(data);
			if (r)
				break;
			continue;
		}
		h.type = (char)hdr[156];
		if (!h.pax_size)
			h.size = v;
		if (tar_num(hdr + 100, 8, &h.mode) || (!h.pax_uid && tar_num(hdr + 108, 8, &h.uid)) ||
		    (!h.pax_gid && tar_num(hdr + 116, 8, &h.gid)) ||
		    tar_num(hdr + 329, 8, &h.devmajor) || tar_num(hdr + 337, 8, &h.devminor)) {
			cfs_msg("the layer '%s': a bad numeric field in the header at byte %llu",
				s->what, (unsigned long long)at);
			r = -EINVAL;
			break;
		}
		if (!h.pax_mtime) {
			if (tar_num(hdr + 136, 12, &v) || v > INT64_MAX) {
				cfs_msg("the layer '%s': a bad mtime in the header at byte %llu",
					s->what, (unsigned long long)at);
				r = -EINVAL;
				break;
			}
			h.mtime = (int64_t)v;
		}
		if (!h.name) {
			/* ustar's prefix, when the magic is POSIX's (GNU's has other fields there) */
			char *name = field(hdr, 100), *prefix = field(hdr + 345, 155);

			if (name && prefix && memcmp(hdr + 257, "ustar\0", 6) == 0 && prefix[0]) {
				if (asprintf(&h.name, "%s/%s", prefix, name) < 0)
					h.name = NULL;
			} else if (name) {
				h.name = strdup(name);
			}
			free(name);
			free(prefix);
		}
		if (!h.link)
			h.link = field(hdr + 157, 100);
		if (!h.name || !h.link) {
			r = -ENOMEM;
			break;
		}
		{
			json_t *n = json_string(h.name), *l = json_string(h.link);

			json_decref(n);
			json_decref(l);
			if (!n || !l) {
				/* jansson takes UTF-8 only, and the TOC is JSON */
				cfs_msg("the layer '%s': the entry at byte %llu has a name or link "
					"target that is not UTF-8", s->what, (unsigned long long)at);
				r = -EINVAL;
				break;
			}
		}
		if (!memchr("01234567", h.type, 9)) {
			cfs_msg("the layer '%s': '%s' is of the tar type '%c', which cfs cannot "
				"recompress", s->what, h.name, h.type);
			r = -EOPNOTSUPP;
			break;
		}
		{
			json_t *te = toc_entry_tar(&h);
			bool reg = h.type == '0' || h.type == '\0' || h.type == '7';

			if (!te) {
				r = -ENOMEM;
				break;
			}
			if (json_array_append_new(w->entries, te)) {
				r = -ENOMEM;
				break;
			}
			if (!reg && h.size) {
				cfs_msg("the layer '%s': '%s' is no regular file but has %llu bytes "
					"of content", s->what, h.name, (unsigned long long)h.size);
				r = -EOPNOTSUPP;
				break;
			}
			if (reg && h.size) {
				uint64_t left = h.size;

				r = content_begin(w);
				while (!r && left) {
					size_t m = left < IO_BUF ? (size_t)left : IO_BUF;

					got = src_read(s, k->buf, m);
					if (got < 0) {
						r = (int)got;
					} else if ((size_t)got != m) {
						cfs_msg("the layer '%s': its tar stream ends inside "
							"'%s'", s->what, h.name);
						r = -EINVAL;
					} else {
						r = chunk_feed(k, k->buf, m, h.name);
						left -= m;
					}
				}
				if (!r)
					r = content_end(k, h.name, h.size);
				w->data = false;
				if (!r && h.size % 512) {
					size_t pad = 512 - (size_t)(h.size % 512);

					got = src_read(s, k->buf, pad);
					if (got >= 0 && (size_t)got != pad) {
						cfs_msg("the layer '%s': its tar stream ends inside "
							"'%s''s padding", s->what, h.name);
						r = -EINVAL;
					} else {
						r = got < 0 ? (int)got : hdr_out(w, k->buf, pad);
					}
				}
			} else {
				r = ts_segment(w);
				if (!r)
					r = ts_line(w, json_pack("{s:i, s:s, s:n}", "type", 1, "name",
								 h.name, "payload"));
			}
			if (r)
				break;
		}
		tarh_reset(&h);
	}
	tarh_reset(&h);
	return r;
}

int cfs_layer_recompress(int in, enum cfs_push_compression comp, int fd, const char *what,
			 struct cfs_layer_out *out)
{
	struct lw w = { 0 };
	struct walk k = { .w = &w };
	struct src s = { 0 };
	int r;

	memset(out, 0, sizeof(*out));
	r = lw_open(&w, comp, fd, what);
	k.buf = malloc(IO_BUF);
	if (r || !k.buf) {
		r = -ENOMEM;
		goto out;
	}
	r = src_open(&s, in, what);
	if (r)
		goto out;
	if (comp == CFS_PUSH_ZSTD_CHUNKED) {
		r = recompress_chunked(&s, &k);
	} else {
		ssize_t got = 0;

		while (!r && (got = src_read(&s, k.buf, IO_BUF)) > 0)
			r = hdr_out(&w, k.buf, (size_t)got);
		r = r ?: got < 0 ? (int)got : 0;
	}
	if (!r)
		r = lw_finish(&w, out);
out:
	if (r == -ENOMEM)
		cfs_msg("recompressing the layer '%s': %s", what, strerror(ENOMEM));
	if (r) {
		json_decref(out->annotations);
		out->annotations = NULL;
	}
	src_close(&s);
	lw_close(&w);
	free(k.buf);
	return r;
}
