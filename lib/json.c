// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * A strict JSON reader (see json.h): recursive descent over the text, with
 * the nesting depth bounded, into a tree of struct cfs_json. Anything RFC
 * 8259 does not allow is an error naming the byte offset: invalid UTF-8,
 * lone surrogates, control characters in strings, leading zeros, trailing
 * commas, duplicate keys, text after the value.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "libcfs.h"

#define MAX_DEPTH 64
/* Members an object may have before its names are checked by sorting them. */
#define FEW_MEMBERS 32

struct parser {
	const unsigned char *s;
	size_t len, pos;
	const char *what;
	size_t values, max_values; /* max_values 0: no limit */
};

static int bad(struct parser *p, const char *why)
{
	cfs_msg("'%s': invalid JSON at byte %zu: %s", p->what, p->pos, why);
	return -EINVAL;
}

static void skip_ws(struct parser *p)
{
	while (p->pos < p->len && (p->s[p->pos] == ' ' || p->s[p->pos] == '\t' ||
				   p->s[p->pos] == '\n' || p->s[p->pos] == '\r'))
		p->pos++;
}

static int literal(struct parser *p, const char *word)
{
	size_t n = strlen(word);

	if (p->len - p->pos < n || memcmp(p->s + p->pos, word, n) != 0)
		return bad(p, "unexpected character");
	p->pos += n;
	return 0;
}

static int hex4(struct parser *p, uint32_t *out)
{
	uint32_t v = 0;

	if (p->len - p->pos < 4)
		return bad(p, "a \\u escape is cut short");
	for (int i = 0; i < 4; i++) {
		unsigned char c = p->s[p->pos++];

		v <<= 4;
		if (c >= '0' && c <= '9')
			v |= c - '0';
		else if (c >= 'a' && c <= 'f')
			v |= c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v |= c - 'A' + 10;
		else
			return bad(p, "a \\u escape needs four hex digits");
	}
	*out = v;
	return 0;
}

static size_t put_utf8(char *o, uint32_t c)
{
	if (c < 0x80) {
		o[0] = (char)c;
		return 1;
	}
	if (c < 0x800) {
		o[0] = (char)(0xc0 | c >> 6);
		o[1] = (char)(0x80 | (c & 0x3f));
		return 2;
	}
	if (c < 0x10000) {
		o[0] = (char)(0xe0 | c >> 12);
		o[1] = (char)(0x80 | ((c >> 6) & 0x3f));
		o[2] = (char)(0x80 | (c & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | c >> 18);
	o[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	o[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	o[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* A string at p->pos (its opening quote), decoded into a new buffer. */
static int string(struct parser *p, char **out, size_t *out_len)
{
	size_t start = ++p->pos, cap = 0, n = 0;
	char *o;

	/* The decoded string is never longer than its text. */
	while (p->pos < p->len && p->s[p->pos] != '"') {
		if (p->s[p->pos] == '\\')
			p->pos++;
		p->pos++;
	}
	if (p->pos >= p->len)
		return bad(p, "a string is not closed");
	cap = p->pos - start;
	p->pos = start;
	o = malloc(cap + 1);
	if (!o)
		return -ENOMEM;
	for (;;) {
		unsigned char c = p->s[p->pos];
		uint32_t u, lo;
		size_t k;

		if (c == '"') {
			p->pos++;
			break;
		}
		if (c < 0x20) {
			free(o);
			return bad(p, "a control character in a string");
		}
		if (c < 0x80 && c != '\\') {
			o[n++] = (char)c;
			p->pos++;
			continue;
		}
		if (c >= 0x80) {
			k = cfs_utf8_decode(p->s + p->pos, p->len - p->pos, &u);
			if (!k) {
				free(o);
				return bad(p, "invalid UTF-8 in a string");
			}
			memcpy(o + n, p->s + p->pos, k);
			n += k;
			p->pos += k;
			continue;
		}
		p->pos++; /* the backslash */
		c = p->s[p->pos++];
		switch (c) {
		case '"': case '\\': case '/': o[n++] = (char)c; continue;
		case 'b': o[n++] = '\b'; continue;
		case 'f': o[n++] = '\f'; continue;
		case 'n': o[n++] = '\n'; continue;
		case 'r': o[n++] = '\r'; continue;
		case 't': o[n++] = '\t'; continue;
		case 'u': break;
		default:
			free(o);
			p->pos--;
			return bad(p, "an unknown escape in a string");
		}
		if (hex4(p, &u)) {
			free(o);
			return -EINVAL;
		}
		if (u >= 0xdc00 && u <= 0xdfff) {
			free(o);
			return bad(p, "a lone low surrogate");
		}
		if (u >= 0xd800 && u <= 0xdbff) {
			if (p->len - p->pos < 2 || p->s[p->pos] != '\\' || p->s[p->pos + 1] != 'u') {
				free(o);
				return bad(p, "a high surrogate without its low one");
			}
			p->pos += 2;
			if (hex4(p, &lo)) {
				free(o);
				return -EINVAL;
			}
			if (lo < 0xdc00 || lo > 0xdfff) {
				free(o);
				return bad(p, "a high surrogate without its low one");
			}
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		}
		n += put_utf8(o + n, u);
	}
	o[n] = '\0';
	*out = o;
	*out_len = n;
	return 0;
}

static int number(struct parser *p, struct cfs_json *v)
{
	bool neg = false, integral = true, overflow = false;
	uint64_t mag = 0;

	if (p->s[p->pos] == '-') {
		neg = true;
		p->pos++;
	}
	if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
		return bad(p, "a number without digits");
	if (p->s[p->pos] == '0' && p->pos + 1 < p->len && p->s[p->pos + 1] >= '0' &&
	    p->s[p->pos + 1] <= '9')
		return bad(p, "a number with a leading zero");
	while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9') {
		unsigned d = p->s[p->pos++] - '0';

		if (mag > (UINT64_MAX - d) / 10)
			overflow = true;
		else
			mag = mag * 10 + d;
	}
	if (p->pos < p->len && p->s[p->pos] == '.') {
		integral = false;
		p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
			return bad(p, "a fraction without digits");
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	if (p->pos < p->len && (p->s[p->pos] == 'e' || p->s[p->pos] == 'E')) {
		integral = false;
		p->pos++;
		if (p->pos < p->len && (p->s[p->pos] == '+' || p->s[p->pos] == '-'))
			p->pos++;
		if (p->pos >= p->len || p->s[p->pos] < '0' || p->s[p->pos] > '9')
			return bad(p, "an exponent without digits");
		while (p->pos < p->len && p->s[p->pos] >= '0' && p->s[p->pos] <= '9')
			p->pos++;
	}
	v->type = CFS_JSON_NUMBER;
	if (integral && !overflow && mag <= (uint64_t)INT64_MAX + neg) {
		v->is_int = true;
		v->i = neg ? (int64_t)(0 - mag) : (int64_t)mag;
	}
	return 0;
}

static void free_value(struct cfs_json *v)
{
	for (size_t i = 0; i < v->n; i++) {
		free_value(&v->items[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->items);
	free(v->keys);
	free(v->str);
}

static int value(struct parser *p, struct cfs_json *v, unsigned int depth);

static int cmp_key(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * No two names of the large object @v are equal: sorted, O(n log n), as a
 * document of a million members would take hours checked pair by pair.
 */
static int unique_keys(struct parser *p, const struct cfs_json *v)
{
	char **k = malloc(v->n * sizeof(*k));
	int r = 0;

	if (!k)
		return -ENOMEM;
	memcpy(k, v->keys, v->n * sizeof(*k));
	qsort(k, v->n, sizeof(*k), cmp_key);
	for (size_t i = 1; i < v->n && !r; i++)
		if (strcmp(k[i - 1], k[i]) == 0)
			r = bad(p, "a duplicate member name in the object that ends here");
	free(k);
	return r;
}

/* An array or object at p->pos (its opening bracket) into @v. */
static int container(struct parser *p, struct cfs_json *v, unsigned int depth)
{
	bool object = p->s[p->pos] == '{';
	char close = object ? '}' : ']';
	size_t cap = 0;
	int r;

	if (depth >= MAX_DEPTH)
		return bad(p, "nested too deep");
	v->type = object ? CFS_JSON_OBJECT : CFS_JSON_ARRAY;
	p->pos++;
	skip_ws(p);
	if (p->pos < p->len && p->s[p->pos] == close) {
		p->pos++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		size_t key_len;

		if (v->n == cap) {
			size_t c = cap ? 2 * cap : 4;
			struct cfs_json *items = realloc(v->items, c * sizeof(*items));
			char **keys;

			if (!items)
				return -ENOMEM;
			v->items = items;
			if (object) {
				keys = realloc(v->keys, c * sizeof(*keys));
				if (!keys)
					return -ENOMEM;
				v->keys = keys;
			}
			cap = c;
		}
		skip_ws(p);
		if (object) {
			if (p->pos >= p->len || p->s[p->pos] != '"')
				return bad(p, "expected a member name");
			r = string(p, &key, &key_len);
			if (r)
				return r;
			if (strlen(key) != key_len) {
				free(key);
				return bad(p, "a member name holds a NUL");
			}
			for (size_t i = 0; i < v->n && v->n < FEW_MEMBERS; i++) {
				if (strcmp(v->keys[i], key) == 0) {
					free(key);
					return bad(p, "a duplicate member name");
				}
			}
			skip_ws(p);
			if (p->pos >= p->len || p->s[p->pos] != ':') {
				free(key);
				return bad(p, "expected ':'");
			}
			p->pos++;
		}
		memset(&v->items[v->n], 0, sizeof(v->items[v->n]));
		r = value(p, &v->items[v->n], depth + 1);
		if (r) {
			free_value(&v->items[v->n]);
			free(key);
			return r;
		}
		if (object)
			v->keys[v->n] = key;
		v->n++;
		skip_ws(p);
		if (p->pos < p->len && p->s[p->pos] == ',') {
			p->pos++;
			continue;
		}
		if (p->pos < p->len && p->s[p->pos] == close) {
			p->pos++;
			return object && v->n > FEW_MEMBERS ? unique_keys(p, v) : 0;
		}
		return bad(p, object ? "expected ',' or '}'" : "expected ',' or ']'");
	}
}

static int value(struct parser *p, struct cfs_json *v, unsigned int depth)
{
	skip_ws(p);
	if (p->pos >= p->len)
		return bad(p, "the text ends where a value should be");
	if (p->max_values && ++p->values > p->max_values)
		return -EFBIG; /* the caller says so, or does without */
	switch (p->s[p->pos]) {
	case '{':
	case '[':
		return container(p, v, depth);
	case '"':
		v->type = CFS_JSON_STRING;
		return string(p, &v->str, &v->len);
	case 't':
		v->type = CFS_JSON_BOOL;
		v->b = true;
		return literal(p, "true");
	case 'f':
		v->type = CFS_JSON_BOOL;
		return literal(p, "false");
	case 'n':
		v->type = CFS_JSON_NULL;
		return literal(p, "null");
	default:
		return number(p, v);
	}
}

int cfs_json_parse(const char *text, size_t len, const char *what, struct cfs_json **out)
{
	int r = cfs_json_parse_max(text, len, what, CFS_JSON_MAX_VALUES, out);

	if (r == -EFBIG)
		cfs_msg("'%s': more than %zu JSON values, more than a document may hold", what,
			CFS_JSON_MAX_VALUES);
	return r;
}

int cfs_json_parse_max(const char *text, size_t len, const char *what, size_t max_values,
		       struct cfs_json **out)
{
	struct parser p = { .s = (const unsigned char *)text, .len = len, .what = what,
			    .max_values = max_values };
	struct cfs_json *v = calloc(1, sizeof(*v));
	int r;

	*out = NULL;
	if (!v)
		return -ENOMEM;
	r = value(&p, v, 0);
	if (r == 0) {
		skip_ws(&p);
		if (p.pos != p.len)
			r = bad(&p, "text after the value");
	}
	if (r) {
		cfs_json_free(v);
		return r;
	}
	*out = v;
	return 0;
}

void cfs_json_free(struct cfs_json *v)
{
	if (!v)
		return;
	free_value(v);
	free(v);
}

const struct cfs_json *cfs_json_get(const struct cfs_json *v, const char *key)
{
	if (!v || v->type != CFS_JSON_OBJECT)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->items[i];
	return NULL;
}

const char *cfs_json_str(const struct cfs_json *v, const char *key)
{
	const struct cfs_json *s = cfs_json_get(v, key);

	if (!s || s->type != CFS_JSON_STRING || strlen(s->str) != s->len)
		return NULL;
	return s->str;
}
