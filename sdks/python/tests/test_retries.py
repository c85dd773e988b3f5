"""Timeouts and retries, against a real local HTTP server that answers what each test scripts."""

from __future__ import annotations

import json
import threading
import unittest
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Dict, List, Tuple

import keyturn

Scripted = Tuple[int, Dict[str, str], Any]


class ScriptedServer:
    """Answers each request with the next scripted (status, headers, body); records what it got."""

    def __init__(self, answers: List[Scripted]) -> None:
        self.answers = answers
        self.requests: List[Dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def answer(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                outer.requests.append(
                    {"method": self.command, "path": self.path, "headers": dict(self.headers.items()), "body": self.rfile.read(length)}
                )
                status, headers, body = outer.answers.pop(0)
                if body == "hang":
                    threading.Event().wait(0.5)
                    return
                data = body if isinstance(body, bytes) else json.dumps(body).encode()
                self.send_response(status)
                for name, value in {"content-type": "application/json", **headers}.items():
                    self.send_header(name, value)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = do_PATCH = answer

            def log_message(self, *args: Any) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.http.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"

    def close(self) -> None:
        self.http.shutdown()
        self.http.server_close()


def problem(status: int, code: str) -> Dict[str, Any]:
    return {"type": "about:blank", "title": code, "status": status, "detail": code, "code": code, "requestId": "req_1"}


class Retries(unittest.TestCase):
    def serve(self, answers: List[Scripted]) -> Tuple[ScriptedServer, keyturn.Client, List[float]]:
        server = ScriptedServer(answers)
        self.addCleanup(server.close)
        waits: List[float] = []
        client = keyturn.Client(server.url, "kt_client_x", sleep=waits.append, random_source=lambda: 0.5, timeout=1.0)
        return server, client, waits

    def test_a_get_is_retried_after_a_5xx_honouring_retry_after(self) -> None:
        server, client, waits = self.serve([(503, {"retry-after": "3"}, problem(503, "database_unavailable")), (200, {}, {"ok": 1})])
        self.assertEqual(client.request("GET", "/licenses/lic_1"), {"ok": 1})
        self.assertEqual(waits, [3.0])
        self.assertEqual(len(server.requests), 2)

    def test_a_post_is_retried_with_the_same_idempotency_key(self) -> None:
        server, client, waits = self.serve([(500, {}, b"<html>proxy error</html>"), (204, {}, b"")])
        self.assertIsNone(client.deactivate_license("KEY", "prd_1", "m-1"))
        keys = [request["headers"].get("idempotency-key") or request["headers"].get("Idempotency-Key") for request in server.requests]
        self.assertEqual(len(keys), 2)
        self.assertIsNotNone(keys[0])
        self.assertEqual(keys[0], keys[1])
        self.assertEqual(waits, [0.125])  # full jitter: 0.5 × 0.25 s

    def test_a_patch_and_a_4xx_are_not_retried(self) -> None:
        server, client, _ = self.serve([(503, {}, problem(503, "database_unavailable")), (409, {}, problem(409, "activation_limit_reached"))])
        with self.assertRaises(keyturn.ApiError) as patched:
            client.request("PATCH", "/licenses/lic_1", {"maxActivations": 2})
        self.assertEqual(patched.exception.code, "database_unavailable")
        with self.assertRaises(keyturn.ApiError) as refused:
            client.activate_license("KEY", "prd_1", "m-1")
        self.assertEqual((refused.exception.status, refused.exception.code), (409, "activation_limit_reached"))
        self.assertEqual(len(server.requests), 2)

    def test_a_retry_after_longer_than_the_longest_wait_is_not_waited_for(self) -> None:
        server, client, waits = self.serve([(429, {"retry-after": "120"}, problem(429, "rate_limited"))])
        with self.assertRaises(keyturn.ApiError) as limited:
            client.validate_license("KEY", "prd_1")
        self.assertEqual((limited.exception.code, limited.exception.retry_after), ("rate_limited", 120.0))
        self.assertEqual((waits, len(server.requests)), ([], 1))

    def test_a_server_that_does_not_answer_in_time_is_a_connection_error_after_the_retries(self) -> None:
        server, _, _ = self.serve([(200, {}, "hang")] * 3)
        waits: List[float] = []
        client = keyturn.Client(server.url, "kt_client_x", sleep=waits.append, timeout=0.2)
        with self.assertRaises(keyturn.KeyturnConnectionError):
            client.validate_license("KEY", "prd_1")
        self.assertEqual(len(server.requests), 3)
        self.assertEqual(len(waits), 2)


if __name__ == "__main__":
    unittest.main()
