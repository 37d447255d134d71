"""A word index over folded entry texts, to find the entries that contain a substring without
testing every text (used by :class:`~.mirror.Mirror`).

A *word* is a maximal run of characters that ``str.split()`` does not split on. A needle
without such a separator occurs in a text exactly when it occurs inside one of the text's
words, so the entries containing it are those listed under the words that contain it. The
words are searched in a few strings (words joined by NUL, grouped by length band and by being
ASCII or not), so a rare needle costs a ``str.find`` over the words that could contain it and a
few set unions, whatever the number of entries.
"""

from __future__ import annotations

from bisect import bisect_right

#: Joins the words in a search string; a needle holding it is not searched here.
SEPARATOR = "\x00"
#: Lower bounds of the word-length bands: a word shorter than a needle cannot contain it, so a
#: search skips the bands below the needle's.
_BANDS = (0, 4, 6, 8, 12, 16, 24, 32)


def _band(length: int) -> int:
    return bisect_right(_BANDS, length) - 1


class _Vocabulary:
    """Words joined into one search string. Words are only appended (a word whose entries are
    all gone stays until the string is rebuilt), so a write costs no rebuild."""

    __slots__ = ("ends", "pending", "text", "words")

    def __init__(self, words: list[str]) -> None:
        self.text = ""
        self.words: list[str] = []  # the words of text, in order
        self.ends: list[int] = []  # ends[k]: where the word after words[k] starts in text
        self.pending = words  # appended to text at the next search

    def search(self, piece: str, limit: int) -> list[str] | None:
        """The words of the string that contain ``piece`` (no separator in it); None when
        there are more than ``limit``."""
        if self.pending:
            self._flush()
        find, ends, words = self.text.find, self.ends, self.words
        out: list[str] = []
        at = find(piece)
        while at >= 0:
            if len(out) == limit:
                return None
            k = bisect_right(ends, at)
            out.append(words[k])
            at = find(piece, ends[k])
        return out

    def _flush(self) -> None:
        start = len(self.text) + 1 if self.words else 0
        added = SEPARATOR.join(self.pending)
        self.text = f"{self.text}{SEPARATOR}{added}" if self.words else added
        for word in self.pending:
            start += len(word) + 1
            self.ends.append(start)
        self.words.extend(self.pending)
        self.pending = []


class Words:
    """Which entries hold each word, and the search strings over the words seen."""

    __slots__ = ("_listed", "_vocabularies", "postings")

    def __init__(self) -> None:
        self.postings: dict[str, set[str]] = {}  # word -> ids of the entries holding it
        self._listed: set[str] = set()  # every word in a search string or pending
        # (length band, ASCII) -> the words of that band and kind
        self._vocabularies: dict[tuple[int, bool], _Vocabulary] = {}

    def add(self, entry_id: str, folded: str) -> None:
        self._add(entry_id, set(folded.split()))

    def remove(self, entry_id: str, folded: str) -> None:
        self._remove(entry_id, set(folded.split()))

    def replace(self, entry_id: str, old: str, new: str) -> None:
        """The entry's text changed from ``old`` to ``new`` (both folded)."""
        before, after = set(old.split()), set(new.split())
        self._remove(entry_id, before - after)
        self._add(entry_id, after - before)

    def _add(self, entry_id: str, words: set[str]) -> None:
        postings = self.postings
        for word in words:
            ids = postings.get(word)
            if ids is None:
                postings[word] = {entry_id}
                if word not in self._listed:
                    self._listed.add(word)
                    self._vocabulary(word).pending.append(word)
            else:
                ids.add(entry_id)

    def _remove(self, entry_id: str, words: set[str]) -> None:
        postings = self.postings
        for word in words:
            ids = postings.get(word)
            if ids is not None:
                ids.discard(entry_id)
                if not ids:
                    del postings[word]

    def search(self, piece: str, budget: int) -> set[str] | None:
        """The ids of the entries with a word containing ``piece`` (which has no separator of
        ``str.split``), or None when ``piece`` holds NUL or when collecting them would visit
        more than ``budget`` postings (testing the texts one by one is then as cheap)."""
        if SEPARATOR in piece:
            return None
        if len(self._listed) > 2 * len(self.postings) + 1024:
            self._rebuild()
        lowest, plain = _band(len(piece)), piece.isascii()
        words: list[str] = []
        for (band, ascii_), vocabulary in self._vocabularies.items():
            # Shorter words cannot hold the piece; an ASCII word holds only ASCII pieces.
            if band < lowest or (ascii_ and not plain):
                continue
            found = vocabulary.search(piece, budget - len(words))
            if found is None:
                return None
            words += found
        postings = self.postings
        hits: list[set[str]] = []
        cost = 0
        for word in words:
            ids = postings.get(word)
            if ids:
                cost += len(ids)
                if cost > budget:
                    return None
                hits.append(ids)
        return set().union(*hits)

    def _vocabulary(self, word: str) -> _Vocabulary:
        key = (_band(len(word)), word.isascii())
        vocabulary = self._vocabularies.get(key)
        if vocabulary is None:
            vocabulary = self._vocabularies[key] = _Vocabulary([])
        return vocabulary

    def _rebuild(self) -> None:
        """Drop the words that no entry holds any more from the search strings."""
        self._listed = set(self.postings)
        self._vocabularies = {}
        for word in self.postings:
            self._vocabulary(word).pending.append(word)
