// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfs_tree_from_oci(): the root filesystem of a container image in an OCI
 * image layout (a directory, or a tar of one), or in a docker-archive
 * (build_docker()), never unpacked. index.json
 * leads to a manifest (by tag, then by platform through image indexes), the
 * manifest to the config and the layers; each layer is decompressed and
 * applied as one stream by tar.c. Every blob is read through a sha256 of its
 * bytes and a count of them, and must match its descriptor: the size is
 * checked before reading, the digest at the end (a layer's content waits in
 * the digest store's temporaries until the whole image has verified); each
 * layer's uncompressed stream must have the sha256 of its diff_id in the
 * config.
 */
#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chunked.h"
#include "json.h"
#include "layout.h"
#include "cfs/oci.h"
#include "cfs/policy.h"
#include "cfs/registry.h"
#include "base/tree.h"
#include "base/internal.h"

#define MAX_JSON_SIZE (16u << 20) /* index, manifest or config */
#define MAX_INDEX_DEPTH 4 /* image indexes within image indexes */
/*
 * Layers of one image: overlayfs stacks some 500 at most, Docker 127; a
 * manifest that lists a hundred thousand would cost as many requests.
 */
#define MAX_LAYERS 1000
#define REF_NAME "org.opencontainers.image.ref.name"
#define SIZE_UNKNOWN UINT64_MAX
#define CACHE_NAME_SIZE (7 + 64 + 1 + 64 + 1) /* sha256-<layer digest>-<diff_id> */

#define MT_OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_DOCKER_LIST "application/vnd.docker.distribution.manifest.list.v2+json"
#define MT_DOCKER_MANIFEST "application/vnd.docker.distribution.manifest.v2+json"
#define MT_DOCKER_CONFIG "application/vnd.docker.container.image.v1+json"
/* What a registry is asked for when it serves a manifest. */
#define ACCEPT_MANIFESTS MT_OCI_INDEX ", " MT_OCI_MANIFEST ", " MT_DOCKER_LIST ", " MT_DOCKER_MANIFEST

/* The layer media types taken, and the compression each names. */
static const struct {
	const char *media_type;
	int filter; /* ARCHIVE_FILTER_* */
} layer_types[] = {
	{ "application/vnd.oci.image.layer.v1.tar", ARCHIVE_FILTER_NONE },
	{ "application/vnd.oci.image.layer.v1.tar+gzip", ARCHIVE_FILTER_GZIP },
	{ "application/vnd.oci.image.layer.v1.tar+zstd", ARCHIVE_FILTER_ZSTD },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar", ARCHIVE_FILTER_NONE },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", ARCHIVE_FILTER_GZIP },
	{ "application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", ARCHIVE_FILTER_ZSTD },
	{ "application/vnd.docker.image.rootfs.diff.tar", ARCHIVE_FILTER_NONE },
	{ "application/vnd.docker.image.rootfs.diff.tar.gzip", ARCHIVE_FILTER_GZIP },
	{ "application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", ARCHIVE_FILTER_GZIP },
};

/* Where the blobs come from: a layout directory, an archive of one, or a registry. */
struct oci {
	const char *path; /* the directory or the archive; the reference */
	bool archive;
	bool docker; /* a docker-archive: manifest.json, no descriptors */
	int fd;
	struct cfs_registry *reg; /* NULL for a layout */
	const struct cfs_registry_options *ropts;
	const struct cfs_registry_ref *ref; /* registry: the reference */
	const char *repo_name; /* registry: "REGISTRY/REPO" */
	const char *ref_name; /* registry: the tag or digest the reference names */
	/* registry: the layers done and received, for progress */
	unsigned int layers_done, layers;
	uint64_t layer_bytes, layer_total;
	int cache_fd; /* registry: the layers cache, or -1 */
	bool cache_check; /* registry: a fragment is taken only when the store has its objects */
	unsigned int layers_cached; /* layers applied from their fragments */
	const struct cfs_oci_platform *platform;
	char platform_str[100]; /* for messages */
	/* registry: reading a manifest or config, which has a deadline */
	bool reading_doc;
	bool last_cached; /* registry: the last layer came from the layers cache */
	char top_digest[7 + 64 + 1]; /* registry: the digest of the reference's document */
	const struct cfs_build_options *opts;
	bool sealed; /* registry: the manifest has a seal, checked against the tree */
};

/* A descriptor: what a blob must be. */
struct desc {
	char media_type[128]; /* "" when the descriptor has none */
	char digest[7 + 64 + 1]; /* "sha256:<64 hex>" */
	uint8_t sha256[CFS_DIGEST_SIZE];
	uint64_t size; /* SIZE_UNKNOWN: a registry reference's digest only */
	char diff_id[7 + 64 + 1]; /* a layer's: the sha256 of it uncompressed, from the config */
	uint8_t diff_sha256[CFS_DIGEST_SIZE];
	const json_t *annotations; /* in the manifest; NULL without */
};

/* A blob being read. */
struct blob {
	struct oci *o;
	char *what; /* names it in messages: DIR/NAME or FILE:NAME */
	const struct desc *d; /* NULL: nothing to check it against */
	uint64_t size, done; /* size SIZE_UNKNOWN: until the registry's body ends */
	bool failed;
	bool layer; /* counts for the progress of a pull */
	EVP_MD_CTX *md;
	int fd;
	struct archive *outer; /* oci-archive: positioned at the blob */
	struct cfs_registry_stream *rs; /* registry */
	uint8_t buf[64 * 1024];
};

/* The entry name of an archive member without "./" or "/" in front. */
static const char *member_name(const char *p)
{
	for (;;) {
		if (p[0] == '/')
			p++;
		else if (p[0] == '.' && p[1] == '/')
			p += 2;
		else
			return p;
	}
}

/* @name in the layout, for messages: DIR/NAME or FILE:NAME; NULL on ENOMEM. */
static char *layout_path(const struct oci *o, const char *name)
{
	char *s;

	if (asprintf(&s, o->archive ? "%s:%s" : "%s/%s", o->path, name) < 0)
		return NULL;
	return s;
}

static void blob_close(struct blob *b)
{
	EVP_MD_CTX_free(b->md);
	if (b->fd >= 0)
		close(b->fd);
	if (b->outer)
		archive_read_free(b->outer);
	cfs_registry_end(b->rs);
	free(b->what);
	b->md = NULL;
	b->fd = -1;
	b->outer = NULL;
	b->rs = NULL;
	b->what = NULL;
}

/* Find @name in the archive, from its start; then b->outer reads it. */
static int find_member(struct blob *b, const char *name)
{
	struct archive_entry *e;
	int r;

	if (lseek(b->o->fd, 0, SEEK_SET) < 0) {
		r = -errno;
		cfs_msg("'%s': %s", b->o->path, strerror(errno));
		return r;
	}
	b->outer = cfs_tar_reader();
	if (!b->outer)
		return -ENOMEM;
	archive_read_support_filter_all(b->outer);
	if (archive_read_open_fd(b->outer, b->o->fd, 64 * 1024) != ARCHIVE_OK)
		goto bad;
	for (;;) {
		r = archive_read_next_header(b->outer, &e);
		if (r == ARCHIVE_EOF) {
			cfs_msg("'%s': not in the archive", b->what);
			return -ENOENT;
		}
		if (r < ARCHIVE_WARN)
			goto bad;
		if (strcmp(member_name(archive_entry_pathname(e) ? archive_entry_pathname(e) : ""),
			   name) != 0)
			continue;
		if (archive_entry_filetype(e) != AE_IFREG || archive_entry_hardlink(e) ||
		    archive_entry_size(e) < 0) {
			cfs_msg("'%s': not a regular file in the archive", b->what);
			return -EINVAL;
		}
		b->size = (uint64_t)archive_entry_size(e);
		return 0;
	}
bad:
	cfs_msg("'%s': %s", b->o->path, archive_error_string(b->outer));
	return -EINVAL;
}

/* The path of the blob @d names in the layout. */
static void blob_name(const struct desc *d, char name[static 80])
{
	snprintf(name, 80, "blobs/sha256/%s", d->digest + 7);
}

/*
 * The name of a blob in messages: @name in the layout (by default the
 * blob's of @d), or REGISTRY/REPO@DIGEST (by default the reference's);
 * NULL on ENOMEM.
 */
static char *blob_what(const struct oci *o, const char *name, const struct desc *d)
{
	char bname[80], *s;

	if (!o->reg) {
		if (!name) {
			blob_name(d, bname);
			name = bname;
		}
		return layout_path(o, name);
	}
	if (!d)
		return strdup(o->path);
	if (asprintf(&s, "%s@%s", o->repo_name, d->digest) < 0)
		return NULL;
	return s;
}

/* Start reading the registry's blob @d, or its manifest of the reference. */
static int registry_open(struct oci *o, const struct desc *d, bool manifest, struct blob *b)
{
	int r;

	r = (o->reading_doc ? cfs_registry_get_document : cfs_registry_get)(
		o->reg, manifest, d && d->size != SIZE_UNKNOWN ? d->digest : o->ref_name,
		manifest ? ACCEPT_MANIFESTS : NULL, b->what, &b->rs);
	if (r)
		return r;
	b->size = cfs_registry_length(b->rs);
	/* Without a length the body's end tells, checked in blob_finish(). */
	if (b->size == SIZE_UNKNOWN && d)
		b->size = d->size;
	return 0;
}

/*
 * Open a blob to be checked against @d: the layout's file @name (by default
 * the blob @d names), or the registry's blob @d (a manifest or an index when
 * @manifest), by default the manifest the reference names.
 */
static int blob_open(struct oci *o, const char *name, const struct desc *d, bool manifest,
		     struct blob *b)
{
	struct stat st;
	char bname[80];
	int r;

	b->o = o;
	b->d = d;
	b->fd = -1;
	b->outer = NULL;
	b->rs = NULL;
	b->md = NULL;
	b->done = 0;
	b->failed = false;
	b->layer = false;
	b->what = blob_what(o, name, d);
	if (!b->what)
		return -ENOMEM;
	if (!name && d) {
		blob_name(d, bname);
		name = bname;
	}
	b->md = EVP_MD_CTX_new();
	if (!b->md || !EVP_DigestInit_ex(b->md, EVP_sha256(), NULL)) {
		r = -ENOMEM;
		goto err;
	}
	if (o->reg) {
		r = registry_open(o, d, manifest, b);
		if (r)
			goto err;
	} else if (o->archive) {
		r = find_member(b, name);
		if (r)
			goto err;
	} else {
		b->fd = openat(o->fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		if (b->fd < 0 || fstat(b->fd, &st) < 0) {
			r = -errno;
			cfs_msg("'%s': %s", b->what, strerror(errno));
			goto err;
		}
		if (!S_ISREG(st.st_mode)) {
			r = -EINVAL;
			cfs_msg("'%s': not a regular file", b->what);
			goto err;
		}
		b->size = (uint64_t)st.st_size;
	}
	if (d && d->size != SIZE_UNKNOWN && b->size != SIZE_UNKNOWN && b->size != d->size) {
		r = -EINVAL;
		cfs_msg("'%s': %llu bytes, but its descriptor says %llu", b->what,
			(unsigned long long)b->size, (unsigned long long)d->size);
		goto err;
	}
	return 0;
err:
	blob_close(b);
	return r;
}

/* Tell a pull's progress callback how far the layers are. */
static void report(struct oci *o)
{
	if (o->ropts && o->ropts->progress)
		o->ropts->progress(o->ropts->progress_ctx, o->layers_done, o->layers, o->layer_bytes,
				   o->layer_total);
}

/* The next bytes of the blob into b->buf, hashed: their count, 0 at its end, or -errno. */
static ssize_t blob_read(struct blob *b)
{
	size_t want = sizeof(b->buf);
	ssize_t n;

	if (b->failed)
		return -EIO;
	if (b->done == b->size)
		return 0;
	if (b->size - b->done < want)
		want = (size_t)(b->size - b->done);
	if (b->rs) {
		n = cfs_registry_read(b->rs, b->buf, want);
		if (n == 0 && b->size == SIZE_UNKNOWN) {
			b->size = b->done;
			return 0;
		}
	} else if (b->outer) {
		n = archive_read_data(b->outer, b->buf, want);
		if (n < 0) {
			cfs_msg("'%s': %s", b->what, archive_error_string(b->outer));
			n = -EIO;
		}
	} else {
		do
			n = read(b->fd, b->buf, want);
		while (n < 0 && errno == EINTR);
		if (n < 0) {
			n = -errno;
			cfs_msg("'%s': %s", b->what, strerror(errno));
		}
	}
	if (n == 0) {
		cfs_msg("'%s': ends after %llu of its %llu bytes", b->what,
			(unsigned long long)b->done, (unsigned long long)b->size);
		n = -EIO;
	}
	if (n > 0 && !EVP_DigestUpdate(b->md, b->buf, (size_t)n))
		n = -ENOMEM;
	if (n < 0) {
		b->failed = true;
		return n;
	}
	b->done += (uint64_t)n;
	if (b->layer) {
		b->o->layer_bytes += (uint64_t)n;
		report(b->o);
	}
	return n;
}

/* Read what is left of the blob, then check its digest. */
static int blob_finish(struct blob *b)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	char hex[2 * 32 + 1];
	unsigned int len;
	ssize_t n;

	while ((n = blob_read(b)) > 0)
		;
	if (n < 0)
		return (int)n;
	/* A registry's body without a length may go on past the descriptor's size. */
	if (b->rs && (n = cfs_registry_read(b->rs, b->buf, 1)) != 0) {
		if (n > 0)
			cfs_msg("'%s': more than the %llu bytes its descriptor says", b->what,
				(unsigned long long)b->size);
		b->failed = true;
		return n > 0 ? -EINVAL : (int)n;
	}
	if (!EVP_DigestFinal_ex(b->md, md, &len) || len != 32)
		return -ENOMEM;
	for (unsigned int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	/* the registry's first document is the one the reference names */
	if (b->rs && !b->o->top_digest[0])
		snprintf(b->o->top_digest, sizeof(b->o->top_digest), "sha256:%s", hex);
	if (!b->d || memcmp(md, b->d->sha256, 32) == 0)
		return 0;
	cfs_msg("'%s': its content has the digest sha256:%s, not %s", b->what, hex, b->d->digest);
	return -EINVAL;
}

/*
 * Read a JSON blob as blob_open() opens it and parse it, whatever JSON value
 * it holds. *@type, unless NULL, gets the media type a registry sent it as
 * ("" from a layout): free it.
 */
static int read_json_any(struct oci *o, const char *name, const struct desc *d, bool manifest,
			 json_t **out, char **type)
{
	struct blob b;
	char *text = NULL;
	size_t len = 0, cap;
	ssize_t n;
	int r;

	*out = NULL;
	o->reading_doc = true;
	r = blob_open(o, name, d, manifest, &b);
	o->reading_doc = false;
	if (r)
		return r;
	if (b.size != SIZE_UNKNOWN && b.size > MAX_JSON_SIZE) {
		cfs_msg("'%s': %llu bytes, more than the %u a JSON document may have", b.what,
			(unsigned long long)b.size, MAX_JSON_SIZE);
		r = -EFBIG;
		goto out;
	}
	cap = b.size != SIZE_UNKNOWN ? (size_t)b.size : sizeof(b.buf);
	text = malloc(cap + 1);
	if (!text) {
		r = -ENOMEM;
		goto out;
	}
	while ((n = blob_read(&b)) > 0) {
		if (len + (size_t)n > cap) {
			char *t;

			if (len + (size_t)n > MAX_JSON_SIZE) {
				cfs_msg("'%s': more than the %u bytes a JSON document may have",
					b.what, MAX_JSON_SIZE);
				r = -EFBIG;
				goto out;
			}
			cap = 2 * cap < MAX_JSON_SIZE ? 2 * cap : MAX_JSON_SIZE;
			t = realloc(text, cap + 1);
			if (!t) {
				r = -ENOMEM;
				goto out;
			}
			text = t;
		}
		memcpy(text + len, b.buf, (size_t)n);
		len += (size_t)n;
	}
	r = n < 0 ? (int)n : blob_finish(&b);
	if (r == 0 && type && !(*type = strdup(b.rs ? cfs_registry_type(b.rs) : "")))
		r = -ENOMEM;
	if (r)
		goto out;
	r = cfs_json_parse(text, len, b.what, out);
out:
	free(text);
	blob_close(&b);
	return r;
}

/* read_json_any(), for a document that must be a JSON object. */
static int read_json(struct oci *o, const char *name, const struct desc *d, bool manifest,
		     json_t **out, char **type)
{
	int r = read_json_any(o, name, d, manifest, out, type);
	char *what;

	if (r == 0 && !json_is_object(*out)) {
		what = blob_what(o, name, d);
		cfs_msg("'%s': not a JSON object", what ? what : o->path);
		free(what);
		json_decref(*out);
		*out = NULL;
		r = -EINVAL;
	}
	return r;
}

/* Read the descriptor @v, found in the document @where, into @d. */
static int get_desc(const char *where, const json_t *v, struct desc *d)
{
	const json_t *size = json_object_get(v, "size");
	const char *digest = cfs_json_str(v, "digest"), *mt = cfs_json_str(v, "mediaType");

	if (!json_is_object(v) || !digest) {
		cfs_msg("'%s': a descriptor without a digest", where);
		return -EINVAL;
	}
	if (strncmp(digest, "sha256:", 7) != 0) {
		cfs_msg("'%s': digest '%s': only sha256 digests are supported", where, digest);
		return -EOPNOTSUPP;
	}
	if (!cfs_is_hex_digest(digest + 7) || cfs_digest_from_hex(digest + 7, d->sha256)) {
		cfs_msg("'%s': digest '%s' is not 64 lowercase hex digits", where, digest);
		return -EINVAL;
	}
	memcpy(d->digest, digest, sizeof(d->digest));
	d->annotations = json_object_get(v, "annotations");
	if (mt && strlen(mt) >= sizeof(d->media_type)) {
		cfs_msg("'%s': the media type of %s is too long", where, digest);
		return -EINVAL;
	}
	strcpy(d->media_type, mt ? mt : "");
	if (!json_is_integer(size) || json_integer_value(size) < 0) {
		cfs_msg("'%s': the size of %s is not a whole number of bytes", where, digest);
		return -EINVAL;
	}
	d->size = (uint64_t)json_integer_value(size);
	return 0;
}

static bool is_index(const char *mt)
{
	return (strcmp(mt, MT_OCI_INDEX) == 0 || strcmp(mt, MT_DOCKER_LIST) == 0);
}

static bool is_manifest(const char *mt)
{
	return (strcmp(mt, MT_OCI_MANIFEST) == 0 || strcmp(mt, MT_DOCKER_MANIFEST) == 0);
}

/* schemaVersion 2, and the document's own mediaType, if any, is its descriptor's. */
static int check_doc(const char *what, const json_t *doc, const char *media_type)
{
	const json_t *v = json_object_get(doc, "schemaVersion");
	const char *mt = cfs_json_str(doc, "mediaType");

	if (!json_is_integer(v) || json_integer_value(v) != 2) {
		cfs_msg("'%s': schemaVersion is not 2", what);
		return -EINVAL;
	}
	if (mt && media_type && media_type[0] && strcmp(mt, media_type) != 0) {
		cfs_msg("'%s': its mediaType '%s' is not '%s', as its descriptor says", what, mt,
			media_type);
		return -EINVAL;
	}
	return 0;
}

static bool platform_matches(const json_t *desc, const struct cfs_oci_platform *p)
{
	const json_t *pl = json_object_get(desc, "platform");
	const char *os = cfs_json_str(pl, "os"), *arch = cfs_json_str(pl, "architecture");
	const char *variant = cfs_json_str(pl, "variant");

	if (!os || !arch || strcmp(os, p->os) != 0 || strcmp(arch, p->arch) != 0)
		return false;
	return !p->variant[0] || (variant && strcmp(variant, p->variant) == 0);
}

/* The platforms of the descriptors in @list, for a message: "linux/amd64, linux/arm64/v8". */
static void list_platforms(const json_t *list, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < json_array_size(list) && len < size; i++) {
		const json_t *pl = json_object_get(json_array_get(list, i), "platform");
		const char *os = cfs_json_str(pl, "os"), *arch = cfs_json_str(pl, "architecture");
		const char *variant = cfs_json_str(pl, "variant");
		int n;

		if (!os || !arch)
			continue;
		n = snprintf(buf + len, size - len, "%s%s/%s%s%s", len ? ", " : "", os, arch,
			     variant ? "/" : "", variant ? variant : "");
		if (n < 0 || (size_t)n >= size - len) {
			/* too many to list: end with an ellipsis */
			if (size > 4)
				strcpy(buf + (len < size - 4 ? len : size - 4), "...");
			return;
		}
		len += (size_t)n;
	}
	if (!buf[0])
		snprintf(buf, size, "no platform named");
}

/* The tags of @list's manifests into @buf: five at most, then "..." */
static void list_tags(const json_t *list, char *buf, size_t size)
{
	size_t len = 0, shown = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < json_array_size(list); i++) {
		const char *ref = cfs_json_str(json_object_get(json_array_get(list, i), "annotations"),
					       REF_NAME);
		int n;

		if (!ref)
			continue;
		if (shown == 5) {
			snprintf(buf + len, size - len, ", ...");
			return;
		}
		n = snprintf(buf + len, size - len, "%s'%s'", len ? ", " : "", ref);
		if (n < 0 || (size_t)n >= size - len) {
			if (size > 4)
				strcpy(buf + (len < size - 4 ? len : size - 4), "...");
			return;
		}
		len += (size_t)n;
		shown++;
	}
}

/*
 * Choose the descriptor in the "manifests" of @index (the document @what):
 * by @tag, else the only one or the one tagged "latest", else by platform.
 * In an index reached through another (@nested), only the platform counts.
 */
static int choose(struct oci *o, const char *what, const json_t *index, const char *tag,
		  bool nested, const json_t **out)
{
	const json_t *list = json_object_get(index, "manifests"), *found = NULL;
	size_t n = 0, k = 0;
	const char *want = tag;
	char avail[512];

	if (!json_is_array(list)) {
		cfs_msg("'%s': no \"manifests\" array", what);
		return -EINVAL;
	}
	if (!nested && !tag && json_array_size(list) == 1) {
		*out = json_array_get(list, 0);
		return 0;
	}
	if (!nested && !tag)
		want = "latest";
	/* Pass 1: the tagged ones; pass 2, if need be: by platform among them. */
	for (size_t i = 0; !nested && i < json_array_size(list); i++) {
		const char *ref = cfs_json_str(json_object_get(json_array_get(list, i), "annotations"),
					       REF_NAME);

		if (ref && strcmp(ref, want) == 0) {
			found = json_array_get(list, i);
			n++;
		}
	}
	if (!nested && tag && n == 0) {
		list_tags(list, avail, sizeof(avail));
		cfs_msg("'%s': no manifest is tagged '%s' (%s%s)", what, tag,
			avail[0] ? "its tags: " : "no manifest of it is tagged", avail);
		return -ENOENT;
	}
	if (n == 1) {
		*out = found;
		return 0;
	}
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *m = json_array_get(list, i);
		const char *ref = cfs_json_str(json_object_get(m, "annotations"), REF_NAME);

		if (n > 1 && !(ref && strcmp(ref, want) == 0))
			continue;
		if (platform_matches(m, o->platform)) {
			found = m;
			k++;
		}
	}
	if (k == 1) {
		*out = found;
		return 0;
	}
	if (k == 0)
		list_platforms(list, avail, sizeof(avail));
	if (k == 0 && nested)
		cfs_msg("'%s': no manifest for platform %s (choose another with --platform; it has: %s)",
			what, o->platform_str, avail);
	else if (k == 0)
		cfs_msg("'%s': no single manifest%s%s%s for platform %s (name one by tag, or choose another platform with --platform; it has: %s)",
			what, n ? " tagged '" : "", n ? want : "", n ? "'" : "", o->platform_str,
			avail);
	else
		cfs_msg("'%s': %zu manifests for platform %s: name one by tag", what, k,
			o->platform_str);
	return -ENOENT;
}

/*
 * The first document: a layout's index.json, or the manifest or index the
 * registry serves for the reference (by digest, then checked against it),
 * its media type in *@type. *@depth: 1 when it is an image index of a
 * registry, in which only the platform chooses.
 */
static int read_top(struct oci *o, const char *what, json_t **doc, char **type,
		    unsigned int *depth)
{
	struct desc ref = { .size = SIZE_UNKNOWN };
	const char *mt;
	int r;

	*depth = 0;
	if (!o->reg) {
		r = read_json(o, "index.json", NULL, false, doc, type);
		return r ? r : check_doc(what, *doc, NULL);
	}
	if (strncmp(o->ref_name, "sha256:", 7) == 0) {
		snprintf(ref.digest, sizeof(ref.digest), "%s", o->ref_name);
		if (cfs_digest_from_hex(o->ref_name + 7, ref.sha256))
			return -EINVAL;
	}
	r = read_json(o, NULL, ref.digest[0] ? &ref : NULL, true, doc, type);
	if (r)
		return r;
	if (o->ropts->resolved)
		o->ropts->resolved(o->ropts->progress_ctx, o->top_digest);
	/* the policy, before anything more is fetched */
	if (o->ropts->policy) {
		char *passed = NULL;

		r = cfs_policy_check(o->ropts->policy, o->reg, o->ref, o->ropts, o->top_digest,
				     &passed);
		if (r)
			return r;
		if (o->ropts->accepted)
			o->ropts->accepted(o->ropts->progress_ctx, passed);
		free(passed);
	}
	/* A registry that sends no type (or a generic one) leaves it to the document. */
	mt = cfs_json_str(*doc, "mediaType");
	if ((!is_index(*type) && !is_manifest(*type)) && mt) {
		free(*type);
		*type = strdup(mt);
		if (!*type)
			return -ENOMEM;
	}
	if (!is_index(*type) && !is_manifest(*type)) {
		cfs_msg("'%s': media type '%s' is neither an image manifest nor an index", what,
			*type);
		return -EOPNOTSUPP;
	}
	*depth = is_index(*type);
	return check_doc(what, *doc, *type);
}

/*
 * The image manifest the layout names by @tag and the platform (from
 * index.json through image indexes), or the registry's for the reference
 * and the platform; each checked against its descriptor. *@whatp names it
 * in messages; free it and *@doc.
 */
static int find_manifest(struct oci *o, const char *tag, char **whatp, json_t **doc)
{
	json_t *cur = NULL, *next = NULL;
	const json_t *m;
	char *what, *type = NULL;
	unsigned int depth;
	struct desc d;
	int r;

	what = blob_what(o, "index.json", NULL);
	if (!what)
		return -ENOMEM;
	r = read_top(o, what, &cur, &type, &depth);
	if (r == 0 && is_manifest(type)) {
		free(type);
		goto out;
	}
	free(type);
	while (r == 0) {
		r = choose(o, what, cur, tag, depth > 0, &m);
		if (r == 0)
			r = get_desc(what, m, &d);
		if (r)
			break;
		if (!is_index(d.media_type) && !is_manifest(d.media_type)) {
			cfs_msg("'%s': %s has media type '%s', neither an image manifest nor an index",
				what, d.digest, d.media_type);
			r = -EOPNOTSUPP;
			break;
		}
		free(what);
		what = blob_what(o, NULL, &d);
		if (!what) {
			r = -ENOMEM;
			break;
		}
		if (is_index(d.media_type) && ++depth >= MAX_INDEX_DEPTH) {
			cfs_msg("'%s': image indexes nested more than %d deep", what, MAX_INDEX_DEPTH);
			r = -ELOOP;
			break;
		}
		r = read_json(o, NULL, &d, true, &next, NULL);
		if (r == 0)
			r = check_doc(what, next, d.media_type);
		json_decref(cur);
		cur = next;
		next = NULL;
		if (is_manifest(d.media_type))
			break;
	}
out:
	if (r) {
		free(what);
		json_decref(cur);
		return r;
	}
	*whatp = what;
	*doc = cur;
	return 0;
}

/*
 * The diff_ids of the config @config (the document @cwhat), one for each of
 * the @n_layers layers @layers of @what, which get them.
 */
static int get_diff_ids(const char *cwhat, const json_t *config, const char *what,
			struct desc *layers, size_t n_layers)
{
	const json_t *rootfs = json_object_get(config, "rootfs");
	const json_t *ids = json_object_get(rootfs, "diff_ids");
	const char *type = cfs_json_str(rootfs, "type");

	if (!type || strcmp(type, "layers") != 0 || !json_is_array(ids)) {
		cfs_msg("'%s': no rootfs of type \"layers\" with diff_ids", cwhat);
		return -EINVAL;
	}
	if (json_array_size(ids) != n_layers) {
		cfs_msg("'%s': %zu diff_ids for the %zu layers of '%s'", cwhat, json_array_size(ids),
			n_layers, what);
		return -EINVAL;
	}
	for (size_t i = 0; i < n_layers; i++) {
		const char *id = cfs_json_cstr(json_array_get(ids, i));

		if (!cfs_is_sha256_digest(id) || cfs_digest_from_hex(id + 7, layers[i].diff_sha256)) {
			cfs_msg("'%s': diff_id %zu is not sha256:<64 lowercase hex digits>", cwhat, i + 1);
			return -EINVAL;
		}
		memcpy(layers[i].diff_id, id, sizeof(layers[i].diff_id));
	}
	return 0;
}

/*
 * The config: an image's (not another artifact's), with a diff_id for each
 * of the @n_layers layers @d, which get it.
 */
static int check_config(struct oci *o, const char *what, const json_t *manifest,
			struct desc *layers, size_t n_layers)
{
	json_t *config = NULL;
	char *cwhat = NULL;
	struct desc d;
	int r;

	r = get_desc(what, json_object_get(manifest, "config"), &d);
	if (r)
		return r;
	if (strcmp(d.media_type, MT_OCI_CONFIG) != 0 && strcmp(d.media_type, MT_DOCKER_CONFIG) != 0) {
		cfs_msg("'%s': the config's media type '%s' is not a container image's", what,
			d.media_type);
		return -EOPNOTSUPP;
	}
	cwhat = blob_what(o, NULL, &d);
	if (!cwhat)
		return -ENOMEM;
	r = read_json(o, NULL, &d, false, &config, NULL);
	if (r == 0)
		r = get_diff_ids(cwhat, config, what, layers, n_layers);
	json_decref(config);
	free(cwhat);
	return r;
}

/* libarchive's read callback: the layer's next bytes. */
static la_ssize_t layer_read(struct archive *a, void *ctx, const void **buf)
{
	struct blob *b = ctx;
	ssize_t n = blob_read(b);

	if (n < 0) {
		archive_set_error(a, EIO, "reading the layer failed");
		return -1;
	}
	*buf = b->buf;
	return n;
}

/*
 * A layer uncompressed: @dec reads the blob through its decompressor as one
 * raw stream, which the tar reader reads from here, hashed on the way for
 * the check against the layer's diff_id.
 */
struct unpacked {
	struct archive *dec;
	EVP_MD_CTX *md;
	bool failed;
	uint8_t buf[64 * 1024];
};

/* The next bytes of the layer uncompressed into u->buf, hashed: their count, 0 at its end, or -1. */
static la_ssize_t unpacked_next(struct unpacked *u)
{
	la_ssize_t n;

	if (u->failed)
		return -1;
	n = archive_read_data(u->dec, u->buf, sizeof(u->buf));
	if (n > 0 && !EVP_DigestUpdate(u->md, u->buf, (size_t)n))
		n = -1;
	if (n < 0)
		u->failed = true;
	return n;
}

/* libarchive's read callback of the tar reader: the layer's next bytes, uncompressed. */
static la_ssize_t unpacked_read(struct archive *a, void *ctx, const void **buf)
{
	struct unpacked *u = ctx;
	la_ssize_t n = unpacked_next(u);

	if (n < 0) {
		archive_set_error(a, EIO, "%s", archive_error_string(u->dec) ?
				  archive_error_string(u->dec) : "reading the layer failed");
		return -1;
	}
	*buf = u->buf;
	return n;
}

/* Read what is left of the layer uncompressed (a tar's end), into the hash. */
static int unpacked_drain(struct unpacked *u, const char *what)
{
	while (unpacked_next(u) > 0)
		;
	if (u->failed) {
		cfs_msg("'%s': %s", what, archive_error_string(u->dec) ?
			archive_error_string(u->dec) : "reading the layer failed");
		return -EIO;
	}
	return 0;
}

/* Check the layer read whole against its diff_id, @d's. */
static int check_diff_id(struct unpacked *u, const struct desc *d, const char *what)
{
	uint8_t md[EVP_MAX_MD_SIZE];
	char hex[2 * 32 + 1];
	unsigned int len;

	if (!EVP_DigestFinal_ex(u->md, md, &len) || len != 32)
		return -ENOMEM;
	if (memcmp(md, d->diff_sha256, 32) == 0)
		return 0;
	for (unsigned int i = 0; i < 32; i++)
		sprintf(hex + 2 * i, "%02x", md[i]);
	/* skopeo 1.9 recompresses to zstd:chunked and keeps the old diff_id */
	if (json_object_get(d->annotations, "io.github.containers.zstd-chunked.manifest-checksum") ||
	    json_object_get(d->annotations, "io.containers.zstd-chunked.manifest-checksum"))
		cfs_msg("'%s': uncompressed, its content has the digest sha256:%s, not the config's diff_id %s: a zstd:chunked layer whose config kept the diff_id of the layer before it was recompressed, as skopeo 1.9 writes them; pull it without --full-pull (its files are checked by their TOC), or copy the image again with a newer skopeo",
			what, hex, d->diff_id);
	else
		cfs_msg("'%s': uncompressed, its content has the digest sha256:%s, not the config's diff_id %s",
			what, hex, d->diff_id);
	return -EINVAL;
}

/*
 * The name of the layer @d's fragment in the layers cache: by its digest
 * and its diff_id, so that a config that gives the layer another diff_id
 * finds no fragment, and the layer is fetched and checked against it.
 */
static void cache_name(const struct desc *d, char name[static CACHE_NAME_SIZE])
{
	snprintf(name, CACHE_NAME_SIZE, "sha256-%s-%s", d->digest + 7, d->diff_id + 7);
}

/*
 * Apply the layer @d from its fragment in the layers cache: 0, 1 when the
 * cache has none it can use, or -errno. At first the objects the fragment
 * names are not looked for: a later layer may delete their files, and the
 * image needs only the objects of the files it ends with (build_tree()
 * checks, and with @o->cache_check set builds again, looking).
 */
static int apply_cached(struct oci *o, struct cfs_tar *t, const struct desc *d)
{
	struct archive *a = NULL;
	char name[CACHE_NAME_SIZE], *what = NULL;
	int fd, r = 1;

	cache_name(d, name);
	fd = openat(o->cache_fd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 1;
	a = cfs_tar_reader();
	if (!a) {
		r = -ENOMEM;
		goto out;
	}
	if (archive_read_open_fd(a, fd, 64 * 1024) != ARCHIVE_OK)
		goto out;
	r = cfs_tar_fragment_check(t, a, o->cache_check);
	archive_read_free(a);
	a = NULL;
	if (r)
		goto out;
	r = 1;
	a = cfs_tar_reader();
	if (!a) {
		r = -ENOMEM;
		goto out;
	}
	if (lseek(fd, 0, SEEK_SET) < 0 || archive_read_open_fd(a, fd, 64 * 1024) != ARCHIVE_OK)
		goto out;
	if (asprintf(&what, "%s/%s", o->ropts->layers_cache, name) < 0) {
		what = NULL;
		r = -ENOMEM;
		goto out;
	}
	r = cfs_tar_apply_fragment(t, a, what);
	if (r == 0) {
		o->layer_bytes += d->size;
		o->layers_cached++;
	}
out:
	if (a)
		archive_read_free(a);
	free(what);
	close(fd);
	return r;
}

/* Record the layer about to be applied to @t in a new file of the layers cache. */
static struct archive *cache_start(struct oci *o, struct cfs_tar *t, int *fdp)
{
	struct archive *w;

	*fdp = openat(o->cache_fd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, CFS_STORE_FILE_MODE);
	if (*fdp < 0)
		return NULL; /* nothing cached where the filesystem cannot */
	w = archive_write_new();
	if (!w || archive_write_set_format_pax(w) != ARCHIVE_OK ||
	    archive_write_set_bytes_in_last_block(w, 1) != ARCHIVE_OK ||
	    archive_write_open_fd(w, *fdp) != ARCHIVE_OK) {
		if (w)
			archive_write_free(w);
		close(*fdp);
		return NULL;
	}
	cfs_tar_record(t, w);
	return w;
}

/* Stop recording; when @ok, the fragment becomes the layer @d's in the cache. */
static void cache_end(struct oci *o, struct cfs_tar *t, struct archive *w, int fd,
		      const struct desc *d, bool ok)
{
	bool failed = cfs_tar_record_failed(t);
	char name[CACHE_NAME_SIZE], proc[64];

	cfs_tar_record(t, NULL);
	if (archive_write_close(w) != ARCHIVE_OK)
		failed = true;
	archive_write_free(w);
	if (ok && !failed && fsync(fd) == 0) {
		cache_name(d, name);
		snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
		unlinkat(o->cache_fd, name, 0); /* one that named objects gone from the store */
		/* A cache that cannot keep this layer is only a slower pull. */
		if (linkat(AT_FDCWD, proc, o->cache_fd, name, AT_SYMLINK_FOLLOW) < 0)
			failed = true;
	}
	close(fd);
}

static void notice(struct oci *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Tell the pull's caller why a layer is pulled whole. */
static void notice(struct oci *o, const char *fmt, ...)
{
	va_list ap;
	char *msg;

	if (!o->ropts->notice)
		return;
	va_start(ap, fmt);
	if (vasprintf(&msg, fmt, ap) >= 0) {
		o->ropts->notice(o->ropts->notice_ctx, msg);
		free(msg);
	}
	va_end(ap);
}

static void chunked_progress(void *ctx, uint64_t fetched)
{
	struct oci *o = ctx;
	uint64_t base = o->layer_bytes;

	o->layer_bytes += fetched;
	report(o);
	o->layer_bytes = base;
}

/*
 * A registry's zstd:chunked layer @d, pulled in part (chunked.c): the files
 * the digest store lacks are fetched, and the fragment made of the TOC is
 * applied to @t (and recorded in the layers cache). Return 0; 1 when the
 * layer must be pulled whole as it is not zstd:chunked, 2 when it is but
 * the registry ignores Range requests (both said through the notice); or
 * -errno.
 */
static int apply_chunked(struct oci *o, struct cfs_tar *t, const struct desc *d)
{
	struct cfs_chunked c = { .reg = o->reg, .digest = d->digest, .size = d->size,
				 .digest_store = o->opts ? o->opts->digest_store : NULL,
				 .max_entries = o->opts ? o->opts->max_entries : 0,
				 .progress = chunked_progress, .progress_ctx = o,
				 .diff_id = d->diff_id[0] ? d->diff_id : NULL };
	struct archive *a = NULL, *w = NULL;
	char *what = blob_what(o, NULL, d);
	int r, fd = -1, wfd = -1;

	if (!what)
		return -ENOMEM;
	c.what = what;
	r = cfs_toc_find(d->annotations, d->size, what, &c.pos);
	if (r == 1)
		notice(o, "'%s': not zstd:chunked: pulled whole", what);
	if (r)
		goto out;
	r = cfs_chunked_fragment(&c, &fd);
	o->layer_bytes += c.fetched;
	if (r == 1) {
		notice(o, "'%s': %s: pulled whole, checked against its digest", what, c.fallback);
		r = 2;
	}
	if (r)
		goto out;
	a = cfs_tar_reader();
	if (!a) {
		r = -ENOMEM;
		goto out;
	}
	if (archive_read_open_fd(a, fd, 64 * 1024) != ARCHIVE_OK) {
		cfs_msg("'%s': %s", what, archive_error_string(a));
		r = -EIO;
		goto out;
	}
	if (o->cache_fd >= 0)
		w = cache_start(o, t, &wfd);
	r = cfs_tar_apply_fragment(t, a, what);
	if (w)
		cache_end(o, t, w, wfd, d, r == 0);
	if (r == 0 && o->ropts->stats) {
		o->ropts->stats->fetched += c.fetched;
		o->ropts->stats->reused += c.reused;
		o->ropts->stats->skipped += c.skipped;
		o->ropts->stats->partial++;
	}
out:
	if (r == 2 && o->ropts->stats)
		o->ropts->stats->fetched += c.fetched; /* the TOC */
	if (a)
		archive_read_free(a);
	if (fd >= 0)
		close(fd);
	free(what);
	return r;
}

/*
 * Apply the layer @d, whose compression is @filter (-1: gzip, zstd or
 * none), to @t: the blob must have @d's digest, and uncompressed its
 * diff_id. A docker-archive's layer, the archive's member @name, has no
 * digest to check, only the diff_id.
 */
static int apply_layer(struct oci *o, struct cfs_tar *t, const struct desc *d, int filter,
		       const char *name)
{
	struct archive *a = NULL, *w = NULL;
	struct archive_entry *e;
	struct unpacked *u = NULL;
	struct blob b;
	int r, fin, wfd = -1;
	bool diff_id = true;

	o->last_cached = false;
	if (o->cache_fd >= 0) {
		r = apply_cached(o, t, d);
		o->last_cached = r == 0;
		if (r <= 0) {
			if (r == 0 && o->ropts && o->ropts->stats) {
				o->ropts->stats->skipped += d->size;
				o->ropts->stats->cached++;
			}
			return r;
		}
	}
	if (o->reg && !name && !o->ropts->full_pull) {
		/* zstd:chunked is a zstd layer; annotations on another are not taken */
		r = filter == ARCHIVE_FILTER_ZSTD ? apply_chunked(o, t, d) : 1;
		if (r == 1 && filter != ARCHIVE_FILTER_ZSTD) {
			char *what = blob_what(o, NULL, d);

			notice(o, "'%s': not zstd:chunked: pulled whole", what ? what : d->digest);
			free(what);
		}
		if (r <= 0)
			return r;
		/*
		 * A zstd:chunked layer, pulled whole as the registry ignores
		 * Range: trusted as a partial pull trusts it, through the
		 * manifest, here by the blob's digest. Its diff_id is not
		 * checked: skopeo 1.9 keeps the config of the layer it
		 * recompressed, whose tar stream was not this one.
		 */
		diff_id = r != 2;
	}
	r = blob_open(o, name, name ? NULL : d, false, &b);
	if (r)
		return r;
	b.layer = true;
	if (o->cache_fd >= 0)
		w = cache_start(o, t, &wfd);
	u = calloc(1, sizeof(*u));
	if (u) {
		u->dec = archive_read_new();
		u->md = EVP_MD_CTX_new();
	}
	a = cfs_tar_reader();
	if (!u || !u->dec || !u->md || !a || !EVP_DigestInit_ex(u->md, EVP_sha256(), NULL)) {
		r = -ENOMEM;
		goto out;
	}
	/* Both, so that a layer compressed otherwise than its type says is named so. */
	archive_read_support_filter_gzip(u->dec);
	archive_read_support_filter_zstd(u->dec);
	archive_read_support_format_raw(u->dec);
	if (archive_read_open(u->dec, &b, NULL, layer_read, NULL) != ARCHIVE_OK ||
	    archive_read_next_header(u->dec, &e) != ARCHIVE_OK) {
		if (!b.failed)
			cfs_msg("'%s': %s", b.what, archive_error_string(u->dec));
		r = -EINVAL;
	} else if (filter >= 0 && archive_filter_code(u->dec, 0) != filter) {
		cfs_msg("'%s': compressed as '%s', not as its media type '%s' says", b.what,
			archive_filter_name(u->dec, 0), d->media_type);
		r = -EINVAL;
	} else if (archive_read_open(a, u, NULL, unpacked_read, NULL) != ARCHIVE_OK) {
		if (!b.failed && !u->failed)
			cfs_msg("'%s': %s", b.what, archive_error_string(a));
		r = -EINVAL;
	} else {
		r = cfs_tar_apply(t, a, b.what, true);
		if (r == 0)
			r = unpacked_drain(u, b.what);
	}
	/* The digest is the better reason when the layer did not read either. */
	fin = b.failed ? -EIO : blob_finish(&b);
	if (r == 0)
		r = fin;
	if (r == 0 && diff_id)
		r = check_diff_id(u, d, b.what);
	if (w)
		cache_end(o, t, w, wfd, d, r == 0);
	if (o->reg && o->ropts->stats) {
		o->ropts->stats->fetched += b.done;
		o->ropts->stats->full++;
	}
out:
	if (a)
		archive_read_free(a);
	if (u) {
		if (u->dec)
			archive_read_free(u->dec);
		EVP_MD_CTX_free(u->md);
		free(u);
	}
	blob_close(&b);
	return r;
}

#define SEAL_ANNOTATION "composefs.merged.erofs.v1.fsverity-sha256-12"

/*
 * The manifest's seal, for the caller to check against the tree; refused
 * when malformed, or missing and required: before anything is fetched.
 */
static int take_seal(struct oci *o, const char *what, const json_t *manifest)
{
	const json_t *a = json_object_get(manifest, "annotations");
	const json_t *v = json_object_get(a, SEAL_ANNOTATION);
	const char *seal = json_string_value(v);

	if (!o->ropts)
		return 0;
	if (o->ropts->seal)
		o->ropts->seal[0] = '\0';
	if (!v) {
		if (o->ropts->require_seal) {
			cfs_msg("'%s': the image has no seal (the annotation %s), and one is required (--require-seal)",
				what, SEAL_ANNOTATION);
			return -EPERM;
		}
		return 0;
	}
	if (!cfs_is_hex_digest(seal)) {
		cfs_msg("'%s': the seal (the annotation %s) is not 64 lowercase hex digits", what,
			SEAL_ANNOTATION);
		return -EINVAL;
	}
	if (o->ropts->seal)
		memcpy(o->ropts->seal, seal, 65);
	o->sealed = true;
	return 0;
}

/* Apply the layers of the image manifest @manifest (the document @what). */
static int apply_layers(struct oci *o, const char *what, const json_t *manifest,
			const struct cfs_build_options *opts, struct cfs_tar **tp)
{
	const json_t *layers = json_object_get(manifest, "layers");
	struct cfs_node *root;
	struct desc *d = NULL;
	int *filters = NULL, r = 0;

	if (!json_is_array(layers)) {
		cfs_msg("'%s': no \"layers\" array", what);
		return -EINVAL;
	}
	if (json_array_size(layers) > MAX_LAYERS) {
		cfs_msg("'%s': %zu layers, more than the %u an image may have", what,
			json_array_size(layers), MAX_LAYERS);
		return -EINVAL;
	}
	d = calloc(json_array_size(layers) + 1, sizeof(*d));
	filters = calloc(json_array_size(layers) + 1, sizeof(*filters));
	if (!d || !filters) {
		r = -ENOMEM;
		goto out;
	}
	r = take_seal(o, what, manifest);
	if (r)
		goto out;
	/* The seal measures a composefs 1.0 image, which holds small files: keep them. */
	if (o->sealed)
		cfs_tar_keep_small(*tp);
	r = check_config(o, what, manifest, d, json_array_size(layers));
	if (r)
		goto out;
	/* Every layer's type is known before the first is read. */
	for (size_t i = 0; i < json_array_size(layers); i++) {
		size_t k = 0;

		r = get_desc(what, json_array_get(layers, i), &d[i]);
		if (r)
			goto out;
		while (k < sizeof(layer_types) / sizeof(layer_types[0]) &&
		       strcmp(layer_types[k].media_type, d[i].media_type) != 0)
			k++;
		if (k == sizeof(layer_types) / sizeof(layer_types[0])) {
			cfs_msg("'%s': layer %zu (%s) has media type '%s', which is not supported",
				what, i + 1, d[i].digest, d[i].media_type);
			r = -EOPNOTSUPP;
			goto out;
		}
		filters[i] = layer_types[k].filter;
		o->layer_total += d[i].size;
	}
	o->layers = (unsigned int)json_array_size(layers);
	report(o);
	for (size_t i = 0; i < json_array_size(layers) && r == 0; i++) {
		r = apply_layer(o, *tp, &d[i], filters[i], NULL);
		o->layers_done++;
		report(o);
		if (r == 0 && o->ropts && o->ropts->layer)
			o->ropts->layer(o->ropts->progress_ctx, o->layers_done, o->layers, d[i].digest,
					d[i].size, o->last_cached);
	}
	/*
	 * A fragment named an object the store no longer has (gc removed
	 * it), and the image still needs it: build again, fetching the
	 * layers whose fragments name an object the store lacks, and cache
	 * their fragments anew.
	 */
	if (r == 0 && o->layers_cached && cfs_tar_objects_missing(*tp)) {
		cfs_tar_end(*tp, -ESTALE, &root);
		o->cache_check = true;
		o->layers_done = 0;
		o->layer_bytes = 0;
		r = cfs_tar_new(opts, tp);
		if (r == 0 && o->reg)
			cfs_tar_set_image(*tp, o->path);
		if (r == 0 && o->sealed)
			cfs_tar_keep_small(*tp);
		for (size_t i = 0; i < json_array_size(layers) && r == 0; i++) {
			r = apply_layer(o, *tp, &d[i], filters[i], NULL);
			o->layers_done++;
			report(o);
		}
	}
out:
	free(d);
	free(filters);
	return r;
}

int cfs_oci_platform_parse(const char *s, struct cfs_oci_platform *p)
{
	char *parts[3] = { p->os, p->arch, p->variant };
	size_t n = 0;

	memset(p, 0, sizeof(*p));
	for (const char *c = s;; n++) {
		size_t len = strcspn(c, "/");

		if (n == 3 || len == 0 || len >= sizeof(p->os))
			return -EINVAL;
		memcpy(parts[n], c, len);
		c += len;
		if (!*c++)
			break;
	}
	return n >= 1 ? 0 : -EINVAL;
}

/* The platform of this program, as image indexes name it. */
static int host_platform(struct cfs_oci_platform *p)
{
	const char *arch =
#if defined(__x86_64__)
		"amd64";
#elif defined(__aarch64__)
		"arm64";
#elif defined(__i386__)
		"386";
#elif defined(__arm__)
		"arm";
#elif defined(__powerpc64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
		"ppc64le";
#elif defined(__s390x__)
		"s390x";
#elif defined(__riscv) && __riscv_xlen == 64
		"riscv64";
#else
		NULL;
#endif

	memset(p, 0, sizeof(*p));
	if (!arch) {
		cfs_msg("the platform of this machine has no OCI name: choose one with --platform");
		return -EOPNOTSUPP;
	}
	strcpy(p->os, "linux");
	strcpy(p->arch, arch);
	return 0;
}

/* Choose for @platform, or when NULL for this host (into @host). */
static int set_platform(struct oci *o, const struct cfs_oci_platform *platform,
			struct cfs_oci_platform *host)
{
	int r;

	if (!platform) {
		r = host_platform(host);
		if (r)
			return r;
		platform = host;
	}
	o->platform = platform;
	snprintf(o->platform_str, sizeof(o->platform_str), "%s/%s%s%s", platform->os,
		 platform->arch, platform->variant[0] ? "/" : "", platform->variant);
	return 0;
}

/* The tree of the image manifest found by @tag and the platform. */
static int build_tree(struct oci *o, const char *tag, const struct cfs_build_options *opts,
		      struct cfs_node **rootp)
{
	json_t *manifest = NULL;
	struct cfs_tar *t;
	char *what = NULL;
	int r;

	o->opts = opts;
	r = find_manifest(o, tag, &what, &manifest);
	if (r == 0)
		r = cfs_tar_new(opts, &t);
	if (r == 0) {
		if (o->reg)
			cfs_tar_set_image(t, o->path);
		r = apply_layers(o, what, manifest, opts, &t);
		r = cfs_tar_end(t, r, rootp);
	}
	json_decref(manifest);
	free(what);
	return r;
}

int cfs_oci_layout_tree(const char *layout, const json_t *manifest, const char *what,
			const struct cfs_build_options *opts, struct cfs_node **rootp)
{
	struct oci o = { .fd = -1, .cache_fd = -1, .path = layout, .opts = opts };
	struct cfs_tar *t;
	int r;

	*rootp = NULL;
	o.fd = open(layout, O_RDONLY | O_CLOEXEC | O_DIRECTORY);
	if (o.fd < 0) {
		r = -errno;
		cfs_msg("cannot open image layout '%s': %s", layout, strerror(errno));
		return r;
	}
	r = cfs_tar_new(opts, &t);
	if (r == 0) {
		r = apply_layers(&o, what, manifest, opts, &t);
		r = cfs_tar_end(t, r, rootp);
	}
	close(o.fd);
	return r;
}

/* The string the JSON value @v is, when it is one without a NUL inside; else NULL. */

/* @ref without the "docker.io/" and "docker.io/library/" that docker leaves out. */
static const char *docker_short(const char *ref)
{
	if (strncmp(ref, "docker.io/", 10) == 0) {
		ref += 10;
		if (strncmp(ref, "library/", 8) == 0)
			ref += 8;
	}
	return ref;
}

/*
 * Whether the docker-archive's RepoTags entry @rt names @tag, either
 * spelt with the registry and "library/" (as skopeo writes) or without
 * (as docker writes): "debian:12" is "docker.io/library/debian:12".
 */
static bool repo_tag_is(const char *rt, const char *tag)
{
	return strcmp(docker_short(rt), docker_short(tag)) == 0;
}

/*
 * The image of a docker-archive (what docker save and podman save write):
 * manifest.json lists the images, each with its Config, RepoTags and
 * Layers, names of members of the archive; the image tagged @tag (one of
 * its RepoTags, e.g. "debian:12"), or without @tag the only one. There
 * are no descriptors, so no sizes or digests to check a blob against: each
 * layer (tar, gzip or zstd), uncompressed, must hash to its diff_id in the
 * config.
 */
static int build_docker(struct oci *o, const char *tag, const struct cfs_build_options *opts,
			struct cfs_node **rootp)
{
	json_t *list = NULL, *config = NULL;
	const json_t *img = NULL, *tags, *layers = NULL;
	char *what, *cwhat = NULL;
	struct cfs_tar *t = NULL;
	struct desc *d = NULL;
	const char *cname;
	int r;

	what = layout_path(o, "manifest.json");
	if (!what)
		return -ENOMEM;
	r = read_json_any(o, "manifest.json", NULL, false, &list, NULL);
	if (r)
		goto out;
	r = -EINVAL;
	if (!json_is_array(list) || !json_array_size(list)) {
		cfs_msg("'%s': not a list of images", what);
		goto out;
	}
	if (!tag && json_array_size(list) == 1)
		img = json_array_get(list, 0);
	for (size_t i = 0; tag && i < json_array_size(list) && !img; i++) {
		tags = json_object_get(json_array_get(list, i), "RepoTags");
		for (size_t k = 0; k < json_array_size(tags); k++) {
			const char *t = cfs_json_cstr(json_array_get(tags, k));

			if (t && repo_tag_is(t, tag))
				img = json_array_get(list, i);
		}
	}
	if (!img) {
		if (tag)
			cfs_msg("'%s': no image is tagged '%s'", what, tag);
		else
			cfs_msg("'%s': %zu images: name one by a tag", what, json_array_size(list));
		r = -ENOENT;
		goto out;
	}
	cname = cfs_json_cstr(json_object_get(img, "Config"));
	layers = json_object_get(img, "Layers");
	if (!cname || !json_is_array(layers)) {
		cfs_msg("'%s': an image without a Config or Layers", what);
		goto out;
	}
	if (json_array_size(layers) > MAX_LAYERS) {
		cfs_msg("'%s': %zu layers, more than the %u an image may have", what,
			json_array_size(layers), MAX_LAYERS);
		goto out;
	}
	for (size_t i = 0; i < json_array_size(layers); i++) {
		if (!cfs_json_cstr(json_array_get(layers, i))) {
			cfs_msg("'%s': layer %zu is not the name of a member", what, i + 1);
			goto out;
		}
	}
	cname = member_name(cname);
	cwhat = layout_path(o, cname);
	d = calloc(json_array_size(layers) + 1, sizeof(*d));
	if (!cwhat || !d) {
		r = -ENOMEM;
		goto out;
	}
	r = read_json(o, cname, NULL, false, &config, NULL);
	if (r == 0)
		r = get_diff_ids(cwhat, config, what, d, json_array_size(layers));
	if (r == 0)
		r = cfs_tar_new(opts, &t);
	if (r)
		goto out;
	for (size_t i = 0; i < json_array_size(layers) && r == 0; i++)
		r = apply_layer(o, t, &d[i], -1, member_name(cfs_json_cstr(json_array_get(layers, i))));
	r = cfs_tar_end(t, r, rootp);
out:
	json_decref(config);
	json_decref(list);
	free(cwhat);
	free(what);
	free(d);
	return r;
}

int cfs_tree_from_oci(const char *source, const struct cfs_oci_platform *platform,
		      const struct cfs_build_options *opts, struct cfs_node **rootp)
{
	struct oci o = { .fd = -1, .cache_fd = -1 };
	struct cfs_oci_platform host;
	json_t *layout = NULL;
	const char *rest, *colon, *tag = NULL, *version;
	char *path = NULL, *what = NULL;
	int r;

	*rootp = NULL;
	if (strncmp(source, "oci:", 4) == 0) {
		rest = source + 4;
	} else if (strncmp(source, "oci-archive:", 12) == 0) {
		rest = source + 12;
		o.archive = true;
	} else if (strncmp(source, "docker-archive:", 15) == 0) {
		rest = source + 15;
		o.archive = o.docker = true;
	} else {
		cfs_msg("'%s': not an image source: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:TAG]",
			source);
		return -EINVAL;
	}
	colon = strchr(rest, ':');
	path = strndup(rest, colon ? (size_t)(colon - rest) : strlen(rest));
	if (!path)
		return -ENOMEM;
	if (colon)
		tag = colon + 1;
	if (!path[0] || (tag && !tag[0])) {
		cfs_msg("'%s': an empty %s", source, path[0] ? "tag" : "path");
		r = -EINVAL;
		goto out;
	}
	r = set_platform(&o, platform, &host);
	if (r)
		goto out;
	o.path = path;
	o.fd = open(path, O_RDONLY | O_CLOEXEC | (o.archive ? 0 : O_DIRECTORY));
	if (o.fd < 0) {
		r = -errno;
		cfs_msg("cannot open %s '%s': %s", o.archive ? "archive" : "image layout", path,
			strerror(errno));
		goto out;
	}
	if (o.docker) {
		r = build_docker(&o, tag, opts, rootp);
		goto out;
	}
	r = read_json(&o, "oci-layout", NULL, false, &layout, NULL);
	if (r)
		goto out;
	version = cfs_json_str(layout, "imageLayoutVersion");
	if (!version || strncmp(version, "1.", 2) != 0) {
		what = layout_path(&o, "oci-layout");
		cfs_msg("'%s': imageLayoutVersion is not 1.x", what ? what : path);
		r = -EINVAL;
		goto out;
	}
	r = build_tree(&o, tag, opts, rootp);
out:
	json_decref(layout);
	free(what);
	if (o.fd >= 0)
		close(o.fd);
	free(path);
	return r;
}

int cfs_tree_from_registry(const char *reference, const struct cfs_registry_options *ropts,
			   const struct cfs_oci_platform *platform,
			   const struct cfs_build_options *opts, struct cfs_node **rootp)
{
	struct oci o = { .fd = -1, .cache_fd = -1, .path = reference, .ropts = ropts };
	struct cfs_oci_platform host;
	struct cfs_registry_ref ref;
	char *repo_name = NULL;
	int r;

	*rootp = NULL;
	r = cfs_registry_ref_parse(reference, &ref);
	if (r) {
		if (r == -EINVAL)
			cfs_msg("'%s': not a reference: REGISTRY[:PORT]/REPO[:TAG|@sha256:DIGEST]",
				reference);
		return r;
	}
	r = set_platform(&o, platform, &host);
	if (r)
		goto out;
	if (asprintf(&repo_name, "%s/%s", ref.host, ref.repo) < 0) {
		repo_name = NULL;
		r = -ENOMEM;
		goto out;
	}
	o.repo_name = repo_name;
	o.ref = &ref;
	o.ref_name = ref.digest ? ref.digest : ref.tag;
	if (ropts->layers_cache) {
		/* a layer holds every file whole: the cache is as private as a store */
		r = cfs_private_mkdirat(AT_FDCWD, ropts->layers_cache);
		if (r < 0) {
			cfs_msg("layers cache '%s': %s", ropts->layers_cache, strerror(-r));
			goto out;
		}
		o.cache_fd = open(ropts->layers_cache, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (o.cache_fd < 0) {
			r = -errno;
			cfs_msg("layers cache '%s': %s", ropts->layers_cache, strerror(errno));
			goto out;
		}
	}
	r = cfs_registry_open(&ref, ropts, &o.reg);
	if (r)
		goto out;
	r = build_tree(&o, NULL, opts, rootp);
	cfs_registry_close(o.reg);
out:
	if (o.cache_fd >= 0)
		close(o.cache_fd);
	free(repo_name);
	cfs_registry_ref_free(&ref);
	return r;
}

int cfs_oci_platform_host(struct cfs_oci_platform *p)
{
	return host_platform(p);
}
