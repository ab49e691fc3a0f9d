"""Who a provision obliges (compliance.rules.addressees): the regulated organisations, or only public bodies."""

from __future__ import annotations

from pathlib import Path

import pytest

from compliance.rules.addressees import (
    addresses_public_bodies,
    duty_holders,
    established_bodies,
    is_public_body,
    obliges_public_bodies_only,
    provision_duty_text,
)


@pytest.mark.parametrize(
    ("text", "public"),
    [
        # a regulation names its addressee
        ("The controller shall implement appropriate technical and organisational measures.", False),
        ("Each supervisory authority shall have all of the following investigative powers.", True),
        ("The Board shall adopt its own rules of procedure by a two-thirds majority.", True),
        # a directive addresses the Member States, which pass the duty on or keep it
        (
            "Member States shall ensure that essential and important entities take appropriate measures.",
            False,
        ),
        (
            "Member States shall ensure that their competent authorities effectively supervise compliance.",
            True,
        ),
        ("Each Member State shall designate or establish a single point of contact.", True),
        (
            "Member States shall require the entities referred to in that paragraph to submit information.",
            False,
        ),
        (
            "Member States shall provide by law for the controller to give the data subject information.",
            False,
        ),
        ("Member States shall provide for the controller to implement appropriate measures.", False),
        # the subject's head decides, not a body named inside it
        ("The competent authorities referred to in paragraph 1 shall monitor the implementation.", True),
        (
            "The free movement of personal data within the Union shall be neither restricted nor prohibited.",
            False,
        ),
        ("At the request of the CSIRT, the single point of contact shall forward notifications.", True),
        # a phrase set off by commas between the subject and its verb is not the subject
        ("Member States, in accordance with national law, shall lay down the rules on penalties.", True),
        (
            "The Cooperation Group, in cooperation with the Commission and ENISA, may carry out coordinated "
            "security risk assessments.",
            True,
        ),
        (
            "ENISA, in cooperation with Member States, and, where appropriate, after consulting relevant "
            "stakeholders, shall draw up advice and guidelines.",
            True,
        ),
        ("The controller, where proportionate, shall implement appropriate data protection policies.", False),
        # … but a pronoun's antecedent is in the clause before it, whatever that clause's first word
        (
            "Where a Member State designates more than one authority, it shall indicate which of them is the "
            "coordinator.",
            True,
        ),
        # "25 May 2018" is a date, not a permission whose subject would be "… by 25"
        (
            "Each Member State shall notify to the Commission those provisions of its law which it adopts pursuant "
            "to paragraph 1, by 25 May 2018 and, without delay, any subsequent amendment affecting them.",
            True,
        ),
        (
            "The monitoring of compliance with a code of conduct pursuant to Article 40 may be carried out by a body "
            "which is accredited for that purpose.",
            False,
        ),
        # UK acts name their public bodies the same way
        ("The Commissioner may, by written notice, require the controller to provide information.", True),
        ("The Secretary of State may by regulations make provision about the fees.", True),
        ("A controller must not charge a fee for a subject access request.", False),
        # a firm's board is not the Board
        ("The management board of the investment firm shall approve the policy.", False),
        # a clause that goes on from the one before keeps its holder
        (
            "The measures referred to in paragraph 1 shall be based on an all-hazards approach, and shall include "
            "at least the following.",
            False,
        ),
        ("The CSIRTs shall cooperate with one another, and may exchange relevant information.", True),
        # mixed holders: not only public bodies
        ("The CSIRT shall provide a response. The entity concerned shall submit a final report.", False),
        # the holder after "ensure that" cannot be read: not taken for a public body
        (
            "Member States shall ensure that, when considering which measures are appropriate, those entities take "
            "into account the vulnerabilities.",
            False,
        ),
        # in the passive, the agent holds the duty
        (
            "The CSIRT shall reply. Where it is not the recipient, the guidance shall be provided by the competent "
            "authority.",
            True,
        ),
        ("Incidents shall be reported by the entities concerned within 24 hours.", False),
        # a subject that points back to what an earlier clause spoke of has that clause's holder
        (
            "The CSIRTs shall carry out proactive scanning of network and information systems. Such scanning shall "
            "be carried out to detect vulnerable devices. Those results may be shared.",
            True,
        ),
        (
            "The Commission shall adopt implementing acts. Those implementing acts shall be adopted in accordance "
            "with the examination procedure.",
            True,
        ),
        # one misread clause ("as the case may be" read as a clause held by "as the case") does not decide
        (
            "The lead supervisory authority shall adopt the decision and notify it to the main establishment, as "
            "the case may be. The lead supervisory authority shall inform the Board of the decision.",
            True,
        ),
        # ... but the first clause states the main duty
        (
            "The controller shall consult the supervisory authority prior to processing. The supervisory authority "
            "shall provide written advice. The supervisory authority may use any of its powers.",
            False,
        ),
        # no modal clause: nothing to read
        ("'incident' means an event compromising the availability of data.", False),
        # the last item of an inserted phrase's list is not the subject ("…, and, where necessary, relevant
        # stakeholders, shall"), and a relative clause ("… products that may be subject to …") has no holder of its
        # own (session 39: NIS2 Art. 22(2) was read as the stakeholders' duty)
        (
            "The Commission, after consulting the Cooperation Group and ENISA, and, where necessary, relevant "
            "stakeholders, shall identify the specific critical ICT services, ICT systems or ICT products that may "
            "be subject to the coordinated security risk assessment.",
            True,
        ),
        (
            "The controller, after consulting the data protection officer and, where appropriate, the processor, "
            "shall carry out an assessment.",
            False,
        ),
        # a passive without an agent names who receives or what undergoes the act, not who must act (session 42:
        # NIS2 Art. 12(2), ENISA's vulnerability database, was read as the stakeholders' duty) …
        (
            "ENISA shall develop and maintain a European vulnerability database. ENISA shall adopt the necessary "
            "measures. All stakeholders shall be provided access to the information in the database. Suppliers "
            "shall be granted a way to register vulnerabilities.",
            True,
        ),
        ("Personal data shall be processed lawfully. The controller shall be able to demonstrate it.", False),
        # … unless its subject is itself a public body
        ("The Commission shall be empowered to adopt delegated acts.", True),
        ("The Cooperation Group shall be composed of representatives of Member States.", True),
        # a pronoun after a condition points back to the condition's subject, however many commas follow it
        (
            "Where the competent authorities become aware in the course of supervision that the infringement by "
            "an essential entity, as defined in Article 4, point (12), of Regulation (EU) 2016/679, which is to be "
            "notified, can entail a personal data breach, they shall inform the supervisory authorities.",
            True,
        ),
        ("If the controller cannot identify the data subject, it shall inform the data subject.", False),
        # a second predicate of the same subject: the phrase before "and shall" is the first one's object
        (
            "ENISA shall adopt, in cooperation with the Commission, a biennial report on the state of "
            "cybersecurity in the Union and shall present that report to the European Parliament.",
            True,
        ),
        ("The controller shall keep a record of processing activities and shall make it available.", False),
    ],
)
def test_who_a_provision_obliges(text: str, public: bool) -> None:
    assert addresses_public_bodies(text) is public, duty_holders(text)


def test_a_second_predicate_has_the_subject_of_the_first() -> None:
    """ "X shall A and shall B": B's subject is X as written, and a duty X passes on in A ("shall ensure that
    such fees are …") does not make the fees B's holder."""
    assert duty_holders(
        "Member States shall ensure that such fees are objectively justified and shall take into account "
        "the general objectives of this Directive."
    ) == [("such fees are objectively justified", False), ("Member States", True)]
    assert duty_holders(
        "The CSIRT shall ensure that follow-up action is carried out, and shall ensure that the reporting person "
        "is protected."
    ) == [("follow-up action is carried out", False), ("the reporting person is protected", False)]
    # a passive without an agent has no holder, nor has the predicate joined to it
    assert (
        duty_holders(
            "Payment institutions which comply shall be granted authorisation and shall be entered in the registers."
        )
        == []
    )


def test_public_bodies_are_read_from_the_head_of_the_subject() -> None:
    assert is_public_body("the lead supervisory authority")
    assert is_public_body("ENISA") and is_public_body("their CSIRTs")
    assert is_public_body("the Commission") and not is_public_body("the commission paid to the broker")
    assert not is_public_body("essential and important entities")
    assert not is_public_body("the provider of a publicly available electronic communications service")
    assert duty_holders("Where a supervisory authority requests it, the processor shall assist.") == [
        ("the processor", False)
    ]


def test_nis2_obligations_of_entities_and_of_the_state(shared_data: Path) -> None:
    """On the real NIS2 Directive: the entities' risk-management and reporting duties (Art. 21, 23(1)) oblige
    the entities, a point is read with the paragraph that introduces it; the CSIRTs' and the single point of
    contact's tasks, the Commission's and the Member States' own duties do not."""
    from compliance.rules import load_law_file

    nis2 = load_law_file(shared_data / "laws" / "eu" / "nis2.json")

    def public(key: str) -> bool:
        return obliges_public_bodies_only(nis2, key)

    for key in (
        "art:21/par:1",
        "art:21/par:2",
        "art:21/par:2/pt:c",
        "art:21/par:2/pt:j",
        "art:23/par:1",
        "art:20/par:1",
        "art:3/par:4/pt:b",
    ):
        assert not public(key), (key, duty_holders(provision_duty_text(nis2, key)))
    for key in (
        "art:10/par:4",
        "art:23/par:8",
        "art:23/par:9",
        "art:8/par:2",
        "art:7/par:3",
        "art:4/par:3",
        "art:32/par:8",
        "art:11/par:3/pt:h",  # the CSIRTs' tasks: "… Such scanning shall be carried out …"
        "art:36",  # penalties: "Member States shall lay down rules … The penalties provided for shall …"
        "art:22/par:2",  # "The Commission, after consulting …, and, where necessary, relevant stakeholders, shall"
        # the supervisory powers: "… shall ensure that the competent authorities … have the power to subject those
        # entities at least to: (d) security scans …"; the paragraph's later sentence on the audited entity's
        # costs is not the point's business
        "art:32/par:2/pt:a",
        "art:32/par:2/pt:d",
        "art:18/par:1",  # ENISA's biennial report: "ENISA shall adopt … a biennial report … and shall present"
        "art:18/par:1/pt:c",
    ):
        assert public(key), (key, duty_holders(provision_duty_text(nis2, key)))
    assert not public("art:32/par:2")  # the paragraph as a whole also obliges the audited entity
    # the bodies the act sets up are public bodies: "EU-CyCLONe is established …" (its tasks are the state's
    # business), "a Cooperation Group is established"; "the representative is established in …" sets up nothing
    assert established_bodies(nis2) == ("Cooperation Group", "network of national CSIRTs", "EU-CyCLONe")
    for key in ("art:16/par:3/pt:c", "art:16/par:4", "art:12/par:2", "art:35/par:1"):
        assert public(key), (key, duty_holders(provision_duty_text(nis2, key), established_bodies(nis2)))
    # a point without a modal clause of its own is read with the words that introduce its list
    lead, point = provision_duty_text(nis2, "art:21/par:2/pt:c").split("\n")
    assert nis2.text_of("art:21/par:2").startswith(lead) and lead.endswith("at least the following:")
    assert point == nis2.text_of("art:21/par:2/pt:c")
    articles = [p.key for p in nis2.provisions if p.kind == "paragraph" and p.key.startswith("art:")]
    share = sum(public(k) for k in articles) / len(articles)
    assert 0.2 < share < 0.6, share  # NIS2 is largely about what the state does


def test_the_board_the_gdpr_establishes_is_a_public_body(shared_data: Path) -> None:
    """The GDPR's "European Data Protection Board (the ‘Board’) is hereby established …": both names count; the
    controller and processor, "established in" a Member State, do not."""
    from compliance.rules import load_law_file

    gdpr = load_law_file(shared_data / "laws" / "eu" / "gdpr.json")
    bodies = established_bodies(gdpr)
    assert bodies == ("European Data Protection Board", "Board")
    assert is_public_body("the Board", bodies)
    assert not is_public_body("the controller or processor", bodies)
    assert not is_public_body("the board of directors of the processor", bodies)  # as written: not the Board
    assert obliges_public_bodies_only(gdpr, "art:71/par:1")  # "The Board shall draw up an annual report …"
    assert not obliges_public_bodies_only(gdpr, "art:32/par:1")


def test_articles_that_frame_the_act_oblige_nobody() -> None:
    from compliance.rules.addressees import defines_terms, frames_the_act

    assert defines_terms("Definitions") and frames_the_act("Definitions")
    assert frames_the_act("Subject-matter and objectives") and frames_the_act("Material scope")
    assert not defines_terms("Material scope") and not defines_terms(None)
    assert not frames_the_act("Security of processing") and not frames_the_act(None)


def test_an_acts_final_provisions_frame_it_read_from_their_titles(shared_data: Path) -> None:
    """The articles EU drafting puts at an act's end — amending or repealing another act, entry into force,
    addressees, transposition, the Commission's delegated and implementing powers — frame the act; an article that
    amends something else than an act ("Amendment of rights and obligations", the EECC's Art. 18) does not. In the
    mirror's nine acts: 55 such articles, NIS2's last nine but Art. 40 (Review, the Commission's duty, read so by its
    clauses)."""
    import glob

    from compliance.rules import load_law_file
    from compliance.rules.addressees import frames_the_act, is_final_provision

    for title in (
        "Amendment of Regulation (EU) No 910/2014",
        "Amendments to Directive 2002/65/EC",
        "Amendment to Regulation (EC) No 1060/2009",
        "Repeal",
        "Repeal of Framework Decision 2008/977/JHA",
        "Entry into force and application",
        "Addressees",
        "Transposition",
        "Committee procedure",
        "Exercise of the delegation",
    ):
        assert is_final_provision(title) and frames_the_act(title), title
    for title in ("Amendment of rights and obligations", "Security of processing", "Review", None, ""):
        assert not is_final_provision(title), title
    laws = [load_law_file(Path(f)) for f in sorted(glob.glob(str(shared_data / "laws" / "eu" / "*.json")))]
    final = {law.short_name: [a.number for a in law.articles if is_final_provision(a.title)] for law in laws}
    assert final["nis2"] == ["38", "39", "41", "42", "43", "44", "45", "46"]
    assert final["gdpr"] == ["92", "93", "94", "99"]
    if len(laws) == 9:
        assert sum(map(len, final.values())) == 55
