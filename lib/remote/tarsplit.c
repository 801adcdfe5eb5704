// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A zstd:chunked layer's tar-split (github.com/vbatts/tar-split, as
 * containers/storage writes it into the blob beside the TOC): JSON lines,
 * each a segment of the layer's tar stream (type 2: tar headers and
 * padding, in base64) or a file entry (type 1: the file's name and, for a
 * regular file with content, its size). Put together in order, with each
 * file's content in place of its entry, they are the tar stream the layer
 * decompresses to, whose sha256 is the layer's diff_id: so a partial pull
 * can check the diff_id without fetching the blob (chunked.c).
 *
 * The tar-split is decompressed as a stream and read a line at a time,
 * each line at most CFS_TARSPLIT_LINE_MAX bytes; nothing but the digest is
 * kept.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "http-parse.h"
#include "json.h"
#include "base/internal.h"
#include "tarsplit.h"

struct ts {
	const char *what;
	int (*file)(void *ctx, const char *name, uint64_t size, EVP_MD_CTX *md);
	void *ctx;
	EVP_MD_CTX *md;
	size_t line_no;
};

static int one_line(struct ts *t, const char *line, size_t n)
{
	json_t *j = NULL, *type, *v;
	char what[512];
	int r;

	t->line_no++;
	snprintf(what, sizeof(what), "%s, tar-split line %zu", t->what, t->line_no);
	r = cfs_json_parse(line, n, what, &j);
	if (r)
		return r;
	r = -EINVAL;
	if (!json_is_object(j)) {
		cfs_msg("'%s': tar-split line %zu: not a JSON object", t->what, t->line_no);
		goto out;
	}
	type = json_object_get(j, "type");
	if (!json_is_integer(type) ||
	    (json_integer_value(type) != 1 && json_integer_value(type) != 2)) {
		cfs_msg("'%s': tar-split line %zu: no \"type\" 1 or 2", t->what, t->line_no);
		goto out;
	}
	if (json_integer_value(type) == 2) {
		char *bytes = NULL;
		size_t len = 0;

		v = json_object_get(j, "payload");
		if (!json_is_string(v) || cfs_base64_decode(json_string_value(v), &bytes, &len)) {
			cfs_msg("'%s': tar-split line %zu: a segment whose payload is not base64",
				t->what, t->line_no);
			goto out;
		}
		r = EVP_DigestUpdate(t->md, bytes, len) ? 0 : -ENOMEM;
		free(bytes);
		goto out;
	}
	v = json_object_get(j, "name");
	if (!json_is_string(v)) {
		cfs_msg("'%s': tar-split line %zu: a file entry without a name", t->what, t->line_no);
		goto out;
	}
	r = 0;
	if (json_object_get(j, "size")) {
		json_t *size = json_object_get(j, "size");

		if (!json_is_integer(size) || json_integer_value(size) < 0) {
			cfs_msg("'%s': tar-split line %zu: file '%s': a size that is not a count of bytes",
				t->what, t->line_no, json_string_value(v));
			r = -EINVAL;
		} else if (json_integer_value(size) > 0) {
			r = t->file(t->ctx, json_string_value(v), (uint64_t)json_integer_value(size),
				    t->md);
		}
	}
out:
	json_decref(j);
	return r;
}

int cfs_tarsplit_digest(const void *data, size_t len, uint64_t ulen, const char *what,
			int (*file)(void *ctx, const char *name, uint64_t size, EVP_MD_CTX *md),
			void *ctx, uint8_t out[32])
{
	struct ts t = { .what = what, .file = file, .ctx = ctx };
	ZSTD_inBuffer in = { data, len, 0 };
	ZSTD_DStream *z = ZSTD_createDStream();
	size_t cap = 64 * 1024, have = 0, ret = 1;
	char *buf = malloc(cap);
	uint64_t total = 0;
	unsigned int mdlen = 0;
	int r = 0;

	t.md = EVP_MD_CTX_new();
	if (!z || !buf || !t.md || !EVP_DigestInit_ex(t.md, EVP_sha256(), NULL)) {
		r = -ENOMEM;
		goto out;
	}
	while (r == 0 && (in.pos < in.size || ret != 0)) {
		ZSTD_outBuffer o;
		char *nl, *start;

		if (cap - have < 32 * 1024) {
			char *bigger;

			if (cap >= CFS_TARSPLIT_LINE_MAX + 64 * 1024) {
				cfs_msg("'%s': tar-split line %zu is longer than %u bytes", what,
					t.line_no + 1, CFS_TARSPLIT_LINE_MAX);
				r = -EINVAL;
				break;
			}
			bigger = realloc(buf, cap * 2);
			if (!bigger) {
				r = -ENOMEM;
				break;
			}
			buf = bigger;
			cap *= 2;
		}
		o = (ZSTD_outBuffer){ buf + have, cap - have, 0 };
		ret = ZSTD_decompressStream(z, &o, &in);
		if (ZSTD_isError(ret)) {
			cfs_msg("'%s': the tar-split does not decompress: %s", what,
				ZSTD_getErrorName(ret));
			r = -EINVAL;
			break;
		}
		if (o.pos == 0 && in.pos == in.size && ret != 0) {
			cfs_msg("'%s': the tar-split is cut short", what);
			r = -EINVAL;
			break;
		}
		total += o.pos;
		if (total > ulen) {
			cfs_msg("'%s': the tar-split is larger than the %llu bytes its annotation says",
				what, (unsigned long long)ulen);
			r = -EINVAL;
			break;
		}
		have += o.pos;
		start = buf;
		while (r == 0 && (nl = memchr(start, '\n', have - (size_t)(start - buf)))) {
			if (nl > start)
				r = one_line(&t, start, (size_t)(nl - start));
			start = nl + 1;
		}
		have -= (size_t)(start - buf);
		memmove(buf, start, have);
		if (ret == 0 && in.pos < in.size) {
			cfs_msg("'%s': the tar-split has bytes after its frame", what);
			r = -EINVAL;
		}
	}
	if (r == 0 && have)
		r = one_line(&t, buf, have);
	if (r == 0 && total != ulen) {
		cfs_msg("'%s': the tar-split is %llu bytes, not the %llu its annotation says", what,
			(unsigned long long)total, (unsigned long long)ulen);
		r = -EINVAL;
	}
	if (r == 0 && (!EVP_DigestFinal_ex(t.md, out, &mdlen) || mdlen != 32))
		r = -ENOMEM;
out:
	EVP_MD_CTX_free(t.md);
	ZSTD_freeDStream(z);
	free(buf);
	return r;
}
