"""Alert notification: a signed JSON webhook.

The webhook body is the UTF-8 JSON of the payload (keys sorted, no extra whitespace); the header
``X-Compliance-Signature: sha256=<hex>`` is HMAC-SHA256 of exactly those bytes with the configured secret, so a
receiver verifies with::

    expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest()
    hmac.compare_digest(expected, request.headers["X-Compliance-Signature"])

The URL may carry credentials (``https://user:pass@…``, ``?token=…``): every message and log line shows it through
:func:`redact_url`, and the config's ``repr`` leaves out the URL and the secret.

Connection errors, timeouts, HTTP 429 and 5xx are retried with exponential backoff; other 4xx answers are not
(the receiver rejected the message). After the last attempt :class:`~compliance.errors.NotificationError` is raised.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compliance.errors import ConfigurationError, NotificationError

__all__ = [
    "EVENT_HEADER",
    "SIGNATURE_HEADER",
    "WebhookConfig",
    "WebhookDelivery",
    "encode_payload",
    "redact_url",
    "send_webhook",
    "sign_body",
    "verify_signature",
]

logger = logging.getLogger(__name__)

SIGNATURE_HEADER = "X-Compliance-Signature"
EVENT_HEADER = "X-Compliance-Event"


def redact_url(url: str) -> str:
    """``url`` fit for messages and logs: a password in it and the values of its query parameters (tokens,
    keys, signatures) are replaced by ``***``; the user name, host, port and path are kept.

    >>> redact_url("https://bot:s3cret@hooks.example.com/x?token=abc&v=2")
    'https://bot:***@hooks.example.com/x?token=***&v=***'
    """
    from urllib.parse import parse_qsl, urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return "(an invalid URL)"
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        user, sep, _password = userinfo.partition(":")
        netloc = f"{user}{':***' if sep else ''}@{hostport}"
    query = "&".join(f"{k}=***" for k, _ in parse_qsl(parts.query, keep_blank_values=True))
    if parts.query and not query:
        query = "***"
    return urlunsplit((parts.scheme, netloc, parts.path, query, "***" if parts.fragment else ""))


def _scrub(text: str, url: str) -> str:
    """``text`` with ``url`` (and its secret parts) replaced by its redacted form."""
    from urllib.parse import urlsplit

    text = text.replace(url, redact_url(url))
    try:
        parts = urlsplit(url)
    except ValueError:
        return text
    if parts.password:
        text = text.replace(parts.password, "***")
    if parts.query:
        text = text.replace(parts.query, redact_url(url).partition("?")[2].partition("#")[0])
    return text


@dataclass(frozen=True, slots=True)
class WebhookConfig:
    """Where and how to post notifications.

    Attributes:
        url: the receiver (``http://`` or ``https://``).
        secret: HMAC key; when ``None`` no signature header is sent.
        timeout: seconds per attempt (connect + read).
        retries: extra attempts after the first one.
        backoff: seconds before the first retry; doubled for each further retry.
    """

    url: str = field(repr=False)
    secret: str | None = field(default=None, repr=False)
    timeout: float = 10.0
    retries: int = 3
    backoff: float = 0.5

    def __post_init__(self) -> None:
        if not self.url.startswith(("http://", "https://")):
            raise ConfigurationError(
                f"webhook url must start with http:// or https://, got {redact_url(self.url)!r}"
            )
        if self.retries < 0 or self.timeout <= 0 or self.backoff < 0:
            raise ConfigurationError("webhook retries/backoff must be >= 0 and timeout > 0")

    @classmethod
    def from_settings(cls, url: str | None = None, secret: str | None = None) -> WebhookConfig | None:
        """The configuration from explicit values, else ``COMPLIANCE_WEBHOOK_URL``/``_SECRET``; None if unset."""
        from compliance.settings import get_settings

        settings = get_settings()
        url = url or settings.webhook_url
        if not url:
            return None
        return cls(
            url=url,
            secret=secret if secret is not None else settings.webhook_secret,
            retries=settings.download_retries,
        )


@dataclass(frozen=True, slots=True)
class WebhookDelivery:
    """The outcome of a successful delivery."""

    status_code: int
    attempts: int
    errors: tuple[str, ...] = field(default=())


def encode_payload(payload: Mapping[str, Any]) -> bytes:
    """The exact bytes that are posted and signed (sorted keys, compact separators)."""
    return json.dumps(
        payload, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
    ).encode()


def sign_body(body: bytes, secret: str) -> str:
    """``sha256=<hex>``: HMAC-SHA256 of ``body`` keyed with ``secret``."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify_signature(body: bytes, secret: str, header: str | None) -> bool:
    """Constant-time check of a received signature header."""
    return header is not None and hmac.compare_digest(sign_body(body, secret), header)


def _retryable(status: int) -> bool:
    return status == 429 or status >= 500


def send_webhook(
    payload: Mapping[str, Any],
    config: WebhookConfig,
    *,
    event: str = "alerts.created",
    sleep: Callable[[float], None] = time.sleep,
) -> WebhookDelivery:
    """POST ``payload`` as signed JSON, retrying transient failures.

    Args:
        payload: JSON-serialisable mapping.
        config: receiver, secret and retry policy.
        event: sent in the ``X-Compliance-Event`` header.
        sleep: waits between attempts (tests pass a no-op).

    Returns:
        The status code and number of attempts of the successful delivery.

    Raises:
        NotificationError: the receiver answered a non-retryable 4xx, or every attempt failed.
    """
    import httpx

    body = encode_payload(payload)
    headers = {"Content-Type": "application/json; charset=utf-8", EVENT_HEADER: event}
    if config.secret:
        headers[SIGNATURE_HEADER] = sign_body(body, config.secret)
    errors: list[str] = []
    attempts = config.retries + 1
    with httpx.Client(timeout=config.timeout, follow_redirects=False) as client:
        for attempt in range(1, attempts + 1):
            try:
                response = client.post(config.url, content=body, headers=headers)
            except httpx.HTTPError as exc:  # connection refused, timeout, protocol error
                errors.append(_scrub(f"attempt {attempt}: {type(exc).__name__}: {exc}", config.url))
            else:
                if 200 <= response.status_code < 300:
                    return WebhookDelivery(response.status_code, attempt, tuple(errors))
                errors.append(f"attempt {attempt}: HTTP {response.status_code}")
                if not _retryable(response.status_code):
                    raise NotificationError(
                        f"webhook {redact_url(config.url)} rejected the notification with HTTP "
                        f"{response.status_code}; check the receiver's configuration (URL, secret)"
                    )
            if attempt < attempts:
                delay = config.backoff * (2 ** (attempt - 1))
                logger.info("webhook delivery failed (%s); retrying in %.2fs", errors[-1], delay)
                sleep(delay)
    raise NotificationError(
        f"webhook {redact_url(config.url)} could not be reached after {attempts} attempts: {'; '.join(errors)}"
    )
