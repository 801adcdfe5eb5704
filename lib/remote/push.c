// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * cfsctl push: an image published to a registry. Three sources:
 * - a directory, scanned as build scans it (scan.c);
 * - a composefs image with the objects its backing paths name (a
 *   repository's), read back into a tree through its dump;
 * - an OCI layout, whose blobs go as they are; or, asked to, with each
 *   layer recompressed (its tar stream kept byte for byte, so the config's
 *   diff_ids and the config stay). Its layers merged as a pull merges them
 *   (oci.c) give the seal, which the manifest gets (rewritten as canonical
 *   JSON), unless it has it already (then it goes as it is; another seal
 *   is refused). The push blob cache keeps the seal, keyed by the
 *   config's diff_ids and cfs's version, so that the same layers are not
 *   merged again.
 * The first two are written as one layer (layer-write.c) to an unnamed
 * temporary file, and described by an OCI image config and manifest, both
 * canonical JSON (keys sorted, no spaces, no creation time), so that the
 * same tree gives the same digests. Blobs go first, each only when a HEAD
 * says the registry lacks it (and mounted from --mount-from when it can
 * be); the manifest last, so that a push that fails names nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "blob-cache.h"
#include "json.h"
#include "layer-write.h"
#include "layout.h"
#include "sign.h"
#include "base/internal.h"
#include "base/tree.h"
#include "cfs/build.h"
#include "cfs/image.h"
#include "cfs/push.h"
#include "cfs/util.h"

#define OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define OCI_INDEX "application/vnd.oci.image.index.v1+json"
#define MAX_DOC (4u << 20) /* an index.json or a manifest of a layout */
#define MAX_LAYERS 1024

static void hexdigest(const uint8_t md[32], char out[7 + 64 + 1])
{
	memcpy(out, "sha256:", 7);
	cfs_digest_to_hex(md, out + 7);
}

void cfs_push_result_free(struct cfs_push_result *res)
{
	free(res->layers);
	res->layers = NULL;
	free(res->signature);
	res->signature = NULL;
	free(res->sigstore_signature);
	res->sigstore_signature = NULL;
	res->n_layers = 0;
}

/* Put the blob @b (the @b->size bytes of @fd) unless the registry has it. */
static int send_blob(struct cfs_registry *r, struct cfs_push_blob *b, int fd, const char *what,
		     const struct cfs_push_options *opts, struct cfs_push_result *res)
{
	int ret = cfs_registry_has_blob(r, b->digest, what);

	if (ret < 0)
		return ret;
	if (ret == 1) {
		res->skipped += b->size;
	} else if (fd < 0) {
		/* taken from the blob cache, not made: it was there a moment ago */
		cfs_msg("'%s': %s: the registry no longer has the blob %s that the push blob cache named",
			what, b->digest, b->digest);
		return -ENOENT;
	} else {
		ret = cfs_registry_put_blob(r, b->digest, fd, b->size, opts->mount_from, what);
		if (ret < 0)
			return ret;
		b->uploaded = true;
		b->mounted = ret == 1;
		res->mounted += ret == 1;
		res->uploaded += b->size;
	}
	if (opts->blob)
		opts->blob(opts->ctx, what, b, true);
	return 0;
}

/*
 * The blobs (@fds[i] for @res->layers[i], @cfd for the config), then the
 * manifest @mdata of type @mtype: the push itself, through @r (NULL: one
 * opened here), which is closed.
 */
static int send_image(const struct cfs_registry_ref *ref, const struct cfs_registry_options *ropts,
		      const struct cfs_push_options *opts, const int *fds, int cfd,
		      const char *mdata, size_t mlen, const char *mtype,
		      struct cfs_push_result *res, struct cfs_registry *r)
{
	char what[64], *payload = NULL, *identity = NULL, *name = NULL, *url = NULL;
	struct cfs_cosign_sig *cosign = NULL;
	void *sig = NULL;
	size_t sig_len = 0;
	int ret = 0;

	/* signed, and where it goes known, before anything is sent */
	if ((opts->sign_by || opts->sign_by_sigstore) &&
	    (asprintf(&identity, "%s/%s:%s", ref->host, ref->repo, ref->tag) < 0 ||
	     asprintf(&name, "%s/%s", ref->host, ref->repo) < 0)) {
		identity = name = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (opts->sign_by_sigstore) {
		ret = cfs_sign_cosign(opts->sign_by_sigstore, identity, res->manifest_digest,
				      &cosign);
		if (ret)
			goto out;
	}
	if (opts->sign_by) {
		ret = cfs_sign_payload(identity, res->manifest_digest, &payload);
		if (ret == 0)
			ret = cfs_sign_gpg(payload, opts->sign_by, opts->gpg_homedir, &sig, &sig_len);
		if (ret == 0)
			ret = cfs_sign_staging(opts->registries_d, name, &url);
		if (ret)
			goto out;
	}
	if (!r)
		ret = cfs_registry_open(ref, ropts, &r);
	for (size_t i = 0; ret == 0 && i < res->n_layers; i++) {
		if (res->n_layers == 1)
			snprintf(what, sizeof(what), "layer");
		else
			snprintf(what, sizeof(what), "layer %zu", i + 1);
		ret = send_blob(r, &res->layers[i], fds[i], what, opts, res);
	}
	if (ret == 0)
		ret = send_blob(r, &res->config, cfd, "config", opts, res);
	if (ret == 0)
		ret = cfs_registry_put_manifest(r, ref->tag, mtype, mdata, mlen, "manifest");
	if (ret == 0 && sig)
		ret = cfs_sign_store(url, ref->repo, res->manifest_digest, sig, sig_len,
				     &res->signature);
	if (ret == 0 && cosign) {
		ret = cfs_sign_cosign_attach(r, name, cosign, &res->sigstore_signature);
		res->sigstore_added = ret == 0;
		ret = ret < 0 ? ret : 0;
	}
out:
	cfs_sign_cosign_free(cosign);
	cfs_registry_close(r);
	free(payload);
	free(identity);
	free(name);
	free(url);
	free(sig);
	return ret;
}

/*
 * The seal of @root: the fs-verity digest of the composefs 1.0 (EROFS)
 * image of the tree with the defaults, the image cfsctl pull
 * --format=erofs makes of the pushed image. Into @hex, 64 hex digits.
 */
static int seal_of(struct cfs_node *root, const char *tmpdir, const char *what, char *hex)
{
	struct cfs_build_options bo = { .format = CFS_FORMAT_EROFS };
	uint8_t md[32];
	int ret;

	ret = cfs_tree_finish(root, &bo);
	if (ret == 0)
		ret = cfs_tree_seal(root, &bo, tmpdir, md);
	if (ret) {
		cfs_msg("'%s': no seal: %s", what, strerror(-ret));
		return ret;
	}
	cfs_digest_to_hex(md, hex);
	return 0;
}

/* A tree made into one layer, a config and a manifest, and pushed. */
static int push_tree(struct cfs_node *root, const char *objects, const char *what,
		     const struct cfs_registry_ref *ref, const struct cfs_registry_options *ropts,
		     const struct cfs_push_options *opts, struct cfs_push_result *res)
{
	struct cfs_oci_platform host;
	const struct cfs_oci_platform *pl = opts->platform;
	struct cfs_layer_out lo = { 0 };
	json_t *config = NULL, *manifest = NULL, *layer = NULL;
	char *cdata = NULL, *mdata = NULL;
	struct cfs_push_blob *lb;
	uint8_t md[32];
	int fd = -1, cfd = -1, ret;
	static const char *const types[] = {
		[CFS_PUSH_ZSTD_CHUNKED] = "application/vnd.oci.image.layer.v1.tar+zstd",
		[CFS_PUSH_ZSTD] = "application/vnd.oci.image.layer.v1.tar+zstd",
		[CFS_PUSH_GZIP] = "application/vnd.oci.image.layer.v1.tar+gzip",
	};

	if (!pl) {
		ret = cfs_oci_platform_host(&host);
		if (ret)
			return ret;
		pl = &host;
	}
	res->layers = lb = calloc(1, sizeof(*res->layers));
	if (!lb)
		return -ENOMEM;
	res->n_layers = 1;
	ret = cfs_tree_sort(root);
	if (ret)
		goto out;
	fd = cfs_tmpfile(-1, opts->tmpdir);
	if (fd < 0) {
		ret = fd;
		goto out;
	}
	ret = cfs_layer_write(root, objects, opts->compression, fd, what, &lo);
	if (ret)
		goto out;
	hexdigest(lo.digest, lb->digest);
	hexdigest(lo.diff_id, lb->diff_id);
	lb->size = lo.size;
	if (opts->blob)
		opts->blob(opts->ctx, "layer", lb, false);
	ret = seal_of(root, opts->tmpdir, what, res->seal);
	if (ret)
		goto out;

	ret = -ENOMEM;
	config = json_pack("{s:s, s:s, s:{}, s:{s:s, s:[s]}}", "architecture", pl->arch, "os",
			   pl->os, "config", "rootfs", "type", "layers", "diff_ids", lb->diff_id);
	if (!config || (pl->variant[0] &&
			json_object_set_new(config, "variant", json_string(pl->variant))))
		goto out;
	cdata = cfs_json_dump(config, JSON_COMPACT | JSON_SORT_KEYS);
	if (!cdata)
		goto out;
	EVP_Digest(cdata, strlen(cdata), md, NULL, EVP_sha256(), NULL);
	hexdigest(md, res->config.digest);
	res->config.size = strlen(cdata);

	layer = json_pack("{s:s, s:s, s:I}", "mediaType", types[opts->compression], "digest",
			  lb->digest, "size", (json_int_t)lb->size);
	if (!layer || (lo.annotations && json_object_set(layer, "annotations", lo.annotations)))
		goto out;
	manifest = json_pack("{s:i, s:s, s:{s:s, s:s, s:I}, s:[O], s:{s:s}}", "schemaVersion", 2,
			     "mediaType", OCI_MANIFEST, "config", "mediaType", OCI_CONFIG, "digest",
			     res->config.digest, "size", (json_int_t)res->config.size, "layers",
			     layer, "annotations", CFS_SEAL_ANNOTATION, res->seal);
	if (!manifest)
		goto out;
	mdata = cfs_json_dump(manifest, JSON_COMPACT | JSON_SORT_KEYS);
	if (!mdata)
		goto out;
	EVP_Digest(mdata, strlen(mdata), md, NULL, EVP_sha256(), NULL);
	hexdigest(md, res->manifest_digest);

	/* the config from a file too: one way of uploading */
	cfd = cfs_tmpfile(-1, opts->tmpdir);
	if (cfd < 0) {
		ret = cfd;
		goto out;
	}
	if (write(cfd, cdata, res->config.size) != (ssize_t)res->config.size) {
		cfs_msg("writing the image config to a temporary file: %s", strerror(errno));
		ret = -EIO;
		goto out;
	}
	ret = send_image(ref, ropts, opts, &fd, cfd, mdata, strlen(mdata), OCI_MANIFEST, res, NULL);
out:
	if (ret == -ENOMEM)
		cfs_msg("pushing '%s': %s", what, strerror(ENOMEM));
	json_decref(lo.annotations);
	json_decref(layer);
	json_decref(config);
	json_decref(manifest);
	free(cdata);
	free(mdata);
	if (fd >= 0)
		close(fd);
	if (cfd >= 0)
		close(cfd);
	return ret;
}

static int check_ref(const struct cfs_registry_ref *ref, struct cfs_push_result *res)
{
	memset(res, 0, sizeof(*res));
	if (!ref->tag) {
		cfs_msg("a push names a tag, not a digest");
		return -EINVAL;
	}
	return 0;
}

int cfs_push_dir(const char *dir, const struct cfs_registry_ref *ref,
		 const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		 struct cfs_push_result *res)
{
	struct cfs_build_options bo = { 0 };
	struct cfs_node *root = NULL;
	int ret = check_ref(ref, res);

	if (ret)
		return ret;
	ret = cfs_tree_from_dir(dir, &bo, &root);
	if (ret)
		return ret;
	ret = push_tree(root, NULL, dir, ref, ropts, opts, res);
	cfs_tree_free(root);
	return ret;
}

/*
 * Make a tree read back from an image's dump look as the scan of its
 * directory does, so that its seal is the directory's: the small files'
 * content (a composefs 1.0 image holds it inline) read from their objects,
 * and what the dump said as written forgotten (the EROFS writer would keep
 * it). Iterative over an explicit stack: a tree may be deep.
 */
static int as_scanned(struct cfs_node *root, const char *objects)
{
	struct cfs_node **stack = NULL;
	size_t n = 0, cap = 0;
	int ret = 0;

	if (!(stack = cfs_grow(stack, &cap, n, sizeof(*stack), 64)))
		return -ENOMEM;
	stack[n++] = root;
	while (n && !ret) {
		struct cfs_node *x = stack[--n];

		x->from_dump = x->payload_derived = x->digest_derived = false;
		if (!x->link_target && S_ISREG(x->mode) && x->size > 0 &&
		    x->size <= CFS_FORMAT_INLINE_MAX && !x->content &&
		    (x->payload || x->payload_object)) {
			char *path = NULL, obj[CFS_OBJECT_PATH_SIZE];
			int fd;

			if (asprintf(&path, "%s/%s", objects, cfs_node_payload(x, obj)) < 0)
				return free(stack), -ENOMEM;
			x->content = malloc(x->size);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			if (!x->content || fd < 0 ||
			    read(fd, x->content, x->size) != (ssize_t)x->size) {
				ret = !x->content ? -ENOMEM : fd < 0 ? -errno : -EIO;
				cfs_msg("cannot read the object '%s': %s", path, strerror(-ret));
			}
			if (fd >= 0)
				close(fd);
			free(path);
			x->check_digest = x->has_digest;
			x->has_digest = false;
			cfs_node_clear_payload(x);
		}
		for (size_t i = 0; !ret && !x->link_target && S_ISDIR(x->mode) && i < x->n_children;
		     i++) {
			struct cfs_node **g = cfs_grow(stack, &cap, n, sizeof(*stack), 64);

			if (!g) {
				ret = -ENOMEM;
				break;
			}
			stack = g;
			stack[n++] = x->children[i];
		}
	}
	free(stack);
	return ret;
}

int cfs_push_image(const char *image, const char *objects, const struct cfs_registry_ref *ref,
		   const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		   struct cfs_push_result *res)
{
	struct cfs_build_options bo = { .digest_store = objects };
	struct cfs_image *img = NULL;
	struct cfs_node *root = NULL;
	char *dump = NULL;
	size_t len = 0;
	FILE *f;
	int ret = check_ref(ref, res);

	if (ret)
		return ret;
	ret = cfs_image_open(image, &img);
	if (ret) {
		cfs_msg("cannot open the image '%s': %s", image, strerror(-ret));
		return ret;
	}
	f = open_memstream(&dump, &len);
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	ret = cfs_image_write_dump(img, f);
	if (fclose(f) && !ret)
		ret = -ENOMEM;
	if (ret) {
		cfs_msg("reading the image '%s': %s", image, strerror(-ret));
		goto out;
	}
	f = fmemopen(dump, len, "r");
	if (!f) {
		ret = -ENOMEM;
		goto out;
	}
	ret = cfs_tree_from_dump(f, image, &bo, &root);
	fclose(f);
	if (ret == 0)
		ret = as_scanned(root, objects);
	if (ret)
		goto out;
	ret = push_tree(root, objects, image, ref, ropts, opts, res);
out:
	cfs_tree_free(root);
	free(dump);
	cfs_image_close(img);
	return ret;
}

/* ---- an OCI layout, as it is ---- */

/* The file of @layout's blob @digest, opened, checked to be @size bytes of that digest. */
static int open_blob(const char *layout, const char *digest, uint64_t size, const char *what)
{
	unsigned char buf[64 * 1024], md[32];
	char *path = NULL, got[7 + 65];
	EVP_MD_CTX *ctx = NULL;
	uint64_t total = 0;
	struct stat st;
	int fd = -1, ret;

	if (!cfs_is_sha256_digest(digest)) {
		cfs_msg("'%s': %s: the digest '%s' is not sha256:<64 hex>", layout, what, digest);
		return -EINVAL;
	}
	if (asprintf(&path, "%s/blobs/sha256/%s", layout, digest + 7) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0) {
		ret = -errno;
		cfs_msg("'%s': %s: %s", path, what, strerror(errno));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size != size) {
		cfs_msg("'%s': %s: %llu bytes, where its descriptor says %llu", path, what,
			(unsigned long long)st.st_size, (unsigned long long)size);
		ret = -EINVAL;
		goto out;
	}
	ctx = EVP_MD_CTX_new();
	if (!ctx || !EVP_DigestInit_ex(ctx, EVP_sha256(), NULL)) {
		ret = -ENOMEM;
		goto out;
	}
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			cfs_msg("'%s': %s: %s", path, what, strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		EVP_DigestUpdate(ctx, buf, (size_t)n);
		total += (uint64_t)n;
	}
	EVP_DigestFinal_ex(ctx, md, NULL);
	hexdigest(md, got);
	if (total != size || strcmp(got, digest) != 0) {
		cfs_msg("'%s': %s: its content has the digest %s, not %s", path, what, got, digest);
		ret = -EINVAL;
		goto out;
	}
	ret = fd;
	fd = -1;
out:
	EVP_MD_CTX_free(ctx);
	if (fd >= 0)
		close(fd);
	free(path);
	return ret;
}

/* @fd's bytes (at most MAX_DOC), parsed as JSON into *@doc, the text into *@text. */
static int read_doc(int fd, const char *what, char **text, size_t *len, json_t **doc)
{
	char *buf = malloc(MAX_DOC + 1);
	size_t have = 0;
	int ret;

	*text = NULL;
	*doc = NULL;
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n = read(fd, buf + have, MAX_DOC + 1 - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			ret = -errno;
			cfs_msg("'%s': %s", what, strerror(errno));
			free(buf);
			return ret;
		}
		if (n == 0)
			break;
		have += (size_t)n;
		if (have > MAX_DOC) {
			cfs_msg("'%s': larger than %u bytes", what, MAX_DOC);
			free(buf);
			return -EFBIG;
		}
	}
	buf[have] = '\0';
	ret = cfs_json_parse(buf, have, what, doc);
	if (ret) {
		free(buf);
		return ret;
	}
	*text = buf;
	*len = have;
	return 0;
}

/* The descriptor of @tag (or the only one) in @layout's index.json. */
static int find_manifest(const char *layout, const char *tag, json_t *index, const json_t **out)
{
	const json_t *list = json_object_get(index, "manifests"), *found = NULL;

	*out = NULL;
	if (!json_is_array(list)) {
		cfs_msg("'%s/index.json': no list of manifests", layout);
		return -EINVAL;
	}
	for (size_t i = 0; i < json_array_size(list); i++) {
		const json_t *d = json_array_get(list, i);
		const char *name = cfs_json_str(json_object_get(d, "annotations"),
						"org.opencontainers.image.ref.name");

		if (tag ? name && strcmp(name, tag) == 0 : json_array_size(list) == 1)
			found = d;
	}
	if (!found) {
		cfs_msg(tag ? "'%s': no image tagged '%s'" :
			      "'%s': no tag given, and the layout has not exactly one image%s",
			layout, tag ? tag : "");
		return -ENOENT;
	}
	*out = found;
	return 0;
}

/* A descriptor's digest and size, checked to be there. */
static int take_desc(const json_t *d, const char *layout, const char *what, struct cfs_push_blob *b)
{
	const char *digest = cfs_json_str(d, "digest");
	const json_t *size = json_object_get(d, "size");

	if (!digest || strlen(digest) >= sizeof(b->digest) || !json_is_integer(size) ||
	    json_integer_value(size) < 0) {
		cfs_msg("'%s': %s: a descriptor without a digest or a size", layout, what);
		return -EINVAL;
	}
	strcpy(b->digest, digest);
	b->size = (uint64_t)json_integer_value(size);
	return 0;
}

static const char *const layer_types[] = {
	[CFS_PUSH_ZSTD_CHUNKED] = "application/vnd.oci.image.layer.v1.tar+zstd",
	[CFS_PUSH_ZSTD] = "application/vnd.oci.image.layer.v1.tar+zstd",
	[CFS_PUSH_GZIP] = "application/vnd.oci.image.layer.v1.tar+gzip",
};

/*
 * The manifest @m (a copy, changed) with the seal @seal (unless "") in its
 * annotations, as canonical JSON into *@text, its digest into @res.
 */
static int write_manifest(json_t *m, const char *seal, char **text, struct cfs_push_result *res)
{
	json_t *ann = json_object_get(m, "annotations");
	uint8_t md[32];

	*text = NULL;
	if (seal[0]) {
		if (!json_is_object(ann)) {
			ann = json_object();
			if (!ann || json_object_set_new(m, "annotations", ann))
				return -ENOMEM;
		}
		if (json_object_set_new(ann, CFS_SEAL_ANNOTATION, json_string(seal)))
			return -ENOMEM;
	}
	*text = cfs_json_dump(m, JSON_COMPACT | JSON_SORT_KEYS);
	if (!*text)
		return -ENOMEM;
	EVP_Digest(*text, strlen(*text), md, NULL, EVP_sha256(), NULL);
	hexdigest(md, res->manifest_digest);
	return 0;
}

/* Where a push goes, for a registry opened on first use. */
struct target {
	const struct cfs_registry_ref *ref;
	const struct cfs_registry_options *ropts;
	struct cfs_registry **r;
};

static const char *const cache_names[] = {
	[CFS_PUSH_ZSTD_CHUNKED] = "zstd-chunked",
	[CFS_PUSH_ZSTD] = "zstd",
	[CFS_PUSH_GZIP] = "gzip",
};

/*
 * Layer @i (@b, of the diff_id @id) as the blob cache knows it compressed,
 * when the registry has that blob with that size: 1 and @b and *@ann set;
 * 0 when it must be compressed; -errno when the registry fails.
 */
static int from_cache(const struct cfs_push_options *opts, const struct target *to,
		      const char *id, size_t i, struct cfs_push_blob *b, json_t **ann)
{
	char digest[7 + 64 + 1], what[32];
	uint64_t size, has_size;
	int ret;

	if (!opts->blob_cache || !id)
		return 0;
	if (cfs_blob_cache_get(opts->blob_cache, cache_names[opts->compression], id,
			       layer_types[opts->compression], digest, &size, ann) < 0)
		return 0;
	if (!*to->r) {
		ret = cfs_registry_open(to->ref, to->ropts, to->r);
		if (ret)
			goto no;
	}
	snprintf(what, sizeof(what), "layer %zu", i + 1);
	ret = cfs_registry_blob_size(*to->r, digest, what, &has_size);
	if (ret < 0)
		goto no;
	if (ret == 0 || (has_size != UINT64_MAX && has_size != size)) {
		ret = 0;
		goto no;
	}
	strcpy(b->digest, digest);
	strcpy(b->diff_id, id);
	b->size = size;
	b->reused = true;
	return 1;
no:
	json_decref(*ann);
	*ann = NULL;
	return ret;
}

/*
 * Each layer of @manifest (open in @fds, checked) recompressed into
 * @opts->compression to a temporary file that takes its place in @fds,
 * its tar stream checked against @diff_ids (the config's, which stays as
 * it is); into *@mp a copy of the manifest with the new descriptors
 * (their other annotations kept). With @opts->blob_cache, a layer whose
 * compressed form the cache knows and the registry of @to has (with its
 * size) is not recompressed: its descriptor is the cache's, and its file
 * in @fds is closed (-1); each layer recompressed is recorded there.
 */
static int recompress_layers(const char *layout, const json_t *manifest, const json_t *diff_ids,
			     const char *mtype, const struct cfs_push_options *opts,
			     const struct target *to, int *fds, struct cfs_push_result *res,
			     json_t **mp)
{
	json_t *m = NULL, *layers;
	int ret = 0;

	*mp = NULL;
	if (strcmp(mtype, OCI_MANIFEST) != 0) {
		cfs_msg("'%s': only an OCI image manifest's layers are recompressed, not those "
			"of %s", layout, mtype);
		return -EOPNOTSUPP;
	}
	if (!json_is_array(diff_ids) || json_array_size(diff_ids) != res->n_layers) {
		cfs_msg("'%s': the config %s has not a diff_id for each layer, to check the "
			"recompressed layers against", layout, res->config.digest);
		return -EINVAL;
	}
	m = json_deep_copy(manifest);
	layers = json_object_get(m, "layers");
	if (!m || !layers)
		return -ENOMEM;
	for (size_t i = 0; i < res->n_layers && !ret; i++) {
		struct cfs_push_blob *b = &res->layers[i];
		struct cfs_layer_out lo = { 0 };
		const char *id = cfs_json_cstr(json_array_get(diff_ids, i));
		json_t *d = json_array_get(layers, i), *ann, *nd = NULL;
		char what[64], got[7 + 65];
		int tfd;

		snprintf(what, sizeof(what), "%s/blobs/sha256/%s", layout, b->digest + 7);
		ret = from_cache(opts, to, id, i, b, &lo.annotations);
		if (ret < 0)
			break;
		if (ret == 1) {
			ret = 0;
			close(fds[i]);
			fds[i] = -1;
			goto descriptor;
		}
		tfd = cfs_tmpfile(-1, opts->tmpdir);
		if (tfd < 0) {
			ret = tfd;
			break;
		}
		if (lseek(fds[i], 0, SEEK_SET) < 0)
			ret = -errno;
		if (!ret)
			ret = cfs_layer_recompress(fds[i], opts->compression, tfd, what, &lo);
		close(fds[i]);
		fds[i] = tfd;
		if (ret)
			break;
		hexdigest(lo.diff_id, got);
		if (!id || strcmp(id, got) != 0) {
			cfs_msg("'%s': layer %zu: its tar stream has the digest %s, where the config's "
				"diff_id says %s", layout, i + 1, got, id ? id : "nothing");
			json_decref(lo.annotations);
			ret = -EINVAL;
			break;
		}
		hexdigest(lo.digest, b->digest);
		strcpy(b->diff_id, got);
		b->size = lo.size;
		if (opts->blob_cache)
			cfs_blob_cache_put(opts->blob_cache, cache_names[opts->compression], got,
					   layer_types[opts->compression], b->digest, b->size,
					   lo.annotations);
descriptor:
		/* the descriptor's other annotations kept, a zstd:chunked one of before not */
		ann = json_deep_copy(json_object_get(d, "annotations"));
		if (ann) {
			const char *k;
			json_t *v;
			void *tmp;

			json_object_foreach_safe(ann, tmp, k, v)
				if (strncmp(k, "io.github.containers.zstd-chunked.", 34) == 0)
					json_object_del(ann, k);
		}
		if (lo.annotations) {
			if (!ann)
				ann = json_object();
			if (ann)
				json_object_update(ann, lo.annotations);
		}
		json_decref(lo.annotations);
		nd = json_pack("{s:s, s:s, s:I}", "mediaType", layer_types[opts->compression],
			       "digest", b->digest, "size", (json_int_t)b->size);
		if (!nd || (ann && json_object_size(ann) && json_object_set(nd, "annotations", ann)) ||
		    json_array_set_new(layers, i, nd))
			ret = -ENOMEM;
		json_decref(ann);
		snprintf(what, sizeof(what), "layer %zu", i + 1);
		if (!ret && opts->blob)
			opts->blob(opts->ctx, what, b, false);
	}
	if (ret)
		json_decref(m);
	else
		*mp = m;
	return ret;
}

/*
 * The key of the seal cache for the layers whose tar streams are
 * @diff_ids (the config's, in order, one for each of @n layers): the
 * seal's format, cfs's version (an EROFS writer that changes makes other
 * bytes) and the diff_ids, all the merged tree's image depends on (the
 * merge is deterministic given the tar streams, and the image is made
 * with the defaults). NULL when the diff_ids are not that.
 */
static char *seal_key(const json_t *diff_ids, size_t n)
{
	char *key = NULL;
	size_t len = 0;
	FILE *f;

	if (!json_is_array(diff_ids) || json_array_size(diff_ids) != n)
		return NULL;
	f = open_memstream(&key, &len);
	if (!f)
		return NULL;
	fprintf(f, "%s 1\ncfs %s\n", CFS_SEAL_ANNOTATION, CFS_VERSION_STRING);
	for (size_t i = 0; i < n; i++) {
		const char *id = json_string_value(json_array_get(diff_ids, i));

		if (!cfs_is_sha256_digest(id)) {
			fclose(f);
			free(key);
			return NULL;
		}
		fprintf(f, "%s\n", id);
	}
	if (fclose(f) != 0) {
		free(key);
		return NULL;
	}
	return key;
}

/*
 * The seal of the image @manifest (the document @mdigest) of @layout, into
 * @res->seal: its layers merged as a pull merges them (oci.c), the tree's
 * composefs 1.0 image measured. A seal the manifest holds already must be
 * that one: a layout that claims another is refused. With
 * @opts->blob_cache, a seal cached for the layers' @diff_ids is taken
 * (@res->seal_from_cache) unless the manifest claims another; a seal
 * computed is recorded there.
 */
static int seal_layout(const char *layout, const json_t *manifest, const char *mdigest,
		       const json_t *diff_ids, const struct cfs_push_options *opts,
		       struct cfs_push_result *res)
{
	struct cfs_build_options bo = { .format = CFS_FORMAT_EROFS };
	const json_t *v = json_object_get(json_object_get(manifest, "annotations"),
					  CFS_SEAL_ANNOTATION);
	const char *had = json_string_value(v);
	struct cfs_node *root = NULL;
	char what[7 + 64 + 1 + 256], *key = NULL;
	int ret;

	if (v && !cfs_is_hex_digest(had)) {
		cfs_msg("'%s': the manifest %s has a seal (the annotation %s) that is not 64 lowercase hex digits",
			layout, mdigest, CFS_SEAL_ANNOTATION);
		return -EINVAL;
	}
	if (opts->blob_cache)
		key = seal_key(diff_ids, res->n_layers);
	if (key && cfs_seal_cache_get(opts->blob_cache, key, res->seal) == 0 &&
	    (!had || strcmp(had, res->seal) == 0)) {
		res->seal_from_cache = true;
		free(key);
		return 0;
	}
	snprintf(what, sizeof(what), "%s/blobs/sha256/%s", layout, mdigest + 7);
	ret = cfs_oci_layout_tree(layout, manifest, what, &bo, &root);
	if (ret == 0)
		ret = seal_of(root, opts->tmpdir, what, res->seal);
	cfs_tree_free(root);
	if (ret == 0 && key)
		cfs_seal_cache_put(opts->blob_cache, key, res->seal);
	free(key);
	if (ret)
		return ret;
	if (had && strcmp(had, res->seal) != 0) {
		cfs_msg("'%s': the manifest %s has the seal %s, but the composefs 1.0 image of its tree has the digest %s: refused",
			layout, mdigest, had, res->seal);
		return -EBADMSG;
	}
	return 0;
}

int cfs_push_oci(const char *layout, const char *tag, const struct cfs_registry_ref *ref,
		 const struct cfs_registry_options *ropts, const struct cfs_push_options *opts,
		 struct cfs_push_result *res)
{
	json_t *index = NULL, *manifest = NULL;
	const json_t *desc, *layers, *diff_ids = NULL;
	char *itext = NULL, *mtext = NULL, *ipath = NULL, *ctext = NULL;
	size_t ilen, mlen, clen;
	struct cfs_push_blob mblob = { 0 };
	const char *mtype;
	json_t *config = NULL;
	int *fds = NULL, cfd = -1, ifd = -1, mfd = -1, ret = check_ref(ref, res);
	json_t *m = NULL; /* the manifest to write anew, or NULL: it goes as it is */
	struct cfs_registry *reg = NULL; /* opened for the blob cache's first HEAD */
	size_t n;

	if (ret)
		return ret;
	if (asprintf(&ipath, "%s/index.json", layout) < 0)
		return -ENOMEM;
	ifd = open(ipath, O_RDONLY | O_CLOEXEC);
	if (ifd < 0) {
		ret = -errno;
		cfs_msg("'%s': %s", ipath, strerror(errno));
		goto out;
	}
	ret = read_doc(ifd, ipath, &itext, &ilen, &index);
	if (ret)
		goto out;
	ret = find_manifest(layout, tag, index, &desc);
	if (ret)
		goto out;
	mtype = cfs_json_str(desc, "mediaType");
	if (mtype && strcmp(mtype, OCI_INDEX) == 0) {
		cfs_msg("'%s': '%s' is an image index: push takes one image", layout,
			tag ? tag : "its image");
		ret = -EOPNOTSUPP;
		goto out;
	}
	ret = take_desc(desc, layout, "the manifest", &mblob);
	if (ret)
		goto out;
	mfd = open_blob(layout, mblob.digest, mblob.size, "the manifest");
	if (mfd < 0) {
		ret = mfd;
		goto out;
	}
	lseek(mfd, 0, SEEK_SET);
	ret = read_doc(mfd, mblob.digest, &mtext, &mlen, &manifest);
	if (ret)
		goto out;
	if (!mtype)
		mtype = cfs_json_str(manifest, "mediaType");
	if (!mtype || (strcmp(mtype, OCI_MANIFEST) != 0 &&
		       strcmp(mtype, "application/vnd.docker.distribution.manifest.v2+json") != 0)) {
		cfs_msg("'%s': the manifest %s is not an OCI or docker v2 image manifest", layout,
			mblob.digest);
		ret = -EOPNOTSUPP;
		goto out;
	}
	layers = json_object_get(manifest, "layers");
	if (!json_is_array(layers) || json_array_size(layers) > MAX_LAYERS) {
		cfs_msg("'%s': the manifest %s has no list of layers, or more than %u", layout,
			mblob.digest, MAX_LAYERS);
		ret = -EINVAL;
		goto out;
	}
	n = json_array_size(layers);
	res->layers = calloc(n ? n : 1, sizeof(*res->layers));
	fds = malloc((n ? n : 1) * sizeof(*fds));
	if (!res->layers || !fds) {
		ret = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++)
		fds[i] = -1;
	ret = take_desc(json_object_get(manifest, "config"), layout, "the config", &res->config);
	if (ret)
		goto out;
	/* every blob checked before anything is sent */
	cfd = open_blob(layout, res->config.digest, res->config.size, "the config");
	if (cfd < 0) {
		ret = cfd;
		goto out;
	}
	lseek(cfd, 0, SEEK_SET);
	if (read_doc(cfd, res->config.digest, &ctext, &clen, &config) == 0)
		diff_ids = json_object_get(json_object_get(config, "rootfs"), "diff_ids");
	for (size_t i = 0; i < n; i++) {
		char what[32];
		const char *id = cfs_json_cstr(json_array_get(diff_ids, i));

		snprintf(what, sizeof(what), "layer %zu", i + 1);
		ret = take_desc(json_array_get(layers, i), layout, what, &res->layers[i]);
		if (ret)
			goto out;
		if (id && strlen(id) < sizeof(res->layers[i].diff_id))
			strcpy(res->layers[i].diff_id, id);
		res->n_layers = i + 1;
		fds[i] = open_blob(layout, res->layers[i].digest, res->layers[i].size, what);
		if (fds[i] < 0) {
			ret = fds[i];
			goto out;
		}
		if (opts->blob && !opts->recompress)
			opts->blob(opts->ctx, what, &res->layers[i], false);
	}
	if (opts->recompress) {
		struct target to = { .ref = ref, .ropts = ropts, .r = &reg };

		ret = recompress_layers(layout, manifest, diff_ids, mtype, opts, &to, fds, res, &m);
		if (ret)
			goto out;
		mtype = OCI_MANIFEST;
	}
	/* an OCI manifest is sealed; a docker v2 one has no annotations */
	if (!opts->no_seal && strcmp(mtype, OCI_MANIFEST) == 0) {
		ret = seal_layout(layout, manifest, mblob.digest, diff_ids, opts, res);
		if (ret)
			goto out;
		/* a manifest that has its seal already goes as it is */
		if (!m && !json_object_get(json_object_get(manifest, "annotations"),
					   CFS_SEAL_ANNOTATION) &&
		    !(m = json_deep_copy(manifest))) {
			ret = -ENOMEM;
			goto out;
		}
	}
	if (m) {
		char *text = NULL;

		ret = write_manifest(m, res->seal, &text, res);
		if (ret)
			goto out;
		free(mtext);
		mtext = text;
		mlen = strlen(mtext);
	} else {
		strcpy(res->manifest_digest, mblob.digest);
	}
	ret = send_image(ref, ropts, opts, fds, cfd, mtext, mlen, mtype, res, reg);
	reg = NULL;
out:
	for (size_t i = 0; fds && i < res->n_layers; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	free(fds);
	if (cfd >= 0)
		close(cfd);
	if (mfd >= 0)
		close(mfd);
	if (ifd >= 0)
		close(ifd);
	cfs_registry_close(reg);
	json_decref(index);
	json_decref(manifest);
	json_decref(m);
	json_decref(config);
	free(itext);
	free(mtext);
	free(ctext);
	free(ipath);
	return ret;
}
