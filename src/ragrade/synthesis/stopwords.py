"""The English stop words of the leakage check and of the BM25 index (docs/synthesize.md, "Leakage").

The list is NLTK's English stop-word list (the ``english`` file of the ``stopwords`` corpus of the Natural
Language Toolkit in the 179-entry form it had for years; a list of facts, typed here so that nothing is
downloaded), with the 26 entries that hold an
apostrophe left out: ragrade's word tokens are runs of letters and digits, so ``don't`` is read as the two
tokens ``don`` and ``t``, both of which are in the list (as are the pieces of every other such entry:
``you``/``re``, ``should``/``ve``, ``that``/``ll``, ...). 153 words remain.

Question words (``what``, ``which``, ``who``, ``when``, ``where``, ``why``, ``how``) are in the list: a
question's content words are what it asks about, not how it asks.
"""

from __future__ import annotations

#: NLTK's English stop words without the entries holding an apostrophe (see the module docstring).
STOP_WORDS: frozenset[str] = frozenset((
    "i", "me", "my", "myself", "we", "our", "ours", "ourselves", "you", "your", "yours", "yourself",
    "yourselves", "he", "him", "his", "himself", "she", "her", "hers", "herself", "it", "its", "itself",
    "they", "them", "their", "theirs", "themselves", "what", "which", "who", "whom", "this", "that", "these",
    "those", "am", "is", "are", "was", "were", "be", "been", "being", "have", "has", "had", "having", "do",
    "does", "did", "doing", "a", "an", "the", "and", "but", "if", "or", "because", "as", "until", "while",
    "of", "at", "by", "for", "with", "about", "against", "between", "into", "through", "during", "before",
    "after", "above", "below", "to", "from", "up", "down", "in", "out", "on", "off", "over", "under",
    "again", "further", "then", "once", "here", "there", "when", "where", "why", "how", "all", "any", "both",
    "each", "few", "more", "most", "other", "some", "such", "no", "nor", "not", "only", "own", "same", "so",
    "than", "too", "very", "s", "t", "can", "will", "just", "don", "should", "now", "d", "ll", "m", "o",
    "re", "ve", "y", "ain", "aren", "couldn", "didn", "doesn", "hadn", "hasn", "haven", "isn", "ma",
    "mightn", "mustn", "needn", "shan", "shouldn", "wasn", "weren", "won", "wouldn",
))

__all__ = ["STOP_WORDS"]
