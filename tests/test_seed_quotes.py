"""The seed lines the project quotes are the seeds' words.

Tests, engine docstrings and docs quote the seed texts beside each figure (`Seed 003: "..."`,
`seed: "..."`). The seed texts are other people's words and are not in the repository; where
../shared/seeds is beside the checkout (the `seeds` suite), every such quote is checked
against them. Only the words are compared, in order: case, punctuation, table bars, bullets
and typography (an arrow written ->, a times sign written x) may differ; "..." may skip text.
"""

from __future__ import annotations

import io
import re
import tokenize
import unicodedata
from pathlib import Path

import pytest
from conftest import ROOT, SEEDS

#: Where the project quotes seeds: its docstrings and comments, and its Markdown.
QUOTING = ("engine", "tests", "benchmarks", "docs", "README.md", "ARCHITECTURE.md")

#: `Seed 003: "..."`, `seed: "..."`, `Seed 000 (table): "..."`; then more quotes may follow
#: it (`"A", "B"; "C" and "D"`), each checked on its own against the same seed.
LABEL = re.compile(r'\b[Ss]eeds? ?(\d{3})?(?: \([^)\n]*\))?: *"([^"]{1,800}?)"', re.S)
MORE = re.compile(r'[\s,;]*(?:and |or )?\s*"([^"]{1,800}?)"', re.S)
ELLIPSIS = re.compile(r"\.\.\.|…")
TYPOGRAPHY = str.maketrans(
    {
        "→": "->",
        "×": "x",
        "÷": "/",
        "−": "-",
        "–": "-",
        "—": "-",
        "’": "'",
        "‘": "'",
        "½": " 1/2",
    }
)


def words(text: str) -> str:
    """The text as its words (and signs), space-separated with a space at each end."""
    text = unicodedata.normalize("NFKC", text.translate(TYPOGRAPHY)).lower()
    text = re.sub(r"(?<!\S)[-•](?!\S)", " ", text)  # a bullet or a free-standing dash
    return " " + " ".join(re.findall(r"[a-z0-9]+|[+\-/=%]", text)) + " "


def quoted(text: str, seeds: dict[str, str]) -> bool:
    """Is every "..."-separated part of the quote in one seed (of `seeds`' words), in order?"""
    parts = [p for p in (words(x) for x in ELLIPSIS.split(text)) if p.strip()]
    for seed in seeds.values():
        at = 0
        for part in parts:
            found = seed.find(part, at)
            if found < 0:
                break
            at = found + len(part) - 1
        else:
            return True
    return False


def prose(path: Path, text: str) -> list[tuple[int, str]]:
    """(first line, text) of the file's prose: a Python file's triple-quoted strings and
    comment blocks (never its code), a Markdown file whole."""
    if path.suffix != ".py":
        return [(1, text)]
    out: list[tuple[int, str]] = []
    comments: list[str] = []
    start = last = 0
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.COMMENT:
            if comments and tok.start[0] != last + 1:
                out.append((start, "\n".join(comments)))
                comments = []
            if not comments:
                start = tok.start[0]
            comments.append(tok.string.lstrip("#"))
            last = tok.start[0]
        elif tok.type == tokenize.STRING and re.match(r"[a-zA-Z]*('''|\"\"\")", tok.string):
            out.append((tok.start[0], tok.string))
    if comments:
        out.append((start, "\n".join(comments)))
    return out


def misquotes(path: Path, text: str, seeds: dict[str, str]) -> tuple[int, list[str]]:
    """(how many quotes the file holds, 'PATH:LINE: seed NNN has no "QUOTE"' for each one
    that is not the seed's words)."""
    count, wrong = 0, []
    for line, block in prose(path, text):
        for label in LABEL.finditer(block):
            number, at = label.group(1), line + block.count("\n", 0, label.start())
            quotes, end = [label.group(2)], label.end()
            while more := MORE.match(block, end):
                quotes.append(more.group(1))
                end = more.end()
            count += len(quotes)
            if number is not None and number not in seeds:
                wrong.append(f"{path}:{at}: there is no seed {number}")
                continue
            where = {number: seeds[number]} if number else seeds
            for quote in quotes:
                if not quoted(quote, where):
                    one_line = " ".join(quote.split())
                    whose = f"seed {number} has no" if number else "no seed has"
                    wrong.append(f'{path}:{at}: {whose} "{one_line}"')
    return count, wrong


def quoting_files() -> list[Path]:
    found: list[Path] = []
    for name in QUOTING:
        top = ROOT / name
        found += [top] if top.is_file() else sorted(top.rglob("*.py")) + sorted(top.rglob("*.md"))
    return [p for p in found if p != Path(__file__).resolve()]


def _seeds() -> dict[str, str]:
    return {p.name[:3]: words(p.read_text(encoding="utf-8")) for p in SEEDS.glob("[0-9]*.txt")}


@pytest.mark.seeds
def test_every_seed_quote_is_the_seeds_words() -> None:
    seeds = _seeds()
    assert len(seeds) >= 5, f"{SEEDS} holds {len(seeds)} seed texts"
    total, wrong = 0, []
    for path in quoting_files():
        count, bad = misquotes(path.relative_to(ROOT), path.read_text(encoding="utf-8"), seeds)
        total += count
        wrong += bad
    assert not wrong, (
        f"{len(wrong)} of {total} seed quotes are not the seed's words:\n" + "\n".join(wrong)
    )


# --------------------------------------------------------------------------- the checker itself
#
# On a seed text written here (the real ones are not the project's to copy).

MADE_UP = {
    "007": words(
        "Climbing\n• Roll Agility −2.\n| Height | Damage |\n|---|---|\n| 3–6 m | 1D |\n"
        "A fall of 6 m → 2D damage (×2 on stone). When the rope breaks, the climber falls."
    ),
    "008": words("Swimming costs double: Move ÷ 2."),
}


def test_the_checker_accepts_the_seeds_words_and_finds_a_misquote() -> None:
    text = (
        "def f() -> None:\n"
        '    """Seed 007: "Roll Agility -2", "3-6 m | 1D"; "A fall of 6 m -> 2D damage (x2\n'
        '    on stone)" and "Climbing ... the climber falls". Seed: "Move / 2"."""\n'
        '    # seed 007: "If the rope breaks,\n'
        '    # the climber falls"\n'
        '    x = "seed: " + "not prose"  # code is never read as a quote\n'
        '    # seed 009: "anything"\n'
    )
    count, wrong = misquotes(Path("m.py"), text, MADE_UP)
    assert count == 7
    assert wrong == [
        'm.py:4: seed 007 has no "If the rope breaks, the climber falls"',
        "m.py:7: there is no seed 009",
    ]
    assert misquotes(Path("d.md"), 'seed 008: "Swimming costs double"', MADE_UP) == (1, [])
    # The order of a quote's parts counts, and so does every word.
    assert not quoted("the climber falls ... Climbing", MADE_UP)
    assert not quoted("A fall of 6 m -> 3D damage", MADE_UP)


def test_the_project_quotes_the_seeds_often_enough_to_check() -> None:
    """The seeds suite reads the quotes this finds: a pattern that found none would pass."""
    total = sum(misquotes(p, p.read_text(encoding="utf-8"), MADE_UP)[0] for p in quoting_files())
    assert total >= 150, total
