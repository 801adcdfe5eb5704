// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The strict JSON reader of json.h, on jansson: json_loadb() parses (UTF-8
 * only, no duplicate keys, RFC 8259 numbers and escapes, nothing after the
 * value) into the tree the callers look into. Before jansson sees the text,
 * one pass bounds its nesting, so no document drives a deep recursion, and
 * counts its values (at most one more than its commas and brackets), so no
 * document makes a tree larger than CFS_JSON_MAX_VALUES of them; and the
 * parse's memory is counted (CFS_JSON_MAX_MEMORY), in malloc()'s blocks or
 * in an arena freed at once with the tree (cfs_json_parse_arena()).
 */
#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include <jansson.h>

#include "json.h"
#include "base/internal.h"

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
#define ARENA_TAG ((size_t)0x61726e61) /* a block's second word: in an arena */
static _Thread_local size_t budget; /* 0: no parse running, no limit */
static _Thread_local size_t used;
static _Thread_local bool over;

/*
 * An arena: chunks that the blocks of one parse are cut from, one after
 * the other, and that are freed together, with the tree, once its reader
 * is done with it. A parse of a TOC makes and frees hundreds of thousands
 * of small blocks (strings, values, hash tables); malloc() and free() were
 * a third of its time. A block freed in an arena (jansson's buffer of the
 * token being read, an object's hash table as it grows) is not reused: it
 * stays counted against the budget, as its memory stays taken.
 */
#define CHUNK_MIN ((size_t)64 << 10)
#define CHUNK_MAX ((size_t)4 << 20)

struct chunk {
	struct chunk *next;
	size_t size, used;
	_Alignas(16) unsigned char data[];
};

struct cfs_json_arena {
	struct chunk *chunks; /* the newest first: blocks are cut from it */
	size_t next_size;
};

static _Thread_local struct cfs_json_arena *arena; /* while a parse runs in one */

static void *arena_alloc(struct cfs_json_arena *a, size_t n)
{
	struct chunk *c = a->chunks;
	void *p;

	n = (n + 15) & ~(size_t)15;
	if (n > CHUNK_MIN / 4) {
		/* a large block: a chunk of its own, behind the one being cut */
		c = malloc(sizeof(*c) + n);
		if (!c)
			return NULL;
		c->size = c->used = n;
		c->next = a->chunks ? a->chunks->next : NULL;
		if (a->chunks)
			a->chunks->next = c;
		else
			a->chunks = c;
		return c->data;
	}
	if (!c || c->size - c->used < n) {
		c = malloc(sizeof(*c) + a->next_size);
		if (!c)
			return NULL;
		c->size = a->next_size;
		c->used = 0;
		c->next = a->chunks;
		a->chunks = c;
		if (a->next_size < CHUNK_MAX)
			a->next_size *= 2;
	}
	p = c->data + c->used;
	c->used += n;
	return p;
}

static void *counted_malloc(size_t n)
{
	size_t *p, cost;

	if (n > SIZE_MAX / 2)
		return NULL;
	/* what the block costs: its bytes, the header and malloc()'s own (or the arena's padding) */
	cost = arena ? ((n + 15) & ~(size_t)15) + HDR : n + HDR + 16;
	if (budget && (cost > budget || used > budget - cost)) {
		over = true;
		return NULL;
	}
	p = arena ? arena_alloc(arena, n + HDR) : malloc(n + HDR);
	if (!p)
		return NULL;
	p[0] = cost;
	p[1] = arena ? ARENA_TAG : 0;
	used += cost;
	return (char *)p + HDR;
}

static void counted_free(void *q)
{
	size_t *p;

	if (!q)
		return;
	p = (size_t *)((char *)q - HDR);
	if (p[1] == ARENA_TAG) /* freed with its arena */
		return;
	used = used >= p[0] ? used - p[0] : 0;
	free(p);
}

void cfs_json_arena_free(struct cfs_json_arena *a)
{
	if (!a)
		return;
	while (a->chunks) {
		struct chunk *c = a->chunks;

		a->chunks = c->next;
		free(c);
	}
	free(a);
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

/* The parse, in @a when not NULL. */
static int parse(const char *text, size_t len, const char *what, size_t max_values,
		 struct cfs_json_arena *a, json_t **out)
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
	arena = a;
	j = json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
	arena = NULL;
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

int cfs_json_parse_max(const char *text, size_t len, const char *what, size_t max_values,
		       json_t **out)
{
	return parse(text, len, what, max_values, NULL, out);
}

int cfs_json_parse_arena(const char *text, size_t len, const char *what, size_t max_values,
			 json_t **out, struct cfs_json_arena **ap)
{
	struct cfs_json_arena *a = calloc(1, sizeof(*a));
	int r;

	*out = NULL;
	*ap = NULL;
	if (!a)
		return -ENOMEM;
	a->next_size = CHUNK_MIN;
	r = parse(text, len, what, max_values, a, out);
	if (r) {
		cfs_json_arena_free(a);
		return r;
	}
	*ap = a;
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

char *cfs_json_dump(const json_t *v, size_t flags)
{
	size_t n = json_dumpb(v, NULL, 0, flags);
	char *s;

	if (!n)
		return NULL;
	s = malloc(n + 1);
	if (!s)
		return NULL;
	if (json_dumpb(v, s, n, flags) != n) {
		free(s);
		return NULL;
	}
	s[n] = '\0';
	return s;
}
