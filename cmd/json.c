// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * --json output, through jansson: a verb builds its document as a json_t
 * and prints it with cli_json_print(). Image paths, names and keys are
 * bytes, not text: a value that is valid UTF-8 becomes a JSON string, any
 * other an array of its byte values, so nothing is lost or guessed. jansson
 * escapes the control characters; DEL, which it leaves raw, is escaped
 * here too, so no byte from an image reaches a terminal unescaped.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cfsctl.h"
#include "cfs/util.h"

/* A value could not be made or added (out of memory): the next print fails. */
static bool json_failed;

json_t *cli_json_bytes(const void *buf, size_t len)
{
	const unsigned char *s = buf;
	json_t *a;
	uint32_t cp;
	size_t i, k;

	for (i = 0; i < len; i += k)
		if (!(k = cfs_utf8_decode(s + i, len - i, &cp)))
			break;
	/* jansson checks the UTF-8 again: should it refuse, the bytes still go out */
	if (i == len && (a = json_stringn(buf, len)))
		return a;
	a = json_array();
	for (i = 0; i < len; i++)
		cli_json_push(a, json_integer(s[i]));
	return a;
}

json_t *cli_json_text(const char *s)
{
	return s ? cli_json_bytes(s, strlen(s)) : json_null();
}

void cli_json_set(json_t *obj, const char *key, json_t *v)
{
	/* json_object_set_new() takes @v, and drops it on failure */
	if (!v || json_object_set_new(obj, key, v))
		json_failed = true;
}

void cli_json_push(json_t *arr, json_t *v)
{
	if (!v || json_array_append_new(arr, v))
		json_failed = true;
}

/* jansson's text to @data (a FILE), DEL as \u007f: it occurs only inside strings. */
static int put(const char *buf, size_t size, void *data)
{
	const char *del;

	while ((del = memchr(buf, 0x7f, size))) {
		fwrite(buf, 1, (size_t)(del - buf), data);
		fputs("\\u007f", data);
		size -= (size_t)(del - buf) + 1;
		buf = del + 1;
	}
	fwrite(buf, 1, size, data);
	return 0;
}

static bool is_container(const json_t *v)
{
	return json_is_object(v) || json_is_array(v);
}

/*
 * @v at nesting @level, laid out as cfsctl has always printed JSON: the
 * document's members (or elements) one a line, and an array of objects
 * within it one object a line; everything deeper on one line.
 */
static int layout(FILE *out, const json_t *v, int level)
{
	bool lines = level == 0 ? is_container(v) && json_object_size(v) + json_array_size(v) :
		     level == 1 && json_array_size(v) && is_container(json_array_get(v, 0));
	const char *key;
	json_t *item;
	size_t i = 0;

	if (!lines)
		return json_dump_callback(v, put, out, JSON_ENCODE_ANY | JSON_REAL_PRECISION(15));
	fputc(json_is_object(v) ? '{' : '[', out);
	if (json_is_object(v)) {
		json_object_foreach((json_t *)v, key, item) {
			json_t *k = json_string(key);
			int r;

			fprintf(out, "%s\n%*s", i++ ? "," : "", 2 * (level + 1), "");
			r = k ? json_dump_callback(k, put, out, JSON_ENCODE_ANY) : -1;
			json_decref(k);
			if (r == 0) {
				fputs(": ", out);
				r = layout(out, item, level + 1);
			}
			if (r)
				return -1;
		}
	} else {
		json_array_foreach(v, i, item) {
			fprintf(out, "%s\n%*s", i ? "," : "", 2 * (level + 1), "");
			if (layout(out, item, level + 1))
				return -1;
		}
	}
	fprintf(out, "\n%*s%c", 2 * level, "", json_is_object(v) ? '}' : ']');
	return 0;
}

int cli_json_fprint(FILE *out, json_t *doc, enum cli_json_style style)
{
	int r;

	if (!doc || json_failed) {
		json_decref(doc);
		json_failed = false;
		return -ENOMEM;
	}
	if (style == CLI_JSON_LINES)
		r = layout(out, doc, 0);
	else
		r = json_dump_callback(doc, put, out,
				       JSON_ENCODE_ANY | JSON_REAL_PRECISION(15) |
					       (style == CLI_JSON_COMPACT ? JSON_COMPACT : 0));
	json_decref(doc);
	if (r)
		return -ENOMEM;
	fputc('\n', out);
	return 0;
}

int cli_json_print(json_t *doc, enum cli_json_style style)
{
	return cli_json_fprint(stdout, doc, style);
}
