// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Container image signatures: the simple-signing payload, parsed strictly
 * and only after its signature verified; OpenPGP signatures checked by
 * gpgme against a keyring of their own (a temporary GnuPG home, so that
 * the user's keys and trust never count); cosign's ECDSA signatures by
 * libcrypto; and signatures read from a lookaside (a file:// tree, or
 * http(s) with redirects kept to the same host). Bounded: a signature or
 * payload over CFS_SIG_MAX_SIZE is refused.
 */
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <gpgme.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "http-parse.h"
#include "json.h"
#include "signature.h"
#include "base/internal.h"

#define MAX_REDIRECTS 5

/* Copy the string member @key of @obj, which must be one. */
static int take_str(const json_t *obj, const char *key, const char *what, char **out)
{
	const char *s = cfs_json_str(obj, key);

	if (!s) {
		cfs_msg("'%s': the critical member '%s' is missing or not a string", what, key);
		return -EINVAL;
	}
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

/* Whether the object @obj has exactly the members @keys (NULL-terminated). */
static bool exact_members(const json_t *obj, const char *where, const char *what,
			  const char *const *keys)
{
	size_t n = 0;
	const char *k;
	json_t *v;

	if (!json_is_object(obj)) {
		cfs_msg("'%s': %s is not a JSON object", what, where);
		return false;
	}
	for (; keys[n]; n++)
		if (!json_object_get(obj, keys[n])) {
			cfs_msg("'%s': %s has no member '%s'", what, where, keys[n]);
			return false;
		}
	json_object_foreach((json_t *)obj, k, v) {
		size_t i;

		for (i = 0; i < n && strcmp(k, keys[i]); i++)
			;
		if (i == n) {
			cfs_msg("'%s': %s has an unknown member '%.64s'", what, where, k);
			return false;
		}
	}
	return true;
}

int cfs_sig_payload_parse(const char *text, size_t len, const char *type, const char *what,
			  struct cfs_sig_payload *out)
{
	static const char *const top[] = { "critical", "optional", NULL };
	static const char *const crit[] = { "type", "image", "identity", NULL };
	static const char *const image[] = { "docker-manifest-digest", NULL };
	static const char *const ident[] = { "docker-reference", NULL };
	const json_t *c;
	const char *t;
	json_t *doc;
	int r;

	memset(out, 0, sizeof(*out));
	r = cfs_json_parse(text, len, what, &doc);
	if (r)
		return r;
	r = -EINVAL;
	if (!exact_members(doc, "the payload", what, top))
		goto out;
	c = json_object_get(doc, "critical");
	if (!exact_members(c, "the critical section", what, crit) ||
	    !exact_members(json_object_get(c, "image"), "critical.image", what, image) ||
	    !exact_members(json_object_get(c, "identity"), "critical.identity", what, ident))
		goto out;
	t = cfs_json_str(c, "type");
	if (!t || strcmp(t, type)) {
		cfs_msg("'%s': the payload's type is not '%s'", what, type);
		goto out;
	}
	r = take_str(json_object_get(c, "image"), "docker-manifest-digest", what, &out->digest);
	if (r == 0)
		r = take_str(json_object_get(c, "identity"), "docker-reference", what,
			     &out->identity);
out:
	json_decref(doc);
	if (r)
		cfs_sig_payload_free(out);
	return r;
}

void cfs_sig_payload_free(struct cfs_sig_payload *p)
{
	free(p->digest);
	free(p->identity);
	p->digest = p->identity = NULL;
}

/* ---- OpenPGP, through gpgme ---- */

struct cfs_gpg_keys {
	char home[64];
	gpgme_ctx_t ctx; /* for the import and every check: each context costs a gpg run */
	char **fprs;
	size_t n;
};

static pthread_once_t gpgme_once = PTHREAD_ONCE_INIT;
static bool gpgme_ok;

static void gpgme_start(void)
{
	/* gpg is where gpgme was built to find it: no gpgconf runs to ask */
	gpgme_set_global_flag("disable-gpgconf", "1");
	gpgme_ok = gpgme_check_version(NULL) != NULL &&
		   gpgme_engine_check_version(GPGME_PROTOCOL_OpenPGP) == 0;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		rmdir(path);
	else
		unlink(path);
	return 0;
}

static int new_ctx(const char *home, gpgme_ctx_t *ctx)
{
	pthread_once(&gpgme_once, gpgme_start);
	if (!gpgme_ok) {
		cfs_msg("gpgme: no usable OpenPGP engine (is gpg installed?)");
		return -ENOSYS;
	}
	if (gpgme_new(ctx))
		return -ENOMEM;
	if (gpgme_ctx_set_engine_info(*ctx, GPGME_PROTOCOL_OpenPGP, NULL, home)) {
		gpgme_release(*ctx);
		cfs_msg("gpgme: cannot use the keyring '%s'", home);
		return -EIO;
	}
	gpgme_set_protocol(*ctx, GPGME_PROTOCOL_OpenPGP);
	return 0;
}

/* Import the keys in @d, named @what; their fingerprints are added to @k. */
static int import(struct cfs_gpg_keys *k, gpgme_ctx_t ctx, gpgme_data_t d, const char *what)
{
	gpgme_import_result_t res;
	gpgme_import_status_t s;
	gpgme_error_t e = gpgme_op_import(ctx, d);
	size_t added = 0;

	res = e ? NULL : gpgme_op_import_result(ctx);
	if (!res) {
		cfs_msg("'%s': no OpenPGP public key: %s", what, gpgme_strerror(e));
		return -EINVAL;
	}
	for (s = res->imports; s; s = s->next) {
		char **f;

		if (s->result || !s->fpr)
			continue;
		f = realloc(k->fprs, (k->n + 1) * sizeof(*f));
		if (!f)
			return -ENOMEM;
		k->fprs = f;
		if (!(k->fprs[k->n] = strdup(s->fpr)))
			return -ENOMEM;
		k->n++;
		added++;
	}
	if (!added) {
		cfs_msg("'%s': no OpenPGP public key in it", what);
		return -EINVAL;
	}
	return 0;
}

/*
 * The throwaway keyring's gpg.conf. Public keys and signatures need no
 * gpg-agent, and one started here would outlive the keyring (a daemon
 * per pull, and the time to start it); nor is the trust database needed,
 * as the policy names the keys it trusts.
 */
static int write_conf(const char *home)
{
	static const char conf[] = "no-autostart\nno-auto-check-trustdb\n";
	char path[sizeof(((struct cfs_gpg_keys *)0)->home) + 16];
	ssize_t n;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/gpg.conf", home);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		r = -errno;
	} else {
		n = write(fd, conf, sizeof(conf) - 1);
		if (n != (ssize_t)(sizeof(conf) - 1))
			r = n < 0 ? -errno : -EIO;
		close(fd);
	}
	if (r)
		cfs_msg("'%s': %s", path, strerror(-r));
	return r;
}

int cfs_gpg_keys_new(char *const *files, size_t n_files, const void *data, size_t data_len,
		     struct cfs_gpg_keys **kp)
{
	struct cfs_gpg_keys *k = calloc(1, sizeof(*k));
	const char *tmp = getenv("TMPDIR");
	gpgme_ctx_t ctx;
	gpgme_data_t d;
	int r;

	*kp = NULL;
	if (!k)
		return -ENOMEM;
	if (!tmp || !tmp[0] || strlen(tmp) > sizeof(k->home) - 20)
		tmp = "/tmp";
	snprintf(k->home, sizeof(k->home), "%s/cfs-gpg-XXXXXX", tmp);
	if (!mkdtemp(k->home)) {
		r = -errno;
		cfs_msg("a temporary keyring in '%s': %s", tmp, strerror(errno));
		k->home[0] = '\0';
		goto err;
	}
	r = write_conf(k->home);
	if (r)
		goto err;
	r = new_ctx(k->home, &k->ctx);
	if (r)
		goto err;
	ctx = k->ctx;
	for (size_t i = 0; i < n_files; i++) {
		int fd = open(files[i], O_RDONLY | O_CLOEXEC);

		if (fd < 0) {
			r = -errno;
			cfs_msg("key file '%s': %s", files[i], strerror(errno));
			goto err;
		}
		if (gpgme_data_new_from_fd(&d, fd)) {
			close(fd);
			r = -ENOMEM;
			goto err;
		}
		r = import(k, ctx, d, files[i]);
		gpgme_data_release(d);
		close(fd);
		if (r)
			goto err;
	}
	if (data) {
		if (gpgme_data_new_from_mem(&d, data, data_len, 1)) {
			r = -ENOMEM;
			goto err;
		}
		r = import(k, ctx, d, "keyData");
		gpgme_data_release(d);
		if (r)
			goto err;
	}
	*kp = k;
	return 0;
err:
	cfs_gpg_keys_free(k);
	return r;
}

void cfs_gpg_keys_free(struct cfs_gpg_keys *k)
{
	if (!k)
		return;
	if (k->ctx)
		gpgme_release(k->ctx);
	if (k->home[0])
		nftw(k->home, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
	for (size_t i = 0; i < k->n; i++)
		free(k->fprs[i]);
	free(k->fprs);
	free(k);
}

/* The payload gpg writes, kept in memory up to CFS_SIG_MAX_SIZE. */
struct sink {
	char *buf;
	size_t len;
	bool over;
};

static ssize_t sink_write(void *h, const void *buf, size_t size)
{
	struct sink *s = h;
	char *b;

	if (size > CFS_SIG_MAX_SIZE - s->len) {
		s->over = true;
		errno = EFBIG;
		return -1;
	}
	b = realloc(s->buf, s->len + size + 1);
	if (!b) {
		errno = ENOMEM;
		return -1;
	}
	s->buf = b;
	memcpy(b + s->len, buf, size);
	s->len += size;
	b[s->len] = '\0';
	return (ssize_t)size;
}

int cfs_gpg_verify(const struct cfs_gpg_keys *k, const void *sig, size_t sig_len,
		   char **payload, size_t *payload_len, char *fpr, size_t fpr_size, char *why,
		   size_t why_size)
{
	struct gpgme_data_cbs cbs = { .write = sink_write };
	struct sink sink = { 0 };
	gpgme_data_t sd = NULL, pd = NULL;
	gpgme_verify_result_t res;
	gpgme_ctx_t ctx = k->ctx;
	gpgme_signature_t s;
	gpgme_error_t e;
	size_t i;
	int r;

	*payload = NULL;
	fpr[0] = '\0';
	r = -ENOMEM;
	if (gpgme_data_new_from_mem(&sd, sig, sig_len, 0) ||
	    gpgme_data_new_from_cbs(&pd, &cbs, &sink))
		goto out;
	r = -EACCES;
	e = gpgme_op_verify(ctx, sd, NULL, pd);
	if (sink.over) {
		snprintf(why, why_size, "a payload of more than %zu bytes", CFS_SIG_MAX_SIZE);
		goto out;
	}
	if (e) {
		snprintf(why, why_size, "not an OpenPGP signed message (%s)", gpgme_strerror(e));
		goto out;
	}
	res = gpgme_op_verify_result(ctx);
	s = res ? res->signatures : NULL;
	if (!s || s->next) {
		snprintf(why, why_size, "%s", s ? "more than one signature in it" : "not an OpenPGP signed message (no signature in it)");
		goto out;
	}
	if (gpg_err_code(s->status) == GPG_ERR_NO_PUBKEY) {
		snprintf(why, why_size, "signed by an unknown key %.64s", s->fpr ? s->fpr : "");
		goto out;
	}
	if (s->status || s->validity == GPGME_VALIDITY_NEVER || s->validity_reason ||
	    s->wrong_key_usage || !s->fpr) {
		snprintf(why, why_size, "a bad signature (%s)",
			 gpgme_strerror(s->status ? s->status : s->validity_reason));
		goto out;
	}
	for (i = 0; i < k->n && strcasecmp(k->fprs[i], s->fpr); i++)
		;
	if (i == k->n) {
		snprintf(why, why_size, "signed by an unknown key %.64s", s->fpr);
		goto out;
	}
	snprintf(fpr, fpr_size, "%s", s->fpr);
	*payload = sink.buf ? sink.buf : strdup("");
	*payload_len = sink.len;
	sink.buf = NULL;
	r = *payload ? 0 : -ENOMEM;
out:
	gpgme_data_release(sd);
	gpgme_data_release(pd);
	free(sink.buf);
	return r;
}

/* ---- cosign: ECDSA P-256 (or any key libcrypto reads) over the payload ---- */

int cfs_cosign_verify(const void *pem, size_t pem_len, const char *key_what, const char *sig_b64,
		      const void *payload, size_t payload_len, char *why, size_t why_size)
{
	EVP_MD_CTX *md = NULL;
	EVP_PKEY *key = NULL;
	char *sig = NULL;
	size_t sig_len;
	BIO *bio;
	int r;

	if (pem_len > INT32_MAX)
		return -EFBIG;
	bio = BIO_new_mem_buf(pem, (int)pem_len);
	if (!bio)
		return -ENOMEM;
	key = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (!key) {
		cfs_msg("'%s': not a PEM public key", key_what);
		return -EINVAL;
	}
	r = -EACCES;
	if (cfs_base64_decode(sig_b64, &sig, &sig_len)) {
		snprintf(why, why_size, "its signature annotation is not base64");
		goto out;
	}
	md = EVP_MD_CTX_new();
	if (!md) {
		r = -ENOMEM;
		goto out;
	}
	if (EVP_DigestVerifyInit(md, NULL, EVP_sha256(), NULL, key) != 1 ||
	    EVP_DigestVerify(md, (const unsigned char *)sig, sig_len, payload, payload_len) != 1) {
		snprintf(why, why_size, "a signature that does not verify with '%s'", key_what);
		goto out;
	}
	r = 0;
out:
	EVP_MD_CTX_free(md);
	EVP_PKEY_free(key);
	free(sig);
	return r;
}

/* ---- lookasides ---- */

static int read_file(const char *path, const char *url, char **data, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	struct stat st;
	ssize_t n;
	size_t got = 0;
	char *b;

	if (fd < 0) {
		if (errno == ENOENT || errno == ENOTDIR)
			return -ENOENT;
		cfs_msg("lookaside '%s': %s", url, strerror(errno));
		return -errno;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > CFS_SIG_MAX_SIZE) {
		cfs_msg("lookaside '%s': %s", url,
			S_ISREG(st.st_mode) ? "more than 4 MiB" : "not a regular file");
		close(fd);
		return -EFBIG;
	}
	b = malloc((size_t)st.st_size + 1);
	if (!b) {
		close(fd);
		return -ENOMEM;
	}
	while (got < (size_t)st.st_size &&
	       (n = read(fd, b + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*data = b;
	*len = got;
	return 0;
}

static size_t body_cb(char *p, size_t size, size_t nmemb, void *arg)
{
	struct sink *s = arg;

	return sink_write(s, p, size * nmemb) < 0 ? 0 : size * nmemb;
}

/* Whether @a and @b have the same scheme, host and port. */
static bool same_origin(const char *a, const char *b)
{
	CURLU *ua = curl_url(), *ub = curl_url();
	const CURLUPart parts[] = { CURLUPART_SCHEME, CURLUPART_HOST, CURLUPART_PORT };
	bool same = ua && ub && !curl_url_set(ua, CURLUPART_URL, a, 0) &&
		    !curl_url_set(ub, CURLUPART_URL, b, 0);

	for (size_t i = 0; same && i < 3; i++) {
		char *x = NULL, *y = NULL;

		same = !curl_url_get(ua, parts[i], &x, CURLU_DEFAULT_PORT) &&
		       !curl_url_get(ub, parts[i], &y, CURLU_DEFAULT_PORT) && !strcasecmp(x, y);
		curl_free(x);
		curl_free(y);
	}
	curl_url_cleanup(ua);
	curl_url_cleanup(ub);
	return same;
}

int cfs_lookaside_get(const char *url, const char *cainfo, unsigned int timeout, char **data,
		      size_t *len)
{
	char *cur = NULL, *next;
	struct sink sink = { 0 };
	CURL *c;
	int r = -EIO;

	*data = NULL;
	if (strncmp(url, "file://", 7) == 0)
		return read_file(url + 7, url, data, len);
	if (strncmp(url, "http://", 7) && strncmp(url, "https://", 8)) {
		cfs_msg("lookaside '%s': not a file, http or https URL", url);
		return -EINVAL;
	}
	c = curl_easy_init();
	cur = strdup(url);
	if (!c || !cur) {
		r = -ENOMEM;
		goto out;
	}
	for (unsigned int hops = 0;; hops++) {
		CURLcode res;
		long status = 0;

		free(sink.buf);
		sink = (struct sink){ 0 };
		curl_easy_reset(c);
		curl_easy_setopt(c, CURLOPT_URL, cur);
		curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
		curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
		curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, (long)(timeout ? timeout : 30));
		curl_easy_setopt(c, CURLOPT_TIMEOUT, (long)(timeout ? 2 * timeout : 60));
		curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)CFS_SIG_MAX_SIZE);
		curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, body_cb);
		curl_easy_setopt(c, CURLOPT_WRITEDATA, &sink);
		if (cainfo)
			curl_easy_setopt(c, CURLOPT_CAINFO, cainfo);
		res = curl_easy_perform(c);
		if (res != CURLE_OK) {
			cfs_msg("lookaside '%s': %s", cur,
				sink.over ? "more than 4 MiB" : curl_easy_strerror(res));
			r = sink.over ? -EFBIG : -EIO;
			goto out;
		}
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		if (status == 404) {
			r = -ENOENT;
			goto out;
		}
		if (status >= 300 && status < 400) {
			char *to = NULL;

			curl_easy_getinfo(c, CURLINFO_REDIRECT_URL, &to);
			if (!to || hops >= MAX_REDIRECTS || !same_origin(url, to)) {
				cfs_msg("lookaside '%s': %s", url,
					!to ? "a redirect with no Location" :
					hops >= MAX_REDIRECTS ? "too many redirects" :
					"redirected to another host");
				r = -EACCES;
				goto out;
			}
			next = strdup(to);
			if (!next) {
				r = -ENOMEM;
				goto out;
			}
			free(cur);
			cur = next;
			continue;
		}
		if (status != 200) {
			cfs_msg("lookaside '%s': HTTP %ld", cur, status);
			r = -EIO;
			goto out;
		}
		break;
	}
	*data = sink.buf ? sink.buf : strdup("");
	*len = sink.len;
	sink.buf = NULL;
	r = *data ? 0 : -ENOMEM;
out:
	free(sink.buf);
	free(cur);
	if (c)
		curl_easy_cleanup(c);
	return r;
}
