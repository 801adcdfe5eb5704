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
 * it had already passed on). A 401 with a bearer challenge gets an
 * anonymous token from the challenge's realm, sent with every request after.
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

#include "cfs/fetch.h"
#include "json.h"
#include "libcfs.h"
#include "cfs/registry.h"

#define MAX_TOKEN_BODY (1u << 20)
#define MIN_BUF (256u * 1024)

struct cfs_registry {
	const struct cfs_registry_options *opts;
	char *base; /* "http[s]://HOST/v2/REPO" */
	char *host, *repo;
	char *auth; /* "Authorization: Bearer ...", or NULL */
	unsigned int timeout, delay_ms;
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

	/* the current response's headers */
	long status;
	bool location; /* a redirect libcurl follows */
	bool headers_done;
	char type[128];
	uint64_t length;
	char *challenge; /* WWW-Authenticate */

	/* the body: buf[start, end) not yet read */
	unsigned char *buf;
	size_t cap, start, end;
	bool paused, done;
	CURLcode result;
	uint64_t pos; /* body bytes passed on to the buffer, over all attempts */
	uint64_t skip; /* bytes of a restarted body to drop: they were passed on */
	unsigned int attempt;
	struct timespec last_data;
	bool stalled;
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

int cfs_registry_ref_parse(const char *s, struct cfs_registry_ref *ref)
{
	char *copy, *slash, *at, *colon;

	memset(ref, 0, sizeof(*ref));
	/* + room for "latest" */
	copy = malloc(strlen(s) + 8);
	if (!copy)
		return -ENOMEM;
	strcpy(copy, s);
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
		if (strncmp(ref->digest, "sha256:", 7) != 0 || strlen(ref->digest) != 7 + 64 ||
		    strspn(ref->digest + 7, "0123456789abcdef") != 64)
			goto bad;
	} else {
		colon = strrchr(ref->repo, ':');
		if (colon) {
			*colon = '\0';
			ref->tag = colon + 1;
		} else {
			ref->tag = ref->repo + strlen(ref->repo) + 1;
			strcpy(ref->tag, "latest");
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
	if (asprintf(&r->base, "%s://%s/v2/%s", opts->plain_http ? "http" : "https", ref->host,
		     ref->repo) < 0) {
		r->base = NULL;
		goto nomem;
	}
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
	free(r->auth);
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
	size_t len = size * nmemb, n;
	char line[1024];

	n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
	memcpy(line, data, n);
	line[n] = '\0';
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) {
		/* a new response (after a redirect or a 100 Continue) */
		s->status = 0;
		sscanf(line, "%*s %ld", &s->status);
		s->location = false;
		s->type[0] = '\0';
		s->length = UINT64_MAX;
		free(s->challenge);
		s->challenge = NULL;
	} else if (n == 0) {
		if (s->status >= 200 && !(s->status >= 300 && s->status < 400 && s->location)) {
			s->headers_done = true;
			/* a restart: drop what was passed on, unless the range was served */
			s->skip = s->status == 206 ? 0 : s->pos;
		}
	} else if (strncasecmp(line, "content-type:", 13) == 0) {
		const char *v = line + 13 + strspn(line + 13, " \t");

		snprintf(s->type, sizeof(s->type), "%.*s", (int)strcspn(v, "; \t"), v);
	} else if (strncasecmp(line, "content-length:", 15) == 0) {
		s->length = strtoull(line + 15, NULL, 10);
	} else if (strncasecmp(line, "location:", 9) == 0) {
		s->location = true;
	} else if (strncasecmp(line, "www-authenticate:", 17) == 0) {
		free(s->challenge);
		s->challenge = strdup(line + 17 + strspn(line + 17, " \t"));
	}
	return len;
}

static size_t write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct cfs_registry_stream *s = arg;
	size_t len = size * nmemb;

	clock_gettime(CLOCK_MONOTONIC, &s->last_data);
	if (s->status >= 300)
		return len; /* an error's body: not ours to read */
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

/* A transfer that received nothing for the timeout has stalled; paused is not stalled. */
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

/* Start a request for s->url; a restart asks for the body from s->pos on. */
static int start(struct cfs_registry_stream *s)
{
	struct cfs_registry *r = s->r;
	char range[64], accept[512];

	stop(s);
	s->easy = curl_easy_init();
	if (!s->easy)
		return -ENOMEM;
	s->status = 0;
	s->headers_done = false;
	s->done = false;
	s->paused = false;
	s->stalled = false;
	s->result = CURLE_OK;
	s->length = UINT64_MAX;
	s->type[0] = '\0';
	s->errbuf[0] = '\0';
	s->skip = 0;
	clock_gettime(CLOCK_MONOTONIC, &s->last_data);
	if (s->accept) {
		snprintf(accept, sizeof(accept), "Accept: %s", s->accept);
		s->headers = curl_slist_append(s->headers, accept);
	}
	if (r->auth)
		s->headers = curl_slist_append(s->headers, r->auth);
	cfs_http_setup(s->easy, s->url, r->opts->cainfo, r->timeout);
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

/* Why the transfer failed, for a message. */
static const char *reason(struct cfs_registry_stream *s)
{
	if (s->stalled)
		return "no data received within the timeout";
	return s->errbuf[0] ? s->errbuf : curl_easy_strerror(s->result);
}

static bool transient(const struct cfs_registry_stream *s)
{
	if (s->headers_done && s->status >= 300)
		return cfs_http_transient(CURLE_OK, s->status);
	return s->stalled || cfs_http_transient(s->result, 0);
}

/* The value of the parameter @key of a challenge (malloc()ed), or NULL. */
static char *challenge_param(const char *c, const char *key)
{
	size_t klen = strlen(key);

	c += strcspn(c, " \t"); /* past the scheme */
	while (*c) {
		const char *k, *v;
		size_t n;

		c += strspn(c, " \t,");
		k = c;
		c += strcspn(c, "= \t,");
		n = (size_t)(c - k);
		if (*c != '=')
			continue;
		c++;
		if (*c == '"') {
			v = ++c;
			c += strcspn(c, "\"");
			if (n == klen && strncasecmp(k, key, n) == 0)
				return strndup(v, (size_t)(c - v));
			if (*c)
				c++;
		} else {
			v = c;
			c += strcspn(c, ",");
			if (n == klen && strncasecmp(k, key, n) == 0)
				return strndup(v, (size_t)(c - v));
		}
	}
	return NULL;
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

/* Answer the bearer challenge s->challenge with an anonymous token. */
static int get_token(struct cfs_registry_stream *s)
{
	struct cfs_registry *r = s->r;
	char *realm = challenge_param(s->challenge, "realm");
	char *service = challenge_param(s->challenge, "service");
	char *scope = challenge_param(s->challenge, "scope");
	char *url = NULL, *esc_service = NULL, *esc_scope = NULL, *dflt = NULL;
	struct membuf body = { 0 };
	struct cfs_json *doc = NULL;
	const char *token;
	CURL *easy = NULL;
	CURLcode res;
	long code = 0;
	int ret = -EACCES;

	if (!realm || (strncmp(realm, "https://", 8) != 0 &&
		       !(r->opts->plain_http && strncmp(realm, "http://", 7) == 0))) {
		cfs_msg("'%s': HTTP 401, and the bearer challenge names no %srealm to ask for a token",
			s->what, r->opts->plain_http ? "http(s) " : "https ");
		goto out;
	}
	if (!scope && asprintf(&dflt, "repository:%s:pull", r->repo) < 0) {
		dflt = NULL;
		ret = -ENOMEM;
		goto out;
	}
	easy = curl_easy_init();
	if (!easy) {
		ret = -ENOMEM;
		goto out;
	}
	esc_scope = curl_easy_escape(easy, scope ? scope : dflt, 0);
	esc_service = service ? curl_easy_escape(easy, service, 0) : NULL;
	if (!esc_scope || (service && !esc_service) ||
	    asprintf(&url, "%s%cscope=%s%s%s", realm, strchr(realm, '?') ? '&' : '?', esc_scope,
		     service ? "&service=" : "", service ? esc_service : "") < 0) {
		url = NULL;
		ret = -ENOMEM;
		goto out;
	}
	cfs_http_setup(easy, url, r->opts->cainfo, r->timeout);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, mem_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, &body);
	curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, s->errbuf);
	curl_easy_setopt(easy, CURLOPT_TIMEOUT, (long)r->timeout);
	s->errbuf[0] = '\0';
	res = curl_easy_perform(easy);
	curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &code);
	if (res != CURLE_OK || code != 200) {
		if (res != CURLE_OK)
			cfs_msg("'%s': getting a token from '%s': %s", s->what, realm,
				body.too_long ? "too long an answer" :
				s->errbuf[0]  ? s->errbuf :
						curl_easy_strerror(res));
		else
			cfs_msg("'%s': getting a token from '%s': HTTP %ld", s->what, realm, code);
		ret = code == 401 || code == 403 ? -EACCES : -EIO;
		goto out;
	}
	ret = cfs_json_parse(body.data ? body.data : "", body.len, realm, &doc);
	if (ret)
		goto out;
	token = cfs_json_str(doc, "token");
	if (!token)
		token = cfs_json_str(doc, "access_token");
	if (!token || !token[0] || strpbrk(token, "\r\n")) {
		cfs_msg("'%s': the token server '%s' sent no token", s->what, realm);
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
	cfs_json_free(doc);
	free(body.data);
	curl_free(esc_scope);
	curl_free(esc_service);
	if (easy)
		curl_easy_cleanup(easy);
	free(url);
	free(dflt);
	free(realm);
	free(service);
	free(scope);
	return ret;
}

/*
 * (Re)start the request and wait for the registry's answer, through
 * retries and a token challenge. 0 once the body is on its way.
 */
static int request(struct cfs_registry_stream *s)
{
	struct cfs_registry *r = s->r;
	bool tried_token = false;
	int ret;

	for (;;) {
		s->attempt++;
		ret = start(s);
		if (ret)
			return ret;
		while (!s->headers_done && !s->done)
			pump(s, true);
		if (s->headers_done && (s->status == 200 || (s->pos && s->status == 206)))
			return 0;
		if (s->headers_done && s->status == 401 && !tried_token && s->challenge &&
		    strncasecmp(s->challenge, "bearer ", 7) == 0) {
			tried_token = true;
			s->attempt--;
			ret = get_token(s);
			if (ret)
				return ret;
			continue;
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
	switch (s->status) {
	case 401:
		cfs_msg("'%s': HTTP 401: the registry wants credentials%s", s->what,
			tried_token ? " (the anonymous token was refused)" : "");
		return -EACCES;
	case 403:
		cfs_msg("'%s': HTTP 403: access denied", s->what);
		return -EACCES;
	case 404:
		cfs_msg("'%s': HTTP 404: not found", s->what);
		return -ENOENT;
	default:
		cfs_msg("'%s': HTTP %ld", s->what, s->status);
		return -EIO;
	}
}

int cfs_registry_get(struct cfs_registry *r, bool manifest, const char *name, const char *accept,
		     const char *what, struct cfs_registry_stream **sp)
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
	s->cap = MIN_BUF;
	s->buf = malloc(s->cap);
	if (!s->buf || asprintf(&s->url, "%s/%s/%s", r->base, manifest ? "manifests" : "blobs",
				name) < 0) {
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

uint64_t cfs_registry_length(const struct cfs_registry_stream *s)
{
	return s->status == 200 ? s->length : UINT64_MAX;
}

const char *cfs_registry_type(const struct cfs_registry_stream *s)
{
	return s->type;
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
	free(s->challenge);
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

	long status;
	bool multipart, have_range, whole;
	char boundary[128];
	uint64_t cr_start, cr_end, cr_total; /* a single part's Content-Range, end inclusive */

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

/* "bytes A-B/TOTAL" (TOTAL may be '*') into @q's cr_*; -EINVAL otherwise. */
static int parse_content_range(struct range_req *q, const char *v)
{
	unsigned long long a, b, t = 0;
	int n = 0;

	v += strspn(v, " \t");
	if (sscanf(v, "bytes %llu-%llu/%n", &a, &b, &n) != 2 || n == 0 || b < a)
		return -EINVAL;
	if (v[n] != '*' && sscanf(v + n, "%llu", &t) != 1)
		return -EINVAL;
	q->cr_start = a;
	q->cr_end = b;
	q->cr_total = v[n] == '*' ? UINT64_MAX : t;
	return 0;
}

static int wrong_range(struct range_req *q, size_t i)
{
	cfs_msg("'%s': asked for bytes %llu-%llu, the registry answered with bytes %llu-%llu",
		q->what, (unsigned long long)req_start(q, i), (unsigned long long)q->ranges[i].end - 1,
		(unsigned long long)q->cr_start, (unsigned long long)q->cr_end);
	return -EPROTO;
}

/* The part @q->part begins with the Content-Range in cr_*: is it the one asked for? */
static int begin_part(struct range_req *q)
{
	size_t i = q->first + q->part;

	if (i >= q->last) {
		cfs_msg("'%s': the registry answered with more ranges than were asked for", q->what);
		return -EPROTO;
	}
	if (q->cr_start != req_start(q, i) || q->cr_end + 1 != q->ranges[i].end ||
	    (q->cr_total != UINT64_MAX && q->cr_total != q->blob_size))
		return wrong_range(q, i);
	q->pos = q->cr_start;
	q->left = q->cr_end + 1 - q->cr_start;
	q->state = MP_BODY;
	return 0;
}

static size_t range_header_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct range_req *q = arg;
	size_t len = size * nmemb, n;
	char line[1024];

	n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
	memcpy(line, data, n);
	line[n] = '\0';
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (strncmp(line, "HTTP/", 5) == 0) {
		q->status = 0;
		sscanf(line, "%*s %ld", &q->status);
		q->multipart = q->have_range = false;
		q->boundary[0] = '\0';
	} else if (strncasecmp(line, "content-type:", 13) == 0) {
		const char *v = line + 13 + strspn(line + 13, " \t"), *b;

		if (strncasecmp(v, "multipart/byteranges", 20) == 0) {
			q->multipart = true;
			b = strstr(v, "boundary=");
			if (b) {
				b += 9;
				if (*b == '"')
					b++;
				snprintf(q->boundary, sizeof(q->boundary), "%.*s", (int)strcspn(b, "\";"),
					 b);
			}
		}
	} else if (strncasecmp(line, "content-range:", 14) == 0) {
		q->have_range = parse_content_range(q, line + 14) == 0;
	}
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
	size_t blen = strlen(q->boundary);

	if (q->state == MP_DELIM) {
		if (!*l)
			return 0;
		if (strncmp(l, "--", 2) != 0 || strncmp(l + 2, q->boundary, blen) != 0)
			goto bad;
		if (strcmp(l + 2 + blen, "--") == 0) {
			q->state = MP_END;
			return 0;
		}
		if (l[2 + blen])
			goto bad;
		q->have_range = false;
		q->state = MP_HEADERS;
		return 0;
	}
	/* MP_HEADERS */
	if (!*l) {
		if (!q->have_range)
			goto bad;
		return begin_part(q);
	}
	if (strncasecmp(l, "content-range:", 14) == 0 && parse_content_range(q, l + 14) == 0)
		q->have_range = true;
	return 0;
bad:
	cfs_msg("'%s': a malformed multipart/byteranges answer", q->what);
	return -EPROTO;
}

static size_t range_write_cb(char *data, size_t size, size_t nmemb, void *arg)
{
	struct range_req *q = arg;
	size_t len = size * nmemb, i = 0;

	if (q->status != 206) {
		if (q->status == 200)
			q->whole = true; /* the Range was ignored: stop here */
		return q->status == 200 ? 0 : len;
	}
	if (q->err)
		return 0;
	q->received += len;
	if (!q->multipart) {
		if (q->part == 0 && q->state != MP_BODY) {
			if (!q->have_range) {
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
	if (!q->boundary[0]) {
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

/* Make the request of @q once. 0 when it ran to its end (q->status tells how). */
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
	q->status = 0;
	q->multipart = q->have_range = q->whole = false;
	q->state = MP_DELIM;
	q->part = 0;
	q->line_len = 0;
	q->err = 0;
	curl_easy_reset(easy);
	cfs_http_setup(easy, url, q->r->opts->cainfo, q->r->timeout);
	if (q->r->auth)
		headers = curl_slist_append(headers, q->r->auth);
	curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
	curl_easy_setopt(easy, CURLOPT_RANGE, range);
	curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, range_header_cb);
	curl_easy_setopt(easy, CURLOPT_HEADERDATA, q);
	curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, range_write_cb);
	curl_easy_setopt(easy, CURLOPT_WRITEDATA, q);
	/* a stalled transfer: under 1 byte/s for the timeout */
	curl_easy_setopt(easy, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl_easy_setopt(easy, CURLOPT_LOW_SPEED_TIME, (long)q->r->timeout);
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
		if (q.whole || (res == CURLE_OK && q.status == 200)) {
			ret = 1; /* the registry ignores Range */
			break;
		}
		/* how far it got: whole parts, and into the part it was in */
		done = q.part;
		if (res == CURLE_OK && q.status == 206 && done == q.last - q.first &&
		    (!q.multipart || q.state == MP_END || q.state == MP_DELIM)) {
			next = q.last;
			q.skip = 0;
			attempt = 0;
			continue;
		}
		if (res == CURLE_OK && q.status == 206) {
			cfs_msg("'%s': the registry's answer ends before the %zu ranges asked for",
				what, q.last - q.first);
			ret = -EPROTO;
			break;
		}
		if (!cfs_http_transient(res, res == CURLE_OK ? q.status : 0) ||
		    ++attempt > r->opts->retries) {
			if (res != CURLE_OK)
				cfs_msg("'%s': %s", what, curl_easy_strerror(res));
			else if (q.status == 416)
				cfs_msg("'%s': HTTP 416: the registry refuses the ranges asked for", what);
			else
				cfs_msg("'%s': HTTP %ld", what, q.status);
			ret = res == CURLE_OK && (q.status == 401 || q.status == 403) ? -EACCES : -EIO;
			break;
		}
		/* again from the byte it reached */
		if (q.status == 206 && q.state == MP_BODY)
			q.skip = q.pos - ranges[q.first + done].start;
		else if (done)
			q.skip = 0;
		next = q.first + done;
		sleep_ms(cfs_http_backoff_ms(r->delay_ms, attempt));
	}
	free(url);
	curl_easy_cleanup(easy);
	return ret;
}
