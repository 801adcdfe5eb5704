// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The strict JSON reader of json.h, on jansson: json_loadb() parses (UTF-8
 * only, no duplicate keys, RFC 8259 numbers and escapes, nothing after the
 * value) into the tree the callers look into. Before jansson sees the text,
 * one pass bounds its nesting, so no document drives a deep recursion, and
 * counts its values (at most one more than its commas and brackets), so no
 * document makes a tree larger than CFS_JSON_MAX_VALUES of them; and the
 * parse's memory is counted (CFS_JSON_MAX_MEMORY).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "libcfs.h"

#define MAX_DEPTH 64

/*
 * jansson's memory, counted: a block carries its cost before it, and a
 * parse may have at most CFS_JSON_MAX_MEMORY of blocks outstanding in its
 * thread while it runs (a crafted document of few but costly values, each
 * an object of long strings, took 300 MiB within the value count). The
 * functions are set before main() runs, as jansson must free every block
 * with the function that matches the one that allocated it.
 */
#define HDR 16 /* keeps jansson's blocks aligned as malloc()'s */
static _Thread_local size_t budget; /* 0: no parse running, no limit */
static _Thread_local size_t used;
static _Thread_local bool over;

static void *counted_malloc(size_t n)
{
	size_t *p;

	/* what the block costs: its bytes, the header and malloc()'s own */
	size_t cost = n + HDR + 16;

	if (budget && (cost > budget || used > budget - cost)) {
		over = true;
		return NULL;
	}
	p = malloc(n + HDR);
	if (!p)
		return NULL;
	*p = cost;
	used += cost;
	return (char *)p + HDR;
}

static void counted_free(void *q)
{
	size_t *p;

	if (!q)
		return;
	p = (size_t *)((char *)q - HDR);
	used = used >= *p ? used - *p : 0;
	free(p);
}

__attribute__((constructor)) static void count_jansson(void)
{
	json_set_alloc_funcs(counted_malloc, counted_free);
}

static int bad(const char *what, size_t pos, const char *why)
{
	cfs_msg("'%s': invalid JSON at byte %zu: %s", what, pos, why);
	return -EINVAL;
}

/*
 * The nesting of the text: -EINVAL naming the byte where it goes deeper
 * than MAX_DEPTH; and its values: -EFBIG, without a message, when it may
 * hold more than @max_values (0: any number). Brackets and commas inside
 * strings do not count; the rest of the syntax is jansson's to check.
 */
static int check_shape(const char *text, size_t len, const char *what, size_t max_values)
{
	unsigned int depth = 0;
	bool in_string = false;
	size_t values = 1;

	for (size_t i = 0; i < len; i++) {
		char c = text[i];

		if (in_string) {
			if (c == '\\')
				i++;
			else if (c == '"')
				in_string = false;
		} else if (c == '"') {
			in_string = true;
		} else if (c == '[' || c == '{') {
			if (++depth > MAX_DEPTH)
				return bad(what, i, "nested too deep");
			values++;
		} else if ((c == ']' || c == '}') && depth) {
			depth--;
		} else if (c == ',') {
			values++;
		}
		if (max_values && values > max_values)
			return -EFBIG;
	}
	return 0;
}

int cfs_json_parse(const char *text, size_t len, const char *what, json_t **out)
{
	int r = cfs_json_parse_max(text, len, what, CFS_JSON_MAX_VALUES, out);

	if (r == -EFBIG)
		cfs_msg("'%s': more than %zu JSON values, or more than %zu MiB parsed, more than a document may hold",
			what, CFS_JSON_MAX_VALUES, CFS_JSON_MAX_MEMORY >> 20);
	return r;
}

int cfs_json_parse_max(const char *text, size_t len, const char *what, size_t max_values,
		       json_t **out)
{
	json_error_t err;
	char *near;
	json_t *j;
	int r;

	*out = NULL;
	r = check_shape(text, len, what, max_values);
	if (r)
		return r;
	/*
	 * JSON_DECODE_ANY: any value may be the document, as RFC 8259 says;
	 * JSON_ALLOW_NUL: "\u0000" in a string value is valid JSON (the
	 * string is no C string to cfs_json_str(); a member name holding it
	 * is refused).
	 */
	budget = CFS_JSON_MAX_MEMORY;
	used = 0;
	over = false;
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	budget = 0;
	if (!j) {
		if (over)
			return -EFBIG;
		if (json_error_code(&err) == json_error_out_of_memory)
			return -ENOMEM;
		/*
		 * jansson's position is past the byte it stopped at; its
		 * " near '...'" quotes the text raw, and the offset says
		 * where without printing what a registry sent.
		 */
		near = strstr(err.text, " near '");
		if (near)
			*near = '\0';
		return bad(what, err.position > 0 ? (size_t)err.position - 1 : 0, err.text);
	}
	*out = j;
	return 0;
}

const char *cfs_json_cstr(const json_t *v)
{
	const char *s = json_string_value(v);

	return s && strlen(s) == json_string_length(v) ? s : NULL;
}

const char *cfs_json_str(const json_t *v, const char *key)
{
	return cfs_json_cstr(json_object_get(v, key));
}
