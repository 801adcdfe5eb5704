# SPDX-License-Identifier: GPL-2.0 OR MIT
# chunked-proxy.py: a registry in front of a real one for the zstd:chunked
# tests. Manifests are fetched from --upstream and may be rewritten; blobs
# are fetched whole from upstream once and served from here, with Range
# requests answered by this server (one range: 206 with Content-Range;
# several: multipart/byteranges), so that it can misbehave on purpose:
#   pass         honest
#   ignore-range every GET answered 200 with the whole blob
#   single-only  a request for several ranges answered 200 with the whole blob
#   wrong-range  single-range answers name (and hold) the range one byte on
#   wrong-multi  multipart answers' parts name (and hold) ranges one byte on
#   badsum       the TOC checksum annotation of each zstd:chunked layer is
#                another digest
#   newkeys      the annotations io.containers.zstd-chunked.* are renamed
#                io.github.containers.zstd-chunked.*
#   toc          each zstd:chunked layer's TOC is replaced by --toc FILE (a
#                zstd-compressed TOC), appended to the blob after an 8-byte
#                skippable frame header, the annotations and size adjusted
#                (--toc-size: its size uncompressed)
#   toc-digest   as toc, and the layer is named by the digest of what is
#                served, so that a full pull of it checks out too
# Usage: chunked-proxy.py --upstream HOST:PORT --port-file F --mode MODE
#        [--toc FILE --toc-size N]
import argparse, hashlib, http.client, http.server, json, re, struct, threading

ap = argparse.ArgumentParser()
ap.add_argument("--upstream", required=True)
ap.add_argument("--port-file", required=True)
ap.add_argument("--mode", default="pass")
ap.add_argument("--toc")
ap.add_argument("--toc-size", type=int, default=0)
args = ap.parse_args()

OLD = "io.containers.zstd-chunked."
NEW = "io.github.containers.zstd-chunked."
toc = open(args.toc, "rb").read() if args.toc else b""
blobs, extra, renamed, lock = {}, {}, {}, threading.Lock()


def upstream(path, headers):
    c = http.client.HTTPConnection(args.upstream, timeout=30)
    c.request("GET", path, headers=headers)
    r = c.getresponse()
    body = r.read()
    c.close()
    return r.status, r.getheader("Content-Type", ""), body


def rewrite(doc, repo):
    for layer in doc.get("layers", []):
        ann = layer.get("annotations") or {}
        keys = [k for k in ann if k.startswith(OLD) or k.startswith(NEW)]
        if not keys:
            continue
        if args.mode == "newkeys":
            layer["annotations"] = {k.replace(OLD, NEW): v for k, v in ann.items()}
        elif args.mode == "badsum":
            for k in keys:
                if k.endswith("checksum"):
                    ann[k] = "sha256:" + hashlib.sha256(ann[k].encode()).hexdigest()
        elif args.mode in ("toc", "toc-digest"):
            size = layer["size"]
            tail = b"\x50\x2a\x4d\x18" + struct.pack("<I", len(toc)) + toc
            extra[layer["digest"]] = tail
            for k in keys:
                if k.endswith("checksum"):
                    ann[k] = "sha256:" + hashlib.sha256(toc).hexdigest()
                else:
                    ann[k] = f"{size + 8}:{len(toc)}:{args.toc_size}:1"
            layer["size"] = size + len(tail)
            if args.mode == "toc-digest":
                status, _, body = upstream(f"/v2/{repo}/blobs/{layer['digest']}", {})
                new = "sha256:" + hashlib.sha256(body + tail).hexdigest()
                with lock:
                    blobs[new] = body
                    extra[new] = tail
                layer["digest"] = new
    return doc


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def send(self, status, ctype, body, headers=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        if self.path == "/v2/" or "/manifests/" in self.path:
            hdrs = {k: v for k, v in self.headers.items() if k.lower() == "accept"}
            status, ctype, body = upstream(self.path, hdrs)
            if status == 200 and "/manifests/" in self.path and args.mode != "pass":
                doc = json.loads(body)
                if "layers" in doc:
                    repo = self.path[len("/v2/"):self.path.index("/manifests/")]
                    body = json.dumps(rewrite(doc, repo)).encode()
            return self.send(status, ctype, body)
        m = re.match(r"/v2/(.+)/blobs/(sha256:[0-9a-f]{64})$", self.path)
        if not m:
            return self.send(404, "text/plain", b"not found")
        digest = m.group(2)
        with lock:
            if digest not in blobs:
                status, _, body = upstream(self.path, {})
                if status != 200:
                    return self.send(status, "text/plain", b"")
                blobs[digest] = body
        data = blobs[digest] + extra.get(digest, b"")
        rng = self.headers.get("Range")
        if not rng or args.mode == "ignore-range":
            return self.send(200, "application/octet-stream", data)
        spans = []
        for part in rng[len("bytes="):].split(","):
            a, b = part.split("-")
            spans.append((int(a), min(int(b), len(data) - 1)))
        if args.mode == "single-only" and len(spans) > 1:
            return self.send(200, "application/octet-stream", data)
        shift = 1 if (args.mode == "wrong-range" and len(spans) == 1) or \
            (args.mode == "wrong-multi" and len(spans) > 1) else 0
        spans = [(a + shift, b + shift) for a, b in spans]
        total = len(data)
        if len(spans) == 1:
            a, b = spans[0]
            return self.send(206, "application/octet-stream", data[a:b + 1],
                             [("Content-Range", f"bytes {a}-{b}/{total}")])
        bnd = "cfsproxyboundary"
        out = b""
        for a, b in spans:
            out += (f"\r\n--{bnd}\r\nContent-Type: application/octet-stream\r\n"
                    f"Content-Range: bytes {a}-{b}/{total}\r\n\r\n").encode() + data[a:b + 1]
        out += f"\r\n--{bnd}--\r\n".encode()
        self.send(206, f"multipart/byteranges; boundary={bnd}", out)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(args.port_file + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(args.port_file + ".tmp", args.port_file)
srv.serve_forever()
