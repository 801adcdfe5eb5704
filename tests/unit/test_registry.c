// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * Unit test of the registry client's parsers: references completed as
 * podman completes short names (Docker Hub, library/), the header lines
 * and WWW-Authenticate challenges of lib/remote/http-parse.c, base64 both ways,
 * and the credentials an auth file (containers-auth.json, Docker's
 * config.json) gives a registry and repository.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cfs/registry.h"
#include "remote/http-parse.h"
#include "base/internal.h"
#include "check.h"

static char messages[4096];

static void on_msg(void *ctx, const char *msg)
{
	(void)ctx;
	snprintf(messages, sizeof(messages), "%s", msg);
}

static const char *or_null(const char *s)
{
	return s ? s : "(null)";
}

/* @in parses to HOST, REPO, TAG or DIGEST (NULL: none), and whether the tag was defaulted. */
static void ref_ok(const char *in, const char *host, const char *repo, const char *tag,
		   const char *digest, bool dflt)
{
	struct cfs_registry_ref ref;
	int r = cfs_registry_ref_parse(in, &ref);

	CHECK(r == 0, "'%s' was refused (%d)", in, r);
	if (r)
		return;
	CHECK(strcmp(ref.host, host) == 0, "'%s': host '%s', not '%s'", in, ref.host, host);
	CHECK(strcmp(ref.repo, repo) == 0, "'%s': repo '%s', not '%s'", in, ref.repo, repo);
	CHECK((!tag && !ref.tag) || (tag && ref.tag && strcmp(ref.tag, tag) == 0),
	      "'%s': tag '%s', not '%s'", in, or_null(ref.tag), or_null(tag));
	CHECK((!digest && !ref.digest) || (digest && ref.digest && strcmp(ref.digest, digest) == 0),
	      "'%s': digest '%s', not '%s'", in, or_null(ref.digest), or_null(digest));
	CHECK(ref.default_tag == dflt, "'%s': default_tag %d", in, ref.default_tag);
	cfs_registry_ref_free(&ref);
}

static void ref_bad(const char *in)
{
	struct cfs_registry_ref ref;

	CHECK(cfs_registry_ref_parse(in, &ref) == -EINVAL, "'%s' was accepted", in);
}

static void test_refs(void)
{
	const char *d = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
	char buf[200];

	/* Docker Hub's short names, as podman and docker complete them */
	ref_ok("debian:12", "docker.io", "library/debian", "12", NULL, false);
	ref_ok("debian", "docker.io", "library/debian", "latest", NULL, true);
	ref_ok("foo/bar", "docker.io", "foo/bar", "latest", NULL, true);
	ref_ok("foo/bar/baz:1.0", "docker.io", "foo/bar/baz", "1.0", NULL, false);
	ref_ok("docker.io/debian:12", "docker.io", "library/debian", "12", NULL, false);
	ref_ok("docker.io/library/debian", "docker.io", "library/debian", "latest", NULL, true);
	ref_ok("index.docker.io/foo/bar:x", "docker.io", "foo/bar", "x", NULL, false);
	snprintf(buf, sizeof(buf), "alpine@%s", d);
	ref_ok(buf, "docker.io", "library/alpine", NULL, d, false);
	/* a first component with '.' or ':', or localhost, is a registry */
	ref_ok("localhost:5000/x", "localhost:5000", "x", "latest", NULL, true);
	ref_ok("localhost/x:v", "localhost", "x", "v", NULL, false);
	ref_ok("quay.io/a/b:c", "quay.io", "a/b", "c", NULL, false);
	ref_ok("127.0.0.1:5000/cfs/test:v1", "127.0.0.1:5000", "cfs/test", "v1", NULL, false);
	ref_ok("[::1]:5000/x", "[::1]:5000", "x", "latest", NULL, true);
	snprintf(buf, sizeof(buf), "reg.example:443/a@%s", d);
	ref_ok(buf, "reg.example:443", "a", NULL, d, false);
	/* and what stays wrong */
	ref_bad("");
	ref_bad("Debian:12");
	ref_bad("debian:");
	ref_bad("debian:-x");
	ref_bad("debian@sha256:abc");
	ref_bad("/x");
	ref_bad("quay.io/");
	ref_bad("quay.io//a");
	ref_bad("a b/c");
	ref_bad("quay.io/A");
}

static struct cfs_http_head head_of(const char *const *lines)
{
	struct cfs_http_head h = { 0 };

	cfs_http_head_reset(&h);
	for (; *lines; lines++)
		cfs_http_head_line(&h, *lines, strlen(*lines));
	return h;
}

static void test_headers(void)
{
	const char *redirect[] = { "HTTP/1.1 307 Temporary Redirect\r\n",
				   "Location: http://elsewhere/x\r\n",
				   "WWW-Authenticate: Bearer realm=\"r\"\r\n",
				   NULL };
	const char *after[] = { "HTTP/1.1 307 Temporary Redirect\r\n",
				"Location: https://elsewhere/x\r\n",
				"HTTP/2 200\r\n",
				"content-type: application/vnd.oci.image.manifest.v1+json; charset=x\r\n",
				"Content-Length:  1234 \r\n",
				NULL };
	const char *odd[] = { "HTTP/1.1 2000 x\r\n", "Content-Length: -5\r\n",
			      "WWW-Authenticate: Negotiate\r\n",
			      "WWW-Authenticate: Basic realm=x\r\n",
			      "WWW-Authenticate: Bearer realm=y\r\n", NULL };
	const char *ranged[] = { "HTTP/1.1 206 Partial Content\r\n",
				 "Content-Type: multipart/byteranges; boundary=\"3d6b6a416f9b5\"\r\n",
				 "Content-Range: bytes 10-19/*\r\n", NULL };
	struct cfs_http_head h;
	uint64_t a, b, t;
	char big[10000];

	h = head_of(redirect);
	CHECK(h.status == 307 && h.location && h.location_http, "redirect: %ld", h.status);
	CHECK(h.challenge && strcmp(h.challenge, "Bearer realm=\"r\"") == 0, "challenge '%s'",
	      or_null(h.challenge));
	CHECK(cfs_http_head_line(&h, "\r\n", 2) == 1, "the empty line ends the headers");
	cfs_http_head_reset(&h);

	h = head_of(after);
	CHECK(h.status == 200 && !h.location && !h.location_http && !h.challenge,
	      "a new response forgets the last: %ld %d", h.status, h.location);
	CHECK(strcmp(h.type, "application/vnd.oci.image.manifest.v1+json") == 0, "type '%s'",
	      h.type);
	CHECK(h.length == 1234, "length %llu", (unsigned long long)h.length);
	cfs_http_head_reset(&h);

	h = head_of(odd);
	CHECK(h.status == 0, "a four-digit status is no status: %ld", h.status);
	CHECK(h.length == UINT64_MAX, "a negative length is none");
	CHECK(h.challenge && strcmp(h.challenge, "Basic realm=x") == 0,
	      "the first challenge we answer is kept: '%s'", or_null(h.challenge));
	cfs_http_head_reset(&h);

	/* a range request's answer: its parts' boundary and its Content-Range */
	h = head_of(ranged);
	CHECK(h.status == 206 && strcmp(h.type, "multipart/byteranges") == 0 &&
		      strcmp(h.boundary, "3d6b6a416f9b5") == 0,
	      "multipart: %ld '%s' '%s'", h.status, h.type, h.boundary);
	CHECK(h.range && h.range_start == 10 && h.range_end == 19 && h.range_total == UINT64_MAX,
	      "Content-Range: %d %llu-%llu", h.range, (unsigned long long)h.range_start,
	      (unsigned long long)h.range_end);
	cfs_http_head_line(&h, "HTTP/1.1 200 OK\r\n", 17);
	CHECK(!h.range && !h.boundary[0] && !h.type[0], "a new response forgets the range");
	CHECK(cfs_http_content_range(" bytes 0-9/100", &a, &b, &t) == 0 && a == 0 && b == 9 &&
		      t == 100,
	      "bytes 0-9/100: %llu-%llu/%llu", (unsigned long long)a, (unsigned long long)b,
	      (unsigned long long)t);
	CHECK(cfs_http_content_range("bytes 5-4/10", &a, &b, &t) == -EINVAL,
	      "an end before the start is refused");
	CHECK(cfs_http_content_range("bytes 5-9/x", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("items 0-1/2", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0-1", &a, &b, &t) == -EINVAL,
	      "what is not bytes A-B/TOTAL is refused");
	CHECK(cfs_http_content_range("bytes 0-1/*", &a, &b, &t) == 0 && t == UINT64_MAX &&
		      cfs_http_content_range("BYTES\t0-1/2 ", &a, &b, &t) == 0 && b == 1 && t == 2 &&
		      cfs_http_content_range("bytes 0-18446744073709551615/*", &a, &b, &t) == 0 &&
		      b == UINT64_MAX,
	      "an unknown total, the unit in capitals, a blank after, the largest end");
	CHECK(cfs_http_content_range("bytes 0- -3/10", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes +0-3/10", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0-+3/10", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0 -3/10", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0-3/ 10", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes0-3/10", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0-3/10x", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0-3/*x", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 0-18446744073709551616/*", &a, &b, &t) == -EINVAL &&
		      cfs_http_content_range("bytes 5-10/10", &a, &b, &t) == -EINVAL,
	      "signs, blanks inside, trailing text, overflow and an end past the total are refused");
	cfs_http_head_reset(&h);

	/* a line longer than the parser's buffer, and one with a NUL */
	memset(big, 'a', sizeof(big));
	memcpy(big, "Content-Type: ", 14);
	cfs_http_head_line(&h, big, sizeof(big));
	CHECK(strlen(h.type) == sizeof(h.type) - 1, "a long type is cut: %zu", strlen(h.type));
	cfs_http_head_line(&h, "Content-Length: 12\0 34", 22);
	CHECK(h.length == 12, "a NUL ends a line: %llu", (unsigned long long)h.length);
	cfs_http_head_reset(&h);
}

static void challenge_ok(const char *in, bool basic, const char *realm, const char *service,
			 const char *scope)
{
	struct cfs_http_challenge c;
	int r = cfs_http_challenge_parse(in, &c);

	CHECK(r == 0, "'%s' was refused (%d)", in, r);
	CHECK(c.basic == basic, "'%s': basic %d", in, c.basic);
	CHECK((!realm && !c.realm) || (realm && c.realm && strcmp(realm, c.realm) == 0),
	      "'%s': realm '%s'", in, or_null(c.realm));
	CHECK((!service && !c.service) || (service && c.service && strcmp(service, c.service) == 0),
	      "'%s': service '%s'", in, or_null(c.service));
	CHECK((!scope && !c.scope) || (scope && c.scope && strcmp(scope, c.scope) == 0),
	      "'%s': scope '%s'", in, or_null(c.scope));
	cfs_http_challenge_free(&c);
}

static void test_challenges(void)
{
	struct cfs_http_challenge c;

	challenge_ok("Bearer realm=\"https://auth.docker.io/token\",service=\"registry.docker.io\","
		     "scope=\"repository:library/debian:pull\"",
		     false, "https://auth.docker.io/token", "registry.docker.io",
		     "repository:library/debian:pull");
	challenge_ok("bearer  realm = \"https://a/t?x=1,2\" , scope=\"repository:a:pull,push\"",
		     false, "https://a/t?x=1,2", NULL, "repository:a:pull,push");
	challenge_ok("Basic realm=\"Registry Realm\"", true, "Registry Realm", NULL, NULL);
	challenge_ok("BASIC realm=plain,charset=\"UTF-8\"", true, "plain", NULL, NULL);
	challenge_ok("Basic", true, NULL, NULL, NULL);
	challenge_ok("Bearer realm=\"a\\\"b\\\\c\",realm=\"second\"", false, "a\"b\\c", NULL, NULL);
	challenge_ok("Bearer realm=\"unterminated", false, "unterminated", NULL, NULL);
	challenge_ok("Bearer ==,,=\"\",realm=", false, "", NULL, NULL);
	CHECK(cfs_http_challenge_parse("Negotiate abc", &c) == -EINVAL, "Negotiate is not ours");
	cfs_http_challenge_free(&c);
	CHECK(cfs_http_challenge_parse("Basicx realm=a", &c) == -EINVAL, "Basicx is no scheme");
	cfs_http_challenge_free(&c);
	CHECK(cfs_http_challenge_parse("", &c) == -EINVAL, "nothing is no challenge");
	cfs_http_challenge_free(&c);
}

static void test_base64(void)
{
	static const char *const plain[] = { "", "f", "fo", "foo", "foob", "fooba", "foobar" };
	static const char *const coded[] = { "", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=",
					     "Zm9vYmFy" };
	char *s;
	size_t len;

	for (size_t i = 0; i < sizeof(plain) / sizeof(plain[0]); i++) {
		s = cfs_base64_encode(plain[i], strlen(plain[i]));
		CHECK(s && strcmp(s, coded[i]) == 0, "encode '%s': '%s'", plain[i], or_null(s));
		free(s);
		CHECK(cfs_base64_decode(coded[i], &s, &len) == 0 && len == strlen(plain[i]) &&
			      strcmp(s, plain[i]) == 0,
		      "decode '%s'", coded[i]);
		free(s);
	}
	CHECK(cfs_base64_decode("Zm9vYg", &s, &len) == 0 && strcmp(s, "foob") == 0,
	      "padding is optional");
	free(s);
	CHECK(cfs_base64_decode("Zm9v YmFy", &s, &len) == -EINVAL && !s, "a space is not base64");
	CHECK(cfs_base64_decode("Z", &s, &len) == -EINVAL, "one character is not base64");
	CHECK(cfs_base64_decode("Zg===", &s, &len) == -EINVAL, "three '=' are too many");
}

static char dir[] = "/tmp/cfs-test-registry.XXXXXX";

static const char *write_file(const char *name, const char *text)
{
	static char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputs(text, f) < 0 || fclose(f) != 0) {
		perror(path);
		exit(1);
	}
	return path;
}

static void creds_are(const char *path, const char *host, const char *repo, int want,
		      const char *user, const char *password)
{
	char *u = NULL, *p = NULL;
	int r = cfs_registry_auth_lookup(path, host, repo, &u, &p);

	CHECK(r == want, "%s/%s: %d, not %d (%s)", host, repo, r, want, messages);
	if (r == 0 && want == 0)
		CHECK(strcmp(u, user) == 0 && strcmp(p, password) == 0, "%s/%s: '%s':'%s'", host,
		      repo, u, p);
	free(u);
	free(p);
}

static void test_authfile(void)
{
	const char *path;

	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		exit(1);
	}
	/* "u1:p1", "u2:p:2" (a ':' in the password), "hub:pw", "ns:x", "deep:y" */
	path = write_file("auth.json",
			  "{\"auths\": {"
			  "\"reg.example:5000\": {\"auth\": \"dTE6cDE=\"},"
			  "\"http://other.example/v2/\": {\"auth\": \"dTI6cDoy\"},"
			  "\"https://index.docker.io/v1/\": {\"auth\": \"aHViOnB3\"},"
			  "\"reg.example:5000/team\": {\"auth\": \"bnM6eA==\"},"
			  "\"reg.example:5000/team/app/deep\": {\"auth\": \"ZGVlcDp5\"},"
			  "\"helper.example\": {},"
			  "\"bad.example\": {\"auth\": \"bm9jb2xvbg==\"}"
			  "}, \"credsStore\": \"desktop\"}");
	creds_are(path, "reg.example:5000", "other/app", 0, "u1", "p1");
	creds_are(path, "reg.example:5000", "team/app", 0, "ns", "x");
	creds_are(path, "reg.example:5000", "team", 0, "ns", "x");
	creds_are(path, "reg.example:5000", "teamx/app", 0, "u1", "p1");
	creds_are(path, "reg.example:5000", "team/app/deep/er", 0, "deep", "y");
	creds_are(path, "other.example", "a", 0, "u2", "p:2");
	creds_are(path, "docker.io", "library/debian", 0, "hub", "pw");
	creds_are(path, "reg.example", "a", -ENOENT, NULL, NULL);
	creds_are(path, "helper.example", "a", -ENOENT, NULL, NULL);
	messages[0] = '\0';
	creds_are(path, "bad.example", "a", -EINVAL, NULL, NULL);
	CHECK(strstr(messages, "not base64 of USER:PASSWORD"), "message: %s", messages);
	creds_are(write_file("none.json", "{}"), "reg.example:5000", "a", -ENOENT, NULL, NULL);
	messages[0] = '\0';
	creds_are(write_file("list.json", "{\"auths\": []}"), "r", "a", -EINVAL, NULL, NULL);
	CHECK(strstr(messages, "not an object with an \"auths\" object"), "message: %s", messages);
	creds_are(write_file("broken.json", "{\"auths\": "), "r", "a", -EINVAL, NULL, NULL);
	creds_are("/nonexistent/auth.json", "r", "a", -ENOENT, NULL, NULL);
	unlink(path);
	snprintf(messages, sizeof(messages), "rm -rf %s", dir);
	if (system(messages) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	cfs_set_message_handler(on_msg, NULL);
	test_refs();
	test_headers();
	test_challenges();
	test_base64();
	test_authfile();
	return check_exit("registry");
}
