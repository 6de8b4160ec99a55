#!/usr/bin/env python3
"""A tiny shop API for Purko's quickstart: items to read, orders to place.

Standard library only. Every request is logged to stderr, so you can see what reached the
service (and that an order placed through Purko arrives exactly once).
"""

import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse

ITEMS = {
    "apple": {"id": "apple", "name": "Apple", "price_cents": 50, "stock": 120},
    "pear": {"id": "pear", "name": "Pear", "price_cents": 70, "stock": 40},
    "plum": {"id": "plum", "name": "Plum", "price_cents": 90, "stock": 0},
}
ORDERS = []


class Shop(BaseHTTPRequestHandler):
    def _send(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        path = urlparse(self.path).path
        if path == "/items":
            self._send(200, {"items": list(ITEMS.values())})
        elif path.startswith("/items/"):
            item = ITEMS.get(path.removeprefix("/items/"))
            self._send(200, item) if item else self._send(404, {"error": "no such item"})
        elif path == "/orders":
            self._send(200, {"orders": ORDERS})
        else:
            self._send(404, {"error": "no such path"})

    def do_POST(self):
        if urlparse(self.path).path != "/orders":
            return self._send(404, {"error": "no such path"})
        length = int(self.headers.get("Content-Length", "0"))
        try:
            order = json.loads(self.rfile.read(length) or b"{}")
        except json.JSONDecodeError:
            return self._send(400, {"error": "body is not JSON"})
        item = ITEMS.get(order.get("item"))
        if not item:
            return self._send(422, {"error": f"unknown item {order.get('item')!r}"})
        order = {
            "order_id": len(ORDERS) + 1,
            "item": item["id"],
            "quantity": order.get("quantity", 1),
            "idempotency_key": self.headers.get("Idempotency-Key"),
        }
        ORDERS.append(order)
        self._send(201, order)

    def log_message(self, fmt, *args):
        sys.stderr.write("shop: " + (fmt % args) + "\n")


def main():
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 18090
    server = ThreadingHTTPServer(("127.0.0.1", port), Shop)
    sys.stderr.write(f"shop: listening on http://127.0.0.1:{port}\n")
    server.serve_forever()


if __name__ == "__main__":
    main()
