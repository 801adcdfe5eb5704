/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * The parsers of what a registry sends besides its bodies, apart from the
 * transfers so that they can be tested and fuzzed alone: the response
 * header lines registry.c keeps (for its streams and its range requests),
 * and the WWW-Authenticate challenge. Also
 * base64, which Basic credentials and auth files are written in. Internal
 * to libcfs.
 */
#ifndef CFS_HTTP_PARSE_H
#define CFS_HTTP_PARSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/**
 * struct cfs_http_head - what registry.c keeps of one response's headers
 * @status: the status code, 0 before (or without) a status line
 * @location: a Location header came (a redirect libcurl follows)
 * @location_http: and it pointed to plain http://
 * @type: Content-Type without its parameters, "" without one
 * @boundary: the Content-Type's boundary parameter (multipart), "" without one
 * @length: Content-Length, UINT64_MAX without one
 * @range: a Content-Range came, of the bytes @range_start to @range_end
 *	   (inclusive) of @range_total (UINT64_MAX: '*')
 * @challenge: the WWW-Authenticate value (malloc()ed), or NULL; the
 *	       first Basic or Bearer one when there are several
 */
struct cfs_http_head {
	long status;
	bool location, location_http;
	char type[128];
	char boundary[128];
	uint64_t length;
	bool range;
	uint64_t range_start, range_end, range_total;
	char *challenge;
};

/** cfs_http_head_reset() - forget the headers of an earlier response */
void cfs_http_head_reset(struct cfs_http_head *h);

/**
 * cfs_http_head_line() - take one header line of @len bytes (not
 * NUL-terminated, with or without its CRLF) into @h
 *
 * A status line starts a new response. Return: 1 for the empty line that
 * ends the headers, 0 for any other line (taken or ignored), -ENOMEM.
 */
int cfs_http_head_line(struct cfs_http_head *h, const char *data, size_t len);

/**
 * cfs_http_content_range() - parse the Content-Range value @v, "bytes
 * A-B/TOTAL" (TOTAL may be '*', then UINT64_MAX), into *@start, *@end
 * (inclusive) and *@total; for a response's headers and a multipart
 * answer's parts
 *
 * Return: 0, or -EINVAL for anything else.
 */
int cfs_http_content_range(const char *v, uint64_t *start, uint64_t *end, uint64_t *total);

/**
 * struct cfs_http_challenge - a WWW-Authenticate challenge
 * @basic: its scheme is Basic; else Bearer
 * @realm, @service, @scope: its parameters (malloc()ed), NULL when absent
 */
struct cfs_http_challenge {
	bool basic;
	char *realm, *service, *scope;
};

/**
 * cfs_http_challenge_parse() - parse the challenge @value
 *
 * Return: 0, -EINVAL when its scheme is neither Basic nor Bearer (no
 * message), -ENOMEM. Free with cfs_http_challenge_free() either way.
 */
int cfs_http_challenge_parse(const char *value, struct cfs_http_challenge *c);
void cfs_http_challenge_free(struct cfs_http_challenge *c);

/** cfs_base64_encode() - @len bytes as base64, NUL-terminated (malloc()ed), or NULL */
char *cfs_base64_encode(const void *data, size_t len);

/**
 * cfs_base64_decode() - decode the base64 text @s (padding optional, no
 * whitespace) into a NUL-terminated string (malloc()ed) of *@len bytes
 *
 * Return: 0, -EINVAL for what is not base64, -ENOMEM.
 */
int cfs_base64_decode(const char *s, char **out, size_t *len);

#endif /* CFS_HTTP_PARSE_H */
