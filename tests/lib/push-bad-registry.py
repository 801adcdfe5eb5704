#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# push-bad-registry.py MODE PORTFILE LOG: a registry that misbehaves when
# cfsctl push uploads to it, for tests/cli/2501-push-refusals.sh and
# 2507-push-resume.sh. It binds 127.0.0.1 on a free port, writes the port
# to PORTFILE once it listens, and logs "METHOD PATH BYTES" of each request
# to LOG (BYTES: of the body it read). A HEAD of a blob is 404; the POST
# that starts an upload is answered as MODE says:
#   other-host   202 with a Location on another host (127.0.0.2)
#   absolute     202 with an absolute Location on this very server (good)
#   no-location  202 without a Location
#   huge         202 with 100 KiB of headers
#   redirect     307 to another host
# and in the other modes with a Location on this server, for an upload it
# keeps as a registry does: a PATCH appends its body (its Content-Range,
# when it has one, must start where the upload ends, else 416), a GET of
# the upload says how much it has (204, "Range: 0-LAST", "0-0" when it has
# nothing, as distribution says it), and the PUT that ends it must name the
# digest of what it holds (201, else 400). What the modes break:
#   ok           nothing
#   cut          the first PATCH of more than 64 KiB: half of its body is
#                read and kept, and the connection closed without an answer
#   cut-lose     as cut, and the upload is lost (404 after, as
#                distribution answers an upload whose writer broke off)
#   cut-always   every PATCH of more than 64 KiB, as in cut
#   patch-500    every PATCH answered 500 unread
# A PUT of a manifest is taken (201), so a push that goes on names one.
# Python 3 standard library only.
import hashlib
import http.server
import os
import re
import socket
import sys
import threading

mode, portfile, logfile = sys.argv[1:4]
uploads, lock, cuts = {}, threading.Lock(), [0]


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def log(self, n=0):
        with open(logfile, "a") as f:
            f.write(f"{self.command} {self.path} {n}\n")

    def answer(self, code, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def upload(self):
        m = re.match(r"/v2/t/blobs/uploads/(\d+)", self.path)
        return int(m.group(1)) if m else None

    def status(self, code, u):
        have = len(uploads[u])
        self.answer(code, [("Location", f"/v2/t/blobs/uploads/{u}"),
                           ("Range", f"0-{have - 1 if have else 0}")])

    def do_HEAD(self):
        self.log()
        self.answer(404)

    def do_POST(self):
        self.log()
        port = self.server.server_address[1]
        if mode == "other-host":
            self.answer(202, [("Location", f"http://127.0.0.2:{port}/v2/t/uploads/x")])
        elif mode == "absolute":
            self.answer(202, [("Location", f"http://127.0.0.1:{port}/v2/t/blobs/uploads/x?state=1")])
        elif mode == "no-location":
            self.answer(202)
        elif mode == "huge":
            self.answer(202, [(f"X-Filler-{i}", "x" * 1000) for i in range(100)] +
                        [("Location", "/v2/t/blobs/uploads/x")])
        elif mode == "redirect":
            self.answer(307, [("Location", f"http://127.0.0.2:{port}/elsewhere")])
        else:
            with lock:
                u = len(uploads)
                uploads[u] = bytearray()
            self.answer(202, [("Location", f"/v2/t/blobs/uploads/{u}")])

    def do_PATCH(self):
        n = int(self.headers.get("Content-Length", "0"))
        u = self.upload()
        if mode == "absolute":
            self.log(len(self.rfile.read(n)))
            port = self.server.server_address[1]
            return self.answer(202, [("Location", f"http://127.0.0.1:{port}{self.path}")])
        if mode == "patch-500":
            self.log()
            self.close_connection = True
            return self.answer(500)
        if u not in uploads:
            self.log()
            self.close_connection = True
            return self.answer(404)
        cr = self.headers.get("Content-Range")
        if cr is not None and int(cr.split("-")[0]) != len(uploads[u]):
            self.log()
            self.close_connection = True
            return self.answer(416)
        if n > 65536 and (mode == "cut-always" or (mode in ("cut", "cut-lose") and not cuts[0])):
            cuts[0] += 1
            data = self.rfile.read(n // 2)
            self.log(len(data))
            uploads[u] += data
            if mode == "cut-lose":
                del uploads[u]
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        data = self.rfile.read(n)
        self.log(len(data))
        uploads[u] += data
        self.status(202, u)

    def do_GET(self):
        self.log()
        u = self.upload()
        if u not in uploads:
            return self.answer(404)
        self.status(204, u)

    def do_PUT(self):
        n = int(self.headers.get("Content-Length", "0"))
        data = self.rfile.read(n)
        self.log(len(data))
        u = self.upload()
        if u is None or mode not in ("ok", "cut", "cut-lose", "cut-always", "patch-500"):
            return self.answer(201)
        if u not in uploads:
            return self.answer(404)
        uploads[u] += data
        m = re.search(r"digest=sha256:([0-9a-f]{64})", self.path)
        ok = m and hashlib.sha256(uploads[u]).hexdigest() == m.group(1)
        self.answer(201 if ok else 400)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
