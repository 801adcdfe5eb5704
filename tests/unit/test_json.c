// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of lib/json.c: documents of every value kind parse to what they
 * say (escapes and surrogate pairs decoded, integers kept exact), and every
 * text RFC 8259 does not allow is refused with a message naming the byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "libcfs.h"
#include "check.h"

static char messages[4096];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(messages, sizeof(messages), "%s", msg);
}

static struct cfs_json *parse(const char *text)
{
	struct cfs_json *v = NULL;
	int r = cfs_json_parse(text, strlen(text), "t.json", &v);

	CHECK(r == 0, "'%s' did not parse (%d): %s", text, r, messages);
	return v;
}

static void refused(const char *text, const char *why)
{
	struct cfs_json *v = NULL;
	int r;

	messages[0] = '\0';
	r = cfs_json_parse(text, strlen(text), "t.json", &v);
	CHECK(r == -EINVAL && !v, "'%s' was accepted", text);
	CHECK(strstr(messages, "'t.json': invalid JSON at byte ") && strstr(messages, why),
	      "'%s': message '%s' lacks '%s'", text, messages, why);
	cfs_json_free(v);
}

int main(void)
{
	struct cfs_json *v;
	const struct cfs_json *a;

	cfs_set_message_handler(on_msg, NULL);
	v = parse(" {\"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\", \"n\": -9223372036854775808,"
		  " \"big\": 18446744073709551616, \"f\": 1.5e3, \"a\": [true, false, null, {}, []],"
		  " \"u\": \"\xc3\xa9\xf0\x9f\x98\x80\", \"nul\": \"a\\u0000b\"}\n");
	if (v) {
		CHECK(v->type == CFS_JSON_OBJECT && v->n == 7, "object of 7 members");
		CHECK(strcmp(cfs_json_str(v, "s"), "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80") == 0,
		      "escapes: '%s'", cfs_json_str(v, "s"));
		CHECK(strcmp(cfs_json_str(v, "u"), "\xc3\xa9\xf0\x9f\x98\x80") == 0, "UTF-8 kept");
		CHECK(cfs_json_get(v, "n")->is_int && cfs_json_get(v, "n")->i == INT64_MIN,
		      "INT64_MIN");
		CHECK(!cfs_json_get(v, "big")->is_int, "2^64 is no int64");
		CHECK(cfs_json_get(v, "f")->type == CFS_JSON_NUMBER && !cfs_json_get(v, "f")->is_int,
		      "a fraction is a number, not an integer");
		a = cfs_json_get(v, "a");
		CHECK(a && a->type == CFS_JSON_ARRAY && a->n == 5 && a->items[0].b &&
			      a->items[2].type == CFS_JSON_NULL && a->items[3].type == CFS_JSON_OBJECT,
		      "array");
		CHECK(!cfs_json_str(v, "nul") && cfs_json_get(v, "nul")->len == 3,
		      "a string holding NUL is no C string");
		CHECK(!cfs_json_get(v, "missing") && !cfs_json_str(v, "n"), "absent or not a string");
	}
	cfs_json_free(v);

	refused("", "ends where a value");
	refused("{\"a\": 1,}", "expected a member name");
	refused("[1,]", "number without digits");
	refused("{\"a\": 1, \"a\": 2}", "duplicate member");
	refused("{\"a\" 1}", "expected ':'");
	refused("[01]", "leading zero");
	refused("[1.]", "fraction without digits");
	refused("[1e]", "exponent without digits");
	refused("[-]", "number without digits");
	refused("\"a\tb\"", "control character");
	refused("\"\\x\"", "unknown escape");
	refused("\"\\u12zz\"", "four hex digits");
	refused("\"\\u12\"", "cut short");
	refused("\"\\ud83d\"", "without its low one");
	refused("\"\\ude00\"", "lone low surrogate");
	refused("\"\xc3\"", "invalid UTF-8");
	refused("\"\xed\xa0\x80\"", "invalid UTF-8");
	refused("\"\xc0\xaf\"", "invalid UTF-8");
	refused("\"abc", "not closed");
	refused("{} {}", "text after the value");
	refused("[tru]", "unexpected character");
	refused("{\"a\\u0000\": 1}", "holds a NUL");
	{
		char deep[200];

		memset(deep, '[', 65);
		memset(deep + 65, ']', 65);
		deep[130] = '\0';
		refused(deep, "nested too deep");
		memset(deep, '[', 64);
		memset(deep + 64, ']', 64);
		deep[128] = '\0';
		cfs_json_free(parse(deep)); /* 64 deep is fine */
	}
	{
		/*
		 * An object of 200000 members, checked for duplicates by sorting
		 * (pair by pair, 2 * 10^10 comparisons); then with the first
		 * name again at its end.
		 */
		size_t n = 200000, len = 0;
		char *text = malloc(n * 16 + 64);

		CHECK(text, "memory");
		if (text) {
			text[len++] = '{';
			for (size_t i = 0; i < n; i++)
				len += (size_t)sprintf(text + len, "%s\"k%zu\":0", i ? "," : "", i);
			strcpy(text + len, "}");
			v = parse(text);
			CHECK(v && v->n == n, "an object of %zu members", n);
			cfs_json_free(v);
			strcpy(text + len, ",\"k0\":1}");
			refused(text, "a duplicate member name in the object that ends here");
			free(text);
		}
	}
	{
		/* CFS_JSON_MAX_VALUES values (the array and its elements), and one more */
		size_t n = CFS_JSON_MAX_VALUES - 1;
		char *text = malloc(2 * n + 8);
		struct cfs_json *big = NULL;
		int r;

		CHECK(text, "memory");
		if (text) {
			text[0] = '[';
			for (size_t i = 0; i < n; i++)
				memcpy(text + 1 + 2 * i, "0,", 2);
			text[2 * n] = ']';
			text[2 * n + 1] = '\0';
			big = parse(text);
			CHECK(big && big->n == n, "an array of %zu elements", n);
			cfs_json_free(big);
			big = NULL;
			text[2 * n] = ',';
			strcpy(text + 2 * n + 1, "0]");
			messages[0] = '\0';
			r = cfs_json_parse(text, strlen(text), "t.json", &big);
			CHECK(r == -EFBIG && !big, "one value more: %d", r);
			CHECK(strstr(messages, "'t.json': more than 1048576 JSON values"),
			      "message '%s'", messages);
			r = cfs_json_parse_max(text, strlen(text), "t.json", 0, &big);
			CHECK(r == 0 && big && big->n == n + 1, "without a limit: %d", r);
			cfs_json_free(big);
			free(text);
		}
	}
	return check_exit("json");
}
