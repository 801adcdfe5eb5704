# SPDX-License-Identifier: GPL-2.0 OR MIT
# mkoci.py LAYOUT SPEC.json: an OCI image layout made of layer tars, for the tests.
# SPEC is a list of images, each tagged in index.json (org.opencontainers.image.ref.name):
#   {"tag": T, "layers": [[TAR, "gzip"|"zstd"|"none"], ...], "docker": false, "layer_type": MT,
#    "diff_ids": {"N": ID}}  (the config lists ID as layer N's diff_id, from 0)
#   {"tag": T, "platforms": [{"arch": A, "variant": V, "layers": [...]}, ...]}  (an image index)
# Blobs are named by their sha256; configs list the layers' diff_ids.
import gzip, hashlib, json, os, subprocess, sys

layout, spec = sys.argv[1], json.load(open(sys.argv[2]))
os.makedirs(f"{layout}/blobs/sha256", exist_ok=True)

def blob(data):
    d = hashlib.sha256(data).hexdigest()
    with open(f"{layout}/blobs/sha256/{d}", "wb") as f:
        f.write(data)
    return {"digest": "sha256:" + d, "size": len(data)}

def doc(obj):
    return blob(json.dumps(obj).encode())

def image(img):
    docker = img.get("docker", False)
    layers, diff_ids = [], []
    for path, comp in img["layers"]:
        raw = open(path, "rb").read()
        diff_ids.append("sha256:" + hashlib.sha256(raw).hexdigest())
        data = {"gzip": lambda b: gzip.compress(b, mtime=0),
                "zstd": lambda b: subprocess.run(["zstd", "-q", "-c"], input=b,
                                                 capture_output=True, check=True).stdout,
                "none": lambda b: b}[comp](raw)
        mt = img.get("layer_type") or (
            "application/vnd.docker.image.rootfs.diff.tar.gzip" if docker else
            "application/vnd.oci.image.layer.v1.tar" + {"gzip": "+gzip", "zstd": "+zstd", "none": ""}[comp])
        layers.append(dict(mediaType=mt, **blob(data)))
    for n, v in img.get("diff_ids", {}).items():
        diff_ids[int(n)] = v
    config = {"architecture": img.get("arch", "amd64"), "os": "linux",
              "rootfs": {"type": "layers", "diff_ids": diff_ids}, "config": {}}
    cmt = "application/vnd.docker.container.image.v1+json" if docker else \
        "application/vnd.oci.image.config.v1+json"
    mmt = "application/vnd.docker.distribution.manifest.v2+json" if docker else \
        "application/vnd.oci.image.manifest.v1+json"
    m = {"schemaVersion": 2, "mediaType": mmt, "config": dict(mediaType=cmt, **doc(config)),
         "layers": layers}
    return dict(mediaType=mmt, **doc(m))

manifests = []
for ref in spec:
    if "platforms" in ref:
        entries = []
        for p in ref["platforms"]:
            d = image(p)
            plat = {"os": "linux", "architecture": p["arch"]}
            if "variant" in p:
                plat["variant"] = p["variant"]
            entries.append(dict(d, platform=plat))
        mt = "application/vnd.oci.image.index.v1+json"
        d = dict(mediaType=mt, **doc({"schemaVersion": 2, "mediaType": mt, "manifests": entries}))
    else:
        d = image(ref)
    d["annotations"] = {"org.opencontainers.image.ref.name": ref["tag"]}
    manifests.append(d)
with open(f"{layout}/index.json", "w") as f:
    json.dump({"schemaVersion": 2, "manifests": manifests}, f)
with open(f"{layout}/oci-layout", "w") as f:
    json.dump({"imageLayoutVersion": "1.0.0"}, f)
