# SPDX-License-Identifier: GPL-2.0 OR MIT
# chunked-tarsplit.py REG SRC DST MODE: the zstd:chunked image REG/SRC
# (REPO:TAG, as skopeo 1.9 writes it: a TOC, no tar-split) pushed again as
# REG/DST with a tar-split, as containers/storage writes one: JSON lines,
# type 2 the tar stream's bytes between files' contents (base64), type 1
# each entry (with "size" for a regular file with content), zstd-compressed
# in a skippable frame appended to the blob, and the annotations
# io.github.containers.zstd-chunked.tarsplit-position/-checksum. The
# config's diff_id becomes the sha256 of the tar stream the blob
# decompresses to, which the tar-split rebuilds. MODE: good, or a lie to
# be caught: bad-segment (one byte of a tar header changed), bad-name (a
# file's entry names another file), twice (a file's entry twice),
# bad-sum (the checksum annotation), bad-diffid (the config's diff_id).
import base64, hashlib, io, json, struct, subprocess, sys, tarfile, urllib.request

reg, src, dst, mode = sys.argv[1:5]
srepo, stag = src.rsplit(":", 1)
drepo, dtag = dst.rsplit(":", 1)
MT = "application/vnd.oci.image.manifest.v1+json"


def get(path, accept=None):
    req = urllib.request.Request(f"http://{reg}{path}", headers={"Accept": accept} if accept else {})
    return urllib.request.urlopen(req).read()


def put_blob(data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    req = urllib.request.Request(f"http://{reg}/v2/{drepo}/blobs/uploads/", method="POST")
    loc = urllib.request.urlopen(req).headers["Location"]
    if loc.startswith("/"):
        loc = f"http://{reg}{loc}"
    req = urllib.request.Request(loc + ("&" if "?" in loc else "?") + "digest=" + digest, data=data,
                                 method="PUT", headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(req).read()
    return digest


man = json.loads(get(f"/v2/{srepo}/manifests/{stag}", MT))
layer = man["layers"][0]
blob = get(f"/v2/{srepo}/blobs/{layer['digest']}")
stream = subprocess.run(["zstd", "-dcq"], input=blob, capture_output=True, check=True).stdout

lines, pos = [], 0
def segment(data):
    if data:
        lines.append({"type": 2, "payload": base64.b64encode(data).decode()})
with tarfile.open(fileobj=io.BytesIO(stream), mode="r:") as t:
    for m in t:
        segment(stream[pos:m.offset_data])
        pos = m.offset_data
        e = {"type": 1, "name": m.name, "payload": None}
        if m.isreg() and m.size > 0:
            e["size"] = m.size
            pos += m.size
        lines.append(e)
segment(stream[pos:])
files = [l for l in lines if l.get("size")]
if mode == "bad-segment":
    first = next(l for l in lines if l["type"] == 2)
    raw = bytearray(base64.b64decode(first["payload"]))
    raw[140] ^= 1  # in the first header's mtime
    first["payload"] = base64.b64encode(bytes(raw)).decode()
elif mode == "bad-name":
    files[-1]["name"], files[0]["name"] = files[0]["name"], files[-1]["name"]
elif mode == "twice":
    lines.insert(lines.index(files[0]) + 1, dict(files[0]))
for i, l in enumerate(lines):
    l["position"] = i
text = "".join(json.dumps(l, separators=(",", ":")) + "\n" for l in lines).encode()
z = subprocess.run(["zstd", "-q", "-c"], input=text, capture_output=True, check=True).stdout
off = len(blob) + 8
blob += struct.pack("<II", 0x184D2A50, len(z)) + z
ann = dict(layer.get("annotations", {}))
ann["io.github.containers.zstd-chunked.tarsplit-position"] = f"{off}:{len(z)}:{len(text)}"
ann["io.github.containers.zstd-chunked.tarsplit-checksum"] = (
    "sha256:" + (hashlib.sha256(b"another").hexdigest() if mode == "bad-sum" else hashlib.sha256(z).hexdigest()))
layer.update({"digest": put_blob(blob), "size": len(blob), "annotations": ann})

config = json.loads(get(f"/v2/{srepo}/blobs/{man['config']['digest']}"))
config["rootfs"]["diff_ids"] = ["sha256:" + hashlib.sha256(stream + (b"x" if mode == "bad-diffid" else b"")).hexdigest()]
cdata = json.dumps(config).encode()
man["config"].update({"digest": put_blob(cdata), "size": len(cdata)})
mdata = json.dumps(man).encode()
req = urllib.request.Request(f"http://{reg}/v2/{drepo}/manifests/{dtag}", data=mdata, method="PUT",
                             headers={"Content-Type": MT})
urllib.request.urlopen(req).read()
