"""A stand-in query API: a tiny local HTTP server answering what the test chose."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HTML = "<html><body><h1>Welcome to nginx!</h1>\n</body></html>"
EMPTY = {"status": "success", "data": {"resultType": "vector", "result": []}}


class Fake:
    """Answers every GET with (status, content type, body) after `delay_s`; remembers the
    headers, and the most requests it held at once."""

    def __init__(self) -> None:
        self.answer: tuple[int, str, str] = (200, "application/json", json.dumps(EMPTY))
        self.delay_s = 0.0
        self.headers: list[dict[str, str]] = []
        self.in_flight = self.most_in_flight = 0
        lock = threading.Lock()
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                with lock:
                    fake.headers.append(dict(self.headers))
                    fake.in_flight += 1
                    fake.most_in_flight = max(fake.most_in_flight, fake.in_flight)
                time.sleep(fake.delay_s)
                with lock:
                    fake.in_flight -= 1
                status, kind, body = fake.answer
                data = body.encode()
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args) -> None:
                pass

        class Server(ThreadingHTTPServer):
            request_queue_size = 64  # a refresh's queries come at once

        self.server = Server(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
