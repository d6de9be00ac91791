#!/usr/bin/env python3
"""Writes crates/contracts/data/english-words.txt: the English lexicon the
language detector's lexicon rules read (see crates/contracts/src/detect.rs).

It lists the 40,000 most frequent English words of wordfreq 3.1.1 that are
written in ASCII letters (one inner apostrophe allowed), one a line, each
with a mark: `1` when the word is at least RATIO times as frequent in
English as in each of the other Latin-script languages the contracts know
(es, pt, fr, it, de, nl, pl, tr, id, vi), so that it is evidence of English
alone ("the", "you", "sister", "overnight"); `0` when one of them uses it
too ("a", "in", "is", "long", "hotel", "water").

Run it from the repository's root, with wordfreq installed
(`python3 -m venv /tmp/wf && /tmp/wf/bin/pip install wordfreq==3.1.1`):

    /tmp/wf/bin/python scripts/english-lexicon.py

The output is deterministic for a given wordfreq version. wordfreq's word
lists are CC BY-SA 4.0 (Robyn Speer, https://github.com/rspeer/wordfreq),
and so is the list this writes; its header says so.
"""

import re
import sys

import wordfreq

TOP = 40_000
RATIO = 5.0
OTHERS = ["es", "pt", "fr", "it", "de", "nl", "pl", "tr", "id", "vi"]
OUT = "crates/contracts/data/english-words.txt"


def main() -> int:
    kept = []
    for word in wordfreq.top_n_list("en", TOP):
        if not re.fullmatch(r"[a-z]+('[a-z]+)?", word):
            continue
        english = wordfreq.word_frequency(word, "en")
        other = max(wordfreq.word_frequency(word, lang) for lang in OTHERS)
        kept.append(f"{word}\t{1 if english >= RATIO * other else 0}")
    kept.sort()
    with open(OUT, "w", encoding="utf-8") as out:
        out.write(
            f"# wordfreq 3.1.1's {TOP:,} most frequent English words in ASCII letters, each marked 1\n"
            f"# when at least {RATIO:g} times as frequent in English as in any of {', '.join(OTHERS)}.\n"
            "# Written by scripts/english-lexicon.py; do not edit by hand.\n"
            "# Derived from wordfreq's word lists, CC BY-SA 4.0, Robyn Speer\n"
            "# (https://github.com/rspeer/wordfreq); this list is under the same licence.\n"
        )
        out.write("\n".join(kept))
        out.write("\n")
    print(f"{OUT}: {len(kept)} words, {sum(k.endswith('1') for k in kept)} marked", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
