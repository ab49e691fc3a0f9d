"""Alerts and acknowledgements in the store (mixed into :class:`~compliance.store.Store`)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from compliance.errors import NotFoundError, StoreError
from compliance.store.base import StoreBase, _chunks
from compliance.store.records import AcknowledgementRecord, AlertRecord, NewAlert, to_jsonable

if TYPE_CHECKING:
    from sqlalchemy.orm import Session


class AlertsMixin(StoreBase):
    """Alerts raised by runs when a law arrives, and their acknowledgements."""

    # -- alerts ----------------------------------------------------------------------------------------------
    def add_alerts(self, run_id: int, alerts: Iterable[NewAlert], *, actor: str | None = None) -> int:
        """Store the alerts raised by a run (status ``open``); returns how many. All or nothing."""
        from sqlalchemy import insert

        from compliance.store.orm import AlertRow, RunRow, utcnow

        now = utcnow()
        rows = [
            {
                "run_id": run_id,
                "law_id": int(a.law_id),
                "provision_id": None if a.provision_id is None else int(a.provision_id),
                "paragraph_id": int(a.paragraph_id),
                "score": float(a.score),
                "rank": None if a.rank is None else int(a.rank),
                "evidence": to_jsonable(dict(a.evidence)),
                "status": "open",
                "created_at": now,
            }
            for a in alerts
        ]
        with self.session() as s:
            if s.get(RunRow, run_id) is None:
                raise NotFoundError(f"no run {run_id}")
            if rows:
                self._check_ids(s, "law", {r["law_id"] for r in rows})
                self._check_ids(s, "paragraph", {r["paragraph_id"] for r in rows})
                provisions = {r["provision_id"] for r in rows if r["provision_id"] is not None}
                if provisions:
                    self._check_ids(s, "provision", provisions)
                s.execute(insert(AlertRow), rows)
            self._log(
                s,
                "alerts.add",
                actor=actor,
                target_type="run",
                target_id=run_id,
                details={"count": len(rows)},
            )
        return len(rows)

    def _alerts(self, s: Session, *conditions: Any) -> list[AlertRecord]:
        from sqlalchemy import select

        from compliance.store.orm import (
            AlertAcknowledgementRow,
            AlertRow,
            Document,
            DocumentVersion,
            LawRow,
            ParagraphRow,
            ProvisionRow,
        )

        stmt = (
            select(
                AlertRow,
                LawRow.short_name,
                LawRow.version,
                ProvisionRow.key,
                Document.id,
                Document.source,
                ParagraphRow.text,
            )
            .join(LawRow, AlertRow.law_id == LawRow.id)
            .outerjoin(ProvisionRow, AlertRow.provision_id == ProvisionRow.id)
            .join(ParagraphRow, AlertRow.paragraph_id == ParagraphRow.id)
            .join(DocumentVersion, ParagraphRow.version_id == DocumentVersion.id)
            .join(Document, DocumentVersion.document_id == Document.id)
            .where(*conditions)
            .order_by(AlertRow.id)
        )
        rows = s.execute(stmt).all()
        acks: dict[int, list[AcknowledgementRecord]] = {r[0].id: [] for r in rows}
        for chunk in _chunks(list(acks)):
            ack_stmt = (
                select(AlertAcknowledgementRow)
                .where(AlertAcknowledgementRow.alert_id.in_(chunk))
                .order_by(AlertAcknowledgementRow.id)
            )
            for a in s.scalars(ack_stmt):
                acks[a.alert_id].append(
                    AcknowledgementRecord(a.id, a.alert_id, a.by, a.comment, a.at, a.status)
                )
        return [
            AlertRecord(
                id=a.id,
                run_id=a.run_id,
                law_id=a.law_id,
                law_short_name=short_name,
                law_version=law_version,
                provision_id=a.provision_id,
                provision_key=provision_key,
                paragraph_id=a.paragraph_id,
                document_id=document_id,
                document_source=source,
                paragraph_text=text,
                score=a.score,
                rank=a.rank,
                evidence=dict(a.evidence or {}),
                status=a.status,
                created_at=a.created_at,
                acknowledgements=tuple(acks[a.id]),
            )
            for a, short_name, law_version, provision_key, document_id, source, text in rows
        ]

    def list_alerts(
        self, status: str | None = None, law: str | int | None = None, run_id: int | None = None
    ) -> list[AlertRecord]:
        """Alerts, oldest first; ``status`` ``open``, ``acknowledged``, ``dismissed`` or ``resolved``; ``law`` a
        short name, identifier or id."""
        from sqlalchemy import or_

        from compliance.store.orm import ALERT_STATUSES, AlertRow, LawRow

        conditions: list[Any] = []
        if status is not None:
            if status not in ALERT_STATUSES:
                raise StoreError(f"invalid alert status {status!r}; expected one of {ALERT_STATUSES}")
            conditions.append(AlertRow.status == status)
        if law is not None:
            if isinstance(law, int):
                conditions.append(AlertRow.law_id == law)
            else:
                conditions.append(or_(LawRow.short_name == law.lower(), LawRow.identifier == law))
        if run_id is not None:
            conditions.append(AlertRow.run_id == run_id)
        with self.session() as s:
            return self._alerts(s, *conditions)

    def get_alert(self, alert_id: int) -> AlertRecord:
        """An alert with its acknowledgements. Raises :class:`~compliance.errors.NotFoundError`."""
        from compliance.store.orm import AlertRow

        with self.session() as s:
            found = self._alerts(s, AlertRow.id == alert_id)
        if not found:
            raise NotFoundError(f"no alert {alert_id}")
        return found[0]

    def acknowledge_alert(self, alert_id: int, by: str, comment: str | None = None) -> AlertRecord:
        """Acknowledge an alert: appends a history row and sets its status to ``acknowledged``.

        Acknowledging again adds another row (the history is kept); the status stays ``acknowledged``.
        """
        return self.set_alert_status(alert_id, "acknowledged", by, comment)

    def set_alert_status(
        self, alert_id: int, status: str, by: str, comment: str | None = None
    ) -> AlertRecord:
        """Change an alert's status — ``acknowledged`` (seen, being handled), ``dismissed`` (a false
        positive), ``resolved`` (the control was updated) or ``open`` (reopened) — appending a history row
        with who, when and why.

        Raises:
            NotFoundError: no such alert.
            StoreError: an unknown status or an empty name.
        """
        from compliance.store.orm import ALERT_STATUSES, AlertAcknowledgementRow, AlertRow

        if status not in ALERT_STATUSES:
            raise StoreError(f"invalid alert status {status!r}; expected one of {ALERT_STATUSES}")
        if not by or not by.strip():
            raise StoreError("an alert status change needs a name (by=)")
        action = {"acknowledged": "acknowledge", "dismissed": "dismiss", "resolved": "resolve"}.get(
            status, "reopen"
        )
        with self.session() as s:
            row = s.get(AlertRow, alert_id)
            if row is None:
                raise NotFoundError(f"no alert {alert_id}")
            s.add(AlertAcknowledgementRow(alert_id=alert_id, status=status, by=by.strip(), comment=comment))
            previous, row.status = row.status, status
            s.flush()
            self._log(
                s,
                f"alert.{action}",
                actor=by.strip(),
                target_type="alert",
                target_id=alert_id,
                details={"comment": comment, "status": status, "previous": previous},
            )
        return self.get_alert(alert_id)
