// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * containers-policy.json(5) and the lookaside settings of
 * containers-registries.d(5), read strictly as containers/image reads
 * them, and their check of an image at pull: the requirements of the
 * image's scope, each of which must accept; signatures from the lookaside
 * (signedBy, OpenPGP) or from the registry's sha256-<hex>.sig attachment
 * (sigstoreSigned, cosign), each verified over its bytes before its
 * payload is read (signature.c), then the payload's manifest digest and
 * identity held against the image and the requirement's signedIdentity.
 *
 * The local transports of build --from-oci (oci, oci-archive,
 * docker-archive) have their scopes kept too, and are checked by
 * cfs_policy_check_layout(): their images carry no signatures, so only
 * insecureAcceptAnything accepts one.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <yaml.h>

#include "http-parse.h"
#include "json.h"
#include "signature.h"
#include "cfs/policy.h"
#include "cfs/registry.h"
#include "base/internal.h"

#define MAX_POLICY_SIZE ((size_t)4 << 20)
#define MAX_SCOPES 4096
#define MAX_REQS 64
#define MAX_KEY_PATHS 64
#define MT_COSIGN_PAYLOAD "application/vnd.dev.cosign.simplesigning.v1+json"
#define COSIGN_SIG_ANNOTATION "dev.cosignproject.cosign/signature"
#define WHY_SIZE 1024

enum req_type { REQ_ACCEPT, REQ_REJECT, REQ_SIGNED_BY, REQ_SIGSTORE };
enum ident_type {
	ID_MATCH_REPO_DIGEST_OR_EXACT,
	ID_MATCH_EXACT,
	ID_MATCH_REPOSITORY,
	ID_EXACT_REFERENCE,
	ID_EXACT_REPOSITORY,
	ID_REMAP,
};

struct req {
	enum req_type type;
	char **paths; /* keyPath / keyPaths */
	size_t n_paths;
	char *data; /* keyData, decoded */
	size_t data_len;
	enum ident_type id;
	char *id_a, *id_b; /* dockerReference / dockerRepository / prefix, signedPrefix */
};

struct scope {
	char *name; /* "" for the transport's default */
	struct req *reqs;
	size_t n;
};

struct lookaside {
	char *ns; /* NULL: default-docker */
	char *url; /* NULL: none */
	int attachments; /* -1: not said */
};

struct cfs_policy {
	struct scope def;
	struct scope *docker;
	size_t n_docker;
	/* the local transports' scopes (LOCAL_TRANSPORTS), each with its transport */
	struct scope *local;
	const char **local_transport;
	size_t n_local;
	struct lookaside *ls;
	size_t n_ls;
};

/* ---- reading policy.json ---- */

/* @obj's members are among @allowed (NULL-terminated); else a message. */
static int known_members(const json_t *obj, const char *what, const char *where,
			 const char *const *allowed)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)obj, k, v) {
		const char *const *a;

		for (a = allowed; *a && strcmp(*a, k); a++)
			;
		if (!*a) {
			cfs_msg("'%s': %s: unknown member '%.64s'", what, where, k);
			return -EINVAL;
		}
	}
	return 0;
}

static int dup_str(const json_t *obj, const char *key, const char *what, const char *where,
		   char **out)
{
	const json_t *v = json_object_get(obj, key);
	const char *s = cfs_json_cstr(v);

	if (!s || !s[0]) {
		cfs_msg("'%s': %s: '%s' %s", what, where, key,
			v ? "must be a non-empty string" : "is missing");
		return -EINVAL;
	}
	*out = strdup(s);
	return *out ? 0 : -ENOMEM;
}

/* "HOST/REPO" of @ref into @buf. */
static void repo_of(const struct cfs_registry_ref *ref, char *buf, size_t size)
{
	snprintf(buf, size, "%s/%s", ref->host, ref->repo);
}

/* "HOST/REPO:TAG" or "HOST/REPO@DIGEST" (or "HOST/REPO" for a name only). */
static void name_of(const struct cfs_registry_ref *ref, char *buf, size_t size)
{
	if (ref->digest)
		snprintf(buf, size, "%s/%s@%s", ref->host, ref->repo, ref->digest);
	else if (ref->default_tag)
		snprintf(buf, size, "%s/%s", ref->host, ref->repo);
	else
		snprintf(buf, size, "%s/%s:%s", ref->host, ref->repo, ref->tag);
}

/*
 * Whether @s is a reference as containers/image writes one: fully spelled
 * out (cfs_registry_ref_parse() gives it back unchanged); @want_tag: with a
 * tag or digest, else with neither.
 */
static bool canonical_ref(const char *s, int want_tag)
{
	struct cfs_registry_ref ref;
	char buf[1024];
	bool ok;

	if (cfs_registry_ref_parse(s, &ref))
		return false;
	name_of(&ref, buf, sizeof(buf));
	ok = strcmp(buf, s) == 0 &&
	     (want_tag < 0 || (want_tag ? !ref.default_tag : ref.default_tag && !ref.digest));
	cfs_registry_ref_free(&ref);
	return ok;
}

static int parse_identity(const json_t *v, const char *what, struct req *q)
{
	static const char *const only_type[] = { "type", NULL };
	static const char *const exact_ref[] = { "type", "dockerReference", NULL };
	static const char *const exact_repo[] = { "type", "dockerRepository", NULL };
	static const char *const remap[] = { "type", "prefix", "signedPrefix", NULL };
	/* the two that name one reference or repository: its member, and what it must be */
	static const struct {
		const char *type;
		enum ident_type id;
		const char *const *members;
		int want_tag;
		const char *is;
	} exact[] = {
		{ "exactReference", ID_EXACT_REFERENCE, exact_ref, 1,
		  "a full reference with a tag or digest" },
		{ "exactRepository", ID_EXACT_REPOSITORY, exact_repo, 0,
		  "a full repository name" },
	};
	const char *t = cfs_json_str(v, "type");
	int r;

	if (!json_is_object(v) || !t) {
		cfs_msg("'%s': signedIdentity must be an object with a type", what);
		return -EINVAL;
	}
	if (!strcmp(t, "matchRepoDigestOrExact") || !strcmp(t, "matchExact") ||
	    !strcmp(t, "matchRepository")) {
		q->id = !strcmp(t, "matchExact")      ? ID_MATCH_EXACT :
			!strcmp(t, "matchRepository") ? ID_MATCH_REPOSITORY :
							ID_MATCH_REPO_DIGEST_OR_EXACT;
		return known_members(v, what, "signedIdentity", only_type);
	}
	for (size_t i = 0; i < sizeof(exact) / sizeof(exact[0]); i++) {
		if (strcmp(t, exact[i].type))
			continue;
		q->id = exact[i].id;
		r = known_members(v, what, "signedIdentity", exact[i].members);
		if (r == 0)
			r = dup_str(v, exact[i].members[1], what, "signedIdentity", &q->id_a);
		if (r == 0 && !canonical_ref(q->id_a, exact[i].want_tag)) {
			cfs_msg("'%s': signedIdentity: '%s' is not %s", what, q->id_a,
				exact[i].is);
			r = -EINVAL;
		}
		return r;
	}
	if (!strcmp(t, "remapIdentity")) {
		q->id = ID_REMAP;
		r = known_members(v, what, "signedIdentity", remap);
		if (r == 0)
			r = dup_str(v, "prefix", what, "signedIdentity", &q->id_a);
		if (r == 0)
			r = dup_str(v, "signedPrefix", what, "signedIdentity", &q->id_b);
		return r;
	}
	cfs_msg("'%s': signedIdentity: unknown type '%.64s'", what, t);
	return -EINVAL;
}

/* The key sources of a signedBy or sigstoreSigned: exactly one. */
static int parse_keys(const json_t *v, const char *what, const char *where, bool multi,
		      struct req *q)
{
	const json_t *path = json_object_get(v, "keyPath");
	const json_t *paths = multi ? json_object_get(v, "keyPaths") : NULL;
	const json_t *data = json_object_get(v, "keyData");
	size_t i;
	int r;

	if (!!path + !!paths + !!data != 1) {
		cfs_msg("'%s': %s needs exactly one of keyPath%s and keyData", what, where,
			multi ? ", keyPaths" : "");
		return -EINVAL;
	}
	if (path || paths) {
		size_t n = path ? 1 : json_array_size(paths);

		if (paths && (!json_is_array(paths) || n == 0 || n > MAX_KEY_PATHS)) {
			cfs_msg("'%s': %s: keyPaths must be a list of 1 to %d files", what, where,
				MAX_KEY_PATHS);
			return -EINVAL;
		}
		q->paths = calloc(n, sizeof(*q->paths));
		if (!q->paths)
			return -ENOMEM;
		for (i = 0; i < n; i++) {
			const char *s = cfs_json_cstr(path ? path : json_array_get(paths, i));

			if (!s || !s[0]) {
				cfs_msg("'%s': %s: a key path must be a non-empty string", what,
					where);
				return -EINVAL;
			}
			if (!(q->paths[i] = strdup(s)))
				return -ENOMEM;
			q->n_paths++;
		}
		return 0;
	}
	if (!cfs_json_cstr(data)) {
		cfs_msg("'%s': %s: keyData must be a string", what, where);
		return -EINVAL;
	}
	r = cfs_base64_decode(cfs_json_cstr(data), &q->data, &q->data_len);
	if (r == -EINVAL)
		cfs_msg("'%s': %s: keyData is not base64", what, where);
	return r;
}

static int parse_req(const json_t *v, const char *what, struct req *q)
{
	static const char *const only_type[] = { "type", NULL };
	static const char *const signed_by[] = { "type", "keyType", "keyPath", "keyPaths",
						 "keyData", "signedIdentity", NULL };
	static const char *const sigstore[] = { "type", "keyPath", "keyData", "signedIdentity",
						NULL };
	const char *t = cfs_json_str(v, "type");
	const char *kt;
	int r;

	q->id = ID_MATCH_REPO_DIGEST_OR_EXACT;
	if (!json_is_object(v) || !t) {
		cfs_msg("'%s': a requirement must be an object with a type", what);
		return -EINVAL;
	}
	if (!strcmp(t, "insecureAcceptAnything") || !strcmp(t, "reject")) {
		q->type = t[0] == 'r' ? REQ_REJECT : REQ_ACCEPT;
		return known_members(v, what, t, only_type);
	}
	if (!strcmp(t, "signedBy")) {
		q->type = REQ_SIGNED_BY;
		r = known_members(v, what, t, signed_by);
		if (r)
			return r;
		kt = cfs_json_str(v, "keyType");
		if (!kt || strcmp(kt, "GPGKeys")) {
			cfs_msg("'%s': signedBy: keyType '%.64s' is not supported (only GPGKeys)",
				what, kt ? kt : "");
			return kt ? -EOPNOTSUPP : -EINVAL;
		}
		r = parse_keys(v, what, t, true, q);
	} else if (!strcmp(t, "sigstoreSigned")) {
		q->type = REQ_SIGSTORE;
		if (json_object_get(v, "fulcio") || json_object_get(v, "rekorPublicKeyPath") ||
		    json_object_get(v, "rekorPublicKeyData")) {
			cfs_msg("'%s': sigstoreSigned: fulcio and rekor are not supported (keyPath or keyData only)",
				what);
			return -EOPNOTSUPP;
		}
		r = known_members(v, what, t, sigstore);
		if (r == 0)
			r = parse_keys(v, what, t, false, q);
	} else {
		cfs_msg("'%s': unknown requirement type '%.64s'", what, t);
		return -EINVAL;
	}
	if (r == 0 && json_object_get(v, "signedIdentity"))
		r = parse_identity(json_object_get(v, "signedIdentity"), what, q);
	return r;
}

static void free_reqs(struct req *reqs, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t j = 0; j < reqs[i].n_paths; j++)
			free(reqs[i].paths[j]);
		free(reqs[i].paths);
		free(reqs[i].data);
		free(reqs[i].id_a);
		free(reqs[i].id_b);
	}
	free(reqs);
}

static int parse_scope(const json_t *v, const char *name, const char *what, struct scope *s)
{
	size_t n = json_array_size(v);

	if (!json_is_array(v) || n == 0 || n > MAX_REQS) {
		cfs_msg("'%s': scope '%.200s': must be a list of 1 to %d requirements", what, name,
			MAX_REQS);
		return -EINVAL;
	}
	s->name = strdup(name);
	s->reqs = calloc(n, sizeof(*s->reqs));
	if (!s->name || !s->reqs)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		s->n++;
		int r = parse_req(json_array_get(v, i), what, &s->reqs[i]);

		if (r)
			return r;
	}
	return 0;
}

/* A scope of transport "docker": "", "*.DOMAIN", or a full name. */
static bool docker_scope_ok(const char *s)
{
	if (!s[0])
		return true;
	if (s[0] == '*')
		return s[1] == '.' && s[2] && !strchr(s, '/') && !strchr(s + 1, '*');
	return canonical_ref(s, -1);
}

/* The transports of build --from-oci's sources, whose scopes are kept. */
static const char *const local_transports[] = { "oci", "oci-archive", "docker-archive", NULL };

static const char *local_transport(const char *name)
{
	for (size_t i = 0; local_transports[i]; i++)
		if (strcmp(name, local_transports[i]) == 0)
			return local_transports[i];
	return NULL;
}

/*
 * A scope of transport "oci" or "oci-archive", as containers/image takes
 * it: "", or an absolute path other than "/", in its clean form (no empty,
 * "." or ".." component, no trailing '/'), with an optional ":TAG".
 */
static bool path_scope_ok(const char *s)
{
	if (!s[0])
		return true;
	if (s[0] != '/' || !s[1])
		return false;
	for (const char *c = s; *c; c++) {
		if (*c != '/')
			continue;
		if (c[1] == '/' || c[1] == '\0' || (c[1] == '.' && (c[2] == '/' || !c[2])) ||
		    (c[1] == '.' && c[2] == '.' && (c[3] == '/' || !c[3])))
			return false;
	}
	return true;
}

int cfs_policy_parse(const char *text, size_t len, const char *what, struct cfs_policy **pp)
{
	static const char *const top[] = { "default", "transports", NULL };
	struct cfs_policy *p = calloc(1, sizeof(*p));
	const json_t *transports, *scopes, *v;
	const char *k, *name;
	json_t *doc = NULL;
	int r;

	*pp = NULL;
	if (!p)
		return -ENOMEM;
	r = cfs_json_parse(text, len, what, &doc);
	if (r)
		goto out;
	r = -EINVAL;
	if (!json_is_object(doc)) {
		cfs_msg("'%s': not a JSON object", what);
		goto out;
	}
	r = known_members(doc, what, "the policy", top);
	if (r)
		goto out;
	if (!json_object_get(doc, "default")) {
		cfs_msg("'%s': no \"default\" requirements", what);
		r = -EINVAL;
		goto out;
	}
	r = parse_scope(json_object_get(doc, "default"), "default", what, &p->def);
	if (r)
		goto out;
	transports = json_object_get(doc, "transports");
	if (transports && !json_is_object(transports)) {
		cfs_msg("'%s': \"transports\" must be an object", what);
		r = -EINVAL;
		goto out;
	}
	json_object_foreach((json_t *)transports, k, scopes) {
		bool docker = strcmp(k, "docker") == 0;
		const char *local = local_transport(k);

		if (!json_is_object(scopes)) {
			cfs_msg("'%s': transport '%.64s' must be an object of scopes", what, k);
			r = -EINVAL;
			goto out;
		}
		if (json_object_size(scopes) > MAX_SCOPES) {
			cfs_msg("'%s': more than %d scopes", what, MAX_SCOPES);
			r = -EINVAL;
			goto out;
		}
		json_object_foreach((json_t *)scopes, name, v) {
			struct scope s = { 0 }, *ns;

			if (docker && !docker_scope_ok(name)) {
				cfs_msg("'%s': docker scope '%.200s' is not a full repository name or reference",
					what, name);
				r = -EINVAL;
				goto out;
			}
			if (local && strcmp(local, "docker-archive") && !path_scope_ok(name)) {
				cfs_msg("'%s': %s scope '%.200s' is not an absolute path in its clean form (nor \"/\")",
					what, local, name);
				r = -EINVAL;
				goto out;
			}
			if (local && !strcmp(local, "docker-archive") && name[0]) {
				cfs_msg("'%s': docker-archive scope '%.200s': the transport takes only the scope \"\"",
					what, name);
				r = -EINVAL;
				goto out;
			}
			/* other transports' scopes are read, to refuse a bad one, and not kept */
			r = parse_scope(v, name, what, &s);
			if (r == 0 && local) {
				struct scope *nl = realloc(p->local, (p->n_local + 1) * sizeof(*nl));
				const char **nt = nl ? realloc(p->local_transport,
							       (p->n_local + 1) * sizeof(*nt)) : NULL;

				if (nl)
					p->local = nl;
				if (nt)
					p->local_transport = nt;
				if (nl && nt) {
					p->local[p->n_local] = s;
					p->local_transport[p->n_local++] = local;
					continue;
				}
				r = -ENOMEM;
			}
			if (r || !docker) {
				free(s.name);
				free_reqs(s.reqs, s.n);
				if (r)
					goto out;
				continue;
			}
			ns = realloc(p->docker, (p->n_docker + 1) * sizeof(*ns));
			if (!ns) {
				free(s.name);
				free_reqs(s.reqs, s.n);
				r = -ENOMEM;
				goto out;
			}
			p->docker = ns;
			p->docker[p->n_docker++] = s;
		}
	}
	r = 0;
out:
	json_decref(doc);
	if (r)
		cfs_policy_free(p);
	else
		*pp = p;
	return r;
}

/* Read the whole of the small file @path into *@text. */
static int slurp(const char *path, size_t max, char **text, size_t *len)
{
	FILE *f = fopen(path, "re");
	size_t n;
	int r = 0;

	*text = NULL;
	if (!f)
		return -errno;
	*text = malloc(max + 1);
	if (!*text) {
		fclose(f);
		return -ENOMEM;
	}
	n = fread(*text, 1, max + 1, f);
	if (ferror(f))
		r = -EIO;
	else if (n > max)
		r = -EFBIG;
	fclose(f);
	if (r) {
		free(*text);
		*text = NULL;
		return r;
	}
	(*text)[n] = '\0';
	*len = n;
	return 0;
}

int cfs_policy_load(const char *path, struct cfs_policy **pp)
{
	char *def = NULL, *text;
	const char *home = getenv("HOME");
	size_t len;
	int r;

	*pp = NULL;
	if (!path) {
		if (home && home[0] && asprintf(&def, "%s/.config/containers/policy.json", home) < 0)
			return -ENOMEM;
		path = def && access(def, F_OK) == 0 ? def : "/etc/containers/policy.json";
		if (access(path, F_OK) < 0) {
			free(def);
			return -ENOENT;
		}
	}
	r = slurp(path, MAX_POLICY_SIZE, &text, &len);
	if (r) {
		cfs_msg("policy '%s': %s", path,
			r == -EFBIG ? "more than 4 MiB" : strerror(-r));
	} else {
		r = cfs_policy_parse(text, len, path, pp);
		free(text);
	}
	free(def);
	return r;
}

void cfs_policy_free(struct cfs_policy *p)
{
	if (!p)
		return;
	free(p->def.name);
	free_reqs(p->def.reqs, p->def.n);
	for (size_t i = 0; i < p->n_docker; i++) {
		free(p->docker[i].name);
		free_reqs(p->docker[i].reqs, p->docker[i].n);
	}
	free(p->docker);
	for (size_t i = 0; i < p->n_local; i++) {
		free(p->local[i].name);
		free_reqs(p->local[i].reqs, p->local[i].n);
	}
	free(p->local);
	free(p->local_transport);
	for (size_t i = 0; i < p->n_ls; i++) {
		free(p->ls[i].ns);
		free(p->ls[i].url);
	}
	free(p->ls);
	free(p);
}

/* ---- reading registries.d ---- */

static const char *yaml_scalar(yaml_document_t *doc, yaml_node_t *n)
{
	(void)doc;
	return n && n->type == YAML_SCALAR_NODE ? (const char *)n->data.scalar.value : NULL;
}

/* One namespace's settings, the mapping @m; @ns NULL for default-docker. */
static int read_ls_entry(struct cfs_policy *p, yaml_document_t *doc, yaml_node_t *m,
			 const char *ns, const char *file)
{
	struct lookaside l = { .attachments = -1 }, *nl;
	yaml_node_pair_t *pair;

	if (!m || m->type != YAML_MAPPING_NODE) {
		cfs_msg("registries.d '%s': '%.200s' must be a mapping", file,
			ns ? ns : "default-docker");
		return -EINVAL;
	}
	for (size_t i = 0; i < p->n_ls; i++)
		if ((!ns && !p->ls[i].ns) || (ns && p->ls[i].ns && !strcmp(ns, p->ls[i].ns))) {
			cfs_msg("registries.d '%s': '%.200s' is configured twice", file,
				ns ? ns : "default-docker");
			return -EINVAL;
		}
	for (pair = m->data.mapping.pairs.start; pair < m->data.mapping.pairs.top; pair++) {
		const char *k = yaml_scalar(doc, yaml_document_get_node(doc, pair->key));
		const char *v = yaml_scalar(doc, yaml_document_get_node(doc, pair->value));

		if (!k || !v) {
			cfs_msg("registries.d '%s': '%.200s': not a key and a value", file,
				ns ? ns : "default-docker");
			goto bad;
		}
		if (!strcmp(k, "lookaside") || !strcmp(k, "sigstore")) {
			if (l.url && strcmp(k, "lookaside"))
				continue; /* lookaside wins over its older name */
			free(l.url);
			if (!(l.url = strdup(v)))
				goto nomem;
		} else if (!strcmp(k, "use-sigstore-attachments")) {
			if (strcmp(v, "true") && strcmp(v, "false")) {
				cfs_msg("registries.d '%s': use-sigstore-attachments: '%.64s' is not true or false",
					file, v);
				goto bad;
			}
			l.attachments = v[0] == 't';
		}
		/* lookaside-staging and sigstore-staging are for writers */
	}
	if (ns && !(l.ns = strdup(ns)))
		goto nomem;
	nl = realloc(p->ls, (p->n_ls + 1) * sizeof(*nl));
	if (!nl)
		goto nomem;
	p->ls = nl;
	p->ls[p->n_ls++] = l;
	return 0;
nomem:
	free(l.url);
	free(l.ns);
	return -ENOMEM;
bad:
	free(l.url);
	return -EINVAL;
}

static int read_ls_file(struct cfs_policy *p, const char *file)
{
	yaml_parser_t parser;
	yaml_document_t doc;
	yaml_node_t *root;
	yaml_node_pair_t *pair;
	FILE *f = fopen(file, "re");
	int r = 0;

	if (!f) {
		cfs_msg("registries.d '%s': %s", file, strerror(errno));
		return -errno;
	}
	if (!yaml_parser_initialize(&parser)) {
		fclose(f);
		return -ENOMEM;
	}
	yaml_parser_set_input_file(&parser, f);
	if (!yaml_parser_load(&parser, &doc)) {
		cfs_msg("registries.d '%s': line %zu: %s", file, parser.problem_mark.line + 1,
			parser.problem ? parser.problem : "not YAML");
		yaml_parser_delete(&parser);
		fclose(f);
		return -EINVAL;
	}
	root = yaml_document_get_root_node(&doc);
	if (root && root->type != YAML_MAPPING_NODE) {
		cfs_msg("registries.d '%s': not a mapping", file);
		r = -EINVAL;
	}
	for (pair = root && !r ? root->data.mapping.pairs.start : NULL;
	     pair && pair < root->data.mapping.pairs.top && !r; pair++) {
		const char *k = yaml_scalar(&doc, yaml_document_get_node(&doc, pair->key));
		yaml_node_t *v = yaml_document_get_node(&doc, pair->value);

		if (k && !strcmp(k, "default-docker")) {
			r = read_ls_entry(p, &doc, v, NULL, file);
		} else if (k && !strcmp(k, "docker")) {
			yaml_node_pair_t *q;

			if (!v || v->type != YAML_MAPPING_NODE) {
				cfs_msg("registries.d '%s': 'docker' must be a mapping", file);
				r = -EINVAL;
				break;
			}
			for (q = v->data.mapping.pairs.start; q < v->data.mapping.pairs.top && !r;
			     q++) {
				const char *ns = yaml_scalar(&doc,
							     yaml_document_get_node(&doc, q->key));

				if (!ns || !ns[0]) {
					cfs_msg("registries.d '%s': a docker namespace that is not a name",
						file);
					r = -EINVAL;
					break;
				}
				r = read_ls_entry(p, &doc, yaml_document_get_node(&doc, q->value),
						  ns, file);
			}
		}
	}
	yaml_document_delete(&doc);
	yaml_parser_delete(&parser);
	fclose(f);
	return r;
}

static int by_name(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

static int yaml_name(const struct dirent *d)
{
	size_t n = strlen(d->d_name);

	return d->d_name[0] != '.' && n > 5 && !strcmp(d->d_name + n - 5, ".yaml");
}

int cfs_policy_registries_d(struct cfs_policy *p, const char *dir)
{
	const char *home = getenv("HOME");
	struct dirent **names = NULL;
	char *def = NULL;
	int n, r = 0;

	if (!dir) {
		struct stat st;

		if (home && home[0] &&
		    asprintf(&def, "%s/.config/containers/registries.d", home) < 0)
			return -ENOMEM;
		dir = def && stat(def, &st) == 0 ? def : "/etc/containers/registries.d";
	}
	n = scandir(dir, &names, yaml_name, by_name);
	if (n < 0) {
		r = -errno;
		if (r == -ENOENT && dir != NULL && (dir == def || !strcmp(dir, "/etc/containers/registries.d")))
			r = 0; /* a default that is missing: no lookaside */
		else
			cfs_msg("registries.d '%s': %s", dir, strerror(errno));
		free(def);
		return r;
	}
	for (int i = 0; i < n; i++) {
		char *f = NULL;

		if (r == 0 && asprintf(&f, "%s/%s", dir, names[i]->d_name) < 0)
			r = -ENOMEM;
		else if (r == 0)
			r = read_ls_file(p, f);
		free(f);
		free(names[i]);
	}
	free(names);
	free(def);
	return r;
}

/* ---- the check ---- */

/*
 * The namespaces of @ref from the most specific: "HOST/REPO:TAG" (or
 * @DIGEST), "HOST/REPO", its parents up to "HOST", then "*.DOMAIN" of the
 * host's domains. Calls @fn on each until it returns true.
 */
static bool each_namespace(const struct cfs_registry_ref *ref, bool (*fn)(void *, const char *),
			   void *ctx)
{
	char buf[1024], *slash, *dot;

	name_of(ref, buf, sizeof(buf));
	if (fn(ctx, buf))
		return true;
	repo_of(ref, buf, sizeof(buf));
	for (;;) {
		if (fn(ctx, buf))
			return true;
		slash = strrchr(buf, '/');
		if (!slash)
			break;
		*slash = '\0';
	}
	/* the host without its port, for the wildcards */
	snprintf(buf, sizeof(buf), "%s", ref->host);
	if (strchr(buf, ':'))
		*strchr(buf, ':') = '\0';
	for (char *h = buf; (dot = strchr(h, '.')); h = dot + 1) {
		char w[300];

		snprintf(w, sizeof(w), "*%s", dot);
		if (fn(ctx, w))
			return true;
	}
	return false;
}

struct find_scope {
	const struct cfs_policy *p;
	const struct scope *found;
};

static bool try_scope(void *ctx, const char *name)
{
	struct find_scope *f = ctx;

	for (size_t i = 0; i < f->p->n_docker; i++)
		if (!strcmp(f->p->docker[i].name, name)) {
			f->found = &f->p->docker[i];
			return true;
		}
	return false;
}

struct find_ls {
	const struct cfs_policy *p;
	const char *url;
	int attachments;
};

static bool try_ls(void *ctx, const char *name)
{
	struct find_ls *f = ctx;

	for (size_t i = 0; i < f->p->n_ls; i++) {
		const struct lookaside *l = &f->p->ls[i];

		if (!l->ns || strcmp(l->ns, name))
			continue;
		if (!f->url)
			f->url = l->url;
		if (f->attachments < 0)
			f->attachments = l->attachments;
	}
	return f->url && f->attachments >= 0;
}

/* A signature, as found: its bytes, and for cosign its payload and the key's verdict. */
struct sig {
	char *data; /* OpenPGP: the signed message; cosign: the payload */
	size_t len;
	char *cosign_sig; /* cosign: the base64 signature annotation */
};

struct check {
	const struct cfs_policy *p;
	struct cfs_registry *reg;
	const struct cfs_registry_ref *ref;
	const struct cfs_registry_options *ropts;
	const char *digest;
	char name[1024]; /* the reference, for messages */
	bool have_gpg, have_cosign;
	struct sig *gpg, *cosign;
	size_t n_gpg, n_cosign;
	char why[WHY_SIZE]; /* the reasons the signatures were refused */
	char msg[512]; /* the library's message while the signatures are read */
};

static void why_add(struct check *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void why_add(struct check *c, const char *fmt, ...)
{
	size_t n = strlen(c->why);
	va_list ap;

	if (n && n + 2 < sizeof(c->why)) {
		memcpy(c->why + n, "; ", 3);
		n += 2;
	}
	va_start(ap, fmt);
	vsnprintf(c->why + n, sizeof(c->why) - n, fmt, ap);
	va_end(ap);
}

static void free_sigs(struct sig *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(s[i].data);
		free(s[i].cosign_sig);
	}
	free(s);
}

/* The signatures of the lookaside that registries.d gives for the reference. */
static int get_lookaside(struct check *c)
{
	struct find_ls f = { .p = c->p, .attachments = -1 };
	int r = 0;

	if (c->have_gpg)
		return 0;
	c->have_gpg = true;
	each_namespace(c->ref, try_ls, &f);
	for (size_t i = 0; !f.url && i < c->p->n_ls; i++)
		if (!c->p->ls[i].ns)
			f.url = c->p->ls[i].url;
	if (!f.url)
		return 0;
	c->gpg = calloc(CFS_SIG_MAX_COUNT, sizeof(*c->gpg));
	if (!c->gpg)
		return -ENOMEM;
	for (size_t i = 0; i < CFS_SIG_MAX_COUNT; i++) {
		char *url = NULL;

		/* containers/image's layout: BASE/REPO@sha256=HEX/signature-N */
		if (asprintf(&url, "%s%s%s@sha256=%s/signature-%zu", f.url,
			     f.url[strlen(f.url) - 1] == '/' ? "" : "/", c->ref->repo,
			     c->digest + 7, i + 1) < 0)
			return -ENOMEM;
		r = cfs_lookaside_get(url, c->ropts ? c->ropts->cainfo : NULL,
				      c->ropts ? c->ropts->timeout : 0, &c->gpg[i].data,
				      &c->gpg[i].len);
		free(url);
		if (r == -ENOENT)
			return 0;
		if (r)
			return r;
		c->n_gpg++;
	}
	return 0;
}

/* Read the body of @s, at most @max bytes, into *@buf. */
static int read_body(struct cfs_registry_stream *s, size_t max, const char *what, char **buf,
		     size_t *len)
{
	uint64_t want = cfs_registry_length(s);
	size_t cap = 64 * 1024, n = 0;
	ssize_t got;
	char *b;

	if (want != UINT64_MAX && want > max) {
		cfs_msg("'%s': %llu bytes, more than %zu", what, (unsigned long long)want, max);
		return -EFBIG;
	}
	b = malloc(cap + 1);
	if (!b)
		return -ENOMEM;
	for (;;) {
		if (n == cap) {
			char *nb;

			if (cap >= max + 1) {
				free(b);
				cfs_msg("'%s': more than %zu bytes", what, max);
				return -EFBIG;
			}
			cap = cap * 2 > max + 1 ? max + 1 : cap * 2;
			nb = realloc(b, cap + 1);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
		}
		got = cfs_registry_read(s, b + n, cap - n);
		if (got < 0) {
			free(b);
			return (int)got;
		}
		if (got == 0)
			break;
		n += (size_t)got;
	}
	if (n > max) {
		free(b);
		cfs_msg("'%s': more than %zu bytes", what, max);
		return -EFBIG;
	}
	b[n] = '\0';
	*buf = b;
	*len = n;
	return 0;
}

/* Whether @data hashes to @digest ("sha256:<hex>"). */
static bool digest_matches(const void *data, size_t len, const char *digest)
{
	uint8_t md[CFS_DIGEST_SIZE];
	char hex[CFS_DIGEST_HEX_SIZE];

	if (strncmp(digest, "sha256:", 7) || !EVP_Digest(data, len, md, NULL, EVP_sha256(), NULL))
		return false;
	cfs_digest_to_hex(md, hex);
	return strcmp(hex, digest + 7) == 0;
}

/* The cosign signatures of the registry's sha256-<hex>.sig manifest, if attachments are on. */
static int get_attachments(struct check *c)
{
	struct find_ls f = { .p = c->p, .attachments = -1 };
	struct cfs_registry_stream *s = NULL;
	const json_t *layers;
	char tag[7 + 64 + 5], what[1200], msg[512] = "";
	char *text = NULL;
	size_t len, n;
	json_t *doc = NULL;
	int r;

	if (c->have_cosign)
		return 0;
	c->have_cosign = true;
	each_namespace(c->ref, try_ls, &f);
	for (size_t i = 0; f.attachments < 0 && i < c->p->n_ls; i++)
		if (!c->p->ls[i].ns)
			f.attachments = c->p->ls[i].attachments;
	if (f.attachments <= 0) {
		why_add(c, "use-sigstore-attachments is not on for it in registries.d");
		return 0;
	}
	snprintf(tag, sizeof(tag), "sha256-%s.sig", c->digest + 7);
	snprintf(what, sizeof(what), "%s/%s:%s", c->ref->host, c->ref->repo, tag);
	cfs_msg_capture(msg, sizeof(msg));
	r = cfs_registry_get(c->reg, true, tag,
			     "application/vnd.oci.image.manifest.v1+json, "
			     "application/vnd.docker.distribution.manifest.v2+json",
			     what, &s);
	cfs_msg_capture(c->msg, sizeof(c->msg));
	if (r == -ENOENT)
		return 0;
	if (r) {
		cfs_msg("%s", msg);
		return r;
	}
	r = read_body(s, CFS_SIG_MAX_SIZE, what, &text, &len);
	cfs_registry_end(s);
	s = NULL;
	if (r == 0)
		r = cfs_json_parse(text, len, what, &doc);
	free(text);
	if (r)
		return r;
	layers = json_object_get(doc, "layers");
	n = json_array_size(layers);
	if (!json_is_array(layers) || n > CFS_SIG_MAX_COUNT) {
		cfs_msg("'%s': %s", what,
			json_is_array(layers) ? "more than 128 signatures" : "no layers list");
		r = -EFBIG;
		goto out;
	}
	c->cosign = calloc(n ? n : 1, sizeof(*c->cosign));
	if (!c->cosign) {
		r = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		const json_t *l = json_array_get(layers, i);
		const char *mt = cfs_json_str(l, "mediaType"), *dg = cfs_json_str(l, "digest");
		const char *sig = cfs_json_str(json_object_get(l, "annotations"),
					       COSIGN_SIG_ANNOTATION);
		const json_t *size = json_object_get(l, "size");
		char bwhat[1300];
		struct sig *g;

		if (!mt || strcmp(mt, MT_COSIGN_PAYLOAD) || !sig)
			continue; /* not a simple-signing signature */
		if (!dg || strncmp(dg, "sha256:", 7) || strlen(dg) != 71 || !json_is_integer(size) ||
		    json_integer_value(size) < 0) {
			cfs_msg("'%s': layer %zu: no sha256 digest or size", what, i + 1);
			r = -EINVAL;
			goto out;
		}
		snprintf(bwhat, sizeof(bwhat), "%s: %s", what, dg);
		if ((uint64_t)json_integer_value(size) > CFS_SIG_MAX_SIZE) {
			cfs_msg("'%s': a payload of %lld bytes, more than %zu", bwhat,
				(long long)json_integer_value(size), CFS_SIG_MAX_SIZE);
			r = -EFBIG;
			goto out;
		}
		g = &c->cosign[c->n_cosign];
		r = cfs_registry_get_document(c->reg, false, dg, NULL, bwhat, &s);
		if (r == 0)
			r = read_body(s, (size_t)json_integer_value(size), bwhat, &g->data, &g->len);
		cfs_registry_end(s);
		s = NULL;
		if (r)
			goto out;
		if (g->len != (size_t)json_integer_value(size) || !digest_matches(g->data, g->len, dg)) {
			cfs_msg("'%s': the payload does not match its digest or size", bwhat);
			free(g->data);
			g->data = NULL;
			r = -EINVAL;
			goto out;
		}
		g->cosign_sig = strdup(sig);
		c->n_cosign++;
		if (!g->cosign_sig) {
			r = -ENOMEM;
			goto out;
		}
	}
	r = 0;
out:
	json_decref(doc);
	return r;
}

/* The image reference @ref as @q's prefix remap makes it; false when it is not one. */
static bool remap(const struct req *q, const struct cfs_registry_ref *ref,
		  struct cfs_registry_ref *out)
{
	char name[1024], *mapped = NULL;
	size_t n = strlen(q->id_a);
	bool ok;

	name_of(ref, name, sizeof(name));
	if (strncmp(name, q->id_a, n) ||
	    (name[n] && !(name[n] == '/' || (strchr(q->id_a, '/') && strchr(":@", name[n])))))
		return cfs_registry_ref_parse(name, out) == 0;
	if (asprintf(&mapped, "%s%s", q->id_b, name + n) < 0)
		return false;
	ok = canonical_ref(mapped, -1) && cfs_registry_ref_parse(mapped, out) == 0;
	free(mapped);
	return ok;
}

static bool same_repo(const struct cfs_registry_ref *a, const struct cfs_registry_ref *b)
{
	return !strcmp(a->host, b->host) && !strcmp(a->repo, b->repo);
}

static bool same_ref(const struct cfs_registry_ref *a, const struct cfs_registry_ref *b)
{
	if (!same_repo(a, b) || !a->digest != !b->digest)
		return false;
	return a->digest ? !strcmp(a->digest, b->digest) : !strcmp(a->tag, b->tag);
}

/* Whether the signed identity @signed_id is one @q accepts for the image @ref. */
static bool identity_ok(const struct req *q, const struct cfs_registry_ref *ref,
			const char *signed_id)
{
	struct cfs_registry_ref s, x;
	bool ok = false;

	/* a signature names a full reference with a tag or a digest */
	if (!canonical_ref(signed_id, 1) || cfs_registry_ref_parse(signed_id, &s))
		return false;
	switch (q->id) {
	case ID_MATCH_EXACT:
		ok = same_ref(ref, &s);
		break;
	case ID_MATCH_REPO_DIGEST_OR_EXACT:
		ok = ref->digest ? same_repo(ref, &s) : same_ref(ref, &s);
		break;
	case ID_MATCH_REPOSITORY:
		ok = same_repo(ref, &s);
		break;
	case ID_EXACT_REFERENCE:
		if (cfs_registry_ref_parse(q->id_a, &x) == 0) {
			ok = same_ref(&x, &s);
			cfs_registry_ref_free(&x);
		}
		break;
	case ID_EXACT_REPOSITORY:
		if (cfs_registry_ref_parse(q->id_a, &x) == 0) {
			ok = same_repo(&x, &s);
			cfs_registry_ref_free(&x);
		}
		break;
	case ID_REMAP:
		if (remap(q, ref, &x)) {
			ok = x.digest ? same_repo(&x, &s) : same_ref(&x, &s);
			cfs_registry_ref_free(&x);
		}
		break;
	}
	cfs_registry_ref_free(&s);
	return ok;
}

/* Whether the verified @payload is for this image and an identity @q accepts. */
static bool payload_ok(struct check *c, const struct req *q, const char *label,
		       const char *payload, size_t len, const char *type)
{
	struct cfs_sig_payload pl;
	char msg[512] = "";
	bool ok = false;

	cfs_msg_capture(msg, sizeof(msg));
	int r = cfs_sig_payload_parse(payload, len, type, label, &pl);
	cfs_msg_capture(c->msg, sizeof(c->msg));
	if (r) {
		why_add(c, "%s", msg[0] ? msg : strerror(-r));
		return false;
	}
	if (strcmp(pl.digest, c->digest))
		why_add(c, "%s: signed for another manifest, %.80s", label, pl.digest);
	else if (!identity_ok(q, c->ref, pl.identity))
		why_add(c, "%s: signed for another identity, '%.300s'", label, pl.identity);
	else
		ok = true;
	cfs_sig_payload_free(&pl);
	return ok;
}

static int check_signed_by(struct check *c, const struct req *q, char **passed)
{
	struct cfs_gpg_keys *keys = NULL;
	char why[512], fpr[128], label[64];
	int r;

	r = get_lookaside(c);
	if (r)
		return r;
	if (c->n_gpg == 0) {
		why_add(c, "no signature in the lookaside");
		return -EACCES;
	}
	r = cfs_gpg_keys_new(q->paths, q->n_paths, q->data, q->data_len, &keys);
	if (r)
		return r;
	r = -EACCES;
	for (size_t i = 0; i < c->n_gpg; i++) {
		char *payload = NULL;
		size_t len;
		int v;

		snprintf(label, sizeof(label), "signature-%zu", i + 1);
		why[0] = '\0';
		v = cfs_gpg_verify(keys, c->gpg[i].data, c->gpg[i].len, &payload, &len, fpr,
				   sizeof(fpr), why, sizeof(why));
		if (v == -EACCES) {
			why_add(c, "%s: %s", label, why);
			continue;
		}
		if (v) {
			r = v;
			break;
		}
		if (payload_ok(c, q, label, payload, len, CFS_SIG_TYPE_GPG)) {
			r = asprintf(passed, "signedBy GPGKeys %s", fpr) < 0 ? -ENOMEM : 0;
			free(payload);
			break;
		}
		free(payload);
	}
	cfs_gpg_keys_free(keys);
	return r;
}

static int check_sigstore(struct check *c, const struct req *q, char **passed)
{
	char why[512], label[64];
	char *pem = NULL;
	size_t pem_len = 0;
	const char *key_what = q->n_paths ? q->paths[0] : "keyData";
	int r;

	r = get_attachments(c);
	if (r)
		return r;
	if (c->n_cosign == 0) {
		why_add(c, "no sigstore signature");
		return -EACCES;
	}
	if (q->n_paths) {
		r = slurp(q->paths[0], 1 << 20, &pem, &pem_len);
		if (r) {
			cfs_msg("key file '%s': %s", q->paths[0], strerror(-r));
			return r;
		}
	}
	r = -EACCES;
	for (size_t i = 0; i < c->n_cosign; i++) {
		int v;

		snprintf(label, sizeof(label), "sigstore signature %zu", i + 1);
		why[0] = '\0';
		v = cfs_cosign_verify(pem ? pem : q->data, pem ? pem_len : q->data_len, key_what,
				      c->cosign[i].cosign_sig, c->cosign[i].data,
				      c->cosign[i].len, why, sizeof(why));
		if (v == -EACCES) {
			why_add(c, "%s: %s", label, why);
			continue;
		}
		if (v) {
			r = v;
			break;
		}
		if (payload_ok(c, q, label, c->cosign[i].data, c->cosign[i].len,
			       CFS_SIG_TYPE_COSIGN)) {
			r = asprintf(passed, "sigstoreSigned %s", key_what) < 0 ? -ENOMEM : 0;
			break;
		}
	}
	free(pem);
	return r;
}

int cfs_policy_check(const struct cfs_policy *p, struct cfs_registry *reg,
		     const struct cfs_registry_ref *ref, const struct cfs_registry_options *ropts,
		     const char *digest, char **passed)
{
	struct check c = { .p = p, .reg = reg, .ref = ref, .ropts = ropts, .digest = digest };
	struct find_scope f = { .p = p };
	const struct scope *s;
	char *all = NULL;
	int r = 0;

	*passed = NULL;
	name_of(ref, c.name, sizeof(c.name));
	if (strncmp(digest, "sha256:", 7) || strlen(digest) != 71)
		return -EINVAL;
	if (!each_namespace(ref, try_scope, &f))
		try_scope(&f, "");
	s = f.found ? f.found : &p->def;
	for (size_t i = 0; i < s->n && r == 0; i++) {
		const struct req *q = &s->reqs[i];
		char *one = NULL, *joined;

		c.why[0] = '\0';
		switch (q->type) {
		case REQ_ACCEPT:
			one = strdup("insecureAcceptAnything");
			r = one ? 0 : -ENOMEM;
			break;
		case REQ_REJECT:
			why_add(&c, "the policy rejects it (scope '%s')", s->name);
			r = -EACCES;
			break;
		case REQ_SIGNED_BY:
		case REQ_SIGSTORE:
			/*
			 * What goes wrong while the signatures are read (a
			 * bound, a redirect, a key file) is said as the
			 * reason the image is refused.
			 */
			c.msg[0] = '\0';
			cfs_msg_capture(c.msg, sizeof(c.msg));
			r = (q->type == REQ_SIGNED_BY ? check_signed_by : check_sigstore)(&c, q,
											 &one);
			cfs_msg_capture(NULL, 0);
			if (r && r != -ENOMEM && c.msg[0] && (r != -EACCES || !c.why[0])) {
				why_add(&c, "%s", c.msg);
				r = -EACCES;
			}
			break;
		}
		if (r == -EACCES)
			cfs_msg("'%s': refused by the policy: %s", c.name, c.why);
		if (r)
			break;
		if (asprintf(&joined, "%s%s%s", all ? all : "", all ? ", " : "", one) < 0) {
			free(one);
			r = -ENOMEM;
			break;
		}
		free(one);
		free(all);
		all = joined;
	}
	free_sigs(c.gpg, c.n_gpg);
	free_sigs(c.cosign, c.n_cosign);
	if (r)
		free(all);
	else
		*passed = all;
	return r;
}

/* ---- the local transports: an OCI layout, an oci-archive, a docker-archive ---- */

/* The scope of transport @t named @name, or NULL. */
static const struct scope *local_scope(const struct cfs_policy *p, const char *t, const char *name)
{
	for (size_t i = 0; i < p->n_local; i++)
		if (!strcmp(p->local_transport[i], t) && !strcmp(p->local[i].name, name))
			return &p->local[i];
	return NULL;
}

int cfs_policy_check_layout(const struct cfs_policy *p, const char *source, char **passed)
{
	const char *t = NULL, *rest = NULL, *colon;
	const struct scope *s = NULL;
	char *path = NULL, *real = NULL, *id = NULL, *all = NULL;
	int r = 0;

	*passed = NULL;
	for (size_t i = 0; local_transports[i] && !t; i++) {
		size_t n = strlen(local_transports[i]);

		if (!strncmp(source, local_transports[i], n) && source[n] == ':') {
			t = local_transports[i];
			rest = source + n + 1;
		}
	}
	if (!t) {
		cfs_msg("'%s': not an image source: oci:DIR[:TAG], oci-archive:FILE[:TAG] or docker-archive:FILE[:TAG]",
			source);
		return -EINVAL;
	}
	/*
	 * containers/image's identity of the image: the resolved path and
	 * ":TAG", then the path and each directory above it but "/"; a
	 * docker-archive has none. Then the transport's "", then "default".
	 */
	if (strcmp(t, "docker-archive")) {
		colon = strchr(rest, ':');
		path = strndup(rest, colon ? (size_t)(colon - rest) : strlen(rest));
		if (!path)
			return -ENOMEM;
		real = realpath(path, NULL);
		if (!real) {
			r = -errno;
			cfs_msg("'%s': the policy's scope of '%s': %s", source, path, strerror(-r));
			goto out;
		}
		if (colon && asprintf(&id, "%s:%s", real, colon + 1) < 0) {
			id = NULL;
			r = -ENOMEM;
			goto out;
		}
		if (id)
			s = local_scope(p, t, id);
		for (char *slash; !s && real[0] && strcmp(real, "/");) {
			s = local_scope(p, t, real);
			slash = strrchr(real, '/');
			if (!slash)
				break;
			*slash = '\0';
		}
	}
	if (!s)
		s = local_scope(p, t, "");
	if (!s)
		s = &p->def;
	for (size_t i = 0; i < s->n && r == 0; i++) {
		char *joined;

		switch (s->reqs[i].type) {
		case REQ_ACCEPT:
			if (asprintf(&joined, "%s%sinsecureAcceptAnything", all ? all : "",
				     all ? ", " : "") < 0) {
				r = -ENOMEM;
				break;
			}
			free(all);
			all = joined;
			break;
		case REQ_REJECT:
			cfs_msg("'%s': refused by the policy: the policy rejects it (scope '%s')",
				source, s->name);
			r = -EACCES;
			break;
		case REQ_SIGNED_BY:
		case REQ_SIGSTORE:
			cfs_msg("'%s': refused by the policy: %s needs a signature, and an image of transport %s carries none (scope '%s')",
				source, s->reqs[i].type == REQ_SIGNED_BY ? "signedBy" : "sigstoreSigned",
				t, s->name);
			r = -EACCES;
			break;
		}
	}
	if (r == 0)
		*passed = all;
	else
		free(all);
out:
	free(path);
	free(real);
	free(id);
	return r;
}
