// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of lib/remote/json.c, what cfs accepts as JSON: documents of every value kind parse to what they
 * say (escapes and surrogate pairs decoded, integers kept exact, members in
 * order), and every text RFC 8259 does not allow, duplicate member names,
 * invalid UTF-8 and nesting deeper than 64 are refused with a message naming
 * the byte.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "remote/json.h"
#include "base/internal.h"
#include "check.h"

static char messages[4096];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(messages, sizeof(messages), "%s", msg);
}

static json_t *parse(const char *text)
{
	json_t *v = NULL;
	int r = cfs_json_parse(text, strlen(text), "t.json", &v);

	CHECK(r == 0, "'%s' did not parse (%d): %s", text, r, messages);
	return v;
}

static void refused(const char *text, const char *why)
{
	json_t *v = NULL;
	int r;

	messages[0] = '\0';
	r = cfs_json_parse(text, strlen(text), "t.json", &v);
	CHECK(r == -EINVAL && !v, "'%s' was accepted", text);
	CHECK(strstr(messages, "'t.json': invalid JSON at byte ") && strstr(messages, why),
	      "'%s': message '%s' lacks '%s'", text, messages, why);
	json_decref(v);
}

int main(void)
{
	json_t *v;
	const json_t *a;
	const char *key;

	cfs_set_message_handler(on_msg, NULL);
	v = parse(" {\"s\": \"a\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\\ud83d\\ude00\", \"n\": -9223372036854775808,"
		  " \"f\": 1.5e3, \"a\": [true, false, null, {}, []],"
		  " \"u\": \"\xc3\xa9\xf0\x9f\x98\x80\", \"nul\": \"a\\u0000b\"}\n");
	if (v) {
		CHECK(json_is_object(v) && json_object_size(v) == 6, "object of 6 members");
		key = json_object_iter_key(json_object_iter(v));
		CHECK(key && strcmp(key, "s") == 0, "members in the order of the text");
		CHECK(strcmp(cfs_json_str(v, "s"), "a\"\\/\b\f\n\r\t\xc3\xa9\xf0\x9f\x98\x80") == 0,
		      "escapes: '%s'", cfs_json_str(v, "s"));
		CHECK(strcmp(cfs_json_str(v, "u"), "\xc3\xa9\xf0\x9f\x98\x80") == 0, "UTF-8 kept");
		CHECK(json_is_integer(json_object_get(v, "n")) &&
			      json_integer_value(json_object_get(v, "n")) == INT64_MIN,
		      "INT64_MIN");
		CHECK(json_is_real(json_object_get(v, "f")), "a fraction is a number, not an integer");
		a = json_object_get(v, "a");
		CHECK(json_is_array(a) && json_array_size(a) == 5 && json_is_true(json_array_get(a, 0)) &&
			      json_is_null(json_array_get(a, 2)) && json_is_object(json_array_get(a, 3)),
		      "array");
		CHECK(!cfs_json_str(v, "nul") && json_string_length(json_object_get(v, "nul")) == 3,
		      "a string holding NUL is no C string");
		CHECK(!json_object_get(v, "missing") && !cfs_json_str(v, "n"), "absent or not a string");
	}
	json_decref(v);

	/* The reasons are jansson's; the offset is of the byte it stopped at. */
	refused("", "unexpected token");
	refused("{\"a\": 1,}", "byte 8: string or '}' expected");
	refused("[1,]", "unexpected token");
	refused("{\"a\": 1, \"a\": 2}", "duplicate object key");
	refused("{\"a\": 1, \"\\u0061\": 2}", "duplicate object key");
	refused("[{\"b\": {}, \"c\": 1, \"b\": []}]", "duplicate object key");
	refused("{\"a\" 1}", "':' expected");
	refused("[01]", "invalid token");
	refused("[1.]", "invalid token");
	refused("[1e]", "invalid token");
	refused("[-]", "invalid token");
	refused("[18446744073709551616]", "too big integer");
	refused("\"a\tb\"", "control character");
	refused("\"\\x\"", "invalid escape");
	refused("\"\\u12zz\"", "invalid escape");
	refused("\"\\u12\"", "invalid escape");
	refused("\"\\ud83d\"", "invalid Unicode");
	refused("\"\\ude00\"", "invalid Unicode");
	refused("\"\xc3\"", "unable to decode byte 0xc3");
	refused("\"\xed\xa0\x80\"", "unable to decode byte 0xed");
	refused("\"\xc0\xaf\"", "unable to decode byte 0xc0");
	refused("\"\xf4\x90\x80\x80\"", "unable to decode byte 0xf4");
	refused("{\"\xff\": 1}", "unable to decode byte 0xff");
	refused("\"abc", "premature end of input");
	refused("{} {}", "end of file expected");
	refused("[tru]", "invalid token");
	refused("{\"a\\u0000\": 1}", "NUL byte in object key");
	/* What jansson quotes " near" the error is not printed: it is raw input. */
	refused("[\x1b]", "invalid token");
	CHECK(!strchr(messages, '\x1b'), "the message holds the raw escape: '%s'", messages);
	{
		char deep[400];

		memset(deep, '[', 65);
		memset(deep + 65, ']', 65);
		deep[130] = '\0';
		refused(deep, "nested too deep");
		memset(deep, '[', 64);
		memset(deep + 64, ']', 64);
		deep[128] = '\0';
		json_decref(parse(deep)); /* 64 deep is fine */
		for (int i = 0; i < 65; i++)
			memcpy(deep + 5 * i, "{\"a\":", 5);
		deep[325] = '\0';
		refused(deep, "byte 320: nested too deep");
		/* Brackets in strings are no nesting. */
		memset(deep, '[', 64);
		snprintf(deep + 64, sizeof(deep) - 64, "\"[{\\\"[\"");
		memset(deep + 64 + 7, ']', 64);
		deep[64 + 7 + 64] = '\0';
		json_decref(parse(deep));
	}
	{
		/*
		 * An object of 200000 members, checked for duplicates in linear
		 * time (pair by pair would be 2 * 10^10 comparisons); then with
		 * the first name again at its end.
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
			CHECK(v && json_object_size(v) == n, "an object of %zu members", n);
			json_decref(v);
			strcpy(text + len, ",\"k0\":1}");
			refused(text, "duplicate object key");
			free(text);
		}
	}
	{
		/* CFS_JSON_MAX_VALUES values (the array and its elements), and one more */
		size_t n = CFS_JSON_MAX_VALUES - 1;
		char *text = malloc(2 * n + 8);
		json_t *big = NULL;
		int r;

		CHECK(text, "memory");
		if (text) {
			text[0] = '[';
			for (size_t i = 0; i < n; i++)
				memcpy(text + 1 + 2 * i, "0,", 2);
			text[2 * n] = ']';
			text[2 * n + 1] = '\0';
			big = parse(text);
			CHECK(big && json_array_size(big) == n, "an array of %zu elements", n);
			json_decref(big);
			big = NULL;
			text[2 * n] = ',';
			strcpy(text + 2 * n + 1, "0]");
			messages[0] = '\0';
			r = cfs_json_parse(text, strlen(text), "t.json", &big);
			CHECK(r == -EFBIG && !big, "one value more: %d", r);
			CHECK(strstr(messages, "'t.json': more than 1048576 JSON values"),
			      "message '%s'", messages);
			r = cfs_json_parse_max(text, strlen(text), "t.json", 0, &big);
			CHECK(r == 0 && big && json_array_size(big) == n + 1, "without a limit: %d", r);
			json_decref(big);
			free(text);
		}
	}
	{
		/*
		 * In an arena: the same tree, every string and number as
		 * parsed (large strings too, in chunks of their own); a
		 * refused text leaves no arena; a tree of costly values
		 * stops at CFS_JSON_MAX_MEMORY with -EFBIG. The sanitizer
		 * build checks that freeing the arena frees every block.
		 */
		static const char doc[] = "{\"a\":[1,\"two\",{\"b\":null}],\"big\":\"%s\",\"n\":-7}";
		size_t big_len = 100000, n = 2 * 1000 * 1000;
		char *text = malloc(sizeof(doc) + big_len), *costly = malloc(n * 16 + 8);
		struct cfs_json_arena *a = NULL;
		json_t *v = NULL;
		int r;

		CHECK(text && costly, "memory");
		if (text && costly) {
			char *fill = malloc(big_len + 1);

			CHECK(fill, "memory");
			if (fill) {
				memset(fill, 'x', big_len);
				fill[big_len] = '\0';
				snprintf(text, sizeof(doc) + big_len, doc, fill);
				free(fill);
				r = cfs_json_parse_arena(text, strlen(text), "t.json", 0, &v, &a);
				CHECK(r == 0 && v && a, "arena parse: %d", r);
				CHECK(json_integer_value(json_object_get(v, "n")) == -7, "n");
				CHECK(json_array_size(json_object_get(v, "a")) == 3 &&
					      !strcmp(cfs_json_cstr(json_array_get(json_object_get(v, "a"), 1)),
						      "two"),
				      "a");
				CHECK(cfs_json_str(v, "big") && strlen(cfs_json_str(v, "big")) == big_len,
				      "a large string");
				cfs_json_arena_free(a);
				a = NULL;
				v = NULL;
				messages[0] = '\0';
				r = cfs_json_parse_arena("{\"a\":1,\"a\":2}", 13, "t.json", 0, &v, &a);
				CHECK(r == -EINVAL && !v && !a, "refused in an arena: %d", r);
				CHECK(strstr(messages, "duplicate"), "message '%s'", messages);
				/* 2,000,000 strings of 12 letters, in an array: some 180 MiB of tree */
				costly[0] = '[';
				for (size_t i = 0; i < n; i++)
					memcpy(costly + 1 + 16 * i, "\"abcdefghijkl\", ", 16);
				costly[16 * n - 1] = ']';
				r = cfs_json_parse_arena(costly, 16 * n, "t.json", 0, &v, &a);
				CHECK(r == -EFBIG && !v && !a, "a costly tree in an arena: %d (%s)", r, messages);
			}
		}
		free(text);
		free(costly);
	}
	return check_exit("json");
}
