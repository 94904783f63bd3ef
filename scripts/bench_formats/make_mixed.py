#!/usr/bin/env python3
"""Generate benchmark corpora for kebab's format plugins (issue 48).

    make_mixed.py mixed OUT_DIR [--count 1000] [--seed 1]
        OUT_DIR gets COUNT office-like files spread evenly over docx, xlsx,
        pptx, odt, ods, odp, epub, eml and rtf. Every file has its own text
        (seeded random English and Korean sentences), so no two are
        byte-identical (kebab deduplicates files by content).

    make_mixed.py big OUT_DIR [--scale 1.0]
        OUT_DIR gets one large file per format, with a known number of units
        (paragraphs, slides, rows, chapters, messages), written to
        OUT_DIR/units.tsv (file, unit, count) so throughput is units / time.

Needs python-docx, openpyxl, python-pptx, odfpy and ebooklib (PyPI).
Deterministic for a given seed and library versions.
"""

import argparse
import email.message
import email.utils
import mailbox
import os
import random
import sys
import time

WORDS_EN = (
    "the quarterly report shows revenue growth across every region while costs "
    "stayed flat and the team shipped the new search index ahead of schedule "
    "customers asked for offline access better citations faster ingest and "
    "support for scanned documents spreadsheets presentations and mail archives "
    "kebab keeps notes on your own disk and answers with sources"
).split()
WORDS_KO = (
    "분기 보고서 매출 성장 지역 비용 검색 색인 일정 고객 오프라인 인용 문서 "
    "스프레드시트 발표 자료 메일 보관함 로컬 디스크 지식 베이스 답변 출처"
).split()


def sentence(rng, n=None):
    n = n or rng.randint(8, 18)
    words = [rng.choice(WORDS_KO if rng.random() < 0.2 else WORDS_EN) for _ in range(n)]
    words.append(str(rng.randint(0, 10**6)))  # a token unique enough per file
    s = " ".join(words)
    return s[0].upper() + s[1:] + "."


def paragraph(rng, sentences=None):
    return " ".join(sentence(rng) for _ in range(sentences or rng.randint(1, 4)))


# ---------------------------------------------------------------- writers
# Each writer makes one file at `path` and returns the number of units.


def write_docx(path, rng, paragraphs, heading_every=50):
    import docx

    d = docx.Document()
    d.add_heading(f"Report {rng.randint(0, 10**9)}", level=0)
    for i in range(paragraphs):
        if heading_every and i % heading_every == 0:
            d.add_heading(f"Section {i // heading_every + 1}: {sentence(rng, 4)}", level=1 + (i // heading_every) % 2)
        d.add_paragraph(paragraph(rng))
    d.save(path)
    return paragraphs


def write_rtf(path, rng, paragraphs):
    def esc(text):
        out = []
        for ch in text:
            if ch in "\\{}":
                out.append("\\" + ch)
            elif ord(ch) < 128:
                out.append(ch)
            else:
                cp = ord(ch)
                out.append(f"\\u{cp if cp < 32768 else cp - 65536}?")
        return "".join(out)

    parts = ["{\\rtf1\\ansi\\ansicpg1252\\deff0{\\fonttbl{\\f0 Arial;}}\n"]
    parts.append(f"{{\\pard\\b {esc('Memo ' + str(rng.randint(0, 10**9)))}\\par}}\n")
    for _ in range(paragraphs):
        parts.append(f"\\pard {esc(paragraph(rng))}\\par\n")
    parts.append("}")
    with open(path, "w", encoding="ascii") as f:
        f.write("".join(parts))
    return paragraphs


def write_odt(path, rng, paragraphs, heading_every=50):
    from odf.opendocument import OpenDocumentText
    from odf.text import H, P

    d = OpenDocumentText()
    d.text.addElement(H(outlinelevel=1, text=f"Notes {rng.randint(0, 10**9)}"))
    for i in range(paragraphs):
        if heading_every and i % heading_every == 0:
            d.text.addElement(H(outlinelevel=2, text=f"Section {i // heading_every + 1}"))
        d.text.addElement(P(text=paragraph(rng)))
    d.save(path)
    return paragraphs


def write_pptx(path, rng, slides):
    from pptx import Presentation

    p = Presentation()
    layout = p.slide_layouts[1]  # title and content
    for i in range(slides):
        s = p.slides.add_slide(layout)
        s.shapes.title.text = f"Slide {i + 1}: {sentence(rng, 4)}"
        body = s.placeholders[1].text_frame
        body.text = sentence(rng)
        for _ in range(rng.randint(2, 4)):
            body.add_paragraph().text = sentence(rng)
        s.notes_slide.notes_text_frame.text = sentence(rng)
    p.save(path)
    return slides


def write_odp(path, rng, slides):
    from odf.draw import Frame, Page, TextBox
    from odf.namespaces import PRESENTATIONNS
    from odf.opendocument import OpenDocumentPresentation
    from odf.style import MasterPage, PageLayout, PageLayoutProperties
    from odf.text import P

    d = OpenDocumentPresentation()
    layout = PageLayout(name="PL")
    layout.addElement(PageLayoutProperties(pagewidth="28cm", pageheight="21cm"))
    d.automaticstyles.addElement(layout)
    master = MasterPage(name="M", pagelayoutname=layout)
    d.masterstyles.addElement(master)
    for i in range(slides):
        page = Page(masterpagename=master, name=f"s{i + 1}")
        title = Frame(width="24cm", height="3cm", x="2cm", y="1cm")
        title.setAttrNS(PRESENTATIONNS, "class", "title")
        tb = TextBox()
        tb.addElement(P(text=f"Slide {i + 1}: {sentence(rng, 4)}"))
        title.addElement(tb)
        page.addElement(title)
        body = Frame(width="24cm", height="14cm", x="2cm", y="5cm")
        body.setAttrNS(PRESENTATIONNS, "class", "outline")
        tb = TextBox()
        for _ in range(rng.randint(3, 5)):
            tb.addElement(P(text=sentence(rng)))
        body.addElement(tb)
        page.addElement(body)
        d.presentation.addElement(page)
    d.save(path)
    return slides


def row_values(rng, i):
    return [
        i,
        f"item-{rng.randint(0, 10**6)}",
        rng.choice(WORDS_EN) + " " + rng.choice(WORDS_KO),
        round(rng.uniform(0, 10000), 2),
        rng.randint(1, 500),
        sentence(rng, 6),
    ]


HEADER = ["id", "sku", "label", "price", "qty", "note"]


def write_xlsx(path, rng, rows, sheets=1):
    import openpyxl

    wb = openpyxl.Workbook(write_only=True)
    per = rows // sheets
    for s in range(sheets):
        ws = wb.create_sheet(f"Sheet{s + 1}")
        ws.append(HEADER)
        for i in range(per):
            ws.append(row_values(rng, i))
    wb.save(path)
    return per * sheets


def write_ods(path, rng, rows):
    from odf.opendocument import OpenDocumentSpreadsheet
    from odf.table import Table, TableCell, TableRow
    from odf.text import P

    d = OpenDocumentSpreadsheet()
    t = Table(name="Data")

    def add(values):
        tr = TableRow()
        for v in values:
            if isinstance(v, (int, float)):
                c = TableCell(valuetype="float", value=v)
            else:
                c = TableCell(valuetype="string")
            c.addElement(P(text=str(v)))
            tr.addElement(c)
        t.addElement(tr)

    add(HEADER)
    for i in range(rows):
        add(row_values(rng, i))
    d.spreadsheet.addElement(t)
    d.save(path)
    return rows


def write_csv(path, rng, rows):
    import csv

    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for i in range(rows):
            w.writerow(row_values(rng, i))
    return rows


def write_epub(path, rng, chapters, paragraphs_per_chapter=20):
    from ebooklib import epub

    book = epub.EpubBook()
    book.set_identifier(f"bench-{rng.randint(0, 10**12)}")
    book.set_title(f"Book {rng.randint(0, 10**9)}")
    book.set_language("en")
    book.add_author("Bench Author")
    items = []
    for n in range(chapters):
        c = epub.EpubHtml(title=f"Chapter {n + 1}", file_name=f"chap_{n + 1:05}.xhtml", lang="en")
        body = "".join(f"<p>{paragraph(rng)}</p>" for _ in range(paragraphs_per_chapter))
        c.content = f"<h1>Chapter {n + 1}</h1>{body}"
        book.add_item(c)
        items.append(c)
    book.toc = items
    book.add_item(epub.EpubNcx())
    book.add_item(epub.EpubNav())
    book.spine = ["nav"] + items
    epub.write_epub(path, book)
    return chapters


def make_message(rng, i):
    m = email.message.EmailMessage()
    m["From"] = f"User {i % 97} <user{i % 97}@example.com>"
    m["To"] = "team@example.com"
    m["Subject"] = f"Re: {sentence(rng, 5)}"
    m["Date"] = email.utils.formatdate(1_700_000_000 + i * 3600 + rng.randint(0, 3000))
    m["Message-ID"] = f"<{i}.{rng.randint(0, 10**12)}@example.com>"
    m.set_content("\n\n".join(paragraph(rng) for _ in range(rng.randint(2, 4))) + f"\n\n-- \nUser {i % 97}\n")
    return m


def write_eml(path, rng, _units=1):
    with open(path, "wb") as f:
        f.write(bytes(make_message(rng, rng.randint(0, 10**6))))
    return 1


def write_mbox(path, rng, messages):
    if os.path.exists(path):
        os.remove(path)
    box = mailbox.mbox(path, create=True)
    box.lock()
    try:
        for i in range(messages):
            box.add(make_message(rng, i))
        box.flush()
    finally:
        box.unlock()
        box.close()
    return messages


# ---------------------------------------------------------------- corpora

# (extension, writer, size of one mixed-corpus file in units)
MIXED = [
    ("docx", write_docx, lambda r: r.randint(20, 60)),
    ("xlsx", write_xlsx, lambda r: r.randint(50, 200)),
    ("pptx", write_pptx, lambda r: r.randint(5, 15)),
    ("odt", write_odt, lambda r: r.randint(20, 60)),
    ("ods", write_ods, lambda r: r.randint(50, 200)),
    ("odp", write_odp, lambda r: r.randint(5, 15)),
    ("epub", write_epub, lambda r: r.randint(3, 8)),
    ("eml", write_eml, lambda r: 1),
    ("rtf", write_rtf, lambda r: r.randint(20, 60)),
]


def mixed(out, count, seed):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    units = {}
    started = time.time()
    for i in range(count):
        ext, writer, size = MIXED[i % len(MIXED)]
        path = os.path.join(out, f"{ext}", f"doc_{i:05}.{ext}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        n = writer(path, rng, size(rng))
        units[ext] = units.get(ext, 0) + n
    with open(out.rstrip("/") + ".units.tsv", "w") as f:
        for ext, n in units.items():
            f.write(f"{ext}\t{n}\n")
    print(f"{count} files in {out} ({time.time() - started:.1f} s)", file=sys.stderr)


# (file name, unit, writer, count at scale 1)
BIG = [
    ("big.docx", "paragraphs", write_docx, 20_000),
    ("big.odt", "paragraphs", write_odt, 20_000),
    ("big.rtf", "paragraphs", write_rtf, 20_000),
    ("big.pptx", "slides", write_pptx, 1_000),
    ("big.odp", "slides", write_odp, 1_000),
    ("big.xlsx", "rows", write_xlsx, 50_000),
    ("big.ods", "rows", write_ods, 10_000),
    ("big.csv", "rows", write_csv, 200_000),
    ("big.epub", "chapters", write_epub, 500),
    ("big.mbox", "messages", write_mbox, 5_000),
]


def big(out, scale, seed, only):
    os.makedirs(out, exist_ok=True)
    rng = random.Random(seed)
    with open(os.path.join(out, "units.tsv"), "a") as f:
        for name, unit, writer, n in BIG:
            if only and name not in only:
                continue
            started = time.time()
            count = writer(os.path.join(out, name), rng, max(1, int(n * scale)))
            f.write(f"{name}\t{unit}\t{count}\n")
            print(f"{name}: {count} {unit} ({time.time() - started:.1f} s)", file=sys.stderr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("what", choices=["mixed", "big"])
    ap.add_argument("out")
    ap.add_argument("--count", type=int, default=1000)
    ap.add_argument("--scale", type=float, default=1.0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only", nargs="*", help="big: only these file names")
    a = ap.parse_args()
    if a.what == "mixed":
        mixed(a.out, a.count, a.seed)
    else:
        big(a.out, a.scale, a.seed, a.only)


if __name__ == "__main__":
    main()
