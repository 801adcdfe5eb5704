// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The registry client's parsers of untrusted text that is not JSON: the
 * response header lines (status, Content-Type, Content-Length,
 * Content-Range, Location, WWW-Authenticate), the parameters of an
 * authentication challenge, and base64. They take bytes, allocate only
 * what they return, and are fuzzed by fuzz/fuzz_registry.c.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "http-parse.h"

#define MAX_LINE 8192

void cfs_http_head_reset(struct cfs_http_head *h)
{
	free(h->challenge);
	memset(h, 0, sizeof(*h));
	h->length = UINT64_MAX;
}

static bool has_prefix(const char *s, const char *p)
{
	return strncasecmp(s, p, strlen(p)) == 0;
}

static const char *skip_ws(const char *s)
{
	return s + strspn(s, " \t");
}

/* The challenge's scheme, if it is one we answer. */
static bool known_scheme(const char *v)
{
	size_t n = strcspn(v, " \t,");

	return (n == 5 && strncasecmp(v, "basic", 5) == 0) ||
	       (n == 6 && strncasecmp(v, "bearer", 6) == 0);
}

/* Decimal digits only (no sign, no blank), and no more than fit. */
static const char *parse_u64(const char *p, uint64_t *out)
{
	uint64_t x = 0;
	unsigned int d;

	if (*p < '0' || *p > '9')
		return NULL;
	for (; *p >= '0' && *p <= '9'; p++) {
		d = (unsigned int)(*p - '0');
		if (x > (UINT64_MAX - d) / 10)
			return NULL;
		x = x * 10 + d;
	}
	*out = x;
	return p;
}

/* RFC 9110 14.4: "bytes FIRST-LAST/COMPLETE", COMPLETE or '*' */
int cfs_http_content_range(const char *v, uint64_t *start, uint64_t *end, uint64_t *total)
{
	uint64_t a, b, t = UINT64_MAX;
	const char *p = skip_ws(v);

	if (!has_prefix(p, "bytes") || (p[5] != ' ' && p[5] != '\t'))
		return -EINVAL;
	p = skip_ws(p + 5);
	p = parse_u64(p, &a);
	if (!p || *p != '-')
		return -EINVAL;
	p = parse_u64(p + 1, &b);
	if (!p || *p != '/' || b < a)
		return -EINVAL;
	p++;
	if (*p == '*')
		p++;
	else if (!(p = parse_u64(p, &t)) || b >= t)
		return -EINVAL;
	if (*skip_ws(p) != '\0')
		return -EINVAL;
	*start = a;
	*end = b;
	*total = t;
	return 0;
}

int cfs_http_head_line(struct cfs_http_head *h, const char *data, size_t len)
{
	char line[MAX_LINE];
	size_t n;

	/* the longest of the headers we keep is far shorter; a longer one is cut */
	n = len < sizeof(line) - 1 ? len : sizeof(line) - 1;
	memcpy(line, data, n);
	line[n] = '\0';
	n = strlen(line); /* a NUL ends it */
	while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r'))
		line[--n] = '\0';
	if (n == 0)
		return 1;
	if (strncmp(line, "HTTP/", 5) == 0) {
		/* a new response (after a redirect or a 100 Continue) */
		const char *p = line + 5 + strcspn(line + 5, " ");
		char *end;
		long code;

		cfs_http_head_reset(h);
		p = skip_ws(p);
		code = strtol(p, &end, 10);
		if (end != p && end - p == 3 && code >= 100 && code <= 999)
			h->status = code;
	} else if (has_prefix(line, "content-type:")) {
		const char *v = skip_ws(line + 13), *b = strstr(v, "boundary=");

		n = strcspn(v, "; \t");
		if (n >= sizeof(h->type))
			n = sizeof(h->type) - 1;
		memcpy(h->type, v, n);
		h->type[n] = '\0';
		if (b) {
			b += 9;
			if (*b == '"')
				b++;
			snprintf(h->boundary, sizeof(h->boundary), "%.*s", (int)strcspn(b, "\";"), b);
		}
	} else if (has_prefix(line, "content-range:")) {
		h->range = cfs_http_content_range(line + 14, &h->range_start, &h->range_end,
						  &h->range_total) == 0;
	} else if (has_prefix(line, "content-length:")) {
		const char *v = skip_ws(line + 15);
		char *end;
		unsigned long long x;

		errno = 0;
		x = strtoull(v, &end, 10);
		h->length = end != v && *v != '-' && errno == 0 && *skip_ws(end) == '\0' ?
				    (uint64_t)x :
				    UINT64_MAX;
	} else if (has_prefix(line, "location:")) {
		h->location = true;
		h->location_http = has_prefix(skip_ws(line + 9), "http://");
	} else if (has_prefix(line, "www-authenticate:")) {
		const char *v = skip_ws(line + 17);

		/* the first challenge we can answer wins */
		if (h->challenge && known_scheme(h->challenge))
			return 0;
		free(h->challenge);
		h->challenge = strdup(v);
		if (!h->challenge)
			return -ENOMEM;
	}
	return 0;
}

/* ---- challenges (RFC 7235 auth-params) ---- */

/* Set *@dst to the quoted string or token at *@p, moving *@p past it. */
static int take_value(const char **p, char **dst)
{
	const char *s = *p;
	char *v, *o;

	if (*s != '"') {
		size_t n = strcspn(s, ", \t");

		*p = s + n;
		if (*dst)
			return 0; /* the first of a repeated parameter counts */
		*dst = strndup(s, n);
		return *dst ? 0 : -ENOMEM;
	}
	s++;
	v = malloc(strlen(s) + 1);
	if (!v)
		return -ENOMEM;
	for (o = v; *s && *s != '"'; s++) {
		if (*s == '\\' && s[1])
			s++;
		*o++ = *s;
	}
	*o = '\0';
	if (*s == '"')
		s++;
	*p = s;
	if (*dst) {
		free(v);
		return 0;
	}
	*dst = v;
	return 0;
}

int cfs_http_challenge_parse(const char *value, struct cfs_http_challenge *c)
{
	const char *p = skip_ws(value);
	size_t n;

	memset(c, 0, sizeof(*c));
	n = strcspn(p, " \t,");
	if (n == 5 && strncasecmp(p, "basic", 5) == 0)
		c->basic = true;
	else if (!(n == 6 && strncasecmp(p, "bearer", 6) == 0))
		return -EINVAL;
	p += n;
	while (*p) {
		const char *k;
		char *ignored = NULL, **dst;
		int r;

		p += strspn(p, " \t,");
		k = p;
		p += strcspn(p, "= \t,");
		n = (size_t)(p - k);
		p = skip_ws(p);
		if (*p != '=')
			continue; /* a token68, or another challenge's scheme */
		p = skip_ws(p + 1);
		if (n == 5 && strncasecmp(k, "realm", 5) == 0)
			dst = &c->realm;
		else if (n == 7 && strncasecmp(k, "service", 7) == 0)
			dst = &c->service;
		else if (n == 5 && strncasecmp(k, "scope", 5) == 0)
			dst = &c->scope;
		else
			dst = &ignored;
		r = take_value(&p, dst);
		free(ignored);
		if (r)
			return r;
	}
	return 0;
}

void cfs_http_challenge_free(struct cfs_http_challenge *c)
{
	free(c->realm);
	free(c->service);
	free(c->scope);
	memset(c, 0, sizeof(*c));
}

/* ---- base64 (RFC 4648) ---- */

static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *cfs_base64_encode(const void *data, size_t len)
{
	const unsigned char *in = data;
	char *out, *o;

	if (len > (SIZE_MAX - 1) / 4 * 3 - 3)
		return NULL;
	out = malloc((len + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	o = out;
	for (size_t i = 0; i < len; i += 3) {
		uint32_t v = (uint32_t)in[i] << 16;

		if (i + 1 < len)
			v |= (uint32_t)in[i + 1] << 8;
		if (i + 2 < len)
			v |= in[i + 2];
		*o++ = b64[v >> 18];
		*o++ = b64[(v >> 12) & 63];
		*o++ = i + 1 < len ? b64[(v >> 6) & 63] : '=';
		*o++ = i + 2 < len ? b64[v & 63] : '=';
	}
	*o = '\0';
	return out;
}

int cfs_base64_decode(const char *s, char **out, size_t *lenp)
{
	size_t n = strlen(s), len = 0;
	uint32_t acc = 0;
	unsigned int bits = 0;
	char *d;

	*out = NULL;
	*lenp = 0;
	while (n > 0 && s[n - 1] == '=')
		n--;
	if (strlen(s) - n > 2 || n % 4 == 1)
		return -EINVAL;
	d = malloc(n / 4 * 3 + 3);
	if (!d)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		const char *c = s[i] ? strchr(b64, s[i]) : NULL;

		if (!c) {
			free(d);
			return -EINVAL;
		}
		acc = (acc << 6) | (uint32_t)(c - b64);
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			d[len++] = (char)((acc >> bits) & 0xff);
		}
	}
	d[len] = '\0';
	*out = d;
	*lenp = len;
	return 0;
}
