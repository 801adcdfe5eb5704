/* SPDX-License-Identifier: GPL-2.0 OR MIT */
/*
 * A small strict JSON reader (RFC 8259) for the documents of OCI image
 * layouts: the text becomes a tree of values that callers look into. It is
 * internal to libcfs.
 */
#ifndef CFS_JSON_H
#define CFS_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum cfs_json_type {
	CFS_JSON_NULL,
	CFS_JSON_BOOL,
	CFS_JSON_NUMBER,
	CFS_JSON_STRING,
	CFS_JSON_ARRAY,
	CFS_JSON_OBJECT,
};

/**
 * struct cfs_json - one JSON value
 * @type: which of the members below hold it
 * @b: CFS_JSON_BOOL: the value
 * @is_int: CFS_JSON_NUMBER: an integer without fraction or exponent that
 *	    fits in an int64_t; then @i is its value
 * @i: see @is_int
 * @str: CFS_JSON_STRING: the decoded UTF-8 bytes, NUL-terminated (a string
 *	 holding "\u0000" has a NUL inside: use @len)
 * @len: length of @str
 * @items: CFS_JSON_ARRAY: the elements; CFS_JSON_OBJECT: the members' values
 * @keys: CFS_JSON_OBJECT: the members' names, NUL-terminated, no two equal
 * @n: number of @items (and @keys)
 */
struct cfs_json {
	enum cfs_json_type type;
	bool b;
	bool is_int;
	int64_t i;
	char *str;
	size_t len;
	struct cfs_json *items;
	char **keys;
	size_t n;
};

/**
 * cfs_json_parse() - parse the JSON text of @len bytes at @text
 * @what: names the text in messages
 *
 * Strict: UTF-8 only, no duplicate keys, no trailing commas or other
 * extensions, nesting at most 64 deep, at most CFS_JSON_MAX_VALUES values.
 * Return: 0 and *@out (free it with cfs_json_free()), -EINVAL with a
 * message naming @what and the byte offset, -EFBIG (with a message) for
 * too many values, or -ENOMEM.
 */
int cfs_json_parse(const char *text, size_t len, const char *what, struct cfs_json **out);

/*
 * The values cfs_json_parse() takes in one document: each costs 64 bytes
 * or more (about 135 with its name and string), so that no document takes
 * more than about 150 MiB; the documents of an image hold thousands.
 */
#define CFS_JSON_MAX_VALUES ((size_t)1 << 20)

/**
 * cfs_json_parse_max() - cfs_json_parse() of a document of at most
 * @max_values values (0: no limit); one of more is -EFBIG, without a
 * message: the caller says why, or does without the document
 */
int cfs_json_parse_max(const char *text, size_t len, const char *what, size_t max_values,
		       struct cfs_json **out);

/** cfs_json_free() - free a value cfs_json_parse() returned (NULL is fine) */
void cfs_json_free(struct cfs_json *v);

/** cfs_json_get() - the member @key of object @v; NULL if absent or @v is no object */
const struct cfs_json *cfs_json_get(const struct cfs_json *v, const char *key);

/** cfs_json_str() - the member @key of @v when it is a string without NULs; else NULL */
const char *cfs_json_str(const struct cfs_json *v, const char *key);

#endif /* CFS_JSON_H */
