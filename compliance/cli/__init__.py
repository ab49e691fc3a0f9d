"""The ``compliance`` command line: a thin front end over library functions.

Subcommands live in their own modules and are imported only when invoked, so ``compliance --help`` stays fast
and loads no torch, transformers, FastAPI or database engine. To add a command, add one line to ``COMMANDS``.
"""

from __future__ import annotations

import logging
import sys
from importlib import import_module
from typing import Any

import click

from compliance.errors import ComplianceError

#: command name -> (module, attribute, one-line help shown by ``compliance --help``)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "ingest": ("compliance.cli.ingest", "ingest", "Ingest documents (files or folders) into the store."),
    "laws": ("compliance.cli.laws", "laws", "Install, add, list and show laws."),
    "documents": ("compliance.cli.documents", "documents", "List and show stored documents."),
    "roles": ("compliance.cli.roles", "roles", "Train and evaluate the paragraph role model."),
    "db": ("compliance.cli.db", "db", "Database administration (migrations)."),
    "train": ("compliance.cli.train", "train_command", "Train the GDPR article classifier."),
    "calibrate": (
        "compliance.cli.calibrate",
        "calibrate_command",
        "Refit the classifier's temperature and review band on reviews.",
    ),
    "evaluate": (
        "compliance.cli.evaluate",
        "evaluate_command",
        "Evaluate the classifier beside its baselines.",
    ),
    "map": ("compliance.cli.map", "map_command", "Map texts (JSONL or --text) to ranked GDPR articles."),
    "audit": ("compliance.cli.audit", "audit_command", "Ingest documents, link paragraphs to GDPR articles."),
    "alerts": ("compliance.cli.alerts", "alerts", "List, show and acknowledge alerts raised by new laws."),
    "runs": ("compliance.cli.runs", "runs", "List runs (ingest, audit, law installs …); reap killed ones."),
    "links": ("compliance.cli.links", "links", "List, review, export and import links; diff two runs."),
    "report": ("compliance.cli.report", "report_command", "Coverage and gap report (HTML, XLSX, JSON)."),
    "search": (
        "compliance.cli.search",
        "search",
        "Control text/document → laws and provisions; law → controls.",
    ),
    "serve": ("compliance.cli.serve", "serve_command", "Serve the HTTP API and the web review page."),
    "worker": ("compliance.cli.worker", "worker_command", "Run audit jobs from the queue (Celery worker)."),
    "tokens": ("compliance.cli.tokens", "tokens", "Create, list and revoke API tokens."),
    "jobs": ("compliance.cli.jobs", "jobs", "Audit jobs: one task per document; list and show them."),
}


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        entry = COMMANDS.get(cmd_name)
        if entry is None:
            return None
        module_name, attr, _ = entry
        command = getattr(import_module(module_name), attr)
        if not isinstance(command, click.Command):  # pragma: no cover - programming error
            raise TypeError(f"{module_name}.{attr} is not a click command")
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except ComplianceError as exc:
            from compliance.cli.options import echo_error

            echo_error(str(exc), exc.code)
            ctx.exit(1)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="compliance-plugin", prog_name="compliance")
@click.option("-v", "--verbose", count=True, help="More log output on stderr (-v info, -vv debug).")
@click.option("-q", "--quiet", is_flag=True, help="No progress bars.")
def cli(verbose: int, quiet: bool) -> None:
    """Map internal policies and controls to the laws they implement, and keep the links for review."""
    level = logging.WARNING - 10 * min(verbose, 2)
    handler = logging.StreamHandler(sys.stderr)
    # the level sits on the handler too: some libraries (bm25s) set their own loggers to DEBUG at import
    handler.setLevel(level)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=level, handlers=[handler])
    if not quiet:
        from compliance.progress import enable_progress
        from compliance.settings import get_settings

        # bars on a terminal only (a redirected log would get one endless line of carriage returns): elsewhere one
        # summary line per stage (COMPLIANCE_PROGRESS chooses otherwise)
        mode = get_settings().progress
        if mode == "auto":
            mode = "bars" if sys.stderr.isatty() else "summary"
        enable_progress(
            mode == "bars", summary=(lambda line: click.echo(line, err=True)) if mode == "summary" else None
        )


def main() -> None:
    """Console-script entry point."""
    cli(prog_name="compliance")
