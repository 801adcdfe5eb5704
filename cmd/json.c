// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * JSON strings for the verbs that speak JSON (inspect, verify, diff). Image paths,
 * names and keys are bytes, not text: a value that is valid UTF-8 becomes a
 * JSON string, any other becomes an array of its byte values, so nothing is
 * lost or guessed.
 */
#include <stdio.h>
#include <string.h>

#include "cfsctl.h"

/* Length of the valid UTF-8 sequence at @s (at most @n bytes), or 0. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
	uint32_t c;
	size_t len;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		len = 2, c = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		len = 3, c = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		len = 4, c = s[0] & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if ((len == 3 && c < 0x800) || (len == 4 && (c < 0x10000 || c > 0x10ffff)) ||
	    (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return len;
}

void cli_json_str(FILE *out, const void *buf, size_t len)
{
	const unsigned char *s = buf;
	size_t i, k;

	for (i = 0; i < len; i += k)
		if (!(k = utf8_seq(s + i, len - i)))
			break;
	if (i < len) {
		fputc('[', out);
		for (i = 0; i < len; i++)
			fprintf(out, "%s%u", i ? "," : "", s[i]);
		fputc(']', out);
		return;
	}
	fputc('"', out);
	for (i = 0; i < len; i++) {
		if (s[i] == '"' || s[i] == '\\')
			fprintf(out, "\\%c", s[i]);
		else if (s[i] == '\n')
			fputs("\\n", out);
		else if (s[i] == '\t')
			fputs("\\t", out);
		else if (s[i] < 0x20 || s[i] == 0x7f)
			fprintf(out, "\\u%04x", s[i]);
		else
			fputc(s[i], out);
	}
	fputc('"', out);
}

void cli_json_cstr(FILE *out, const char *s)
{
	if (s)
		cli_json_str(out, s, strlen(s));
	else
		fputs("null", out);
}
