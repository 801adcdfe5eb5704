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
#include "cfs/util.h"

void cli_json_str(FILE *out, const void *buf, size_t len)
{
	const unsigned char *s = buf;
	uint32_t cp;
	size_t i, k;

	for (i = 0; i < len; i += k)
		if (!(k = cfs_utf8_decode(s + i, len - i, &cp)))
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
