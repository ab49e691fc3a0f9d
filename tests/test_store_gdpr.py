"""Integration: the real GDPR (official Formex XML from ../shared/data) survives a store round trip."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.rules.corpus import Law
from compliance.store import Store


@pytest.fixture(scope="module")
def gdpr(gdpr_xml: Path) -> Law:
    from compliance.rules import install_pack

    return install_pack("gdpr", from_path=gdpr_xml)


def test_gdpr_round_trip(store: Store, gdpr: Law) -> None:
    saved = store.save_law(gdpr)
    assert saved.created and saved.provision_count == len(gdpr.provisions)
    reloaded = store.get_law("gdpr")
    assert reloaded == gdpr  # every provision, in order, with parents, titles, texts and metadata
    assert len(reloaded.articles) == 99 and len(reloaded.recitals) == 173
    assert reloaded.text_of("art:32") == gdpr.text_of("art:32")
    assert store.law_record("32016R0679").counts["article"] == 99
    ids = store.provision_id_map(saved.id)
    assert len(ids) == len(gdpr.provisions) and len(set(ids.values())) == len(ids)
    assert not store.save_law(gdpr).created
