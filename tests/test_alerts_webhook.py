"""Webhook delivery against a real HTTP server on 127.0.0.1: signature, retries, permanent failure."""

from __future__ import annotations

import hashlib
import hmac
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any, ClassVar

import pytest

from compliance.alerts.notify import (
    SIGNATURE_HEADER,
    WebhookConfig,
    encode_payload,
    send_webhook,
    sign_body,
    verify_signature,
)
from compliance.cli.alerts import alert_run_summary
from compliance.errors import ConfigurationError, NotificationError

SECRET = "s3cret-key"


class _Receiver(BaseHTTPRequestHandler):
    #: status codes to answer, in order; the last one repeats
    script: ClassVar[list[int]] = [200]
    received: ClassVar[list[dict[str, Any]]] = []

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"]))
        header = self.headers.get(SIGNATURE_HEADER)
        # verified independently of the code under test
        expected = "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
        ok = header is not None and hmac.compare_digest(expected, header)
        index = min(len(self.received), len(self.script) - 1)
        status = self.script[index] if ok else 401
        self.received.append({"body": body, "signature_ok": ok, "status": status})
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: Any) -> None:
        pass


@pytest.fixture
def receiver() -> Iterator[tuple[str, type[_Receiver]]]:
    handler = type("Handler", (_Receiver,), {"script": [200], "received": []})
    server = HTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}/hook", handler
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


PAYLOAD = {
    "event": "alerts.created",
    "run_id": 7,
    "alerts": [{"id": 1, "score": 0.91, "text": "Cookies – ok"}],
}


def test_signed_delivery_is_verified_by_server(receiver: tuple[str, type[_Receiver]]) -> None:
    url, handler = receiver
    delivery = send_webhook(PAYLOAD, WebhookConfig(url=url, secret=SECRET), sleep=lambda s: None)
    assert delivery.status_code == 200
    assert delivery.attempts == 1
    assert len(handler.received) == 1
    got = handler.received[0]
    assert got["signature_ok"] is True
    assert json.loads(got["body"]) == PAYLOAD
    assert got["body"] == encode_payload(PAYLOAD)


def test_wrong_secret_is_rejected_without_retry(receiver: tuple[str, type[_Receiver]]) -> None:
    url, handler = receiver
    with pytest.raises(NotificationError, match="HTTP 401"):
        send_webhook(PAYLOAD, WebhookConfig(url=url, secret="wrong", retries=3), sleep=lambda s: None)
    assert len(handler.received) == 1  # a 4xx is not retried


def test_500_then_200_is_retried_with_backoff(receiver: tuple[str, type[_Receiver]]) -> None:
    url, handler = receiver
    handler.script = [500, 200]
    waits: list[float] = []
    delivery = send_webhook(PAYLOAD, WebhookConfig(url=url, secret=SECRET, backoff=0.25), sleep=waits.append)
    assert delivery.attempts == 2
    assert delivery.status_code == 200
    assert [r["status"] for r in handler.received] == [500, 200]
    assert waits == [0.25]
    assert "HTTP 500" in delivery.errors[0]


def test_permanent_failure_raises_after_retries(receiver: tuple[str, type[_Receiver]]) -> None:
    url, handler = receiver
    handler.script = [503]
    waits: list[float] = []
    cfg = WebhookConfig(url=url, secret=SECRET, retries=2, backoff=0.1)
    with pytest.raises(NotificationError, match="after 3 attempts"):
        send_webhook(PAYLOAD, cfg, sleep=waits.append)
    assert len(handler.received) == 3
    assert waits == [0.1, 0.2]  # exponential backoff


def test_unreachable_and_timeout_raise_notification_error() -> None:
    import socket

    # a listening socket that never answers: the read times out
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(1)
    port = silent.getsockname()[1]
    try:
        cfg = WebhookConfig(url=f"http://127.0.0.1:{port}/", secret=SECRET, retries=1, timeout=0.3)
        with pytest.raises(NotificationError, match="after 2 attempts") as info:
            send_webhook(PAYLOAD, cfg, sleep=lambda s: None)
        assert "Timeout" in str(info.value)
    finally:
        silent.close()


def test_signature_helpers() -> None:
    body = encode_payload({"b": 1, "a": "é"})
    assert body == '{"a":"é","b":1}'.encode()
    sig = sign_body(body, SECRET)
    assert sig == "sha256=" + hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    assert verify_signature(body, SECRET, sig)
    assert not verify_signature(body + b" ", SECRET, sig)
    assert not verify_signature(body, SECRET, None)


def test_config_validation_and_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    from compliance.settings import reset_settings

    with pytest.raises(ConfigurationError):
        WebhookConfig(url="ftp://x")
    assert WebhookConfig.from_settings() is None
    monkeypatch.setenv("COMPLIANCE_WEBHOOK_URL", "http://127.0.0.1:9/x")
    monkeypatch.setenv("COMPLIANCE_WEBHOOK_SECRET", "k")
    reset_settings()
    cfg = WebhookConfig.from_settings()
    assert cfg is not None and cfg.url == "http://127.0.0.1:9/x" and cfg.secret == "k"


def test_alert_run_summary_lists_alerts() -> None:
    alerts = [
        {
            "decision": "alert",
            "score": 0.9,
            "paragraph_id": 3,
            "evidence": {"provision_key": "art:5", "shared_terms": ["cookie"]},
        },
        {
            "decision": "review",
            "score": 0.5,
            "paragraph_id": 4,
            "evidence": {"provision_key": "art:6", "shared_terms": []},
        },
    ]
    text = alert_run_summary({"run_id": 1, "law": "eprivacy"}, alerts)
    assert "1 alert(s), 1 to review" in text
    assert "art:5" in text and "cookie" in text
