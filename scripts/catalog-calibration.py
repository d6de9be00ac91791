#!/usr/bin/env python3
"""Build a labelled contract-calibration set from text nobody here wrote.

Why: the committed calibration parts were written by the team, so they share
its habits. The gettext message catalogs installed with the system's packages
(/usr/share/locale/<lang>/LC_MESSAGES/*.mo) hold sentences translated by
people, in every language the contracts know. This script reads them (Python's
own .mo parser, no network), keeps the sentence-like messages, and writes a
JSONL set in the format of datasets/contracts-calibration-*.jsonl that
`continuity-bench contracts calibrate --set FILE` scores.

Cases per language (the conversation's language is the catalog's):
  clean-short   one translated sentence as the reply            pass
  clean-long    three or four translated sentences               pass
  pasted        the user's words plus an unfenced pasted English
                block (log, quoted e-mail, command output, trace)
                made of the catalogs' English messages; reply in
                the user's language                              pass
  switch        the same sentences in English (the catalog's
                originals); English conversations switch to the
                German translations                              fail
  mix           four sentences in the language, two in English   fail
  close         the reply in the close language (pt/es, it/es,
                nl/de, es/pt, de/nl, id: none), same messages    fail

The text is built at run time and never committed. Deterministic: --seed
decides every draw; the catalogs are read in sorted order.

Usage:
  python3 scripts/catalog-calibration.py --out /tmp/catalog.jsonl
  continuity-bench contracts calibrate --set /tmp/catalog.jsonl
"""

import argparse
import glob
import gettext
import json
import os
import random
import re
import sys

LOCALE_DIR = "/usr/share/locale"

# The contracts' 17 languages and the catalog directories that hold them.
LANGUAGES = {
    "en": [],  # the catalogs' msgids are English
    "pt": ["pt", "pt_BR"],
    "es": ["es"],
    "fr": ["fr"],
    "it": ["it"],
    "de": ["de"],
    "nl": ["nl"],
    "pl": ["pl"],
    "tr": ["tr"],
    "ja": ["ja"],
    "ru": ["ru"],
    "zh": ["zh_CN", "zh_TW"],
    "ko": ["ko"],
    "ar": ["ar"],
    "hi": ["hi"],
    "id": ["id"],
    "vi": ["vi"],
}

# The close language a reply drifts into (the degradations' neighbours).
CLOSE = {"pt": "es", "es": "pt", "it": "es", "nl": "de", "de": "nl", "en": "de"}

# A script each non-Latin language's sentence must use.
SCRIPTS = {
    "ja": re.compile(r"[\u3040-\u30ff]"),
    "zh": re.compile(r"[\u4e00-\u9fff]"),
    "ko": re.compile(r"[\uac00-\ud7af]"),
    "ru": re.compile(r"[\u0400-\u04ff]"),
    "ar": re.compile(r"[\u0600-\u06ff]"),
    "hi": re.compile(r"[\u0900-\u097f]"),
}

PLACEHOLDER = re.compile(r"%|\{|\}|<|>|\\|\$|&|_|\t|https?:|@|\|")
LABELS_PASS = {"junk_prefix": "pass", "language": "pass", "refusal": "pass",
               "empty": "pass", "truncated": "pass"}


def sentence_like(msgid, msgstr, lang):
    """Whether a catalog pair is a plain sentence on both sides."""
    if not msgstr or msgstr == msgid or "\n" in msgid or "\n" in msgstr:
        return False
    if PLACEHOLDER.search(msgid) or PLACEHOLDER.search(msgstr):
        return False
    words = msgid.split()
    if len(words) < 5 or len(msgid) > 220 or not msgid[0].isupper():
        return False
    if not msgid.endswith("."):
        return False
    if not (msgstr.endswith(".") or msgstr.endswith("。") or msgstr.endswith("।")
            or msgstr.endswith("۔")):
        return False
    script = SCRIPTS.get(lang)
    if script and not script.search(msgstr):
        return False
    if not script and not msgstr[0].isupper():
        return False
    return True


def read_catalogs(dirs):
    """{msgid: (msgstr, domain)} over the catalogs of `dirs`, sorted order."""
    out = {}
    for d in dirs:
        for path in sorted(glob.glob(os.path.join(LOCALE_DIR, d, "LC_MESSAGES", "*.mo"))):
            try:
                with open(path, "rb") as f:
                    catalog = gettext.GNUTranslations(f)._catalog
            except Exception:  # a malformed catalog is skipped, not fatal
                continue
            domain = os.path.basename(path)[:-3]
            for key, value in catalog.items():
                if isinstance(key, tuple) or not isinstance(value, str):
                    continue  # plural forms
                if key not in out:
                    out[key] = (value, f"{d}/{domain}")
    return out


def case(cid, lang, user, reply, label, note):
    labels = dict(LABELS_PASS)
    labels["language"] = label
    return {
        "id": cid, "language": lang, "origin": "hand",
        "request": {"messages": [{"role": "user", "content": user}], "stream": False},
        "reply": {"text": reply, "finish_reason": "stop", "ttft_ms": None},
        "labels": labels, "note": note,
    }


def paste_block(rng, english):
    """An unfenced English block a user pastes, made of catalog messages."""
    lines = rng.sample(english, 3)
    kind = rng.choice(["log", "mail", "shell", "trace"])
    if kind == "log":
        return kind, "\n".join(f"2024-03-0{i + 1} 12:0{i}:5{i} ERROR {l}" for i, l in enumerate(lines))
    if kind == "mail":
        return kind, "From: support@example.com\nSubject: " + lines[0] + "\n\n> " + "\n> ".join(lines[1:])
    if kind == "shell":
        return kind, "$ make install\nerror: " + lines[0] + "\nhint: " + lines[1]
    return kind, "Traceback (most recent call last):\n  File \"/usr/lib/app.py\", line 12, in main\nRuntimeError: " + lines[0]


def build(per_kind, seed):
    rng = random.Random(seed)
    catalogs = {lang: read_catalogs(dirs) for lang, dirs in LANGUAGES.items() if dirs}
    pairs = {lang: sorted((k, v[0], v[1]) for k, v in cat.items() if sentence_like(k, v[0], lang))
             for lang, cat in catalogs.items()}
    english = sorted({k for p in pairs.values() for k, _, _ in p})
    # English conversations: the msgids, switching into German.
    de = {k: s for k, s, _ in pairs.get("de", [])}
    pairs["en"] = [(k, k, "msgid") for k in english if k in de]
    cases, coverage = [], {}
    for lang in LANGUAGES:
        p = pairs.get(lang, [])
        coverage[lang] = {"catalog_dirs": LANGUAGES[lang] or ["(msgids)"],
                          "sentences": len(p)}
        if len(p) < 12:
            continue
        local = {k: s for k, s, _ in p}
        close = CLOSE.get(lang)
        close_map = {k: s for k, s, _ in pairs.get(close, [])} if close else {}
        if lang == "en":
            close_map = de
        n = 0

        def draw(k):
            return rng.sample(p, k)

        for i in range(per_kind):
            (k1, s1, d1), = draw(1)
            user = " ".join(s for _, s, _ in draw(2))
            cases.append(case(f"{lang}-cat-short-{i}", lang, user, s1, "pass", f"catalog {d1}: clean, short"))
            chosen = draw(rng.randint(3, 4))
            long_reply = " ".join(s for _, s, _ in chosen)
            cases.append(case(f"{lang}-cat-long-{i}", lang, user, long_reply, "pass", "catalog: clean, long"))
            kind, block = paste_block(rng, english)
            own = draw(1)[0][1]
            pasted_user = f"{own}\n\n{block}" if i % 2 == 0 else f"{block}\n\n{own}"
            cases.append(case(f"{lang}-cat-pasted-{kind}-{i}", lang, pasted_user, long_reply, "pass",
                              f"catalog: clean reply after a pasted English {kind}"))
            if lang == "en":
                switched = " ".join(de[k] for k, _, _ in chosen if k in de)
            else:
                switched = " ".join(k for k, _, _ in chosen)
            cases.append(case(f"{lang}-cat-switch-{i}", lang, user, switched, "fail",
                              "catalog: the same sentences in another language (switch)"))
            if lang != "en":
                local4 = draw(4)
                eng2 = [k for k, _, _ in draw(2)]
                mixed = [local4[0][1], eng2[0], local4[1][1], local4[2][1], eng2[1], local4[3][1]]
                cases.append(case(f"{lang}-cat-mix-{i}", lang, user, " ".join(mixed), "fail",
                                  "catalog: four sentences in the language, two in English (mix)"))
            if close_map:
                both = [(k, s) for k, s, _ in chosen if k in close_map]
                if len(both) >= 2:
                    reply = " ".join(close_map[k] for k, _ in both)
                    cases.append(case(f"{lang}-cat-close-{i}", lang, user, reply, "fail",
                                      f"catalog: the reply in the close language {close} (switch)"))
            n += 1
        coverage[lang]["cases"] = sum(1 for c in cases if c["language"] == lang)
    return cases, coverage


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True, help="the JSONL file to write (not committed)")
    ap.add_argument("--per-kind", type=int, default=40, help="cases of each kind per language")
    ap.add_argument("--seed", type=int, default=37, help="master seed of every draw")
    args = ap.parse_args()
    if not os.path.isdir(LOCALE_DIR):
        sys.exit(f"{LOCALE_DIR} is missing: install packages with translations "
                 "(for instance `apt-get install coreutils gettext` with locales kept)")
    cases, coverage = build(args.per_kind, args.seed)
    with open(args.out, "w", encoding="utf-8") as f:
        for c in cases:
            f.write(json.dumps(c, ensure_ascii=False) + "\n")
    print(f"{len(cases)} cases written to {args.out}", file=sys.stderr)
    for lang, c in coverage.items():
        missing = "" if c["sentences"] >= 12 else "  (too few: install translated packages)"
        print(f"  {lang}: {c['sentences']} sentence pairs from {', '.join(c['catalog_dirs'])}, "
              f"{c.get('cases', 0)} cases{missing}", file=sys.stderr)


if __name__ == "__main__":
    main()
