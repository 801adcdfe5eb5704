// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The table of contents of a zstd:chunked layer. Such a layer is a tar
 * stream compressed as one zstd frame per file (large files in several),
 * with the TOC, a zstd-compressed JSON document listing every entry, its
 * metadata and for a regular file its sha256 and the range of its frames,
 * in a skippable frame near the end. The manifest's annotations say where
 * the TOC is and give the sha256 of its compressed bytes: those are
 * checked before anything in it is read. Everything else in the TOC is
 * untrusted input, checked here as strictly as tar.c checks an archive.
 */
#include <errno.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "json.h"
#include "tarsplit.h"
#include "toc.h"
#include "cfs-format.h"
#include "base/internal.h"

#define MAX_LINK 4096
#define MAX_PATH 4096

static const struct {
	const char *checksum, *position;
} annotation_sets[] = {
	{ "io.github.containers.zstd-chunked.manifest-checksum",
	  "io.github.containers.zstd-chunked.manifest-position" },
	{ "io.containers.zstd-chunked.manifest-checksum",
	  "io.containers.zstd-chunked.manifest-position" },
};

static int parse_u64(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;

	if (*p < '0' || *p > '9')
		return -EINVAL;
	while (*p >= '0' && *p <= '9') {
		if (x > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		x = x * 10 + (uint64_t)(*p++ - '0');
	}
	*s = p;
	*v = x;
	return 0;
}

#define TARSPLIT_SUM "io.github.containers.zstd-chunked.tarsplit-checksum"
#define TARSPLIT_POS "io.github.containers.zstd-chunked.tarsplit-position"

/* The tar-split's place, from its annotations, if the layer has one. */
static int find_tarsplit(const json_t *a, uint64_t blob_size, const char *what,
			 struct cfs_toc_pos *pos)
{
	const char *sum = cfs_json_str(a, TARSPLIT_SUM), *p = cfs_json_str(a, TARSPLIT_POS);

	if (!p) {
		if (sum) {
			cfs_msg("'%s': annotation %s without %s", what, TARSPLIT_SUM, TARSPLIT_POS);
			return -EINVAL;
		}
		return 0;
	}
	if (sum && (!cfs_is_sha256_digest(sum) || cfs_digest_from_hex(sum + 7, pos->tarsplit.sha256))) {
		cfs_msg("'%s': the tar-split checksum annotation is not sha256:<64 hex>", what);
		return -EINVAL;
	}
	if (parse_u64(&p, &pos->tarsplit.offset) || *p++ != ':' ||
	    parse_u64(&p, &pos->tarsplit.length) || *p++ != ':' ||
	    parse_u64(&p, &pos->tarsplit.ulength) || *p) {
		cfs_msg("'%s': the tar-split position annotation is not OFFSET:LENGTH:SIZE", what);
		return -EINVAL;
	}
	if (pos->tarsplit.length == 0 || pos->tarsplit.offset > blob_size ||
	    pos->tarsplit.length > blob_size - pos->tarsplit.offset ||
	    pos->tarsplit.length > CFS_TOC_MAX_SIZE || pos->tarsplit.ulength > CFS_TARSPLIT_MAX_SIZE) {
		cfs_msg("'%s': the tar-split position %llu:%llu:%llu is outside the blob of %llu bytes or too large",
			what, (unsigned long long)pos->tarsplit.offset,
			(unsigned long long)pos->tarsplit.length,
			(unsigned long long)pos->tarsplit.ulength, (unsigned long long)blob_size);
		return -EINVAL;
	}
	pos->tarsplit.present = true;
	pos->tarsplit.has_sum = sum != NULL;
	return 0;
}

int cfs_toc_find(const void *annotations, uint64_t blob_size, const char *what,
		 struct cfs_toc_pos *pos)
{
	const json_t *a = annotations;
	const char *sum = NULL, *p = NULL;
	uint64_t type;

	memset(pos, 0, sizeof(*pos));
	if (!json_is_object(a))
		return 1;
	for (size_t i = 0; i < sizeof(annotation_sets) / sizeof(annotation_sets[0]) && !p; i++) {
		sum = cfs_json_str(a, annotation_sets[i].checksum);
		p = cfs_json_str(a, annotation_sets[i].position);
		if (!sum != !p) {
			cfs_msg("'%s': annotation %s without %s", what,
				sum ? annotation_sets[i].checksum : annotation_sets[i].position,
				sum ? annotation_sets[i].position : annotation_sets[i].checksum);
			return -EINVAL;
		}
	}
	if (!p)
		return 1;
	if (!cfs_is_sha256_digest(sum) || cfs_digest_from_hex(sum + 7, pos->sha256)) {
		cfs_msg("'%s': the TOC checksum annotation is not sha256:<64 hex>", what);
		return -EINVAL;
	}
	/* OFFSET:LENGTH:UNCOMPRESSED:TYPE, TYPE 1 (the only one) */
	if (parse_u64(&p, &pos->offset) || *p++ != ':' || parse_u64(&p, &pos->length) ||
	    *p++ != ':' || parse_u64(&p, &pos->ulength) || *p++ != ':' || parse_u64(&p, &type) ||
	    *p || type != 1) {
		cfs_msg("'%s': the TOC position annotation is not OFFSET:LENGTH:SIZE:1", what);
		return -EINVAL;
	}
	if (pos->length == 0 || pos->offset > blob_size || pos->length > blob_size - pos->offset ||
	    pos->length > CFS_TOC_MAX_SIZE || pos->ulength > CFS_TOC_MAX_SIZE) {
		cfs_msg("'%s': the TOC position %llu:%llu:%llu is outside the blob of %llu bytes or too large",
			what, (unsigned long long)pos->offset, (unsigned long long)pos->length,
			(unsigned long long)pos->ulength, (unsigned long long)blob_size);
		return -EINVAL;
	}
	return find_tarsplit(a, blob_size, what, pos);
}

int cfs_toc_scan_sha256(const char *json, size_t len,
			int (*fn)(void *ctx, const uint8_t sha256[32]), void *ctx)
{
	static const char key[] = "\"digest\":\"sha256:";
	const size_t klen = sizeof(key) - 1;
	const char *p = json, *end = json + len;
	char hex[CFS_DIGEST_HEX_SIZE];
	uint8_t sha256[32];
	int r;

	while ((p = memmem(p, (size_t)(end - p), key, klen)) != NULL) {
		p += klen;
		/* p[64] is checked first: the digits end there at the latest */
		if (end - p < 65 || p[64] != '"' || !cfs_is_hex64(p))
			continue;
		memcpy(hex, p, 64); /* the text is no C string */
		hex[64] = '\0';
		p += 64;
		if (cfs_digest_from_hex(hex, sha256) < 0)
			continue;
		r = fn(ctx, sha256);
		if (r)
			return r;
	}
	return 0;
}

void cfs_toc_free(struct cfs_toc *toc)
{
	if (!toc)
		return;
	for (size_t i = 0; i < toc->n; i++) {
		struct cfs_toc_entry *e = &toc->entries[i];

		free(e->name);
		free(e->link);
		for (size_t k = 0; k < e->n_xattrs; k++) {
			free(e->xattrs[k].name);
			free(e->xattrs[k].value);
		}
		free(e->xattrs);
	}
	free(toc->entries);
	free(toc);
}

/* Strict base64 (with padding) of @s into a new buffer; NULL when malformed. */
static uint8_t *base64_decode(const char *s, size_t len, size_t *out_len)
{
	static const char alpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	uint8_t *out;
	size_t o = 0;

	if (len % 4)
		return NULL;
	out = malloc(len / 4 * 3 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v = 0;
		int pad = 0;

		for (int k = 0; k < 4; k++) {
			const char *c = s[i + k] ? strchr(alpha, s[i + k]) : NULL;

			if (s[i + k] == '=' && i + 4 == len && k >= 2 && (k == 3 || s[i + 3] == '=')) {
				pad++;
				v <<= 6;
				continue;
			}
			if (!c || pad)
				goto bad;
			v = (v << 6) | (uint32_t)(c - alpha);
		}
		out[o++] = (uint8_t)(v >> 16);
		if (pad < 2)
			out[o++] = (uint8_t)(v >> 8);
		if (pad < 1)
			out[o++] = (uint8_t)v;
	}
	*out_len = o;
	return out;
bad:
	free(out);
	return NULL;
}

static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + (int64_t)doe - 719468;
}

static int digits(const char **s, int n, unsigned *v)
{
	unsigned x = 0;

	for (int i = 0; i < n; i++) {
		if ((*s)[i] < '0' || (*s)[i] > '9')
			return -1;
		x = x * 10 + (unsigned)((*s)[i] - '0');
	}
	*s += n;
	*v = x;
	return 0;
}

/* RFC 3339 ("2024-01-02T03:04:05.123456789+01:00", as Go writes a time) to seconds and ns. */
static int parse_time(const char *s, int64_t *sec, uint32_t *nsec)
{
	unsigned y, mo, d, h, mi, se, oh, om, ns = 0;
	int64_t t;
	int sign;

	if (digits(&s, 4, &y) || *s++ != '-' || digits(&s, 2, &mo) || *s++ != '-' ||
	    digits(&s, 2, &d) || (*s != 'T' && *s != 't') || (s++, digits(&s, 2, &h)) ||
	    *s++ != ':' || digits(&s, 2, &mi) || *s++ != ':' || digits(&s, 2, &se))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || se > 60)
		return -EINVAL;
	if (*s == '.') {
		unsigned scale = 100000000;
		int n = 0;

		s++;
		while (*s >= '0' && *s <= '9') {
			if (n < 9)
				ns += (unsigned)(*s - '0') * scale;
			scale /= 10;
			s++;
			n++;
		}
		if (n == 0)
			return -EINVAL;
	}
	t = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + se;
	if (*s == 'Z' || *s == 'z') {
		s++;
	} else if (*s == '+' || *s == '-') {
		sign = *s++ == '+' ? 1 : -1;
		if (digits(&s, 2, &oh) || *s++ != ':' || digits(&s, 2, &om) || oh > 23 || om > 59)
			return -EINVAL;
		t -= sign * (int64_t)(oh * 3600 + om * 60);
	} else {
		return -EINVAL;
	}
	if (*s)
		return -EINVAL;
	*sec = t;
	*nsec = ns;
	return 0;
}

/* A whole number in [0, max] at @key of @v, or absent (0); else -EINVAL. */
static int get_uint(const json_t *v, const char *key, uint64_t max, uint64_t *out)
{
	const json_t *n = json_object_get(v, key);
	json_int_t i;

	*out = 0;
	if (!n)
		return 0;
	i = json_integer_value(n);
	if (!json_is_integer(n) || i < 0 || (uint64_t)i > max)
		return -EINVAL;
	*out = (uint64_t)i;
	return 0;
}

/*
 * The name a tar extraction would make of @name, for finding duplicates:
 * no "./" or "." components, no trailing '/'. -EINVAL for an absolute name,
 * a ".." component or one too long.
 */
static int clean_name(const char *name, char **out)
{
	size_t len = strlen(name), o = 0;
	const char *p = name;
	char *c;

	*out = NULL;
	if (name[0] == '/' || len > MAX_PATH)
		return -EINVAL;
	c = malloc(len + 1);
	if (!c)
		return -ENOMEM;
	while (*p) {
		const char *end = strchr(p, '/');
		size_t n = end ? (size_t)(end - p) : strlen(p);

		if (n == 2 && p[0] == '.' && p[1] == '.') {
			free(c);
			return -EINVAL;
		}
		if (n > CFS_MAX_NAME_LEN) {
			free(c);
			return -EINVAL;
		}
		if (n && !(n == 1 && p[0] == '.')) {
			if (o)
				c[o++] = '/';
			memcpy(c + o, p, n);
			o += n;
		}
		p += n;
		while (*p == '/')
			p++;
	}
	c[o] = '\0';
	*out = c;
	return 0;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static int cmp_range(const void *a, const void *b)
{
	const struct cfs_toc_entry *x = *(const struct cfs_toc_entry *const *)a;
	const struct cfs_toc_entry *y = *(const struct cfs_toc_entry *const *)b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static const struct {
	const char *name;
	enum cfs_toc_type type;
} types[] = {
	{ "reg", CFS_TOC_REG },	       { "dir", CFS_TOC_DIR },	   { "symlink", CFS_TOC_SYMLINK },
	{ "hardlink", CFS_TOC_HARDLINK }, { "char", CFS_TOC_CHAR }, { "block", CFS_TOC_BLOCK },
	{ "fifo", CFS_TOC_FIFO },
};

/* Entry @i of the TOC, @v, into @e; @last is the regular file a "chunk" continues. */
static int take_entry(const json_t *v, size_t i, uint64_t limit, const char *what,
		      struct cfs_toc_entry *e)
{
	const char *type = cfs_json_str(v, "type"), *name = cfs_json_str(v, "name");
	const char *link = cfs_json_str(v, "linkName"), *digest = cfs_json_str(v, "digest");
	const char *mtime = cfs_json_str(v, "modtime");
	const json_t *x = json_object_get(v, "xattrs"), *val;
	const char *key;
	uint64_t mode, uid, gid, size, maj, min, off, end;
	size_t k;

#define BAD(...)                                                                      \
	do {                                                                          \
		cfs_msg("'%s': TOC entry %zu ('%s'): " __VA_ARGS__);                  \
		return -EINVAL;                                                       \
	} while (0)
	if (!json_is_object(v) || !type || !name)
		BAD("%s", what, i, name ? name : "?", "not an object with a type and a name");
	for (k = 0; k < sizeof(types) / sizeof(types[0]) && strcmp(types[k].name, type); k++)
		;
	if (k == sizeof(types) / sizeof(types[0]))
		BAD("unknown type '%.32s'", what, i, name, type);
	e->type = types[k].type;
	if (get_uint(v, "mode", 07777 | 0170000, &mode) || get_uint(v, "uid", UINT32_MAX, &uid) ||
	    get_uint(v, "gid", UINT32_MAX, &gid) || get_uint(v, "size", INT64_MAX, &size) ||
	    get_uint(v, "devMajor", 0xfff, &maj) || get_uint(v, "devMinor", 0xfffff, &min) ||
	    get_uint(v, "offset", INT64_MAX, &off) || get_uint(v, "endOffset", INT64_MAX, &end))
		BAD("%s", what, i, name, "a mode, id, size, device or offset out of range");
	e->mode = (uint32_t)mode & 07777;
	e->uid = (uint32_t)uid;
	e->gid = (uint32_t)gid;
	e->devmajor = (uint32_t)maj;
	e->devminor = (uint32_t)min;
	if (mtime && parse_time(mtime, &e->mtime_sec, &e->mtime_nsec))
		BAD("%s", what, i, name, "modtime is not an RFC 3339 time");
	if ((e->type == CFS_TOC_SYMLINK || e->type == CFS_TOC_HARDLINK) !=
	    (link && link[0]))
		BAD("%s", what, i, name,
		    link && link[0] ? "a link name on an entry that is no link" :
				      "a link without a link name");
	if (link && strlen(link) > MAX_LINK)
		BAD("%s", what, i, name, "a link name longer than 4096 bytes");
	e->name = strdup(name);
	e->link = link && link[0] ? strdup(link) : NULL;
	if (!e->name || (link && link[0] && !e->link))
		return -ENOMEM;
	if (e->type == CFS_TOC_REG) {
		e->size = size;
		if (size > 0) {
			if (!cfs_is_sha256_digest(digest) || cfs_digest_from_hex(digest + 7, e->sha256))
				BAD("%s", what, i, name, "a file with content and no sha256 digest");
			if (off >= end || end > limit)
				BAD("its frames %llu-%llu are outside the blob's %llu bytes before the TOC",
				    what, i, name, (unsigned long long)off, (unsigned long long)end,
				    (unsigned long long)limit);
			e->offset = off;
			e->end = end;
		}
	} else if (size || off || end || digest) {
		BAD("%s", what, i, name, "content on an entry that is no regular file");
	}
	if (x) {
		if (!json_is_object(x))
			BAD("%s", what, i, name, "xattrs is not an object");
		e->xattrs = calloc(json_object_size(x) ? json_object_size(x) : 1,
				   sizeof(*e->xattrs));
		if (!e->xattrs)
			return -ENOMEM;
		json_object_foreach((json_t *)x, key, val) {
			struct cfs_toc_xattr *xa = &e->xattrs[e->n_xattrs];
			const char *value = cfs_json_cstr(val);

			if (!key[0] || strlen(key) > CFS_MAX_NAME_LEN || !value)
				BAD("%s", what, i, name, "an xattr with a bad name or value");
			xa->name = strdup(key);
			if (!xa->name)
				return -ENOMEM;
			e->n_xattrs++;
			xa->value = base64_decode(value, json_string_length(val), &xa->len);
			if (!xa->value)
				BAD("xattr '%.64s' is not base64", what, i, name, key);
		}
	}
	return 0;
#undef BAD
}

int cfs_toc_parse(const char *json, size_t len, uint64_t limit, const char *what,
		  uint64_t max_entries, struct cfs_toc **out)
{
	struct cfs_json_arena *arena = NULL;
	json_t *doc = NULL;
	const json_t *entries, *version;
	struct cfs_toc_entry **byoff = NULL, *last = NULL;
	struct cfs_toc *toc = NULL;
	char **names = NULL;
	size_t n_names = 0, n_byoff = 0, n_entries = 0, n;
	int r;

	*out = NULL;
	/*
	 * -EFBIG, without a message: the caller pulls the layer whole. The
	 * tree is read once, into the entries, and freed at once with its
	 * arena.
	 */
	r = cfs_json_parse_arena(json, len, what, CFS_JSON_MAX_VALUES, &doc, &arena);
	if (r)
		return r;
	r = -EINVAL;
	version = json_object_get(doc, "version");
	entries = json_object_get(doc, "entries");
	if (!json_is_integer(version) || json_integer_value(version) != 1) {
		cfs_msg("'%s': the TOC is not of version 1", what);
		goto out;
	}
	if (!json_is_array(entries)) {
		cfs_msg("'%s': the TOC has no list of entries", what);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(entries); i++) {
		const char *type = cfs_json_str(json_array_get(entries, i), "type");

		n_entries += !type || strcmp(type, "chunk") != 0;
	}
	if (max_entries && n_entries > max_entries) {
		cfs_msg("'%s': the TOC lists %zu entries, more than %llu (--max-entries)", what,
			n_entries, (unsigned long long)max_entries);
		goto out;
	}
	n = json_array_size(entries);
	toc = calloc(1, sizeof(*toc));
	if (toc)
		toc->entries = calloc(n ? n : 1, sizeof(*toc->entries));
	names = calloc(n ? n : 1, sizeof(*names));
	byoff = calloc(n ? n : 1, sizeof(*byoff));
	if (!toc || !toc->entries || !names || !byoff) {
		r = -ENOMEM;
		goto out;
	}
	if (json_object_get(doc, "tarSplitDigest")) {
		const char *d = cfs_json_str(doc, "tarSplitDigest");

		if (!cfs_is_sha256_digest(d) || cfs_digest_from_hex(d + 7, toc->tarsplit_sha256)) {
			cfs_msg("'%s': the TOC's tarSplitDigest is not sha256:<64 hex>", what);
			goto out;
		}
		toc->has_tarsplit_digest = true;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *v = json_array_get(entries, i);
		const char *type = cfs_json_str(v, "type");
		struct cfs_toc_entry *e;
		uint64_t off, end;

		if (type && strcmp(type, "chunk") == 0) {
			/* A later piece of the file before it: inside that file's frames. */
			const char *name = cfs_json_str(v, "name");

			if (get_uint(v, "offset", INT64_MAX, &off) ||
			    get_uint(v, "endOffset", INT64_MAX, &end) || !last || !name ||
			    strcmp(name, last->name) != 0 || off < last->offset || off >= last->end ||
			    end > last->end) {
				cfs_msg("'%s': TOC entry %zu: a chunk outside the frames of the file before it",
					what, i);
				goto out;
			}
			continue;
		}
		e = &toc->entries[toc->n++];
		r = take_entry(v, i, limit, what, e);
		if (r)
			goto out;
		r = -EINVAL;
		last = e->type == CFS_TOC_REG && e->size ? e : NULL;
		if (last)
			byoff[n_byoff++] = e;
		r = clean_name(e->name, &names[n_names]);
		if (r == -EINVAL)
			cfs_msg("'%s': TOC entry %zu ('%s'): a name the tar rules refuse (absolute, '..' or too long)",
				what, i, e->name);
		if (r)
			goto out;
		n_names++;
		r = -EINVAL;
		if (e->type == CFS_TOC_HARDLINK) {
			char *target;

			/* that it names an earlier entry, cfs_tar_apply() checks */
			r = clean_name(e->link, &target);
			if (r == -EINVAL)
				cfs_msg("'%s': TOC entry %zu ('%s'): a hardlink to a name the tar rules refuse",
					what, i, e->name);
			if (r)
				goto out;
			free(target);
			r = -EINVAL;
		}
	}
	qsort(names, n_names, sizeof(*names), cmp_str);
	for (size_t i = 1; i < n_names; i++)
		if (strcmp(names[i - 1], names[i]) == 0) {
			cfs_msg("'%s': the TOC names '%s' twice", what, names[i]);
			goto out;
		}
	qsort(byoff, n_byoff, sizeof(*byoff), cmp_range);
	for (size_t i = 1; i < n_byoff; i++)
		if (byoff[i]->offset < byoff[i - 1]->end) {
			cfs_msg("'%s': the frames of '%s' and '%s' overlap", what, byoff[i - 1]->name,
				byoff[i]->name);
			goto out;
		}
	r = 0;
	*out = toc;
	toc = NULL;
out:
	for (size_t i = 0; i < n_names; i++)
		free(names[i]);
	free(names);
	free(byoff);
	cfs_toc_free(toc);
	cfs_json_arena_free(arena); /* and the tree in it */
	return r;
}

int cfs_toc_decode(void *data, size_t len, const struct cfs_toc_pos *pos, const char *what,
		   uint64_t max_entries, void (*text)(void *ctx, const char *json, size_t len),
		   void *ctx, struct cfs_toc **out)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;
	char hex[65], *json = NULL;
	size_t n;
	int r;

	*out = NULL;
	if (len != pos->length || !EVP_Digest(data, len, md, &mdlen, EVP_sha256(), NULL) ||
	    mdlen != 32) {
		free(data);
		return -ENOMEM;
	}
	if (memcmp(md, pos->sha256, 32) != 0) {
		free(data);
		cfs_digest_to_hex(md, hex);
		cfs_msg("'%s': the TOC has the digest sha256:%s, not the one its annotation gives",
			what, hex);
		return -EINVAL;
	}
	json = malloc(pos->ulength + 1);
	if (!json) {
		free(data);
		return -ENOMEM;
	}
	n = ZSTD_decompress(json, pos->ulength + 1, data, len);
	free(data);
	if (ZSTD_isError(n) || n != pos->ulength) {
		cfs_msg("'%s': the TOC does not decompress to its %llu bytes%s%s", what,
			(unsigned long long)pos->ulength, ZSTD_isError(n) ? ": " : "",
			ZSTD_isError(n) ? ZSTD_getErrorName(n) : "");
		free(json);
		return -EINVAL;
	}
	if (text)
		text(ctx, json, n);
	/* The files' frames come before the skippable frame's 8-byte header. */
	r = cfs_toc_parse(json, n, pos->offset >= 8 ? pos->offset - 8 : 0, what, max_entries, out);
	free(json);
	return r;
}
