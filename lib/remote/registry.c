// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The OCI distribution API as a reader of streams, for cfs_tree_from_registry().
 * libcurl pushes a body through a write callback, and tar.c wants to pull
 * it: each stream has a buffer the callback fills, and when it is full the
 * transfer is paused until the reader has taken enough out, so a layer is
 * never held whole in memory or on disk. One multi handle keeps the
 * connection to the registry open from one request to the next.
 *
 * A request that fails transiently (see cfs_http_transient()) is made again
 * after a backoff; a body that broke off resumes with a Range request at
 * the byte it reached (or, when the registry ignores the Range, drops what
 * it had already passed on). A 401 with a bearer challenge gets a token
 * from the challenge's realm (anonymous, or asked for with the credentials),
 * a Basic one the credentials; that Authorization is sent with every request
 * after, and libcurl drops it on a redirect to another host.
 *
 * Three clocks bound a transfer: --timeout for a connection or a body from
 * which nothing comes, libcurl's low-speed limit for one that trickles, and
 * for the small documents (manifests, configs, tokens) a deadline for the
 * whole request, retries included.
 *
 * cfs_registry_get_ranges() reads ranges of a blob for partial pulls, many
 * to a request as multipart/byteranges, each answer checked to be exactly
 * the ranges asked for.
 */
#include <ctype.h>
#include <curl/curl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "cfs/fetch.h"
#include "http.h"
#include "http-parse.h"
#include "json.h"
#include "base/internal.h"
#include "cfs/registry.h"

#define MAX_TOKEN_BODY (1u << 20)
#define MIN_BUF (256u * 1024)

struct cfs_registry {
	const struct cfs_registry_options *opts;
	char *base; /* "http[s]://HOST/v2/REPO" */
	char *host, *repo;
	char *auth; /* "Authorization: Bearer ..." (or Basic), or NULL */
	char *basic; /* "Authorization: Basic ..." of the credentials, or NULL */
	unsigned int timeout, delay_ms, speed_time, doc_timeout;
	bool default_tag; /* the reference named no tag */
	CURLM *multi;
};

struct cfs_registry_stream {
	struct cfs_registry *r;
	char *url;
	const char *accept;
	const char *what;
	CURL *easy;
	struct curl_slist *headers;
	char errbuf[CURL_ERROR_SIZE];
	char why[CURL_ERROR_SIZE + 128]; /* reason()'s */

	/* the current response's headers */
	struct cfs_http_head h;
	bool headers_done;

	/* the body: buf[start, end) not yet read */
	unsigned char *buf;
	size_t cap, start, end;
	bool paused, done;
	/* the start of an error's body: the registry's error code is in it */
	char err_body[2048];
	size_t err_len;
	CURLcode result;
	uint64_t pos; /* body bytes passed on to the buffer, over all attempts */
	uint64_t skip; /* bytes of a restarted body to drop: they were passed on */
	unsigned int attempt;
	struct timespec last_data;
	bool stalled;
	bool default_tag; /* the manifest of 'latest', for want of a tag */
	bool by_tag; /* a manifest asked for by tag: a 404 asks for the tags */
	/* a document's deadline, from the first request on; 0: none */
	unsigned int deadline;
	struct timespec started;
	bool overdue;
};

/* ---- references ---- */

static bool valid_repo(const char *s)
{
	/* lowercase components of [a-z0-9] joined by '.', '_', '__', '-'s; checked loosely */
	if (!*s || *s == '/' || s[strlen(s) - 1] == '/' || strstr(s, "//"))
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyz0123456789._-/") == strlen(s);
}

static bool valid_tag(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > 128 || !(isalnum((unsigned char)s[0]) || s[0] == '_'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!isalnum((unsigned char)s[i]) && !strchr("._-", s[i]))
			return false;
	return true;
}

/*
 * @s with Docker Hub's defaults (malloc()ed, with room for ":latest"), as
 * podman completes a short name; NULL on ENOMEM.
 */
static char *complete_ref(const char *s)
{
	const char *slash = strchr(s, '/'), *host = "", *lib = "";
	size_t first = slash ? (size_t)(slash - s) : 0;
	char *out;

	if (!slash || (!memchr(s, '.', first) && !memchr(s, ':', first) &&
		       !(first == 9 && strncmp(s, "localhost", 9) == 0))) {
		host = "docker.io/";
	} else if ((first == 9 && strncmp(s, "docker.io", 9) == 0) ||
		   (first == 15 && strncmp(s, "index.docker.io", 15) == 0)) {
		host = "docker.io/";
		s = slash + 1;
	}
	/* Docker Hub's official images are under library/ */
	if (host[0] && !strchr(s, '/'))
		lib = "library/";
	if (asprintf(&out, "%s%s%s%8s", host, lib, s, "") < 0)
		return NULL;
	out[strlen(out) - 8] = '\0';
	return out;
}

int cfs_registry_ref_parse(const char *s, struct cfs_registry_ref *ref)
{
	char *copy, *slash, *at, *colon;

	memset(ref, 0, sizeof(*ref));
	copy = complete_ref(s);
	if (!copy)
		return -ENOMEM;
	slash = strchr(copy, '/');
	if (!slash || slash == copy)
		goto bad;
	*slash = '\0';
	ref->host = copy;
	ref->repo = slash + 1;
	if (strspn(ref->host, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-:[]") !=
	    strlen(ref->host))
		goto bad;
	at = strchr(ref->repo, '@');
	if (at) {
		*at = '\0';
		ref->digest = at + 1;
		if (!cfs_is_sha256_digest(ref->digest))
			goto bad;
	} else {
		colon = strrchr(ref->repo, ':');
		if (colon) {
			*colon = '\0';
			ref->tag = colon + 1;
		} else {
			ref->tag = ref->repo + strlen(ref->repo) + 1;
			strcpy(ref->tag, "latest");
			ref->default_tag = true;
		}
		if (!valid_tag(ref->tag))
			goto bad;
	}
	if (!valid_repo(ref->repo))
		goto bad;
	return 0;
bad:
	free(copy);
	memset(ref, 0, sizeof(*ref));
	return -EINVAL;
}

void cfs_registry_ref_free(struct cfs_registry_ref *ref)
{
	free(ref->host);
	memset(ref, 0, sizeof(*ref));
}

/* ---- the client ---- */

int cfs_registry_open(const struct cfs_registry_ref *ref, const struct cfs_registry_options *opts,
		      struct cfs_registry **rp)
{
	struct cfs_registry *r;

	*rp = NULL;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->opts = opts;
	r->timeout = opts->timeout ? opts->timeout : CFS_FETCH_DEFAULT_TIMEOUT;
	r->delay_ms = opts->retry_delay_ms ? opts->retry_delay_ms : 250;
	r->speed_time = opts->speed_time ? opts->speed_time : CFS_REGISTRY_DEFAULT_SPEED_TIME;
	r->doc_timeout = opts->document_timeout ? opts->document_timeout :
						  CFS_REGISTRY_DEFAULT_DOCUMENT_TIMEOUT;
	if (opts->username) {
		char *pair = NULL, *b64 = NULL;
		int n = asprintf(&pair, "%s:%s", opts->username,
				 opts->password ? opts->password : "");

		if (n < 0 || !(b64 = cfs_base64_encode(pair, (size_t)n)) ||
		    asprintf(&r->basic, "Authorization: Basic %s", b64) < 0)
			r->basic = NULL;
		if (n >= 0) {
			explicit_bzero(pair, (size_t)n);
			free(pair);
		}
		if (b64) {
			explicit_bzero(b64, strlen(b64));
			free(b64);
		}
		if (!r->basic)
			goto nomem;
	}
	/* Docker Hub's API is not at its name */
	if (asprintf(&r->base, "%s://%s/v2/%s", opts->plain_http ? "http" : "https",
		     strcmp(ref->host, "docker.io") == 0 ? "registry-1.docker.io" : ref->host,
		     ref->repo) < 0) {
		r->base = NULL;
		goto nomem;
	}
	r->default_tag = ref->default_tag;
	r->host = strdup(ref->host);
	r->repo = strdup(ref->repo);
	if (!r->host || !r->repo)
		goto nomem;
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		cfs_msg("cannot initialise libcurl");
		cfs_registry_close(r);
		return -EIO;
	}
	r->multi = curl_multi_init();
	if (!r->multi) {
		curl_global_cleanup();
		goto nomem;
	}
	*rp = r;
	return 0;
nomem:
	cfs_registry_close(r);
	return -ENOMEM;
}

void cfs_registry_close(struct cfs_registry *r)
{
	if (!r)
		return;
	if (r->multi) {
		curl_multi_cleanup(r->multi);
		curl_global_cleanup();
	}
	free(r->base);
	free(r->host);
	free(r->repo);
	if (r->auth) {
		explicit_bzero(r->auth, strlen(r->auth));
		free(r->auth);
	}
	if (r->basic) {
		explicit_bzero(r->basic, strlen(r->basic));
		free(r->basic);
	}
	free(r);
}

static double seconds_since(const struct timespec *t)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t->tv_sec) + (double)(now.tv_nsec - t->tv_nsec) / 1e9;
}

static void sleep_ms(double ms)
{
	struct timespec ts = { .tv_sec = (time_t)(ms / 1000),
			       .tv_nsec = (long)((ms - (double)(time_t)(ms / 1000) * 1000) * 1e6) };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* ---- a stream's callbacks ---- */

static size_t header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct cfs_registry_stream *s = arg;
	size_t len = size * nmemb;
	int r;

	r = cfs_http_head_line(&s->h, data, len);
	if (r < 0)
		return 0;
	if (r == 1 && s->h.status >= 200 &&
	    !(s->h.status >= 300 && s->h.status < 400 && s->h.location)) {
		s->headers_done = true;
		/* a restart: drop what was passed on, unless the range was served */
		s->skip = s->h.status == 206 ? 0 : s->pos;
	}
	return len;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct cfs_registry_stream *s = arg;
	size_t len = size * nmemb;

	clock_gettime(CLOCK_MONOTONIC, &s->last_data);
	if (s->h.status >= 300) {
		/* an error's body: not ours to read, but its start says which error */
		size_t k = sizeof(s->err_body) - s->err_len;

		if (k > len)
			k = len;
		memcpy(s->err_body + s->err_len, data, k);
		s->err_len += k;
		return len;
	}
	if (s->skip) {
		size_t k = len < s->skip ? len : (size_t)s->skip;

		s->skip -= k;
		data += k;
		len -= k;
		if (len == 0)
			return size * nmemb;
	}
	if (s->start > 0 && s->end + len > s->cap) {
		memmove(s->buf, s->buf + s->start, s->end - s->start);
		s->end -= s->start;
		s->start = 0;
	}
	if (s->end + len > s->cap) {
		unsigned char *nb;

		if (s->end > 0) {
			s->paused = true;
			return CURL_WRITEFUNC_PAUSE; /* the same bytes come again */
		}
		nb = realloc(s->buf, len); /* more than the buffer holds in one go */
		if (!nb)
			return 0;
		s->buf = nb;
		s->cap = len;
	}
	memcpy(s->buf + s->end, data, len);
	s->end += len;
	s->pos += len;
	return size * nmemb;
}

/*
 * A transfer that received nothing for the timeout has stalled; paused is
 * not stalled. A document that took longer than its deadline is overdue.
 */
static int progress_cb(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal,
		       curl_off_t ulnow)
{
	struct cfs_registry_stream *s = arg;

	(void)dltotal, (void)dlnow, (void)ultotal, (void)ulnow;
	if (s->paused)
		clock_gettime(CLOCK_MONOTONIC, &s->last_data);
	if (seconds_since(&s->last_data) > s->r->timeout) {
		s->stalled = true;
		return 1;
	}
	if (s->deadline && seconds_since(&s->started) > s->deadline) {
		s->overdue = true;
		return 1;
	}
	return 0;
}

/* ---- a stream's transfers ---- */

static void stop(struct cfs_registry_stream *s)
{
	if (s->easy) {
		curl_multi_remove_handle(s->r->multi, s->easy);
		curl_easy_cleanup(s->easy);
		s->easy = NULL;
	}
	curl_slist_free_all(s->headers);
	s->headers = NULL;
}

/*
 * What every request of the client sets on @easy: the common options, a
 * redirect to plain http only with --plain-http, the low-speed limit.
 */
static void http_setup(struct cfs_registry *r, CURL *easy, const char *url)
{
	cfs_http_setup(easy, url, r->opts->cainfo, r->timeout);
	if (!r->opts->plain_http)
		curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, "https");
	if (r->opts->speed_limit) {
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, (long)r->opts->speed_limit);
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, (long)r->speed_time);
	}
}

/* Start a request for s->url; a restart asks for the body from s->pos on. */
static int start(struct cfs_registry_stream *s)
{
	struct cfs_registry *r = s->r;
	char range[64], accept[512];

	stop(s);
	s->easy = curl_easy_init();
	if (!s->easy)
		return -ENOMEM;
	cfs_http_head_reset(&s->h);
	s->headers_done = false;
	s->done = false;
	s->paused = false;
	s->err_len = 0;
	s->stalled = false;
	s->result = CURLE_OK;
	s->errbuf[0] = '\0';
	s->skip = 0;
	clock_gettime(CLOCK_MONOTONIC, &s->last_data);
	if (s->accept) {
		snprintf(accept, sizeof(accept), "Accept: %s", s->accept);
		s->headers = curl_slist_append(s->headers, accept);
	}
	if (r->auth)
		s->headers = curl_slist_append(s->headers, r->auth);
	http_setup(r, s->easy, s->url);
	curl_easy_setopt(s->easy, CURLOPT_HTTPHEADER, s->headers);
	if (s->pos) {
		snprintf(range, sizeof(range), "%llu-", (unsigned long long)s->pos);
		curl_easy_setopt(s->easy, CURLOPT_RANGE, range);
	}
	curl_easy_setopt(s->easy, CURLOPT_HEADERFUNCTION, header_cb);
	curl_easy_setopt(s->easy, CURLOPT_HEADERDATA, s);
	curl_easy_setopt(s->easy, CURLOPT_WRITEFUNCTION, write_cb);
	curl_easy_setopt(s->easy, CURLOPT_WRITEDATA, s);
	curl_easy_setopt(s->easy, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(s->easy, CURLOPT_XFERINFOFUNCTION, progress_cb);
	curl_easy_setopt(s->easy, CURLOPT_XFERINFODATA, s);
	curl_easy_setopt(s->easy, CURLOPT_NOPROGRESS, 0L);
	if (curl_multi_add_handle(r->multi, s->easy) != CURLM_OK)
		return -ENOMEM;
	return 0;
}

/* Let libcurl work, waiting up to a second for the network when @wait. */
static void pump(struct cfs_registry_stream *s, bool wait)
{
	CURLMsg *m;
	int running, left;

	if (wait)
		curl_multi_poll(s->r->multi, NULL, 0, 1000, NULL);
	curl_multi_perform(s->r->multi, &running);
	while ((m = curl_multi_info_read(s->r->multi, &left))) {
		if (m->msg == CURLMSG_DONE && m->easy_handle == s->easy) {
			s->done = true;
			s->result = m->data.result;
		}
	}
}

/* Whether a TLS handshake failed on an answer in plain http. */
static bool plain_answer(const struct cfs_registry *r, CURLcode res, const char *errbuf)
{
	return !r->opts->plain_http && res == CURLE_SSL_CONNECT_ERROR &&
	       strstr(errbuf, "wrong version number");
}

/* Why the transfer failed, for a message (into s->errbuf). */
static const char *reason(struct cfs_registry_stream *s)
{
	if (s->overdue) {
		snprintf(s->why, sizeof(s->why),
			 "not received within %u s, the time a manifest, a config or a token may take (--document-timeout)",
			 s->deadline);
		return s->why;
	}
	if (s->stalled)
		return "no data received within the timeout";
	if (s->result == CURLE_UNSUPPORTED_PROTOCOL && s->h.location_http)
		return "the registry redirects to plain http://, which is refused without --plain-http";
	if (plain_answer(s->r, s->result, s->errbuf)) {
		snprintf(s->why, sizeof(s->why),
			 "the registry answers in plain http, not https (%s): use --plain-http if it is meant to",
			 s->errbuf);
		return s->why;
	}
	return s->errbuf[0] ? s->errbuf : curl_easy_strerror(s->result);
}

static bool transient(const struct cfs_registry_stream *s)
{
	if (s->overdue || plain_answer(s->r, s->result, s->errbuf))
		return false;
	if (s->headers_done && s->h.status >= 300)
		return cfs_http_transient(CURLE_OK, s->h.status);
	return s->stalled || cfs_http_transient(s->result, 0);
}

struct membuf {
	char *data;
	size_t len;
	bool too_long;
};

static size_t mem_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct membuf *m = arg;
	size_t len = size * nmemb;
	char *nd;

	if (m->len + len > MAX_TOKEN_BODY) {
		m->too_long = true;
		return 0;
	}
	nd = realloc(m->data, m->len + len + 1);
	if (!nd)
		return 0;
	m->data = nd;
	memcpy(m->data + m->len, data, len);
	m->len += len;
	return len;
}

/*
 * Answer the bearer challenge @c with a token from its realm: anonymous, or
 * asked for with the credentials (which go to the realm, and no further).
 */
static int get_token(struct cfs_registry_stream *s, const struct cfs_http_challenge *c)
{
	struct cfs_registry *r = s->r;
	char *url = NULL, *esc_service = NULL, *esc_scope = NULL, *dflt = NULL;
	struct curl_slist *headers = NULL;
	struct membuf body = { 0 };
	json_t *doc = NULL;
	const char *token;
	CURL *easy = NULL;
	CURLcode res;
	long code = 0;
	unsigned int deadline;
	int ret = -EACCES;

	if (!c->realm || (strncmp(c->realm, "https://", 8) != 0 &&
			  !(r->opts->plain_http && strncmp(c->realm, "http://", 7) == 0))) {
		cfs_msg("'%s': HTTP 401, and the bearer challenge names no %srealm to ask for a token",
			s->what, r->opts->plain_http ? "http(s) " : "https ");
		goto out;
	}
	if (!c->scope && asprintf(&dflt, "repository:%s:%s", r->repo,
				  r->opts->push ? "push,pull" : "pull") < 0) {
		dflt = NULL;
		ret = -ENOMEM;
		goto out;
	}
	easy = curl_easy_init();
	if (!easy) {
		ret = -ENOMEM;
		goto out;
	}
	esc_scope = curl_easy_escape(easy, c->scope ? c->scope : dflt, 0);
	esc_service = c->service ? curl_easy_escape(easy, c->service, 0) : NULL;
	if (!esc_scope || (c->service && !esc_service) ||
	    asprintf(&url, "%s%cscope=%s%s%s", c->realm, strchr(c->realm, '?') ? '&' : '?',
		     esc_scope, c->service ? "&service=" : "", c->service ? esc_service : "") < 0) {
		url = NULL;
		ret = -ENOMEM;
		goto out;
	}
	if (r->basic && !(headers = curl_slist_append(NULL, r->basic))) {
		ret = -ENOMEM;
		goto out;
	}
	http_setup(r, easy, url);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, mem_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, s->errbuf);
	/* a document's token takes of its deadline; a blob's has one of its own */
	if (s->deadline) {
		double left = s->deadline - seconds_since(&s->started);

		deadline = s->deadline;
		curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, left < 0.001 ? 1L : (long)(left * 1000));
	} else {
		deadline = r->doc_timeout;
		curl_easy_setopt(easy, CURLOPT_TIMEOUT, (long)r->doc_timeout);
	}
	s->errbuf[0] = '\0';
	res = curl_easy_perform(easy);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	if (res != CURLE_OK || code != 200) {
		if (res == CURLE_OPERATION_TIMEDOUT)
			cfs_msg("'%s': getting a token from '%s': not received within %u s, the time a manifest, a config or a token may take (--document-timeout)",
				s->what, c->realm, deadline);
		else if (res != CURLE_OK)
			cfs_msg("'%s': getting a token from '%s': %s", s->what, c->realm,
				body.too_long ? "too long an answer" :
				s->errbuf[0]  ? s->errbuf :
						curl_easy_strerror(res));
		else if ((code == 401 || code == 403) && r->basic)
			cfs_msg("'%s': getting a token from '%s': HTTP %ld: the credentials were refused",
				s->what, c->realm, code);
		else
			cfs_msg("'%s': getting a token from '%s': HTTP %ld", s->what, c->realm, code);
		ret = code == 401 || code == 403 ? -EACCES : -EIO;
		goto out;
	}
	ret = cfs_json_parse(body.data ? body.data : "", body.len, c->realm, &doc);
	if (ret)
		goto out;
	token = cfs_json_str(doc, "token");
	if (!token)
		token = cfs_json_str(doc, "access_token");
	if (!token || !token[0] || strpbrk(token, "\r\n")) {
		cfs_msg("'%s': the token server '%s' sent no token", s->what, c->realm);
		ret = -EACCES;
		goto out;
	}
	free(r->auth);
	if (asprintf(&r->auth, "Authorization: Bearer %s", token) < 0) {
		r->auth = NULL;
		ret = -ENOMEM;
		goto out;
	}
	ret = 0;
out:
	json_decref(doc);
	if (body.data) {
		explicit_bzero(body.data, body.len);
		free(body.data);
	}
	curl_slist_free_all(headers);
	curl_free(esc_scope);
	curl_free(esc_service);
	if (easy)
		curl_easy_cleanup(easy);
	free(url);
	free(dflt);
	return ret;
}

/*
 * A 401: answer its challenge, once per request. 1: ask again, with the
 * new Authorization; 0: nothing to answer with; -errno after a message.
 */
static int answer_challenge(struct cfs_registry_stream *s)
{
	struct cfs_registry *r = s->r;
	struct cfs_http_challenge c;
	int ret;

	if (!s->h.challenge)
		return 0;
	ret = cfs_http_challenge_parse(s->h.challenge, &c);
	if (ret == -EINVAL)
		ret = 0;
	else if (ret == 0 && c.basic && r->basic) {
		free(r->auth);
		r->auth = strdup(r->basic);
		ret = r->auth ? 1 : -ENOMEM;
	} else if (ret == 0 && !c.basic) {
		ret = get_token(s, &c);
		if (ret == 0)
			ret = 1;
	}
	cfs_http_challenge_free(&c);
	return ret;
}

static int list_tags(struct cfs_registry *r, const char *what, char *out, size_t size);

/*
 * The first "code" of the distribution API's error body the registry
 * sent, {"errors": [{"code": "NAME_UNKNOWN", ...}]}, or NULL: a known
 * code only, so nothing of the body is printed.
 */
static const char *error_code(struct cfs_registry_stream *s)
{
	static const char *const known[] = { "NAME_UNKNOWN", "MANIFEST_UNKNOWN", "BLOB_UNKNOWN" };
	const char *code, *found = NULL;
	json_t *doc, *errors;

	if (s->err_len == 0 || s->err_len == sizeof(s->err_body))
		return NULL; /* none, or cut short */
	doc = json_loadb(s->err_body, s->err_len, JSON_REJECT_DUPLICATES, NULL);
	errors = doc ? json_object_get(doc, "errors") : NULL;
	code = json_is_array(errors) ? cfs_json_str(json_array_get(errors, 0), "code") : NULL;
	for (size_t i = 0; code && i < sizeof(known) / sizeof(known[0]); i++)
		if (strcmp(code, known[i]) == 0)
			found = known[i];
	json_decref(doc);
	return found;
}

/*
 * (Re)start the request and wait for the registry's answer, through
 * retries and an authentication challenge. 0 once the body is on its way.
 */
static int request(struct cfs_registry_stream *s)
{
	struct cfs_registry *r = s->r;
	bool answered = false;
	int ret;

	for (;;) {
		s->attempt++;
		ret = start(s);
		if (ret)
			return ret;
		while (!s->headers_done && !s->done)
			pump(s, true);
		if (s->headers_done && (s->h.status == 200 || (s->pos && s->h.status == 206)))
			return 0;
		if (s->headers_done && s->h.status == 401 && !answered) {
			answered = true;
			ret = answer_challenge(s);
			if (ret < 0)
				return ret;
			if (ret) {
				s->attempt--;
				continue;
			}
		}
		if (transient(s) && s->attempt <= r->opts->retries) {
			stop(s);
			sleep_ms(cfs_http_backoff_ms(r->delay_ms, s->attempt));
			continue;
		}
		break;
	}
	if (!s->headers_done) {
		cfs_msg("'%s': %s", s->what, reason(s));
		return s->result == CURLE_COULDNT_CONNECT || s->result == CURLE_COULDNT_RESOLVE_HOST ?
			       -EHOSTUNREACH :
			       -EIO;
	}
	switch (s->h.status) {
	case 401:
		if (r->basic)
			cfs_msg("'%s': HTTP 401: the registry refused the credentials", s->what);
		else
			cfs_msg("'%s': HTTP 401: the registry wants credentials (--creds or an auth file)%s",
				s->what, answered && s->h.challenge && r->auth ?
						 " (the anonymous token was refused)" :
						 "");
		return -EACCES;
	case 403:
		cfs_msg("'%s': HTTP 403: access denied", s->what);
		return -EACCES;
	case 404: {
		const char *code = error_code(s), *what = "not found";
		char tags[256] = "";

		/*
		 * Some registries answer MANIFEST_UNKNOWN for a repository they
		 * lack too: its tags, or NAME_UNKNOWN for them, tell.
		 */
		if (s->by_tag && (!code || strcmp(code, "MANIFEST_UNKNOWN") == 0) &&
		    list_tags(r, s->what, tags, sizeof(tags)) == 1)
			code = "NAME_UNKNOWN";
		if (code && strcmp(code, "NAME_UNKNOWN") == 0)
			what = "the registry has no such repository (NAME_UNKNOWN)";
		else if (code && strcmp(code, "MANIFEST_UNKNOWN") == 0)
			what = "the repository has no manifest of that tag (MANIFEST_UNKNOWN)";
		else if (code && strcmp(code, "BLOB_UNKNOWN") == 0)
			what = "the repository has no such blob (BLOB_UNKNOWN)";
		cfs_msg("'%s': HTTP 404: %s%s%s%s", s->what, what,
			s->default_tag ? " (no tag was given, so 'latest' was tried)" : "",
			tags[0] ? "; " : "", tags);
		return -ENOENT;
	}
	default:
		cfs_msg("'%s': HTTP %ld", s->what, s->h.status);
		return -EIO;
	}
}

static int get(struct cfs_registry *r, bool manifest, bool document, const char *name,
	       const char *accept, const char *what, struct cfs_registry_stream **sp)
{
	struct cfs_registry_stream *s;
	int ret;

	*sp = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->r = r;
	s->accept = accept;
	s->what = what;
	s->default_tag = manifest && r->default_tag && strcmp(name, "latest") == 0;
	s->by_tag = manifest && strncmp(name, "sha256:", 7) != 0;
	s->deadline = document ? r->doc_timeout : 0;
	clock_gettime(CLOCK_MONOTONIC, &s->started);
	s->cap = MIN_BUF;
	s->buf = malloc(s->cap);
	cfs_http_head_reset(&s->h);
	if (!s->buf || asprintf(&s->url, "%s/%s%s%s", r->base,
				!name ? "tags/list" : manifest ? "manifests" : "blobs",
				name ? "/" : "", name ? name : "") < 0) {
		s->url = NULL;
		cfs_registry_end(s);
		return -ENOMEM;
	}
	ret = request(s);
	if (ret) {
		cfs_registry_end(s);
		return ret;
	}
	*sp = s;
	return 0;
}

/*
 * The repository's tags (GET /v2/NAME/tags/list) into @out, as "its tags:
 * 'a', 'b'", five at most, or "it has no tags". Return: 0 with @out
 * filled, 1 when the registry says it has no such repository
 * (NAME_UNKNOWN), or -errno when it cannot tell (said nowhere: this is
 * only a hint to another message).
 */
static int list_tags(struct cfs_registry *r, const char *what, char *out, size_t size)
{
	struct cfs_registry_stream *s = NULL;
	char said[256], body[16384];
	size_t len = 0, n_out = 0, shown = 0;
	json_t *doc = NULL, *tags;
	ssize_t got;
	int ret;

	out[0] = '\0';
	cfs_msg_capture(said, sizeof(said));
	ret = get(r, false, true, NULL, "application/json", what, &s);
	cfs_msg_capture(NULL, 0);
	if (ret) {
		ret = strstr(said, "(NAME_UNKNOWN)") ? 1 : ret;
		goto out;
	}
	while (len < sizeof(body) && (got = cfs_registry_read(s, body + len, sizeof(body) - len)) > 0)
		len += (size_t)got;
	ret = -EINVAL;
	if (len == sizeof(body))
		goto out; /* too many tags to list */
	doc = json_loadb(body, len, JSON_REJECT_DUPLICATES, NULL);
	tags = doc ? json_object_get(doc, "tags") : NULL;
	if (!json_is_array(tags) && !json_is_null(tags))
		goto out;
	for (size_t i = 0; i < json_array_size(tags); i++) {
		const char *t = cfs_json_cstr(json_array_get(tags, i));
		int n;

		if (!t)
			continue;
		if (shown == 5) {
			snprintf(out + n_out, size - n_out, ", ...");
			break;
		}
		n = snprintf(out + n_out, size - n_out, "%s'%s'", shown ? ", " : "its tags: ", t);
		if (n < 0 || (size_t)n >= size - n_out) {
			out[n_out] = '\0'; /* no tag cut in half */
			break;
		}
		n_out += (size_t)n;
		shown++;
	}
	if (!shown)
		snprintf(out, size, "it has no tags");
	ret = 0;
out:
	json_decref(doc);
	cfs_registry_end(s);
	return ret;
}

int cfs_registry_get(struct cfs_registry *r, bool manifest, const char *name, const char *accept,
		     const char *what, struct cfs_registry_stream **sp)
{
	return get(r, manifest, manifest, name, accept, what, sp);
}

int cfs_registry_get_document(struct cfs_registry *r, bool manifest, const char *name,
			      const char *accept, const char *what,
			      struct cfs_registry_stream **sp)
{
	return get(r, manifest, true, name, accept, what, sp);
}

uint64_t cfs_registry_length(const struct cfs_registry_stream *s)
{
	return s->h.status == 200 ? s->h.length : UINT64_MAX;
}

const char *cfs_registry_type(const struct cfs_registry_stream *s)
{
	return s->h.type;
}

ssize_t cfs_registry_read(struct cfs_registry_stream *s, void *buf, size_t len)
{
	int ret;

	for (;;) {
		if (s->end > s->start) {
			size_t n = s->end - s->start < len ? s->end - s->start : len;

			memcpy(buf, s->buf + s->start, n);
			s->start += n;
			if (s->start == s->end)
				s->start = s->end = 0;
			if (s->paused) {
				s->paused = false;
				curl_easy_pause(s->easy, CURLPAUSE_CONT);
			}
			return (ssize_t)n;
		}
		if (!s->done) {
			pump(s, true);
			continue;
		}
		if (s->result == CURLE_OK)
			return 0;
		if (!transient(s) || s->attempt > s->r->opts->retries) {
			cfs_msg("'%s': %s", s->what, reason(s));
			return -EIO;
		}
		stop(s);
		sleep_ms(cfs_http_backoff_ms(s->r->delay_ms, s->attempt));
		ret = request(s);
		if (ret)
			return -EIO;
	}
}

void cfs_registry_end(struct cfs_registry_stream *s)
{
	if (!s)
		return;
	stop(s);
	cfs_http_head_reset(&s->h);
	free(s->buf);
	free(s->url);
	free(s);
}

/* ---- ranges of a blob (zstd:chunked partial pulls) ---- */

#define RANGES_PER_REQUEST 512
#define RANGE_LINE_MAX 1024

enum mp_state { MP_DELIM, MP_HEADERS, MP_BODY, MP_END };

/* One request for ranges[first, last), the first from ranges[first].start + skip. */
struct range_req {
	struct cfs_registry *r;
	const char *what;
	const struct cfs_registry_range *ranges;
	size_t first, last;
	uint64_t skip;
	uint64_t blob_size;
	cfs_registry_range_fn fn;
	void *ctx;
	int err; /* a wrong answer or the sink's error: stop */

	/* the answer's headers; h.range*: a part's Content-Range, end inclusive */
	struct cfs_http_head h;
	bool multipart, whole;

	/* where the body is: the part (range) and the bytes of it still to come */
	enum mp_state state;
	size_t part;
	uint64_t pos, left;
	char line[RANGE_LINE_MAX];
	size_t line_len;
	uint64_t received; /* body bytes, for the caller's count */
};

static uint64_t req_start(const struct range_req *q, size_t i)
{
	return q->ranges[i].start + (i == q->first ? q->skip : 0);
}

static int wrong_range(struct range_req *q, size_t i)
{
	cfs_msg("'%s': asked for bytes %llu-%llu, the registry answered with bytes %llu-%llu",
		q->what, (unsigned long long)req_start(q, i), (unsigned long long)q->ranges[i].end - 1,
		(unsigned long long)q->h.range_start, (unsigned long long)q->h.range_end);
	return -EPROTO;
}

/* The part @q->part begins with the Content-Range in h.range_*: is it the one asked for? */
static int begin_part(struct range_req *q)
{
	size_t i = q->first + q->part;

	if (i >= q->last) {
		cfs_msg("'%s': the registry answered with more ranges than were asked for", q->what);
		return -EPROTO;
	}
	if (q->h.range_start != req_start(q, i) || q->h.range_end + 1 != q->ranges[i].end ||
	    (q->h.range_total != UINT64_MAX && q->h.range_total != q->blob_size))
		return wrong_range(q, i);
	q->pos = q->h.range_start;
	q->left = q->h.range_end + 1 - q->h.range_start;
	q->state = MP_BODY;
	return 0;
}

static size_t range_header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct range_req *q = arg;
	size_t len = size * nmemb;

	if (cfs_http_head_line(&q->h, data, len) < 0)
		return 0;
	q->multipart = strcasecmp(q->h.type, "multipart/byteranges") == 0;
	return len;
}

/* Pass body bytes of the current part to the sink. */
static int body_bytes(struct range_req *q, const char *data, size_t n)
{
	int r = q->fn(q->ctx, q->first + q->part, q->pos, data, n);

	q->pos += n;
	q->left -= n;
	return r;
}

/* One line of a multipart body's delimiters and part headers. */
static int multipart_line(struct range_req *q, const char *l)
{
	size_t blen = strlen(q->h.boundary);

	if (q->state == MP_DELIM) {
		if (!*l)
			return 0;
		if (strncmp(l, "--", 2) != 0 || strncmp(l + 2, q->h.boundary, blen) != 0)
			goto bad;
		if (strcmp(l + 2 + blen, "--") == 0) {
			q->state = MP_END;
			return 0;
		}
		if (l[2 + blen])
			goto bad;
		q->h.range = false;
		q->state = MP_HEADERS;
		return 0;
	}
	/* MP_HEADERS */
	if (!*l) {
		if (!q->h.range)
			goto bad;
		return begin_part(q);
	}
	if (strncasecmp(l, "content-range:", 14) == 0 &&
	    cfs_http_content_range(l + 14, &q->h.range_start, &q->h.range_end,
				   &q->h.range_total) == 0)
		q->h.range = true;
	return 0;
bad:
	cfs_msg("'%s': a malformed multipart/byteranges answer", q->what);
	return -EPROTO;
}

static size_t range_write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct range_req *q = arg;
	size_t len = size * nmemb, i = 0;

	if (q->h.status != 206) {
		if (q->h.status == 200)
			q->whole = true; /* the Range was ignored: stop here */
		return q->h.status == 200 ? 0 : len;
	}
	if (q->err)
		return 0;
	q->received += len;
	if (!q->multipart) {
		if (q->part == 0 && q->state != MP_BODY) {
			if (!q->h.range) {
				cfs_msg("'%s': a 206 answer without a Content-Range", q->what);
				q->err = -EPROTO;
				return 0;
			}
			if (q->last - q->first != 1) {
				q->err = wrong_range(q, q->first);
				return 0;
			}
			q->err = begin_part(q);
			if (q->err)
				return 0;
		}
		if (len > q->left) {
			cfs_msg("'%s': the registry sent more than the range asked for", q->what);
			q->err = -EPROTO;
			return 0;
		}
		q->err = body_bytes(q, data, len);
		if (q->left == 0)
			q->part = 1;
		return q->err ? 0 : len;
	}
	if (!q->h.boundary[0]) {
		cfs_msg("'%s': a multipart/byteranges answer without a boundary", q->what);
		q->err = -EPROTO;
		return 0;
	}
	while (i < len) {
		if (q->state == MP_BODY) {
			size_t n = len - i < q->left ? len - i : (size_t)q->left;

			q->err = body_bytes(q, data + i, n);
			if (q->err)
				return 0;
			i += n;
			if (q->left == 0) {
				q->part++;
				q->state = MP_DELIM;
			}
			continue;
		}
		if (q->state == MP_END) {
			i = len; /* an epilogue */
			break;
		}
		if (data[i] == '\n') {
			while (q->line_len && q->line[q->line_len - 1] == '\r')
				q->line_len--;
			q->line[q->line_len] = '\0';
			q->line_len = 0;
			q->err = multipart_line(q, q->line);
			if (q->err)
				return 0;
		} else if (q->line_len + 1 >= sizeof(q->line)) {
			cfs_msg("'%s': a malformed multipart/byteranges answer", q->what);
			q->err = -EPROTO;
			return 0;
		} else {
			q->line[q->line_len++] = data[i];
		}
		i++;
	}
	return len;
}

/* Make the request of @q once. 0 when it ran to its end (q->h.status tells how). */
static int range_once(struct range_req *q, CURL *easy, const char *url, CURLcode *res)
{
	struct curl_slist *headers = NULL;
	char *range = NULL, *p;
	size_t cap = (q->last - q->first) * 44 + 16;

	range = malloc(cap);
	if (!range)
		return -ENOMEM;
	p = range;
	for (size_t i = q->first; i < q->last; i++)
		p += sprintf(p, "%s%llu-%llu", i == q->first ? "" : ",",
			     (unsigned long long)req_start(q, i),
			     (unsigned long long)q->ranges[i].end - 1);
	cfs_http_head_reset(&q->h);
	q->multipart = q->whole = false;
	q->state = MP_DELIM;
	q->part = 0;
	q->line_len = 0;
	q->err = 0;
	curl_easy_reset(easy);
	http_setup(q->r, easy, url);
	if (q->r->auth)
		headers = curl_slist_append(headers, q->r->auth);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(easy, CURLOPT_RANGE, range);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, range_header_cb);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, q);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, range_write_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, q);
	/* without --speed-limit, a stalled transfer: under 1 byte/s for the timeout */
	if (!q->r->opts->speed_limit) {
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, (long)q->r->timeout);
	}
	*res = curl_easy_perform(easy);
	curl_slist_free_all(headers);
	free(range);
	return 0;
}

int cfs_registry_get_ranges(struct cfs_registry *r, const char *digest, uint64_t blob_size,
			    const struct cfs_registry_range *ranges, size_t n, bool multi,
			    const char *what, cfs_registry_range_fn fn, void *ctx,
			    uint64_t *received)
{
	struct range_req q = { .r = r, .what = what, .ranges = ranges, .blob_size = blob_size,
			       .fn = fn, .ctx = ctx };
	unsigned int attempt = 0;
	char *url = NULL;
	CURL *easy;
	CURLcode res;
	int ret = 0;

	for (size_t i = 0; i < n; i++)
		if (ranges[i].start >= ranges[i].end || ranges[i].end > blob_size ||
		    (i && ranges[i].start < ranges[i - 1].end))
			return -EINVAL;
	easy = curl_easy_init();
	if (!easy || asprintf(&url, "%s/blobs/%s", r->base, digest) < 0) {
		if (easy)
			curl_easy_cleanup(easy);
		return -ENOMEM;
	}
	for (size_t next = 0; next < n && ret == 0;) {
		size_t done;

		q.first = next;
		q.last = multi ? (n - next > RANGES_PER_REQUEST ? next + RANGES_PER_REQUEST : n) :
				 next + 1;
		ret = range_once(&q, easy, url, &res);
		if (ret)
			break;
		if (received)
			*received += q.received;
		q.received = 0;
		if (q.err) {
			ret = q.err;
			break;
		}
		if (q.whole || (res == CURLE_OK && q.h.status == 200)) {
			ret = 1; /* the registry ignores Range */
			break;
		}
		/* how far it got: whole parts, and into the part it was in */
		done = q.part;
		if (res == CURLE_OK && q.h.status == 206 && done == q.last - q.first &&
		    (!q.multipart || q.state == MP_END || q.state == MP_DELIM)) {
			next = q.last;
			q.skip = 0;
			attempt = 0;
			continue;
		}
		if (res == CURLE_OK && q.h.status == 206) {
			cfs_msg("'%s': the registry's answer ends before the %zu ranges asked for",
				what, q.last - q.first);
			ret = -EPROTO;
			break;
		}
		if (!cfs_http_transient(res, res == CURLE_OK ? q.h.status : 0) ||
		    ++attempt > r->opts->retries) {
			if (res != CURLE_OK)
				cfs_msg("'%s': %s", what, curl_easy_strerror(res));
			else if (q.h.status == 416)
				cfs_msg("'%s': HTTP 416: the registry refuses the ranges asked for", what);
			else
				cfs_msg("'%s': HTTP %ld", what, q.h.status);
			ret = res == CURLE_OK && (q.h.status == 401 || q.h.status == 403) ? -EACCES : -EIO;
			break;
		}
		/* again from the byte it reached */
		if (q.h.status == 206 && q.state == MP_BODY)
			q.skip = q.pos - ranges[q.first + done].start;
		else if (done)
			q.skip = 0;
		next = q.first + done;
		sleep_ms(cfs_http_backoff_ms(r->delay_ms, attempt));
	}
	cfs_http_head_reset(&q.h);
	free(url);
	curl_easy_cleanup(easy);
	return ret;
}

/* ---- uploads (cfsctl push) ---- */

#define MAX_HEAD_BYTES (64u * 1024) /* a response's headers, all of them */
#define MAX_LOCATION 2048
#define MAX_ERROR_BODY (1u << 20)

/*
 * One request of a push: a HEAD, an empty POST, a PATCH of a blob from an
 * offset, a GET of an upload's status, or a PUT of a manifest or to end an
 * upload.
 */
struct up {
	struct cfs_registry_stream s; /* its r, what, h, errbuf: for answer_challenge() */
	const char *method;
	const char *url;
	const char *type; /* the body's Content-Type, or NULL */
	const void *mem; /* the body: @size bytes of @mem, or of @fd from offset @start */
	int fd;
	uint64_t start, size, sent;
	bool body;
	bool once; /* no retry: a transient failure is -EAGAIN, without a message */
	const char *content_range; /* a PATCH's: "FIRST-LAST", or NULL */
	char location[MAX_LOCATION];
	char range[64]; /* the Range header's value (an upload's status) */
	bool location_long;
	size_t head_bytes;
	bool huge;
	size_t body_bytes;
	int read_err;
};

static size_t up_header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct up *u = arg;
	size_t len = size * nmemb;

	u->head_bytes += len;
	if (u->head_bytes > MAX_HEAD_BYTES) {
		u->huge = true;
		return 0;
	}
	if (len >= 5 && strncmp(data, "HTTP/", 5) == 0) {
		u->location[0] = u->range[0] = '\0';
		u->location_long = false;
	}
	if (len > 6 && strncasecmp(data, "range:", 6) == 0) {
		const char *v = data + 6, *end = data + len;

		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		if ((size_t)(end - v) < sizeof(u->range)) {
			memcpy(u->range, v, (size_t)(end - v));
			u->range[end - v] = '\0';
		}
	}
	if (len > 9 && strncasecmp(data, "location:", 9) == 0) {
		const char *v = data + 9, *end = data + len;

		while (v < end && (*v == ' ' || *v == '\t'))
			v++;
		while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' '))
			end--;
		if ((size_t)(end - v) >= sizeof(u->location)) {
			u->location_long = true;
		} else {
			memcpy(u->location, v, (size_t)(end - v));
			u->location[end - v] = '\0';
		}
	}
	if (cfs_http_head_line(&u->s.h, data, len) < 0)
		return 0;
	return len;
}

static size_t up_write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct up *u = arg;

	(void)data;
	u->body_bytes += size * nmemb;
	return u->body_bytes > MAX_ERROR_BODY ? 0 : size * nmemb;
}

static size_t up_read_cb(char *buf, size_t size, size_t nmemb, void *arg)
{
	struct up *u = arg;
	size_t want = size * nmemb;
	uint64_t left = u->size - u->sent;
	ssize_t n;

	if (want > left)
		want = (size_t)left;
	if (!want)
		return 0;
	if (u->mem) {
		memcpy(buf, (const char *)u->mem + u->sent, want);
		n = (ssize_t)want;
	} else {
		do
			n = pread(u->fd, buf, want, (off_t)(u->start + u->sent));
		while (n < 0 && errno == EINTR);
		if (n <= 0) {
			u->read_err = n < 0 ? errno : EIO;
			return CURL_READFUNC_ABORT;
		}
	}
	u->sent += (uint64_t)n;
	return (size_t)n;
}

/*
 * Make the request @u once, through an authentication challenge and
 * retries. Return: the HTTP status, or -errno after a message.
 */
static int up_request(struct cfs_registry *r, struct up *u)
{
	bool answered = false;
	unsigned int attempt = 0;
	struct curl_slist *headers = NULL;
	char type[256], crange[96];
	CURLcode res;
	int ret;

	for (;;) {
		CURL *easy = curl_easy_init();

		if (!easy)
			return -ENOMEM;
		cfs_http_head_reset(&u->s.h);
		u->location[0] = u->range[0] = '\0';
		u->location_long = u->huge = false;
		u->head_bytes = u->body_bytes = 0;
		u->sent = 0;
		u->read_err = 0;
		u->s.errbuf[0] = '\0';
		headers = NULL;
		if (r->auth)
			headers = curl_slist_append(headers, r->auth);
		if (u->type) {
			snprintf(type, sizeof(type), "Content-Type: %s", u->type);
			headers = curl_slist_append(headers, type);
		}
		if (u->content_range) {
			snprintf(crange, sizeof(crange), "Content-Range: %s", u->content_range);
			headers = curl_slist_append(headers, crange);
		}
		http_setup(r, easy, u->url);
		/* a push follows no redirect: its credentials stay with the registry */
		curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
		curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, up_header_cb);
		curl_easy_setopt(easy, CURLOPT_HEADERDATA, u);
		curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, up_write_cb);
		curl_easy_setopt(easy, CURLOPT_WRITEDATA, u);
		curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, u->s.errbuf);
		/* a transfer that moves under 1 byte/s for the timeout has stalled */
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
		curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, (long)r->timeout);
		if (strcmp(u->method, "HEAD") == 0) {
			curl_easy_setopt(easy, CURLOPT_NOBODY, 1L);
		} else if (u->body) {
			curl_easy_setopt(easy, CURLOPT_UPLOAD, 1L);
			curl_easy_setopt(easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)u->size);
			curl_easy_setopt(easy, CURLOPT_READFUNCTION, up_read_cb);
			curl_easy_setopt(easy, CURLOPT_READDATA, u);
			curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, u->method);
		} else {
			curl_easy_setopt(easy, CURLOPT_POST, 1L);
			curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE, 0L);
			curl_easy_setopt(easy, CURLOPT_POSTFIELDS, "");
			curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, u->method);
		}
		res = curl_easy_perform(easy);
		curl_easy_cleanup(easy);
		curl_slist_free_all(headers);
		attempt++;
		if (u->huge) {
			cfs_msg("'%s': the registry's answer has more than %u bytes of headers",
				u->s.what, MAX_HEAD_BYTES);
			return -EPROTO;
		}
		if (u->read_err) {
			cfs_msg("'%s': reading what is sent: %s", u->s.what, strerror(u->read_err));
			return -u->read_err;
		}
		if (res == CURLE_OK && u->s.h.status == 401 && !answered) {
			answered = true;
			ret = answer_challenge(&u->s);
			if (ret < 0)
				return ret;
			if (ret)
				continue;
		}
		if (!u->once && attempt <= r->opts->retries &&
		    cfs_http_transient(res, res == CURLE_OK ? u->s.h.status : 0)) {
			sleep_ms(cfs_http_backoff_ms(r->delay_ms, attempt));
			continue;
		}
		break;
	}
	if (u->once && cfs_http_transient(res, res == CURLE_OK ? u->s.h.status : 0))
		return -EAGAIN;
	if (res != CURLE_OK) {
		if (plain_answer(r, res, u->s.errbuf))
			cfs_msg("'%s': the registry answers in plain http, not https (%s): use --plain-http if it is meant to",
				u->s.what, u->s.errbuf);
		else
			cfs_msg("'%s': %s", u->s.what,
				u->s.errbuf[0] ? u->s.errbuf : curl_easy_strerror(res));
		return res == CURLE_COULDNT_CONNECT || res == CURLE_COULDNT_RESOLVE_HOST ?
			       -EHOSTUNREACH :
			       -EIO;
	}
	return (int)u->s.h.status;
}

/* A failed status @st of @u, said. */
static int up_fail(struct cfs_registry *r, struct up *u, int st)
{
	if (st < 0)
		return st;
	switch (st) {
	case 401:
		cfs_msg("'%s': HTTP 401: the registry %s", u->s.what,
			r->basic ? "refused the credentials" :
				   "wants credentials (--creds or an auth file)");
		return -EACCES;
	case 403:
		cfs_msg("'%s': HTTP 403: access denied", u->s.what);
		return -EACCES;
	case 404:
		cfs_msg("'%s': HTTP 404: not found", u->s.what);
		return -ENOENT;
	default:
		cfs_msg("'%s': HTTP %d%s", u->s.what, st,
			st >= 300 && st < 400 ? ": a push follows no redirect" : "");
		return -EIO;
	}
}

static void up_init(struct cfs_registry *r, struct up *u, const char *method, const char *url,
		    const char *what)
{
	memset(u, 0, sizeof(*u));
	u->s.r = r;
	u->s.what = what;
	u->s.deadline = r->doc_timeout;
	clock_gettime(CLOCK_MONOTONIC, &u->s.started);
	cfs_http_head_reset(&u->s.h);
	u->method = method;
	u->url = url;
	u->fd = -1;
}

static void up_free(struct up *u)
{
	cfs_http_head_reset(&u->s.h);
}

int cfs_registry_blob_size(struct cfs_registry *r, const char *digest, const char *what,
			   uint64_t *size)
{
	struct up u;
	char *url;
	int st;

	*size = UINT64_MAX;
	if (asprintf(&url, "%s/blobs/%s", r->base, digest) < 0)
		return -ENOMEM;
	up_init(r, &u, "HEAD", url, what);
	st = up_request(r, &u);
	/* a redirect (to a blob store) says the blob is there: not followed */
	if (st == 200)
		*size = u.s.h.length;
	if (st == 200 || st == 404 || st == 307 || st == 302)
		st = st != 404;
	else
		st = up_fail(r, &u, st);
	up_free(&u);
	free(url);
	return st;
}

int cfs_registry_has_blob(struct cfs_registry *r, const char *digest, const char *what)
{
	uint64_t size;

	return cfs_registry_blob_size(r, digest, what, &size);
}

/*
 * The URL of an upload at @loc, the Location the registry gave: a path on
 * the registry, or an absolute URL on the same scheme, host and port;
 * anything else is refused, as the credentials would go with it.
 */
static char *upload_url(struct cfs_registry *r, const struct up *u, const char *digest)
{
	const char *loc = u->location, *host_end = strchr(strstr(r->base, "://") + 3, '/');
	size_t origin = (size_t)(host_end - r->base);
	char *url = NULL;

	if (u->location_long) {
		cfs_msg("'%s': the registry's upload Location is longer than %u bytes", u->s.what,
			MAX_LOCATION - 1);
		return NULL;
	}
	if (!loc[0]) {
		cfs_msg("'%s': HTTP %ld without a Location to upload to", u->s.what, u->s.h.status);
		return NULL;
	}
	if (strpbrk(loc, " \t\r\n") || !(loc[0] == '/' && loc[1] != '/')) {
		if (!(strncmp(loc, r->base, origin) == 0 && loc[origin] == '/')) {
			cfs_msg("'%s': the registry's upload Location '%s' is not on %.*s: refused, the credentials would go there",
				u->s.what, loc, (int)origin, r->base);
			return NULL;
		}
		loc += origin;
	}
	if (asprintf(&url, "%.*s%s%s%s%s", (int)origin, r->base, loc,
		     !digest ? "" : strchr(loc, '?') ? "&" : "?", digest ? "digest=" : "",
		     digest ? digest : "") < 0)
		return NULL;
	return url;
}

/*
 * The bytes an upload's status (a GET of its Location) says the registry
 * has: its Range, "0-LAST", into *@have. A registry that has none says
 * "0-0" (distribution does), as it would of one byte: taken as none, since
 * a PATCH from 0 of a registry that has one byte is refused, and the
 * upload then starts again. *@next: the Location the status names, or
 * NULL. Return: 0; -EAGAIN when the upload is gone or its status
 * unreadable, so that it starts again; or -errno after a message.
 */
static int upload_status(struct cfs_registry *r, const char *url, const char *what,
			 uint64_t size, uint64_t *have, char **next)
{
	struct up u;
	unsigned long long first, last;
	char tail;
	int st;

	up_init(r, &u, "GET", url, what);
	u.once = true;
	st = up_request(r, &u);
	*next = NULL;
	if (st != 204 && st != 200) {
		up_free(&u);
		return st < 0 && st != -EAGAIN ? st : -EAGAIN;
	}
	if (sscanf(u.range, "%llu-%llu%c", &first, &last, &tail) != 2 || first != 0 ||
	    last >= size) {
		up_free(&u);
		return -EAGAIN;
	}
	*have = last == 0 ? 0 : last + 1;
	st = 0;
	if (u.location[0] || u.location_long) {
		*next = upload_url(r, &u, NULL);
		st = *next ? 0 : -EPROTO;
	}
	up_free(&u);
	return st;
}

/*
 * The blob's bytes from @have on, PATCHed to the upload at *@loc, and on a
 * transient failure the registry asked how far it got, and the rest sent
 * from there: bounded by the retries. *@loc follows the Locations the
 * registry answers with. Return: 0, all sent; -EAGAIN: the upload is gone
 * or refused the offset, and must start again; -errno after a message.
 */
static int upload_body(struct cfs_registry *r, int fd, uint64_t size, const char *what,
		       char **loc, unsigned int *attempt)
{
	uint64_t have = 0;
	char range[64];
	struct up u;
	int st;

	for (;;) {
		char *next;

		up_init(r, &u, "PATCH", *loc, what);
		u.type = "application/octet-stream";
		u.body = true;
		u.once = true;
		u.fd = fd;
		u.start = have;
		u.size = size - have;
		u.s.deadline = 0;
		snprintf(range, sizeof(range), "%llu-%llu", (unsigned long long)have,
			 (unsigned long long)(size ? size - 1 : 0));
		u.content_range = size ? range : NULL;
		st = up_request(r, &u);
		if (st == 202) {
			next = upload_url(r, &u, NULL);
			up_free(&u);
			if (!next)
				return -EPROTO;
			free(*loc);
			*loc = next;
			return 0;
		}
		if (st == 416 || st == 404) {
			up_free(&u);
			return -EAGAIN; /* it has not what we thought, or lost it */
		}
		if (st == -EAGAIN && ++*attempt > r->opts->retries) {
			/* what the last try got: a status, or libcurl's error */
			if (u.s.h.status >= 400)
				st = (int)u.s.h.status;
			else {
				cfs_msg("'%s': the upload broke off %u times, last: %s", what, *attempt,
					u.s.errbuf[0] ? u.s.errbuf : "no answer");
				st = -EIO;
			}
		}
		if (st != -EAGAIN) {
			if (st > 0)
				st = up_fail(r, &u, st);
			up_free(&u);
			return st;
		}
		up_free(&u);
		sleep_ms(cfs_http_backoff_ms(r->delay_ms, *attempt));
		st = upload_status(r, *loc, what, size, &have, &next);
		if (st)
			return st;
		if (next) {
			free(*loc);
			*loc = next;
		}
		if (have == size)
			return 0; /* all there: only the answer was lost */
	}
}

int cfs_registry_put_blob(struct cfs_registry *r, const char *digest, int fd, uint64_t size,
			  const char *from, const char *what)
{
	struct up u;
	char *url = NULL, *put = NULL, *esc = NULL, *loc = NULL;
	unsigned int attempt = 0;
	int st;

	if (from) {
		esc = curl_easy_escape(NULL, from, 0);
		if (!esc)
			return -ENOMEM;
	}
	if (asprintf(&url, "%s/blobs/uploads/%s%s%s%s", r->base, from ? "?mount=" : "",
		     from ? digest : "", from ? "&from=" : "", from ? esc : "") < 0) {
		curl_free(esc);
		return -ENOMEM;
	}
	curl_free(esc);
	for (;;) {
		up_init(r, &u, "POST", url, what);
		st = up_request(r, &u);
		if (st == 201 && from) {
			up_free(&u);
			st = 1; /* mounted from @from */
			goto out;
		}
		if (st != 202) {
			st = up_fail(r, &u, st);
			up_free(&u);
			goto out;
		}
		free(loc);
		loc = upload_url(r, &u, NULL);
		up_free(&u);
		if (!loc) {
			st = -EPROTO;
			goto out;
		}
		st = upload_body(r, fd, size, what, &loc, &attempt);
		if (st != -EAGAIN)
			break;
		/* the registry lost the upload, or has not what it said: from the start */
		if (++attempt > r->opts->retries) {
			cfs_msg("'%s': the upload broke off, and the registry lost it, %u times", what,
				attempt);
			st = -EIO;
			goto out;
		}
		sleep_ms(cfs_http_backoff_ms(r->delay_ms, attempt));
	}
	if (st)
		goto out;
	/* the end of the upload: a PUT with the digest, and no body */
	if (asprintf(&put, "%s%sdigest=%s", loc, strchr(loc, '?') ? "&" : "?", digest) < 0) {
		put = NULL;
		st = -ENOMEM;
		goto out;
	}
	up_init(r, &u, "PUT", put, what);
	u.type = "application/octet-stream";
	u.body = true;
	st = up_request(r, &u);
	st = st == 201 ? 0 : up_fail(r, &u, st);
	up_free(&u);
out:
	free(loc);
	free(put);
	free(url);
	return st;
}

int cfs_registry_put_manifest(struct cfs_registry *r, const char *tag, const char *type,
			      const void *data, size_t len, const char *what)
{
	struct up u;
	char *url;
	int st;

	if (asprintf(&url, "%s/manifests/%s", r->base, tag) < 0)
		return -ENOMEM;
	up_init(r, &u, "PUT", url, what);
	u.type = type;
	u.body = true;
	u.mem = data;
	u.size = len;
	st = up_request(r, &u);
	st = st == 201 ? 0 : up_fail(r, &u, st);
	up_free(&u);
	free(url);
	return st;
}
