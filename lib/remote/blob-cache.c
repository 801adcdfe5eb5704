// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The push blob cache (blob-cache.h): what a layer's tar stream (its
 * diff_id) became once compressed, so that a push of a layout whose layer
 * the registry already holds in that compression need not compress it
 * again to learn its digest (skopeo's blob-info cache does the same). One
 * small file per (compression, diff_id), holding the compressed blob's
 * descriptor as JSON, written to a temporary name and renamed into place.
 * A cache is only a hint: an entry that cannot be read, or is not what
 * its name says, is no entry, and a failure to write one is ignored; the
 * caller trusts an entry only once the registry says it has the blob,
 * with that size.
 *
 * The same directory keeps seals (cfs_seal_cache_get()): one file per
 * key, "seal-<sha256 of the key>", holding the seal's 64 hex digits and a
 * newline; the key names the seal's format, cfs's version and the
 * layers' diff_ids in order, all that the merged tree's image depends on.
 */
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob-cache.h"
#include "json.h"
#include "base/internal.h"
#include "cfs/util.h"

#define MAX_ENTRY (64u << 10)

/* The entry's file name: "<compression>-<diff_id's hex>", or NULL. */
static char *entry_path(const char *dir, const char *compression, const char *diff_id)
{
	char *path;

	if (!cfs_is_sha256_digest(diff_id) || strchr(compression, '/'))
		return NULL;
	if (asprintf(&path, "%s/%s-%s", dir, compression, diff_id + 7) < 0)
		return NULL;
	return path;
}

int cfs_blob_cache_get(const char *dir, const char *compression, const char *diff_id,
		       const char *media_type, char digest[7 + 64 + 1], uint64_t *size,
		       json_t **annotations)
{
	char *path = entry_path(dir, compression, diff_id), *buf = NULL;
	json_t *doc = NULL, *ann, *sz;
	const char *k, *d;
	json_t *v;
	ssize_t n;
	int fd = -1, ret = -ENOENT;

	*annotations = NULL;
	if (!path)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		goto out;
	buf = malloc(MAX_ENTRY + 1);
	if (!buf) {
		ret = -ENOMEM;
		goto out;
	}
	n = read(fd, buf, MAX_ENTRY + 1);
	ret = -EINVAL;
	if (n <= 0 || n > (ssize_t)MAX_ENTRY)
		goto out;
	doc = json_loadb(buf, (size_t)n, JSON_REJECT_DUPLICATES, NULL);
	d = json_string_value(json_object_get(doc, "digest"));
	sz = json_object_get(doc, "size");
	ann = json_object_get(doc, "annotations");
	/* what the name says, and a descriptor of the compression's media type */
	if (!json_is_object(doc) ||
	    !json_is_string(json_object_get(doc, "diff_id")) ||
	    strcmp(json_string_value(json_object_get(doc, "diff_id")), diff_id) != 0 ||
	    !json_is_string(json_object_get(doc, "compression")) ||
	    strcmp(json_string_value(json_object_get(doc, "compression")), compression) != 0 ||
	    !json_is_string(json_object_get(doc, "mediaType")) ||
	    strcmp(json_string_value(json_object_get(doc, "mediaType")), media_type) != 0 ||
	    !cfs_is_sha256_digest(d) || !json_is_integer(sz) || json_integer_value(sz) < 0 ||
	    (ann && !json_is_object(ann)))
		goto out;
	json_object_foreach(ann, k, v)
		if (!json_is_string(v))
			goto out;
	strcpy(digest, d);
	*size = (uint64_t)json_integer_value(sz);
	*annotations = json_incref(ann);
	ret = 0;
out:
	json_decref(doc);
	if (fd >= 0)
		close(fd);
	free(buf);
	free(path);
	return ret;
}

/* @text into @path (in @dir, made if missing), through a temporary name. */
static void write_entry(const char *dir, const char *path, const char *text)
{
	char *tmp = NULL;
	int fd;

	if (cfs_mkdir_p(dir, 0700) < 0 || asprintf(&tmp, "%s.tmp.XXXXXX", path) < 0)
		return;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		free(tmp);
		return;
	}
	if (cfs_write_all(fd, text, strlen(text)) != 0) {
		close(fd);
		unlink(tmp);
	} else if (close(fd) != 0 || rename(tmp, path) != 0) {
		unlink(tmp);
	}
	free(tmp);
}

void cfs_blob_cache_put(const char *dir, const char *compression, const char *diff_id,
			const char *media_type, const char *digest, uint64_t size,
			const json_t *annotations)
{
	char *path = entry_path(dir, compression, diff_id), *text = NULL;
	json_t *doc = NULL;

	if (!path)
		goto out;
	doc = json_pack("{s:s, s:s, s:s, s:s, s:I}", "diff_id", diff_id, "compression",
			compression, "mediaType", media_type, "digest", digest, "size",
			(json_int_t)size);
	if (!doc || (annotations && json_object_set(doc, "annotations", (json_t *)annotations)))
		goto out;
	text = cfs_json_dump(doc, JSON_COMPACT | JSON_SORT_KEYS);
	if (text)
		write_entry(dir, path, text);
out:
	free(text);
	json_decref(doc);
	free(path);
}

/* A seal's entry: "<dir>/seal-<sha256 of @key>", or NULL. */
static char *seal_path(const char *dir, const char *key)
{
	uint8_t md[32];
	char hex[65], *path;

	if (!EVP_Digest(key, strlen(key), md, NULL, EVP_sha256(), NULL))
		return NULL;
	cfs_digest_to_hex(md, hex);
	if (asprintf(&path, "%s/seal-%s", dir, hex) < 0)
		return NULL;
	return path;
}

int cfs_seal_cache_get(const char *dir, const char *key, char seal[65])
{
	char *path = seal_path(dir, key), buf[66];
	ssize_t n;
	int fd, ret = -ENOENT;

	if (!path)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	free(path);
	if (fd < 0)
		return ret;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	/* 64 lowercase hex digits and a newline, nothing else */
	if (n != 65 || buf[64] != '\n' || !cfs_is_hex64(buf))
		return -EINVAL;
	memcpy(seal, buf, 64);
	seal[64] = '\0';
	return 0;
}

void cfs_seal_cache_put(const char *dir, const char *key, const char *seal)
{
	char *path = seal_path(dir, key), text[66];

	if (path && cfs_is_hex_digest(seal)) {
		snprintf(text, sizeof(text), "%s\n", seal);
		write_entry(dir, path, text);
	}
	free(path);
}
