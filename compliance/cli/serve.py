"""``compliance serve``: the HTTP API and the web review page (Uvicorn)."""

from __future__ import annotations

import click

from compliance.cli.options import database_option


@click.command("serve")
@click.option("--host", default="127.0.0.1", show_default=True, help="Interface to listen on.")
@click.option("--port", type=click.IntRange(1, 65535), default=8000, show_default=True, help="TCP port.")
@click.option(
    "--broker",
    "broker_url",
    envvar="COMPLIANCE_BROKER_URL",
    default=None,
    help="Celery broker for audit jobs (default: COMPLIANCE_BROKER_URL; none: jobs run in this process).",
)
@click.option("--log-level", default="info", show_default=True, help="Uvicorn's log level.")
@database_option
def serve_command(
    host: str, port: int, broker_url: str | None, log_level: str, database_url: str | None
) -> None:
    """Serve the HTTP API (/api/v1, OpenAPI at /api/v1/openapi.json) and the web review page (/ui)."""
    from compliance.errors import MissingDependencyError

    try:
        import uvicorn
    except ImportError as e:
        raise MissingDependencyError.for_extra("api", "uvicorn") from e
    from compliance.api import create_app
    from compliance.app import open_store
    from compliance.workers.inprocess import job_dispatcher

    store = open_store(database_url)
    app = create_app(store, dispatcher=job_dispatcher(store, broker_url=broker_url))
    app.state.services.owns_dispatcher = True
    mode = app.state.services.mode
    click.echo(
        f"compliance API on http://{host}:{port} (jobs: {mode}; web page /ui/, OpenAPI /api/v1/openapi.json)",
        err=True,
    )
    uvicorn.run(app, host=host, port=port, log_level=log_level)
