"""Deployment settings (environment prefix ``COMPLIANCE_``), read lazily through :func:`get_settings`.

Pipeline choices (thresholds, BM25 parameters …) are not settings: they are typed config objects stored with
every artifact and run.
"""

from __future__ import annotations

import os
from functools import lru_cache
from pathlib import Path
from typing import Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_home() -> Path:
    return Path(os.environ.get("XDG_DATA_HOME", Path.home() / ".local" / "share")) / "compliance"


class Settings(BaseSettings):
    """Where things live and what hardware to use."""

    model_config = SettingsConfigDict(env_prefix="COMPLIANCE_", env_file=None, extra="ignore")

    home: Path = Field(default_factory=_default_home, description="Root for data, models and indexes.")
    database_url: str | None = Field(
        default=None, description="SQLAlchemy URL; default sqlite:///<home>/compliance.db."
    )
    law_mirror: Path | None = Field(
        default=None,
        description="A local directory mirroring official law files (checked before downloading).",
    )
    shared_data: Path | None = Field(
        default=None,
        description="Development data (../shared/data): GDPRhub dev set, mappings. Optional.",
    )
    model_dir: Path | None = Field(default=None, description="Trained models; default <home>/models.")
    index_dir: Path | None = Field(default=None, description="Retrieval indexes; default <home>/indexes.")
    device: str = Field(default="auto", description="auto, cpu, cuda or cuda:N.")
    bf16: Literal["auto", "true", "false"] = Field(
        default="auto",
        description="bf16 autocast: auto (on CUDA with bf16 and on CPUs with AVX512-BF16/AMX), true or false "
        "(force fp32, e.g. to reproduce what a CPU without native bf16 gets).",
    )
    progress: Literal["auto", "bars", "summary", "off"] = Field(
        default="auto",
        description="Progress of the command line on stderr: auto (bars on a terminal, else one summary line per "
        "stage), bars, summary or off.",
    )
    shipped_models: bool = Field(
        default=True,
        description="Use the models shipped inside the package (the default GDPR classifier, the link "
        "decision's calibration) when the model directory has none of its own.",
    )
    download_timeout: float = Field(default=60.0, description="Seconds per HTTP request.")
    download_retries: int = Field(default=3, ge=0, le=10)
    max_document_bytes: int = Field(default=50 * 1024 * 1024, description="Largest accepted document.")
    parse_isolation: Literal["process", "inline"] = Field(
        default="process",
        description="Read untrusted documents in a worker process with time and memory budgets (process), "
        "or in the calling process with a time budget only (inline: tests, embedding).",
    )
    parse_timeout: float = Field(default=120.0, gt=0, description="Seconds one document may take to read.")
    parse_workers: int = Field(
        default=0,
        ge=0,
        le=64,
        description="Worker processes reading documents side by side in a batch (process isolation); 0: half "
        "the CPU cores this process may use, at most 8 (one on a two-core machine, where the encoder needs the "
        "other core).",
    )
    role_window: int = Field(
        default=100,
        ge=2,
        le=10_000,
        description="Documents whose paragraph roles are decided together (a line repeated at the page edges of "
        "most of them is page furniture); a batch is read window by window, which bounds its memory.",
    )
    audit_processes: int = Field(
        default=0,
        ge=0,
        le=64,
        description="Processes an audit shares its documents among, each with its own copy of the classifier on "
        "the same device; 0 (auto): on a GPU half the CPU cores, at most 8, where the Python around the forward "
        "bounds the audit; on a CPU one (this process alone), where the forward needs the cores "
        "(docs/performance.md).",
    )
    parse_memory_mb: int = Field(
        default=1536, ge=64, description="Address space (MiB) one document may add to the worker process."
    )
    sqlite_busy_timeout: float = Field(
        default=60.0, ge=0, description="Seconds a SQLite writer waits for the write lock before failing."
    )
    webhook_url: str | None = Field(default=None, description="Alert notifications: JSON POST to this URL.")
    webhook_secret: str | None = Field(
        default=None, description="HMAC-SHA256 key for the X-Compliance-Signature header of webhook posts."
    )

    broker_url: str | None = Field(
        default=None,
        description="Celery broker for scale-out jobs (e.g. redis://127.0.0.1:6379/0); none: jobs run in-process.",
    )
    queue: str = Field(default="compliance", description="The Celery queue audit jobs go to.")
    job_threads: int = Field(default=1, ge=1, le=64, description="In-process job threads (no broker).")
    job_lease_seconds: float = Field(
        default=120.0,
        gt=0,
        description="A running job item's lease; renewed while its worker lives, taken over when it expires.",
    )
    broker_visibility_timeout: int = Field(
        default=3600, ge=1, description="Seconds before the broker re-delivers a task nobody acknowledged."
    )
    max_request_bytes: int = Field(
        default=10 * 1024 * 1024, description="Largest accepted JSON request body of the HTTP API."
    )

    @field_validator("bf16", mode="before")
    @classmethod
    def _bf16_words(cls, value: object) -> object:
        words = {"1": "true", "yes": "true", "on": "true", "0": "false", "no": "false", "off": "false"}
        text = str(value).strip().lower() if isinstance(value, str | bool) else value
        if isinstance(value, bool):
            return "true" if value else "false"
        return words.get(text, text) if isinstance(text, str) else text

    @property
    def resolved_database_url(self) -> str:
        if self.database_url:
            return self.database_url
        return f"sqlite:///{self.home / 'compliance.db'}"

    @property
    def resolved_model_dir(self) -> Path:
        return self.model_dir or self.home / "models"

    @property
    def resolved_index_dir(self) -> Path:
        return self.index_dir or self.home / "indexes"

    def resolved_shared_data(self) -> Path | None:
        """The development data folder: the setting, else ``../shared/data`` next to the working directory."""
        if self.shared_data is not None:
            return self.shared_data
        for base in (Path.cwd(), *Path.cwd().parents[:2]):
            candidate = base / ".." / "shared" / "data"
            if candidate.is_dir():
                return candidate.resolve()
        return None


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The process-wide settings, read once from the environment."""
    return Settings()


def reset_settings() -> None:
    """Forget cached settings (tests change the environment)."""
    get_settings.cache_clear()
