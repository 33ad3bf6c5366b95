# SPDX-License-Identifier: Apache-2.0
"""Every translation in po/LINGUAS must be complete for the current sources.

The messages are extracted from the sources exactly as meson's `ralon-pot`
target does it (same xgettext arguments, passed in by tests/i18n/meson.build),
into a temporary template, never po/ralon.pot. Each po/LANG.po is then merged
against that template the way `ralon-update-po` merges it, into a temporary
file, and the merge must leave no untranslated and no fuzzy message: a
message added or changed in the sources without a translation fails here,
with the list of what to translate. The translation itself must pass
`msgfmt -c --check-format`, and the lines scripts parse must stay as they are.

Fix a failure with `ninja -C BUILDDIR ralon-update-po`, then translate what
this test lists in po/LANG.po and remove the fuzzy flags.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pofile  # noqa: E402

# msgids whose msgstr must be the msgid itself: the column words of
# `ralon check`, which scripts written for the Rust ralon parse. Entries with
# a TRANSLATORS comment saying scripts read the line are added to these.
KEEP_AS_IS = {"locked    ", "writable  ", "outside   "}
SCRIPTS_READ = re.compile(r"\bscripts\b.*\bread\b", re.IGNORECASE)

# A string literal marked for translation: _("..."), N_("..."), P_("...", ...).
MARKED = re.compile(r'(?<![A-Za-z0-9_])(?:_|N_|P_)\(\s*"')
# C comments (which xgettext ignores), found beside the literals they may
# appear in.
C_TOKENS = re.compile(r'"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'|/\*.*?\*/|//[^\n]*', re.DOTALL)


def without_comments(text):
    return C_TOKENS.sub(lambda m: " " if m.group(0)[0] == "/" else m.group(0), text)


def run(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, **kw)


def read_list(path):
    out = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line and not line.startswith("#"):
                out.extend(line.split())
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source-root", required=True)
    ap.add_argument("--po-dir", required=True)
    ap.add_argument("--package", required=True)
    ap.add_argument("--xgettext", default="xgettext")
    ap.add_argument("--msgmerge", default="msgmerge")
    ap.add_argument("--msgfmt", default="msgfmt")
    ap.add_argument("--xgettext-arg", action="append", default=[])
    ap.add_argument("--nls-disabled", action="store_true")
    a = ap.parse_args()

    if a.nls_disabled:
        pofile.skip_or_fail("ralon is configured without NLS (-Dnls=disabled or no libintl)")
    for tool in (a.xgettext, a.msgmerge, a.msgfmt):
        if shutil.which(tool) is None:
            pofile.skip_or_fail(f"{tool} is not installed (it comes with gettext)")

    failures = []
    potfiles = os.path.join(a.po_dir, "POTFILES")
    listed = read_list(potfiles)

    # 1. Every source file with a marked string is in POTFILES, or its
    #    messages would silently never reach the template.
    missing = []
    for d, dirs, files in os.walk(os.path.join(a.source_root, "src")):
        dirs.sort()
        for name in sorted(files):
            if not name.endswith((".c", ".h")):
                continue
            path = os.path.join(d, name)
            rel = os.path.relpath(path, a.source_root)
            with open(path, encoding="utf-8", errors="replace") as f:
                if MARKED.search(without_comments(f.read())) and rel not in listed:
                    missing.append(rel)
    for rel in listed:
        if not os.path.isfile(os.path.join(a.source_root, rel)):
            failures.append(f"po/POTFILES lists {rel}, which does not exist")
    if missing:
        failures.append("these files have translatable strings but are not in po/POTFILES:\n  "
                        + "\n  ".join(missing))

    langs = read_list(os.path.join(a.po_dir, "LINGUAS"))
    if not langs:
        failures.append("po/LINGUAS lists no language")

    with tempfile.TemporaryDirectory(prefix="ralon-i18n-") as tmp:
        # 2. The template, exactly as meson's gettext helper makes it.
        pot = os.path.join(tmp, a.package + ".pot")
        r = run([a.xgettext, "--package-name=" + a.package, "-p", tmp, "-f", potfiles,
                 "-D", a.source_root, "-k_", "-o", a.package + ".pot"] + a.xgettext_arg)
        if r.returncode != 0 or not os.path.exists(pot):
            print(r.stdout + r.stderr)
            print("FAIL: xgettext could not extract the messages")
            return 1
        _, template = pofile.parse(pot)
        print(f"template: {len(template)} messages from {len(listed)} files")

        for lang in langs:
            po = os.path.join(a.po_dir, lang + ".po")
            if not os.path.exists(po):
                failures.append(f"po/LINGUAS lists {lang}, but po/{lang}.po does not exist")
                continue
            # 3. The translation as it is: valid, formats matching.
            r = run([a.msgfmt, "-c", "--check-format", "-o", os.devnull, po])
            if r.returncode != 0:
                failures.append(f"msgfmt -c --check-format po/{lang}.po fails:\n{r.stderr}")
            header, own = pofile.parse(po)
            fields = pofile.header_fields(header)
            if fields.get("Language") != lang:
                failures.append(f"po/{lang}.po: header Language is {fields.get('Language')!r}, "
                                f"not {lang!r}")
            if "charset=UTF-8" not in fields.get("Content-Type", ""):
                failures.append(f"po/{lang}.po: the header does not declare charset=UTF-8")
            if "nplurals=" not in fields.get("Plural-Forms", "") or \
                    "INTEGER" in fields.get("Plural-Forms", ""):
                failures.append(f"po/{lang}.po: the header has no real Plural-Forms")
            if header is not None and header.fuzzy:
                failures.append(f"po/{lang}.po: the header is fuzzy")

            # 4. Merged against the current sources: nothing untranslated,
            #    nothing fuzzy.
            merged = os.path.join(tmp, lang + ".po")
            r = run([a.msgmerge, "--quiet", "-o", merged, po, pot])
            if r.returncode != 0:
                failures.append(f"msgmerge po/{lang}.po fails:\n{r.stderr}")
                continue
            r = run([a.msgfmt, "--statistics", "-c", "--check-format", "-o", os.devnull, merged])
            print(f"{lang}: {r.stderr.strip()}")
            if r.returncode != 0:
                failures.append(f"po/{lang}.po merged with the current sources does not pass "
                                f"msgfmt -c --check-format:\n{r.stderr}")
            _, entries = pofile.parse(merged)
            untranslated = [e for e in entries if not e.translated]
            fuzzy = [e for e in entries if e.fuzzy and e.translated]
            for title, bad in (("untranslated", untranslated), ("fuzzy", fuzzy)):
                if bad:
                    lines = [f"po/{lang}.po: {len(bad)} {title} message(s) for the current "
                             f"sources:"]
                    for e in bad:
                        lines.append(f"  {e.where()}: {e.msgid!r}")
                    failures.append("\n".join(lines))

            # 5. What scripts parse stays as it is.
            for e in entries:
                keep = e.msgid in KEEP_AS_IS or any(SCRIPTS_READ.search(c) for c in e.comments)
                if keep and e.translated and e.msgstr.get(0) != e.msgid:
                    failures.append(f"po/{lang}.po: {e.where()}: scripts parse {e.msgid!r}, so "
                                    f"its msgstr must be identical, not {e.msgstr.get(0)!r}")

    if failures:
        print()
        for f in failures:
            print("FAIL: " + f)
        print("\nTo fix: ninja -C BUILDDIR ralon-update-po, then translate the messages "
              "listed above in po/LANG.po (and remove their fuzzy flags).")
        return 1
    print("ok: every translation is complete for the current sources")
    return 0


if __name__ == "__main__":
    sys.exit(main())
