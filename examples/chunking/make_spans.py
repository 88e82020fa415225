"""Writes spans.jsonl: questions about the documents in docs/, each with the passages that answer it as
character spans (``query, doc, start, end, text, question``). Run it again after editing a document:
``python examples/chunking/make_spans.py``."""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

# query id -> (question, [(document, evidence text), ...])
QUESTIONS: dict[str, tuple[str, list[tuple[str, str]]]] = {
    "q01": ("How long can I keep a borrowed book?", [
        ("lending", "Books and audiobooks are lent for three\nweeks")]),
    "q02": ("What happens if I return a book late?", [
        ("lending", "The library does not charge fines for books returned late."),
        ("lending", "a card is suspended once any item is more\nthan thirty days overdue")]),
    "q03": ("Can someone from another town get a library card?", [
        ("lending", "Visitors from outside the district can buy a seasonal card for eight euros.")]),
    "q04": ("How many items may I borrow at once?", [
        ("lending", "A card holder may have up to fifteen items on loan at the same time."),
        ("digital", "Up to five digital titles can\nbe on loan at once")]),
    "q05": ("When is the library open on Saturday?", [
        ("building", "On Saturday it\nis open from ten to five.")]),
    "q06": ("Is the library open on Sundays or Mondays?", [
        ("building", "The building is closed on Sundays, on Mondays and on public holidays.")]),
    "q07": ("Can I book a room for a study group?", [
        ("building", "six bookable group rooms"),
        ("building", "Group rooms seat up to eight people and can be booked for two hours at a time, up to a "
                     "week in advance, with a\nvalid card.")]),
    "q08": ("Is the building accessible for wheelchair users?", [
        ("building", "Both entrances have step-free access and an automatic door. A lift serves every floor")]),
    "q09": ("How do I get to the library by bus?", [
        ("building", "Buses 4 and 11 stop at the door")]),
    "q10": ("How much does printing cost?", [
        ("digital", "Printing costs ten cents a page in black and white and forty cents in colour")]),
    "q11": ("What happens when an e-book loan ends?", [
        ("digital", "they return themselves when the loan ends, so they can never be late")]),
    "q12": ("Where can I get help with my tablet?", [
        ("digital", "Every Thursday afternoon volunteers run a help desk for phones, tablets and laptops.")]),
    "q13": ("When is story time for toddlers?", [
        ("events", "Story time for children aged two to five takes place every Wednesday and Saturday at half "
                   "past ten in the children's\ncorner.")]),
    "q14": ("Which book clubs can I join?", [
        ("events", "Three book clubs meet at the library."),
        ("events", "New members are welcome at any meeting.")]),
    "q15": ("What do children get for the summer reading challenge?", [
        ("events", "Readers who complete the challenge receive a medal and a certificate")]),
    "q16": ("Can a charity use the rooftop terrace for an evening event?", [
        ("events", "The hire fee is waived for\ncharities"),
        ("building", "rooftop terrace is open in good weather")]),
    "q17": ("Can I borrow a pass for the museum?", [
        ("lending", "Resident card holders can borrow a pass for the Maritime Museum or the Botanical Garden.")]),
    "q18": ("Do I need a password for the wifi?", [
        ("digital", "The wireless network is open to everyone in the building without a password")]),
}


def main() -> None:
    docs = {p.stem: p.read_text(encoding="utf-8") for p in sorted((HERE / "docs").glob("*.md"))}
    lines = []
    for qid, (question, evidence) in QUESTIONS.items():
        for doc, text in evidence:
            start = docs[doc].find(text)
            if start < 0 or docs[doc].find(text, start + 1) >= 0:
                raise SystemExit(f"{qid}: the evidence is not found exactly once in {doc}: {text!r}")
            lines.append(json.dumps({"query": qid, "doc": doc, "start": start, "end": start + len(text), "text": text,
                                     "question": question}, ensure_ascii=False))
    (HERE / "spans.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {len(lines)} spans of {len(QUESTIONS)} questions to {HERE / 'spans.jsonl'}")


if __name__ == "__main__":
    main()
