"""A seller behind Python's standard WSGI server (wsgiref): what a WSGI app sees of a request's headers.

PEP 3333 puts each header in environ as "HTTP_" + name.upper() with "-" replaced by "_", so X_PAYMENT and
X-PAYMENT both arrive as HTTP_X_PAYMENT (wsgiref joins both with a comma). The app answers 200 "paid" to any
request carrying a payment header and records, for GET /stats, every payment and X-Payguard-* key it saw.
Prints one JSON line {"ready": true, "url": ...} when listening.
"""
import json
import sys
from wsgiref.simple_server import WSGIRequestHandler, make_server

seen = {"payments": [], "payguard": []}


def app(environ, start_response):
    if environ.get("PATH_INFO") == "/stats":
        body = json.dumps(seen).encode()
        start_response("200 OK", [("Content-Type", "application/json")])
        return [body]
    paid = False
    for key in environ:
        k = key.rstrip("_ \t")
        if k in ("HTTP_X_PAYMENT", "HTTP_PAYMENT_SIGNATURE"):
            seen["payments"].append(key)
            paid = True
        if k == "HTTP_X_PAYGUARD" or k.startswith("HTTP_X_PAYGUARD_"):
            seen["payguard"].append(key)
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"paid" if paid else b"free"]


class QuietHandler(WSGIRequestHandler):
    def log_message(self, *args):
        pass


server = make_server("127.0.0.1", 0, app, handler_class=QuietHandler)
print(json.dumps({"ready": True, "url": "http://127.0.0.1:%d" % server.server_port}), flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
