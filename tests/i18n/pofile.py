# SPDX-License-Identifier: Apache-2.0
"""A small reader for gettext PO files, and the helpers both i18n tests share.

Only what the tests need: entries with their flags, extracted comments,
references, msgid, msgid_plural and msgstr(s); obsolete (#~) entries are
skipped. Strings are unescaped the way msgfmt reads them.
"""
import os
import re
import sys

SKIP = 77


def skip_or_fail(reason):
    """Skips the test (exit 77) with REASON, or fails it when the
    environment demands that the translation tests really run."""
    if os.environ.get("RALON_REQUIRE_I18N") == "1":
        print(f"FAIL: {reason} (RALON_REQUIRE_I18N=1 turns this skip into a failure)")
        sys.exit(1)
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", "\\": "\\", '"': '"', "'": "'", "?": "?"}


def _unescape(s):
    def repl(m):
        e = m.group(1)
        if e in _ESCAPES:
            return _ESCAPES[e]
        if e[0] in "01234567":
            return chr(int(e, 8))
        if e[0] == "x":
            return chr(int(e[1:], 16))
        return e
    return re.sub(r'\\([0-7]{1,3}|x[0-9a-fA-F]+|.)', repl, s)


class Entry:
    def __init__(self):
        self.flags = set()
        self.comments = []      # extracted comments (#.), TRANSLATORS: ones among them
        self.references = []    # #: file:line
        self.msgctxt = None
        self.msgid = None
        self.msgid_plural = None
        self.msgstr = {}        # plural index (0 when singular) -> text
        self.line = 0

    @property
    def fuzzy(self):
        return "fuzzy" in self.flags

    @property
    def translated(self):
        return bool(self.msgstr) and all(v != "" for v in self.msgstr.values())

    def where(self):
        return " ".join(self.references) or f"line {self.line}"


def parse(path):
    """Returns (header Entry or None, [Entry...]) of the PO file PATH."""
    entries = []
    cur = Entry()
    field = None
    seen_text = False

    def finish():
        nonlocal cur, field, seen_text
        if cur.msgid is not None:
            entries.append(cur)
        cur = Entry()
        field = None
        seen_text = False

    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            stripped = line.strip()
            if not stripped:
                if seen_text:
                    finish()
                continue
            if stripped.startswith("#~"):
                continue  # obsolete
            if stripped.startswith("#"):
                if seen_text:
                    finish()
                if stripped.startswith("#,"):
                    cur.flags.update(x.strip() for x in stripped[2:].split(",") if x.strip())
                elif stripped.startswith("#."):
                    cur.comments.append(stripped[2:].strip())
                elif stripped.startswith("#:"):
                    cur.references.extend(stripped[2:].split())
                continue
            m = re.match(r'^(msgctxt|msgid_plural|msgid|msgstr(?:\[(\d+)\])?)\s+"(.*)"$', stripped)
            if m:
                keyword = m.group(1)
                if keyword == "msgid" and seen_text and cur.msgid is not None and field is not None \
                        and field[0] == "msgstr":
                    finish()
                text = _unescape(m.group(3))
                seen_text = True
                if cur.line == 0:
                    cur.line = n
                if keyword == "msgctxt":
                    cur.msgctxt = text
                    field = ("msgctxt",)
                elif keyword == "msgid":
                    cur.msgid = text
                    field = ("msgid",)
                elif keyword == "msgid_plural":
                    cur.msgid_plural = text
                    field = ("msgid_plural",)
                else:
                    idx = int(m.group(2)) if m.group(2) is not None else 0
                    cur.msgstr[idx] = text
                    field = ("msgstr", idx)
                continue
            m = re.match(r'^"(.*)"$', stripped)
            if m and field is not None:
                text = _unescape(m.group(1))
                if field[0] == "msgctxt":
                    cur.msgctxt += text
                elif field[0] == "msgid":
                    cur.msgid += text
                elif field[0] == "msgid_plural":
                    cur.msgid_plural += text
                else:
                    cur.msgstr[field[1]] += text
                continue
            raise ValueError(f"{path}:{n}: cannot parse: {line!r}")
    finish()
    header = None
    if entries and entries[0].msgid == "" and entries[0].msgctxt is None:
        header = entries.pop(0)
    return header, entries


def header_fields(header):
    fields = {}
    if header is None:
        return fields
    for line in header.msgstr.get(0, "").split("\n"):
        if ":" in line:
            k, v = line.split(":", 1)
            fields[k.strip()] = v.strip()
    return fields


# A printf conversion as ralon's messages use them (glibc's %m included).
_CONVERSION = re.compile(r"%(?:%|[-+ #0]*(?:\*|\d+)?(?:\.(?:\*|\d+))?(?:hh|h|ll|l|j|z|t|L)?[diouxXcsfgeEpm])")


_ANY = "(.*?)"


def _conversion_regex(conv):
    c = conv[-1]
    if c == "c":
        return "(.)"
    if c in "diu":
        return r"([-+]?\d+)"
    if c in "xX":
        return "([0-9a-fA-F]+)"
    return _ANY  # s, m (strerror), p, floating point


def _tokens(fmt):
    """FMT as a list of ("lit", text) and ("conv", regex), adjacent literals
    joined, and runs of adjacent text conversions joined into one."""
    out = []
    pos = 0

    def lit(t):
        if out and out[-1][0] == "lit":
            out[-1] = ("lit", out[-1][1] + t)
        elif t:
            out.append(("lit", t))

    for m in _CONVERSION.finditer(fmt):
        lit(fmt[pos:m.start()])
        if m.group(0) == "%%":
            lit("%")
        else:
            rx = _conversion_regex(m.group(0))
            if not (rx == _ANY and out and out[-1] == ("conv", _ANY)):
                out.append(("conv", rx))
        pos = m.end()
    lit(fmt[pos:])
    return out


def format_regex(fmt):
    """A regular expression that matches what printf(FMT, ...) can print."""
    return re.compile("".join(re.escape(t) if k == "lit" else t for k, t in _tokens(fmt)),
                      re.DOTALL)


def format_matches(fmt, text):
    """Whether printf(FMT, ...) can print TEXT."""
    tokens = _tokens(fmt)
    if all(k == "lit" for k, _ in tokens):
        return "".join(t for _, t in tokens) == text
    # Cheap first: the literal pieces in order; then the expression.
    pos = 0
    for k, t in tokens:
        if k == "lit":
            i = text.find(t, pos)
            if i < 0:
                return False
            pos = i + len(t)
    return format_regex(fmt).fullmatch(text) is not None


def literal_length(fmt):
    return len(_CONVERSION.sub("", fmt))


def find_entry(entries, text):
    """The entry whose msgid (as a printf format) prints TEXT; among several,
    the one with the most literal text. None when no msgid matches."""
    best = None
    for e in entries:
        fmt = e.msgid if "c-format" in e.flags else e.msgid.replace("%", "%%")
        if format_matches(fmt, text):
            if best is None or literal_length(e.msgid) > literal_length(best.msgid):
                best = e
    return best
