// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Signing at push, as cosign signs: an ECDSA P-256 signature with SHA-256
 * (libcrypto) over a simple-signing payload, {"critical": {"identity":
 * {"docker-reference": REF}, "image": {"docker-manifest-digest": DIGEST},
 * "type": "cosign container image signature"}, "optional": null}, attached
 * in the image's repository as cosign attaches it: the OCI manifest tagged
 * sha256-<hex>.sig, each of whose layers is a payload (media type
 * application/vnd.dev.cosign.simplesigning.v1+json) with its signature,
 * base64, in the annotation dev.cosignproject.cosign/signature.
 *
 * A .sig manifest already there keeps its layers, and the new one is
 * appended (cosign's AppendSignatures); a layer of the same payload whose
 * signature verifies with the same key is a duplicate, and nothing is
 * written (cosign's duplicate detector). The key is a PEM private key
 * (PKCS#8 or SEC1, unencrypted); cosign's own encrypted format is refused
 * by name.
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/bio.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http-parse.h"
#include "json.h"
#include "sign.h"
#include "signature.h"
#include "base/internal.h"
#include "cfs/registry.h"

#define MT_OCI_MANIFEST "application/vnd.oci.image.manifest.v1+json"
#define MT_OCI_CONFIG "application/vnd.oci.image.config.v1+json"
#define MT_PAYLOAD "application/vnd.dev.cosign.simplesigning.v1+json"
#define SIG_ANNOTATION "dev.cosignproject.cosign/signature"
#define MAX_KEY_FILE (64u << 10)

struct cfs_cosign_sig {
	EVP_PKEY *key;
	char *payload; /* the bytes signed */
	size_t payload_len;
	char payload_digest[7 + 64 + 1];
	char *sig_b64;
	char tag[7 + 64 + 5]; /* sha256-<hex>.sig */
};

void cfs_sign_cosign_free(struct cfs_cosign_sig *s)
{
	if (!s)
		return;
	EVP_PKEY_free(s->key);
	free(s->payload);
	free(s->sig_b64);
	free(s);
}

static void sha256_digest(const void *data, size_t len, char out[7 + 64 + 1])
{
	uint8_t md[CFS_DIGEST_SIZE];

	EVP_Digest(data, len, md, NULL, EVP_sha256(), NULL);
	memcpy(out, "sha256:", 7);
	cfs_digest_to_hex(md, out + 7);
}

/* No passphrase is asked for: an encrypted PEM key fails to load. */
static int no_passphrase(char *buf, int size, int rwflag, void *u)
{
	(void)buf, (void)size, (void)rwflag, (void)u;
	return -1;
}

/* The ECDSA P-256 private key of the PEM file @path. */
static int load_key(const char *path, EVP_PKEY **keyp)
{
	char *text = NULL, group[64] = "";
	size_t len = 0;
	struct stat st;
	EVP_PKEY *key = NULL;
	BIO *bio = NULL;
	int fd, r = 0;
	ssize_t n;

	*keyp = NULL;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0 || fstat(fd, &st) < 0) {
		r = -errno;
		cfs_msg("--sign-by-sigstore-private-key '%s': %s", path, strerror(-r));
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > MAX_KEY_FILE) {
		r = -EINVAL;
		cfs_msg("--sign-by-sigstore-private-key '%s': %s", path,
			!S_ISREG(st.st_mode) ? "not a regular file" : "more than 64 KiB: no key");
		goto out;
	}
	text = malloc((size_t)st.st_size + 1);
	if (!text) {
		r = -ENOMEM;
		goto out;
	}
	while (len < (size_t)st.st_size) {
		n = read(fd, text + len, (size_t)st.st_size - len);
		if (n <= 0) {
			r = n < 0 ? -errno : -EIO;
			cfs_msg("--sign-by-sigstore-private-key '%s': %s", path, strerror(-r));
			goto out;
		}
		len += (size_t)n;
	}
	text[len] = '\0';
	if (strstr(text, "-----BEGIN ENCRYPTED SIGSTORE PRIVATE KEY-----") ||
	    strstr(text, "-----BEGIN ENCRYPTED COSIGN PRIVATE KEY-----")) {
		r = -EOPNOTSUPP;
		cfs_msg("--sign-by-sigstore-private-key '%s': cosign's encrypted key format is not supported: give the key as an unencrypted PEM private key",
			path);
		goto out;
	}
	bio = BIO_new_mem_buf(text, (int)len);
	if (!bio) {
		r = -ENOMEM;
		goto out;
	}
	key = PEM_read_bio_PrivateKey(bio, NULL, no_passphrase, NULL);
	if (!key) {
		r = -EINVAL;
		cfs_msg("--sign-by-sigstore-private-key '%s': not an unencrypted PEM private key",
			path);
		goto out;
	}
	if (!EVP_PKEY_is_a(key, "EC") ||
	    !EVP_PKEY_get_utf8_string_param(key, OSSL_PKEY_PARAM_GROUP_NAME, group, sizeof(group),
					    NULL) ||
	    strcmp(group, "prime256v1") != 0) {
		r = -EINVAL;
		cfs_msg("--sign-by-sigstore-private-key '%s': not an ECDSA P-256 key (cosign's)",
			path);
		goto out;
	}
	*keyp = key;
	key = NULL;
out:
	if (fd >= 0)
		close(fd);
	EVP_PKEY_free(key);
	BIO_free(bio);
	free(text);
	return r;
}

int cfs_sign_cosign(const char *key_path, const char *reference, const char *digest,
		    struct cfs_cosign_sig **out)
{
	struct cfs_cosign_sig *s = calloc(1, sizeof(*s));
	EVP_MD_CTX *md = NULL;
	unsigned char *der = NULL;
	size_t der_len = 0;
	json_t *p;
	int r;

	*out = NULL;
	if (!s)
		return -ENOMEM;
	r = load_key(key_path, &s->key);
	if (r)
		goto out;
	p = json_pack("{s:{s:{s:s}, s:{s:s}, s:s}, s:n}", "critical", "identity",
		      "docker-reference", reference, "image", "docker-manifest-digest", digest,
		      "type", "cosign container image signature", "optional");
	s->payload = p ? cfs_json_dump(p, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	json_decref(p);
	if (!s->payload) {
		r = -ENOMEM;
		goto out;
	}
	s->payload_len = strlen(s->payload);
	sha256_digest(s->payload, s->payload_len, s->payload_digest);
	snprintf(s->tag, sizeof(s->tag), "sha256-%s.sig", digest + 7);
	md = EVP_MD_CTX_new();
	r = -EIO;
	if (!md || EVP_DigestSignInit(md, NULL, EVP_sha256(), NULL, s->key) != 1 ||
	    EVP_DigestSign(md, NULL, &der_len, (const unsigned char *)s->payload,
			   s->payload_len) != 1 ||
	    !(der = malloc(der_len)) ||
	    EVP_DigestSign(md, der, &der_len, (const unsigned char *)s->payload,
			   s->payload_len) != 1) {
		cfs_msg("--sign-by-sigstore-private-key '%s': signing failed", key_path);
		goto out;
	}
	s->sig_b64 = cfs_base64_encode(der, der_len);
	r = s->sig_b64 ? 0 : -ENOMEM;
out:
	EVP_MD_CTX_free(md);
	free(der);
	if (r)
		cfs_sign_cosign_free(s);
	else
		*out = s;
	return r;
}

/* Whether the base64 signature @b64 is @s's key's over @s's payload. */
static bool same_signer(const struct cfs_cosign_sig *s, const char *b64)
{
	EVP_MD_CTX *md = EVP_MD_CTX_new();
	char *der = NULL;
	size_t der_len;
	bool ok = false;

	if (md && cfs_base64_decode(b64, &der, &der_len) == 0)
		ok = EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, s->key) == 1 &&
		     EVP_DigestVerify(md, (const unsigned char *)der, der_len,
				      (const unsigned char *)s->payload, s->payload_len) == 1;
	EVP_MD_CTX_free(md);
	free(der);
	return ok;
}

/* Upload the @len bytes @data as the blob @digest unless the repository has it. */
static int put_bytes(struct cfs_registry *r, const char *digest, const void *data, size_t len,
		     const char *what)
{
	int fd, ret = cfs_registry_has_blob(r, digest, what);

	if (ret)
		return ret < 0 ? ret : 0;
	fd = memfd_create("cfs-cosign", MFD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ret = cfs_write_all(fd, data, len);
	if (ret == 0)
		ret = cfs_registry_put_blob(r, digest, fd, len, NULL, what);
	close(fd);
	return ret < 0 ? ret : 0;
}

/*
 * The layers of the .sig manifest already in the repository (a new empty
 * array when there is none), or -errno with a message.
 */
static int old_layers(struct cfs_registry *r, const char *tag, const char *what,
		      json_t **layersp)
{
	struct cfs_registry_stream *st = NULL;
	char msg[512] = "", *text = NULL;
	size_t cap = 64 * 1024, n = 0;
	json_t *doc = NULL, *layers;
	ssize_t got;
	int ret;

	*layersp = NULL;
	cfs_msg_capture(msg, sizeof(msg));
	ret = cfs_registry_get(r, true, tag, MT_OCI_MANIFEST, what, &st);
	cfs_msg_capture(NULL, 0);
	if (ret == -ENOENT) {
		*layersp = json_array();
		return *layersp ? 0 : -ENOMEM;
	}
	if (ret) {
		cfs_msg("%s", msg);
		return ret;
	}
	if (cfs_registry_length(st) != UINT64_MAX && cfs_registry_length(st) > CFS_SIG_MAX_SIZE) {
		cfs_msg("'%s': more than %zu bytes", what, CFS_SIG_MAX_SIZE);
		ret = -EFBIG;
		goto out;
	}
	text = malloc(cap + 1);
	for (;;) {
		if (!text) {
			ret = -ENOMEM;
			goto out;
		}
		if (n == cap) {
			char *t;

			if (cap > CFS_SIG_MAX_SIZE) {
				cfs_msg("'%s': more than %zu bytes", what, CFS_SIG_MAX_SIZE);
				ret = -EFBIG;
				goto out;
			}
			cap *= 2;
			t = realloc(text, cap + 1);
			if (!t)
				free(text);
			text = t;
			continue;
		}
		got = cfs_registry_read(st, text + n, cap - n);
		if (got < 0) {
			ret = (int)got;
			goto out;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	ret = cfs_json_parse(text, n, what, &doc);
	if (ret)
		goto out;
	layers = json_object_get(doc, "layers");
	if (!json_is_array(layers)) {
		cfs_msg("'%s': no layers list", what);
		ret = -EINVAL;
		goto out;
	}
	*layersp = json_deep_copy(layers);
	ret = *layersp ? 0 : -ENOMEM;
out:
	cfs_registry_end(st);
	json_decref(doc);
	free(text);
	return ret;
}

int cfs_sign_cosign_attach(struct cfs_registry *r, const char *name,
			   const struct cfs_cosign_sig *s, char **written)
{
	char what[1200], cdigest[7 + 64 + 1], mdigest[7 + 64 + 1];
	json_t *layers = NULL, *diff_ids = NULL, *config = NULL, *man = NULL, *l;
	char *ctext = NULL, *mtext = NULL;
	size_t i;
	int ret;

	*written = NULL;
	snprintf(what, sizeof(what), "%s:%s", name, s->tag);
	ret = old_layers(r, s->tag, what, &layers);
	if (ret)
		return ret;
	json_array_foreach(layers, i, l) {
		const char *mt = cfs_json_str(l, "mediaType"), *dg = cfs_json_str(l, "digest");
		const char *sig = cfs_json_str(json_object_get(l, "annotations"), SIG_ANNOTATION);

		if (mt && dg && sig && !strcmp(mt, MT_PAYLOAD) && !strcmp(dg, s->payload_digest) &&
		    same_signer(s, sig)) {
			/* this key has signed this payload already: nothing to add */
			ret = asprintf(written, "%s", what) < 0 ? -ENOMEM : 1;
			goto out;
		}
	}
	if (json_array_size(layers) >= CFS_SIG_MAX_COUNT) {
		cfs_msg("'%s': already %zu signatures, the most a reader takes: not adding one",
			what, json_array_size(layers));
		ret = -EFBIG;
		goto out;
	}
	l = json_pack("{s:s, s:I, s:s, s:{s:s}}", "mediaType", MT_PAYLOAD, "size",
		      (json_int_t)s->payload_len, "digest", s->payload_digest, "annotations",
		      SIG_ANNOTATION, s->sig_b64);
	diff_ids = json_array();
	if (!l || !diff_ids || json_array_append_new(layers, l)) {
		ret = -ENOMEM;
		goto out;
	}
	json_array_foreach(layers, i, l)
		if (json_array_append(diff_ids, json_object_get(l, "digest"))) {
			ret = -ENOMEM;
			goto out;
		}
	/* cosign's config of a .sig image: no platform, the payloads as diff_ids */
	config = json_pack("{s:s, s:{}, s:s, s:{s:O, s:s}}", "architecture", "", "config", "os",
			   "", "rootfs", "diff_ids", diff_ids, "type", "layers");
	ctext = config ? cfs_json_dump(config, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
	if (!ctext) {
		ret = -ENOMEM;
		goto out;
	}
	sha256_digest(ctext, strlen(ctext), cdigest);
	man = json_pack("{s:i, s:s, s:{s:s, s:I, s:s}, s:O}", "schemaVersion", 2, "mediaType",
			MT_OCI_MANIFEST, "config", "mediaType", MT_OCI_CONFIG, "size",
			(json_int_t)strlen(ctext), "digest", cdigest, "layers", layers);
	mtext = man ? cfs_json_dump(man, JSON_COMPACT) : NULL;
	if (!mtext) {
		ret = -ENOMEM;
		goto out;
	}
	sha256_digest(mtext, strlen(mtext), mdigest);
	ret = put_bytes(r, s->payload_digest, s->payload, s->payload_len, "signature payload");
	if (ret == 0)
		ret = put_bytes(r, cdigest, ctext, strlen(ctext), "signature config");
	if (ret == 0)
		ret = cfs_registry_put_manifest(r, s->tag, MT_OCI_MANIFEST, mtext, strlen(mtext),
						"signature manifest");
	if (ret == 0 && asprintf(written, "%s", what) < 0) {
		*written = NULL;
		ret = -ENOMEM;
	}
out:
	json_decref(layers);
	json_decref(diff_ids);
	json_decref(config);
	json_decref(man);
	free(ctext);
	free(mtext);
	return ret;
}
