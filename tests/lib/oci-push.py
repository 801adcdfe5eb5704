# SPDX-License-Identifier: GPL-2.0 OR MIT
# oci-push.py LAYOUT TAG URL REPO NEWTAG [CAFILE]: push the image tagged TAG in
# the OCI image layout LAYOUT to the registry at URL (http[s]://HOST:PORT, its
# certificate's CA in CAFILE) as REPO:NEWTAG,
# with the distribution API: each blob by a monolithic upload (POST, then PUT
# with ?digest=), each manifest of an index by its digest, then the top one
# by NEWTAG. Prints the top manifest's digest.
# For a fake registry, with URL "dir:ROOT" it writes the files
# ROOT/v2/REPO/{blobs,manifests}/... that a registry would serve.
import json, os, shutil, ssl, sys, urllib.request

layout, tag, url, repo, newtag = sys.argv[1:6]
ctx = ssl.create_default_context(cafile=sys.argv[6]) if len(sys.argv) > 6 else None
index = json.load(open(f"{layout}/index.json"))
top = [d for d in index["manifests"]
       if d.get("annotations", {}).get("org.opencontainers.image.ref.name") == tag][0]

def path(digest):
    return f"{layout}/blobs/sha256/{digest[7:]}"

def request(method, u, data=None, headers={}):
    req = urllib.request.Request(u, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req, context=ctx) as r:
        return r.status, r.headers

def put_blob(digest):
    if url.startswith("dir:"):
        d = f"{url[4:]}/v2/{repo}/blobs"
        os.makedirs(d, exist_ok=True)
        shutil.copyfile(path(digest), f"{d}/{digest}")
        return
    _, h = request("POST", f"{url}/v2/{repo}/blobs/uploads/")
    loc = h["Location"]
    if loc.startswith("/"):
        loc = url + loc
    data = open(path(digest), "rb").read()
    request("PUT", loc + ("&" if "?" in loc else "?") + "digest=" + digest, data,
            {"Content-Type": "application/octet-stream", "Content-Length": str(len(data))})

def put_manifest(desc, ref):
    data = open(path(desc["digest"]), "rb").read()
    if url.startswith("dir:"):
        d = f"{url[4:]}/v2/{repo}/manifests"
        os.makedirs(d, exist_ok=True)
        open(f"{d}/{ref}", "wb").write(data)
        return
    request("PUT", f"{url}/v2/{repo}/manifests/{ref}", data, {"Content-Type": desc["mediaType"]})

def push(desc, ref):
    doc = json.load(open(path(desc["digest"])))
    if "manifests" in doc:
        for m in doc["manifests"]:
            push(m, m["digest"])
    else:
        for b in [doc["config"]] + doc["layers"]:
            put_blob(b["digest"])
    put_manifest(desc, ref)

push(top, top["digest"])
push(top, newtag)
print(top["digest"])
