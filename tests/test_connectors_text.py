"""Plain text, Markdown and HTML connectors."""

from __future__ import annotations

import pytest

from compliance.connectors import parse_bytes
from compliance.errors import DocumentError
from tests.fixtures.connectors import builders as b

PLAIN = """DATA PROTECTION POLICY

1 Purpose

This policy explains how personal data
is processed by the company.

1.1 Collection

Before collecting data, staff must:
- identify the lawful basis;
- inform the data subject.

Retention
=========

Records are kept for six years.
"""


def test_plain_text() -> None:
    doc = parse_bytes(PLAIN.encode(), "policy.txt")
    b.check_invariants(doc)
    assert doc.media_type == "text/plain"
    assert doc.title == "DATA PROTECTION POLICY"
    texts = [(p.kind, p.text, p.heading_path) for p in doc.paragraphs]
    assert texts == [
        (
            "paragraph",
            "This policy explains how personal data is processed by the company.",
            ("1 Purpose",),
        ),
        (
            "list",
            "Before collecting data, staff must:\n- identify the lawful basis;\n- inform the data subject.",
            ("1 Purpose", "1.1 Collection"),
        ),
        ("paragraph", "Records are kept for six years.", ("Retention",)),
    ]


def test_plain_text_encodings() -> None:
    text = "Die Verarbeitung personenbezogener Daten ist rechtmäßig, wenn sie erforderlich ist."
    for data in (
        text.encode("utf-8"),
        text.encode("utf-8-sig"),
        text.encode("utf-16"),
        text.encode("cp1252"),
    ):
        doc = parse_bytes(data, "de.txt")
        assert doc.paragraphs[0].text == text


MARKDOWN = """# Access Control Standard

Intro paragraph with **bold** and a [link](https://example.com).

## Rules

Administrators must:

1. use multi-factor authentication;
2. review access quarterly.
   - remove leavers within 24 hours

| Control | Owner |
|---------|-------|
| MFA     | IT    |
| Review  | HR    |

```
code is skipped
```

> Quoted guidance is body text too.
"""


def test_markdown() -> None:
    doc = parse_bytes(MARKDOWN.encode(), "standard.md")
    b.check_invariants(doc)
    assert doc.title == "Access Control Standard"
    assert doc.media_type == "text/markdown"
    kinds = [(p.kind, p.text) for p in doc.paragraphs]
    assert kinds == [
        ("paragraph", "Intro paragraph with bold and a link."),
        (
            "list",
            "Administrators must:\n1. use multi-factor authentication;\n2. review access quarterly.\n"
            "  - remove leavers within 24 hours",
        ),
        ("table-row", "Control: MFA; Owner: IT"),
        ("table-row", "Control: Review; Owner: HR"),
        ("paragraph", "Quoted guidance is body text too."),
    ]
    assert all(p.heading_path == ("Access Control Standard", "Rules") for p in doc.paragraphs[1:])
    assert "code is skipped" not in doc.text


HTML = """<!doctype html>
<html><head><title>Privacy Notice</title><style>p { color: red }</style>
<script>var leak = "SCRIPT LEAK";</script></head>
<body>
<header>SITE HEADER LEAK</header><nav><a href="/">Home</a></nav>
<main>
<h1>Privacy</h1>
<p>We process <b>personal data</b> lawfully,<br>fairly and transparently.</p>
<h2>Your rights</h2>
<p>You have the right to:</p>
<ol><li>access your data;</li><li>erasure<ul><li>subject to legal limits</li></ul></li></ol>
<table>
  <tr><th>Data</th><th>Retention</th></tr>
  <tr><td>Server logs</td><td>30 days</td></tr>
</table>
<div>Contact the data protection officer at <a href="mailto:dpo@example.com">dpo@example.com</a> for questions.</div>
<!-- a comment that must not appear -->
</main>
<footer>FOOTER LEAK</footer>
</body></html>"""


def test_html() -> None:
    doc = parse_bytes(HTML.encode(), "notice.html")
    b.check_invariants(doc)
    assert doc.title == "Privacy Notice"
    for leak in ("SCRIPT LEAK", "SITE HEADER LEAK", "FOOTER LEAK", "Home", "color", "comment"):
        assert leak not in doc.text
    kinds = [(p.kind, p.text, p.heading_path) for p in doc.paragraphs]
    assert kinds == [
        ("paragraph", "We process personal data lawfully, fairly and transparently.", ("Privacy",)),
        (
            "list",
            "You have the right to:\n1. access your data;\n2. erasure\n  - subject to legal limits",
            ("Privacy", "Your rights"),
        ),
        ("table-row", "Data: Server logs; Retention: 30 days", ("Privacy", "Your rights")),
        (
            "paragraph",
            "Contact the data protection officer at dpo@example.com for questions.",
            ("Privacy", "Your rights"),
        ),
    ]


def test_html_by_media_type_and_title_fallback() -> None:
    doc = parse_bytes(
        b"<h1>Cookie Policy</h1><p>We use strictly necessary cookies only.</p>",
        "page",
        media_type="text/html",
    )
    assert doc.title == "Cookie Policy"
    assert doc.paragraphs[0].text == "We use strictly necessary cookies only."


def test_binary_markdown_refused() -> None:
    with pytest.raises(DocumentError):
        parse_bytes(b"\x00\x00\x00", "x.md")


def test_markdown_front_matter_is_metadata_not_text() -> None:
    text = "---\ntitle: Retention Rules\ndoc_id: NWL-9\n---\n\n## Scope\n\nRecords are kept for six years after closure.\n"
    doc = parse_bytes(text.encode(), "rules.md")
    assert doc.title == "Retention Rules"
    assert doc.metadata["front_matter.doc_id"] == "NWL-9"
    assert "doc_id" not in doc.text
    assert [p.text for p in doc.paragraphs] == ["Records are kept for six years after closure."]
    assert doc.paragraphs[0].heading_path == ("Scope",)


def test_plain_text_numbered_items_versus_numbered_headings() -> None:
    text = "1. Purpose of Processing\n\n1. keep records\n\n2. Delete data when no longer needed\n\n2.1 Backups\n\nBody text.\n"
    doc = parse_bytes(text.encode(), "n.txt")
    b.check_invariants(doc)
    assert doc.paragraphs[0].kind == "list"
    assert doc.paragraphs[0].heading_path == ("1. Purpose of Processing",)
    assert doc.paragraphs[0].text == "1. keep records\n2. Delete data when no longer needed"
    assert doc.paragraphs[1].heading_path == ("1. Purpose of Processing", "2.1 Backups")


def test_connector_chosen_from_url_path() -> None:
    doc = parse_bytes(
        b"# Notice\n\nWe never sell personal data.", "https://intranet.example/p/notice.md?rev=3#top"
    )
    assert doc.source == "https://intranet.example/p/notice.md?rev=3#top"
    assert doc.media_type == "text/markdown"
    assert doc.paragraphs[0].text == "We never sell personal data."


WEB_PAGE = """<!DOCTYPE html><html lang="en"><head><title>Privacy Policy | Acme</title></head><body>
<a href="#main">Skip to main content</a>
<div class="top"><a href="/">Home</a> <a href="/pricing">Pricing</a> <a href="/login">Log in</a></div>
<div id="consent" role="dialog" aria-label="Cookie consent"><p>We use cookies to improve your experience. By
continuing to browse you agree to our use of cookies.</p></div>
<main id="main">
<div role="navigation"><a href="/">Home</a> &gt; <a href="/legal">Legal</a></div>
<h1>Privacy Policy</h1>
<p>We keep account data for as long as your account is open.</p>
<p hidden>An old paragraph the page no longer shows.</p>
<p style="color: red; display:none">A collapsed notice.</p>
<div role="search">Search the help centre</div>
<p>You may lodge a complaint with a supervisory authority.</p>
</main>
<div role="contentinfo"><p>Registered in England and Wales, company number 01234567.</p></div>
</body></html>"""


def test_html_web_page_reads_its_main_content_only() -> None:
    """A privacy notice as a website publishes it: the site's menu, a skip link and the cookie-consent dialog stand
    outside ``<main>``; inside it, ARIA furniture (a breadcrumb, a search box) and what the page hides."""
    doc = parse_bytes(WEB_PAGE.encode(), "privacy.html")
    b.check_invariants(doc)
    assert doc.title == "Privacy Policy | Acme"
    assert [(p.text, p.heading_path) for p in doc.paragraphs] == [
        ("We keep account data for as long as your account is open.", ("Privacy Policy",)),
        ("You may lodge a complaint with a supervisory authority.", ("Privacy Policy",)),
    ]


def test_html_without_main_drops_furniture_roles_and_hidden_elements() -> None:
    page = WEB_PAGE.replace('<main id="main">', '<div class="content">').replace("</main>", "</div>")
    doc = parse_bytes(page.encode(), "privacy.html")
    text = doc.text
    for leak in (
        "cookies",
        "Legal",
        "old paragraph",
        "Decorative",
        "collapsed",
        "Search the help",
        "01234567",
    ):
        assert leak not in text
    # without a marked main content the site's menu stays (links to other pages: the role model judges it); the
    # skip link, a link to a place on the page, is navigation
    assert "We keep account data" in text and "Home Pricing Log in" in text
    assert "Skip to main content" not in text


def test_html_hidden_main_is_not_the_main_content() -> None:
    page = (
        "<html><body><main hidden><p>A template the script fills in.</p></main>"
        "<div><p>We encrypt backups.</p></div></body></html>"
    )
    doc = parse_bytes(page.encode(), "p.html")
    assert [p.text for p in doc.paragraphs] == ["We encrypt backups."]


def test_html_main_holding_little_of_the_page_is_not_trusted() -> None:
    """A page whose ``<main>`` holds only the title while the policy stands beside it is read whole."""
    body = "".join(
        f"<p>Rule {i}: personal data of customers is encrypted at rest and in transit.</p>" for i in range(6)
    )
    page = f"<html><body><main><h1>Security Policy</h1></main><div>{body}</div></body></html>"
    doc = parse_bytes(page.encode(), "p.html")
    assert len(doc.paragraphs) == 6 and doc.paragraphs[0].heading_path == ("Security Policy",)


def test_html_page_saved_under_a_dialog_is_read_whole() -> None:
    """A page saved from the browser while a consent dialog was open: the script had hidden the page's wrapper
    (``aria-hidden``, ``display: none``). Most of the text would be lost, so the hidden parts are read; an
    accordion's ``hidden="until-found"`` content is content in any case."""
    policy = "".join(f"<p>Rule {i}: access to personal data is reviewed every quarter.</p>" for i in range(5))
    page = (
        '<html><body><div id="page" aria-hidden="true" style="display: none">'
        f"<main><h1>Access Policy</h1>{policy}"
        '<div hidden="until-found"><p>Exceptions are approved by the CISO in writing.</p></div></main></div>'
        '<div role="dialog"><p>We use cookies. Accept all cookies?</p></div></body></html>'
    )
    doc = parse_bytes(page.encode(), "p.html")
    texts = [p.text for p in doc.paragraphs]
    assert len(texts) == 6 and texts[-1] == "Exceptions are approved by the CISO in writing."
    assert "cookies" not in doc.text


def test_html_until_found_content_is_read_and_hidden_content_is_not() -> None:
    policy = "".join(f"<p>Rule {i}: backups are encrypted and tested every month.</p>" for i in range(4))
    page = (
        f"<html><body><main>{policy}<details><summary>Exceptions</summary>"
        '<div hidden="until-found">Exceptions are approved by the CISO in writing.</div></details>'
        "<p hidden>A draft rule nobody approved.</p></main></body></html>"
    )
    text = parse_bytes(page.encode(), "p.html").text
    assert "approved by the CISO" in text and "draft rule" not in text


def test_html_page_navigation_is_not_text() -> None:
    """A privacy notice's own table of contents (links to its sections) is no paragraph of the notice, nor is a
    "Back to top" after a paragraph's last sentence; a link to a section inside a sentence is text."""
    page = """<html><body><main><h1>Privacy Notice</h1>
<p>On this page:</p>
<ul><li><a href="#who">Who we are</a></li><li><a href="#rights">Your rights</a>
  <ul><li><a href="#access">Access</a></li></ul></li></ul>
<h2 id="who">Who we are</h2><p>Example Bank plc is the controller of your personal data.</p>
<h2 id="rights">Your rights</h2>
<p>You can ask for a copy of your data at any time, as <a href="#access">explained below</a>. <a href="#top">Back to top</a></p>
<p><a href="#top">Back to top</a></p></main></body></html>"""
    doc = parse_bytes(page.encode(), "notice.html")
    assert [p.text for p in doc.paragraphs] == [
        "On this page:",
        "Example Bank plc is the controller of your personal data.",
        "You can ask for a copy of your data at any time, as explained below.",
    ]


def test_markdown_page_navigation_is_not_text() -> None:
    """The same for Markdown (policy templates kept in a repository open with a table of contents)."""
    text = """# Access Control Policy

## Table of Contents

- [Purpose](#purpose)
- [Policy](#policy)
  - [Account management](#account-management)

## Policy

Accounts of leavers are disabled on their last working day; see [Purpose](#purpose) for why.

[Back to top](#access-control-policy)
"""
    doc = parse_bytes(text.encode(), "policy.md")
    assert [(p.text, p.heading_path) for p in doc.paragraphs] == [
        (
            "Accounts of leavers are disabled on their last working day; see Purpose for why.",
            ("Access Control Policy", "Policy"),
        )
    ]


def test_html_layout_table_is_read_as_the_page() -> None:
    """An old intranet page: the menu in one cell, the whole policy (headings, paragraphs, a list, a data table) in
    the next. Read as a data table it was one row holding every paragraph; a data table whose cells hold a
    ``<p>`` each (HTML saved from Word) stays a table."""
    page = """<html><body><table width="100%"><tr><td><a href="/a">Home</a><br><a href="/b">Policies</a></td><td>
<h1>Data Retention Policy</h1><h2>1. Scope</h2><p>This policy applies to all records that contain personal data.</p>
<h2>2. Retention</h2><p>Customer records are kept for six years after the end of the contract.</p>
<table border="1"><tr><th><p>Record</p></th><th><p>Period</p></th></tr>
<tr><td><p>Invoices</p></td><td><p>10 years</p></td></tr></table></td></tr></table></body></html>"""
    doc = parse_bytes(page.encode(), "retention.html")
    assert [(p.kind, p.heading_path, p.text) for p in doc.paragraphs] == [
        ("paragraph", (), "Home Policies"),
        (
            "paragraph",
            ("Data Retention Policy", "1. Scope"),
            "This policy applies to all records that contain personal data.",
        ),
        (
            "paragraph",
            ("Data Retention Policy", "2. Retention"),
            "Customer records are kept for six years after the end of the contract.",
        ),
        ("table-row", ("Data Retention Policy", "2. Retention"), "Record: Invoices; Period: 10 years"),
    ]


def test_html_headings_typed_as_bold_paragraphs() -> None:
    """A notice written in a page editor: its sections are bold paragraphs, placed under the page's last real
    heading (numbered ones as deep as their number); a bold sentence and a paragraph with one bold word stay text."""
    page = """<html><body><main><h1>Privacy Notice</h1>
<p><strong>1. Who we are</strong></p><p>Example Ltd is the controller of your personal data.</p>
<p><strong>2. Your Rights</strong></p><p>You can ask for a copy of your data.</p>
<p><b>2.1 Access</b></p><p>We answer requests for access within one month.</p>
<p><strong>Do not send us passwords by e-mail</strong></p>
<p>We are <strong>never</strong> going to ask for them.</p>
<h2>Cookies</h2><p><strong>Essential Cookies</strong></p><p>Essential cookies keep you logged in.</p>
</main></body></html>"""
    doc = parse_bytes(page.encode(), "notice.html")
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        (("Privacy Notice", "1. Who we are"), "Example Ltd is the controller of your personal data."),
        (("Privacy Notice", "2. Your Rights"), "You can ask for a copy of your data."),
        (
            ("Privacy Notice", "2. Your Rights", "2.1 Access"),
            "We answer requests for access within one month.",
        ),
        (("Privacy Notice", "2. Your Rights", "2.1 Access"), "Do not send us passwords by e-mail"),
        (("Privacy Notice", "2. Your Rights", "2.1 Access"), "We are never going to ask for them."),
        (("Privacy Notice", "Cookies", "Essential Cookies"), "Essential cookies keep you logged in."),
    ]


def test_markdown_headings_typed_as_bold_paragraphs() -> None:
    text = """# Access Control Policy

**1. Purpose**

This policy sets out how access is controlled.

**1.1 Scope Of Accounts**

All user and service accounts are covered.

**Do not share passwords with anyone**

Passwords are **never** shared.
"""
    doc = parse_bytes(text.encode(), "policy.md")
    top = ("Access Control Policy", "1. Purpose")
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        (top, "This policy sets out how access is controlled."),
        ((*top, "1.1 Scope Of Accounts"), "All user and service accounts are covered."),
        ((*top, "1.1 Scope Of Accounts"), "Do not share passwords with anyone"),
        ((*top, "1.1 Scope Of Accounts"), "Passwords are never shared."),
    ]


def test_html_exported_by_an_office_suite_bold_by_class_and_numbers_in_the_items() -> None:
    """A Google Docs or LibreOffice export marks bold text with a class of its style sheet, not with <strong>, and
    writes each item's number or bullet glyph into the item. Its typed headings and its tables' header rows were
    lost, and "1. 1.Store …" items were one list instead of one statement each. Its title paragraph (``<p
    class="Title">``) was read as a paragraph of the text."""
    page = """<html><head><style>.c5{font-weight:700} span.T1 { font-weight:bold; } .c2{color:#000}</style></head>
<body><h1>IT Rules for Store Staff</h1>
<p class="c2"><span class="c5">Rules</span></p>
<ol><li><p><span style="float:left">1.</span>Store computers are used only for company business.</p></li>
<li><p><span style="float:left">2.</span>Every member of staff logs in with their own account.</p></li></ol>
<p class="c2"><span class="c5">Related Policies</span></p>
<ul><li>\uf0b7\uf0b7Acceptable Use Policy</li><li>\uf0b7\uf0b7Mobile Device Policy</li></ul>
<table><tr><td><p><span class="T1">Role</span></p></td><td><p><span class="T1">Responsibility</span></p></td></tr>
<tr><td><p>IT Manager</p></td><td><p>Operates the backup system.</p></td></tr>
<tr><td><p>System owners</p></td><td><p>Define the recovery objectives.</p></td></tr></table>
<p class="c2">We are <span class="c5">never</span> going to ask for passwords.</p></body></html>"""
    doc = parse_bytes(page.encode(), "rules.html")
    rules, related = ("IT Rules for Store Staff", "Rules"), ("IT Rules for Store Staff", "Related Policies")
    assert [(p.heading_path, p.text) for p in doc.paragraphs] == [
        (rules, "1. Store computers are used only for company business."),
        (rules, "2. Every member of staff logs in with their own account."),
        (related, "- Acceptable Use Policy\n- Mobile Device Policy"),
        (related, "Role: IT Manager; Responsibility: Operates the backup system."),
        (related, "Role: System owners; Responsibility: Define the recovery objectives."),
        (related, "We are never going to ask for passwords."),
    ]
    # the export's title paragraph is the document's title, not a paragraph of it
    titled = b'<html><body><p class="Title">Remote Access Policy</p><p>Staff use the VPN for remote work.</p></body></html>'
    doc = parse_bytes(titled, "remote.html")
    assert [p.text for p in doc.paragraphs] == ["Staff use the VPN for remote work."]


def test_markdown_fill_in_blanks_are_text() -> None:
    """CommonMark reads a form's "____/____/________ at ____:____" as strong emphasis around "/" and ":"; the blanks
    are text, a thematic break is still a break, ___bold italic___ is still emphasis, and fenced code is left as
    it is."""
    from compliance.connectors.text_reader import _blanks_as_text

    text = (
        "# Incident Report\n\n**Date and time you noticed the incident:** ____/____/________ at ____:____\n\n___\n\n"
        "This form is ___always___ sent to the security team on the day the incident is noticed.\n"
    )
    doc = parse_bytes(text.encode(), "form.md")
    assert [p.text for p in doc.paragraphs] == [
        "Date and time you noticed the incident: ____/____/________ at ____:____",
        "This form is always sent to the security team on the day the incident is noticed.",
    ]
    fenced = "```\ncode ____ stays\n```"
    assert _blanks_as_text(fenced) == fenced


def test_markdown_key_value_table_with_an_empty_header_row() -> None:
    # Markdown needs a header row, so a key/value table is written with an empty one: its rows are data, the
    # first of them no header
    md = b"| | |\n|---|---|\n| Document ID | ISP-001 |\n| Owner | CISO |\n| Classification | Internal |\n"
    doc = parse_bytes(md, "policy.md")
    assert [p.text for p in doc.paragraphs] == [
        "Document ID: ISP-001",
        "Owner: CISO",
        "Classification: Internal",
    ]
    assert {p.role for p in doc.paragraphs} == {"metadata"}


def test_reference_marks_of_notes_are_no_text_in_html_and_markdown() -> None:
    html = (
        b"<html><body><h1>Breaches</h1><p>Breaches are notified within 72 hours<sup>1</sup>, as Article 33"
        b"<sup><a href='#fn2'>[2]</a></sup> requires, on the 1<sup>st</sup> day at the latest.</p></body></html>"
    )
    assert [p.text for p in parse_bytes(html, "notes.html").paragraphs] == [
        "Breaches are notified within 72 hours, as Article 33 requires, on the 1st day at the latest."
    ]
    md = (
        b"# Breaches\n\nBreaches are notified within 72 hours[^1], as Article 33[^gdpr] requires.\n\n"
        b"[^1]: Regulation (EU) 2016/679.\n[^gdpr]: See the EDPB guidelines.\n"
    )
    assert [p.text for p in parse_bytes(md, "notes.md").paragraphs] == [
        "Breaches are notified within 72 hours, as Article 33 requires.",
        "Regulation (EU) 2016/679. See the EDPB guidelines.",  # the notes stay, without their labels
    ]


@pytest.mark.parametrize(
    "typed",
    [
        "<p>When working remotely staff must:<br>• use the company VPN for all connections;<br>"
        "• lock their screen when they leave the device;<br>• never let others use a work device.</p>",
        "<p>When working remotely staff must:</p><p>• use the company VPN for all connections;</p>"
        "<p>▪ lock their screen when they leave the device;</p><p>- never let others use a work device.</p>",
        "<div>When working remotely staff must:<br>• use the company VPN for all connections;<br>"
        "• lock their screen when they leave the device;<br>• never let others use a work device.</div>",
    ],
    ids=["lines-broken-with-br", "paragraph-per-item", "text-in-a-div"],
)
def test_a_list_typed_in_paragraphs_of_a_web_page_is_a_list(typed: str) -> None:
    """A page written in a content editor without its list button types the bullets: "<br>• …" lines under the
    lead-in (in a <p>, or as text loose in a <div>), or a <p> per item. It reads as the <ul> it stands for (before, the <br> lines were one paragraph, taken
    for a form and never mapped)."""
    listed = (
        "<p>When working remotely staff must:</p><ul><li>use the company VPN for all connections;</li>"
        "<li>lock their screen when they leave the device;</li><li>never let others use a work device.</li></ul>"
    )
    rule = "<p>All personal data breaches are reported to the DPO within 24 hours of their discovery.</p>"
    page = "<html><body><main><h1>Remote working</h1>{}{}</main></body></html>"
    got = parse_bytes(page.format(typed, rule).encode(), "typed.html")
    want = parse_bytes(page.format(listed, rule).encode(), "listed.html")
    assert [(p.kind, p.role, p.text) for p in got.paragraphs] == [
        (p.kind, p.role, p.text) for p in want.paragraphs
    ]
    assert got.paragraphs[0].kind == "list" and got.paragraphs[0].role == "statement"


def test_html_ordered_lists_number_as_the_page_shows_them() -> None:
    """``<ol type="a">`` (or ``list-style-type: lower-alpha``) shows a., b., c.: its items were read as 1., 2., 3.,
    so a policy's lettered duties lost the letters an officer cites them by; ``<li value>`` renumbers from there."""
    page = """<html><body><h1>Access Control</h1><p>The organisation shall:</p>
<ol type="a"><li>Review user access rights every quarter and remove stale accounts.</li>
<li>Grant administrator rights only with the approval of the system owner.</li>
<li value="6">Log every change to access rights in the central log.</li></ol>
<ol style="list-style-type: upper-roman"><li>Keep the register of systems up to date at all times.</li>
<li>Report a lost access card to the security desk on the same day.</li></ol>
<ol start="3" type="i"><li>Retire shared accounts by the end of the year.</li></ol></body></html>"""
    doc = parse_bytes(page.encode(), "access.html")
    texts = [p.text for p in doc.paragraphs]
    assert texts[0].endswith("\n\na. Review user access rights every quarter and remove stale accounts.")
    assert texts[1:] == [
        "b. Grant administrator rights only with the approval of the system owner.",
        "f. Log every change to access rights in the central log.",
        "I. Keep the register of systems up to date at all times.",
        "II. Report a lost access card to the security desk on the same day.",
        "iii. Retire shared accounts by the end of the year.",
    ]


def test_list_numbers_in_each_format() -> None:
    from compliance.connectors.assemble import format_number

    assert [format_number(n, "a") for n in (1, 26, 27, 28)] == ["a", "z", "aa", "ab"]
    assert format_number(4, "upperLetter") == "D"
    assert [format_number(n, "lowerRoman") for n in (4, 9, 14, 1999)] == ["iv", "ix", "xiv", "mcmxcix"]
    assert format_number(12, "I") == "XII"
    assert format_number(3, "lower-alpha") == "c"
    assert format_number(7, "decimalZero") == "07"
    assert format_number(7, "1") == format_number(7, "decimal") == "7"


def test_markdown_admonitions_are_read_as_text() -> None:
    """An MkDocs policy site puts statements in admonitions; CommonMark reads their bodies (indented four spaces)
    as code, which is skipped, and the marker line "!!! Attention" as a paragraph."""
    md = """# Incident Response Policy

## Severity

!!! Attention

    Incidents of a severity higher than **MINOR** shall trigger the
    following response process.

!!! important "Approved MFA methods"

    - Push notification delivered through the mobile app
    - Hardware MFA token for the root user

    ??? note

        A nested note inside the admonition is read as text as well, like its parent.

After the admonition, the policy text goes on with a paragraph of its own.

```
!!! note
    this is code and stays out
```
"""
    doc = parse_bytes(md.encode(), "ir.md")
    texts = [p.text for p in doc.paragraphs]
    assert texts == [
        "Incidents of a severity higher than MINOR shall trigger the following response process.",
        "Approved MFA methods",
        "- Push notification delivered through the mobile app\n- Hardware MFA token for the root user",
        "A nested note inside the admonition is read as text as well, like its parent.",
        "After the admonition, the policy text goes on with a paragraph of its own.",
    ]
    assert all(p.heading_path == ("Incident Response Policy", "Severity") for p in doc.paragraphs)


def test_admonitions_nested_without_end_do_not_exhaust_the_stack() -> None:
    """Eight levels are read as admonitions; what is deeper stays as CommonMark reads it (the ninth marker a
    paragraph, the rest code), so a file nesting thousands cannot exhaust the stack."""
    nested = "".join(" " * (4 * i) + "!!! note\n\n" for i in range(1200))
    doc = parse_bytes((nested + " " * 4800 + "Deep text.\n").encode(), "deep.md")
    assert [p.text for p in doc.paragraphs] == ["!!! note"]
