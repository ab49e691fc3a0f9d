"""One exception hierarchy with stable codes.

Every error the package raises on purpose derives from :class:`ComplianceError`. Subclasses also inherit the
matching built-in (``ValueError``, ``LookupError`` …) so that callers who do not know this package still catch
them sensibly. The ``code`` is stable across releases: the CLI prints it, the HTTP API returns it.

Code ranges: C1xx configuration/installation, C2xx law corpus, C3xx connectors (documents), C4xx store,
C5xx models, C6xx retrieval/linking, C7xx alerts/notification, C8xx service (HTTP API, tokens, jobs).
"""

from __future__ import annotations

from typing import Any


class ComplianceError(Exception):
    """Root of all errors raised by the compliance package."""

    code: str = "C100"
    http_status: int = 500

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class ConfigurationError(ComplianceError, ValueError):
    """A setting or option has an invalid value."""

    code = "C101"
    http_status = 400


def require_weight(name: str, value: float) -> float:
    """``value`` as a float when it lies in (0, 1] — a weight that scales a score down, 1 leaving it as it is —
    else a :class:`ConfigurationError` that names the setting."""
    if not 0.0 < value <= 1.0:
        raise ConfigurationError(f"{name} must be in (0, 1], got {value}")
    return float(value)


class MissingDependencyError(ComplianceError, ImportError):
    """An optional extra is not installed."""

    code = "C102"
    http_status = 501

    @classmethod
    def for_extra(cls, extra: str, package: str) -> MissingDependencyError:
        return cls(
            f"this feature needs the '{extra}' extra ({package} is not installed); "
            f"install it with: pip install 'compliance-plugin[{extra}]'"
        )


class CorpusFormatError(ComplianceError, ValueError):
    """A law file could not be parsed: not XML, wrong schema, truncated, unsafe (external entities) …"""

    code = "C201"
    http_status = 422

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem

    def __reduce__(self) -> tuple[Any, ...]:  # raised in a worker process, unpickled in the parent
        return type(self), (self.source, self.problem)


class LawNotFoundError(ComplianceError, LookupError):
    """No law (or law pack) with the given identifier is known."""

    code = "C202"
    http_status = 404


class ChecksumMismatchError(ComplianceError, ValueError):
    """A downloaded or supplied law file does not have the checksum its law pack declares."""

    code = "C203"
    http_status = 422


class DownloadError(ComplianceError, OSError):
    """An official text could not be downloaded (network error, timeout, HTTP error, partial file)."""

    code = "C204"
    http_status = 502


class LawPackError(ComplianceError, ValueError):
    """A law pack (YAML) is malformed."""

    code = "C205"
    http_status = 422


class DocumentError(ComplianceError, ValueError):
    """A document could not be read (corrupt, encrypted, oversized, unsupported)."""

    code = "C301"
    http_status = 422

    def __init__(self, source: str, problem: str) -> None:
        super().__init__(f"{source}: {problem}")
        self.source = source
        self.problem = problem

    def __reduce__(self) -> tuple[Any, ...]:  # raised in a worker process, unpickled in the parent
        return type(self), (self.source, self.problem)


class UnsupportedFormatError(DocumentError):
    """The file type is not supported by any connector."""

    code = "C302"
    http_status = 415


class EncryptedDocumentError(DocumentError):
    """The document is password-protected or encrypted."""

    code = "C303"


class DocumentTooLargeError(DocumentError):
    """The document exceeds the configured size limits (or is a zip bomb)."""

    code = "C304"
    http_status = 413


class ParseTimeoutError(DocumentTooLargeError):
    """Reading the document took longer than the per-file time budget (``COMPLIANCE_PARSE_TIMEOUT``)."""

    code = "C305"


class ParseMemoryError(DocumentTooLargeError):
    """Reading the document needed more memory than the per-file budget (``COMPLIANCE_PARSE_MEMORY_MB``)."""

    code = "C306"


class ParserCrashError(DocumentError):
    """The worker process reading the document died (a crash in a parsing library); the batch goes on."""

    code = "C307"


class UnsafeDocumentError(DocumentError):
    """The document uses a construct refused for safety (a DTD or entity declaration, a link out of a
    folder tree, a file that is not a regular file)."""

    code = "C308"


class ParserUnavailableError(ComplianceError, RuntimeError):
    """The worker process that reads documents could not start (a broken installation: a parser library that
    fails to import). Not one document's fault: the batch stops at once instead of failing every file in turn."""

    code = "C309"
    http_status = 503


class StoreError(ComplianceError, RuntimeError):
    """The database could not be used (not reachable, not migrated, constraint violated)."""

    code = "C401"
    http_status = 500


class NotFoundError(ComplianceError, LookupError):
    """A stored object (document, run, link, alert …) does not exist."""

    code = "C402"
    http_status = 404


class ModelError(ComplianceError, RuntimeError):
    """A model could not be loaded, trained or applied."""

    code = "C501"
    http_status = 500


class ModelNotFoundError(ModelError, LookupError):
    """No trained model exists where one was expected."""

    code = "C502"
    http_status = 404


class RetrievalError(ComplianceError, RuntimeError):
    """An index could not be built, loaded or queried."""

    code = "C601"
    http_status = 500


class NotificationError(ComplianceError, RuntimeError):
    """A notification (webhook) could not be delivered after its retries."""

    code = "C701"
    http_status = 502


class ReviewImportError(ComplianceError, ValueError):
    """A filled-in review file (spreadsheet) has bad rows; nothing of it was applied.

    ``problems`` lists every bad row: ``(row number, link id or None, what is wrong)``.
    """

    code = "C410"
    http_status = 422

    def __init__(self, source: str, problems: list[tuple[int, int | None, str]]) -> None:
        lines = [
            f"row {row}" + (f" (link {link})" if link is not None else "") + f": {what}"
            for row, link, what in problems
        ]
        super().__init__(
            f"{source}: {len(problems)} bad row(s), nothing was applied:\n  " + "\n  ".join(lines)
        )
        self.source = source
        self.problems = problems

    def __reduce__(self) -> tuple[Any, ...]:
        return type(self), (self.source, self.problems)


class AuthenticationError(ComplianceError, PermissionError):
    """No API token, or one that is unknown or revoked."""

    code = "C801"
    http_status = 401


class PermissionDeniedError(ComplianceError, PermissionError):
    """The API token's role does not allow this action."""

    code = "C802"
    http_status = 403


class InvalidRequestError(ComplianceError, ValueError):
    """An HTTP request is malformed: a missing or invalid parameter, a body that does not match its schema."""

    code = "C803"
    http_status = 422


class MethodNotAllowedError(ComplianceError, ValueError):
    """The HTTP method is not allowed on this route."""

    code = "C804"
    http_status = 405


class ConflictError(ComplianceError, ValueError):
    """The request conflicts with what is stored (a token name already in use, a job already finished …)."""

    code = "C805"
    http_status = 409


class UnsupportedMediaTypeError(ComplianceError, ValueError):
    """An HTTP request body has a content type this route does not accept."""

    code = "C806"
    http_status = 415


class RequestTooLargeError(ComplianceError, ValueError):
    """An HTTP request body is larger than the configured limit."""

    code = "C807"
    http_status = 413


class QueueUnavailableError(ComplianceError, RuntimeError):
    """The job queue (the Celery broker) cannot be reached: jobs cannot be submitted."""

    code = "C808"
    http_status = 503
