#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# push-bad-registry.py MODE PORTFILE LOG: a registry that misbehaves when
# cfsctl push uploads to it, for tests/cli/2501-push-refusals.sh. It binds
# 127.0.0.1 on a free port, writes the port to PORTFILE once it listens,
# and logs "METHOD PATH" of each request to LOG. A HEAD of a blob is 404;
# the POST that starts an upload is answered as MODE says:
#   other-host   202 with a Location on another host (127.0.0.2)
#   absolute     202 with an absolute Location on this very server (good)
#   no-location  202 without a Location
#   huge         202 with 100 KiB of headers
#   redirect     307 to another host
# A PUT is taken (201), so a push that goes on would name a manifest.
# Python 3 standard library only.
import http.server
import sys

mode, portfile, logfile = sys.argv[1:4]


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def log(self):
        with open(logfile, "a") as f:
            f.write(f"{self.command} {self.path}\n")

    def answer(self, code, headers=()):
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", "0")
        self.end_headers()

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

    def do_PUT(self):
        self.log()
        n = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(n)
        self.answer(201)


srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
import os
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
