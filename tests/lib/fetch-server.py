#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR MIT
# A small HTTP server for the cfsctl fetch tests that serves a store
# directory and misbehaves on purpose. It binds 127.0.0.1 on a free port,
# writes the port to --port-file once it listens, and logs one line per
# request ("MODE PATH") to --log. With --times N only the first N requests
# for each path misbehave, later ones are served properly; by default every
# request does; with --min-size only files at least that big do. Modes:
#   ok        serve the file
#   401, 403, 404  answer 401 (with no challenge), 403 or 404
#   500       answer 500 Internal Server Error
#   truncate  promise the full Content-Length, send half, close
#   corrupt   the right length of wrong bytes
#   stall     send half the body, then send nothing for --stall seconds
#   reset     read the request, then reset the connection (TCP RST)
#   trickle   send the body at --rate bytes a second
#   endless   the file, then zeros for ever: no Content-Length, the body
#             ends only when the client goes away
# With --bearer TOKEN it stands for a registry that wants a token: a request
# without "Authorization: Bearer TOKEN" gets a 401 with a bearer challenge
# whose realm is /token on this server, which answers with TOKEN in the JSON
# member --token-key ("token" or "access_token"), logged as "token QUERY";
# with --token-rate R it sends that answer at R bytes a second.
# With --basic USER:PASSWORD a request (the token realm's, with --bearer)
# without those Basic credentials gets a 401 with a Basic challenge.
# --redirect-blobs URL answers a request for a blob with a 307 to URL and
# the same path. --auth-log FILE logs the Authorization header of every
# request ("PATH AUTHORIZATION", "-" for none). --tls CERT KEY serves https.
# Python 3 standard library only.
import argparse
import base64
import http.server
import json
import os
import socket
import ssl
import struct
import sys
import threading
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", required=True)
    ap.add_argument("--mode", default="ok",
                    choices=["ok", "401", "403", "404", "500", "truncate", "corrupt", "stall", "reset",
                             "trickle", "endless"])
    ap.add_argument("--times", type=int, default=-1)
    ap.add_argument("--stall", type=float, default=600)
    ap.add_argument("--min-size", type=int, default=0)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log", default=os.devnull)
    ap.add_argument("--bearer")
    ap.add_argument("--token-key", default="token")
    ap.add_argument("--token-rate", type=float)
    ap.add_argument("--basic")
    ap.add_argument("--redirect-blobs")
    ap.add_argument("--auth-log", default=os.devnull)
    ap.add_argument("--rate", type=float, default=1)
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    args = ap.parse_args()
    basic = None
    if args.basic:
        basic = "Basic " + base64.b64encode(args.basic.encode()).decode()
    auth_log = open(args.auth_log, "a", buffering=1)

    counts = {}
    lock = threading.Lock()
    log = open(args.log, "a", buffering=1)

    class Handler(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, fmt, *a):
            pass

        def do_GET(self):
            path = self.path.split("?", 1)[0]
            auth_log.write("%s %s\n" % (path, self.headers.get("Authorization", "-")))
            if basic and self.headers.get("Authorization") != basic and (
                    not args.bearer or path == "/token"):
                log.write("unauthorized %s\n" % path)
                return self.answer(401, b"{}", [("WWW-Authenticate", 'Basic realm="fake"')])
            if args.bearer and path == "/token":
                log.write("token %s\n" % self.path.split("?", 1)[-1])
                body = json.dumps({args.token_key: args.bearer}).encode()
                if args.token_rate:
                    return self.trickle(200, body, args.token_rate)
                return self.answer(200, body)
            if args.bearer and self.headers.get("Authorization") != "Bearer " + args.bearer:
                log.write("unauthorized %s\n" % path)
                port = self.server.server_address[1]
                return self.answer(401, b"{}", [("WWW-Authenticate",
                    'Bearer realm="http://127.0.0.1:%d/token",service="fake",'
                    'scope="repository:img:pull"' % port)])
            if args.redirect_blobs and "/blobs/" in path:
                log.write("redirect %s\n" % path)
                return self.answer(307, b"", [("Location", args.redirect_blobs + path)])
            with lock:
                n = counts.get(path, 0)
                counts[path] = n + 1
            mode = args.mode
            if args.times >= 0 and n >= args.times:
                mode = "ok"
            rel = os.path.normpath(path.lstrip("/"))
            full = os.path.join(args.root, rel)
            if rel.startswith("..") or not os.path.isfile(full):
                log.write("absent %s\n" % path)
                return self.answer(404, b"not found\n")
            if os.path.getsize(full) < args.min_size:
                mode = "ok"
            log.write("%s %s\n" % (mode, path))
            if mode in ("401", "403", "404"):
                return self.answer(int(mode), b"no\n")
            if mode == "500":
                return self.answer(500, b"try again\n")
            if mode == "reset":
                self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER,
                                           struct.pack("ii", 1, 0))
                self.connection.close()
                self.close_connection = True
                return
            with open(full, "rb") as f:
                data = f.read()
            if mode == "endless":
                self.send_response(200)
                self.send_header("Content-Type", "application/octet-stream")
                self.end_headers()
                self.close_connection = True
                self.wfile.write(data)
                zeros = bytes(1 << 16)
                while True:
                    self.wfile.write(zeros)
            if mode == "corrupt":
                data = bytes((b ^ 0x5A) for b in data)
            self.send_response(200)
            self.send_header("Content-Type", "application/octet-stream")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if mode == "ok" or mode == "corrupt":
                self.wfile.write(data)
                return
            if mode == "trickle":
                return self.send_slowly(data, args.rate)
            self.wfile.write(data[: len(data) // 2])
            self.wfile.flush()
            if mode == "stall":
                end = time.time() + args.stall
                while time.time() < end:
                    time.sleep(0.1)
            self.close_connection = True

        def send_slowly(self, data, rate):
            step = max(1, int(rate / 10))
            for i in range(0, len(data), step):
                self.wfile.write(data[i:i + step])
                self.wfile.flush()
                time.sleep(step / rate)

        def trickle(self, code, body, rate):
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.send_slowly(body, rate)

        def answer(self, code, body, headers=()):
            self.send_response(code)
            for k, v in headers:
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    class Server(http.server.ThreadingHTTPServer):
        daemon_threads = True

        def handle_error(self, request, client_address):
            pass  # a client that went away is not our problem

    srv = Server(("127.0.0.1", 0), Handler)
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.tls[0], args.tls[1])
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
    tmp = args.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % srv.server_address[1])
    os.rename(tmp, args.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
