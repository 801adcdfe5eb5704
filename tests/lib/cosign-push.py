#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# cosign-push.py URL REPO DIGEST PAYLOAD SIGNATURE [LAYERS [SIZE]]: attach a
# cosign signature to the image DIGEST of REPO in the registry at URL
# (http://HOST:PORT) as cosign does: the manifest tagged sha256-<hex>.sig,
# whose layer is the simple-signing PAYLOAD file (media type
# application/vnd.dev.cosign.simplesigning.v1+json) with the base64
# SIGNATURE in the annotation dev.cosignproject.cosign/signature. With
# LAYERS, the layer is listed that many times; with SIZE, its descriptor
# claims SIZE bytes (the registry checks neither). Prints the manifest.
import hashlib, json, sys, urllib.request

url, repo, digest, payload_file, sig = sys.argv[1:6]
layers = int(sys.argv[6]) if len(sys.argv) > 6 else 1
size = int(sys.argv[7]) if len(sys.argv) > 7 else None

def request(method, u, data=None, headers={}):
    req = urllib.request.Request(u, data=data, method=method, headers=headers)
    with urllib.request.urlopen(req) as r:
        return r.headers

def put_blob(data):
    d = "sha256:" + hashlib.sha256(data).hexdigest()
    loc = request("POST", f"{url}/v2/{repo}/blobs/uploads/")["Location"]
    if loc.startswith("/"):
        loc = url + loc
    request("PUT", loc + ("&" if "?" in loc else "?") + "digest=" + d, data,
            {"Content-Type": "application/octet-stream"})
    return {"digest": d, "size": len(data)}

payload = open(payload_file, "rb").read()
config = put_blob(b"{}")
layer = put_blob(payload)
if size is not None:
    layer["size"] = size
manifest = {
    "schemaVersion": 2,
    "mediaType": "application/vnd.oci.image.manifest.v1+json",
    "config": dict(config, mediaType="application/vnd.oci.image.config.v1+json"),
    "layers": [dict(layer, mediaType="application/vnd.dev.cosign.simplesigning.v1+json",
                    annotations={"dev.cosignproject.cosign/signature": sig})] * layers,
}
data = json.dumps(manifest).encode()
request("PUT", f"{url}/v2/{repo}/manifests/sha256-{digest[7:]}.sig", data,
        {"Content-Type": manifest["mediaType"]})
print(data.decode())
