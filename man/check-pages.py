# SPDX-License-Identifier: Apache-2.0
"""Fail when the manual pages are not what a reader gets from `man`.

    check-pages.py --builddir DIR --sourcedir DIR [--mandoc MANDOC]

Installs the build's manual pages (`meson install --no-rebuild --tags man`)
into a temporary directory and checks, on the pages as installed:

- every page in the source's man/ directory (NAME.SECTION) is installed,
  as MANDIR/manSECTION/NAME.SECTION, and nothing else is;
- every `.Xr` that names one of the project's pages (ralon, ralon-*,
  agent.lock), and every `man:` link of the journal catalog that does,
  names one that is installed;
- ralon(1) names every other page in its SEE ALSO, and every other page
  names ralon(1) in its own: the pages are reached from each other both
  ways;
- every `.Sx` names a section or subsection of its own page, or, written
  `.Sx NAME` `in` `.Xr PAGE N`, of that page when it is one of ours;
- no page still holds @VERSION@, and each has the version in `.Os`;
- `mandoc -Tlint -Wwarning` reports nothing (where mandoc is found; else
  the test is skipped once the rest has passed).

Exit status: 0 pass, 1 fail, 77 skipped (no mandoc, or -Dman=disabled).
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "install"))
from test_install import Layout, build_options, meson_command  # noqa: E402

PAGE_NAME = re.compile(r"^([a-z][a-z0-9.-]*)\.([1-8])$")


def own(name):
    return name == "ralon" or name.startswith("ralon-") or name == "agent.lock"


def source_pages(sourcedir):
    return sorted(n for n in os.listdir(os.path.join(sourcedir, "man"))
                  if PAGE_NAME.match(n))


def sections(text):
    return {m.group(2).strip().strip('"')
            for m in re.finditer(r"^\.(Sh|Ss)\s+(.*)$", text, re.M)}


def see_also(text):
    m = re.search(r"^\.Sh SEE ALSO\n(.*?)(?=^\.Sh |\Z)", text, re.M | re.S)
    return set(re.findall(r"^\.Xr (\S+) (\d)", m.group(1), re.M)) if m else set()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", required=True)
    ap.add_argument("--sourcedir", required=True)
    ap.add_argument("--mandoc", default="")
    ap.add_argument("--version", required=True)
    args = ap.parse_args()

    opts = build_options(args.builddir)
    if opts.get("man") == "disabled":
        print("-Dman=disabled: no manual pages are installed")
        return 77
    mandir = Layout(opts).dir("mandir")
    problems = []
    wanted = source_pages(args.sourcedir)

    with tempfile.TemporaryDirectory(prefix="ralon-man-") as destdir:
        cmd = meson_command(args.builddir, None) + [
            "install", "-C", args.builddir, "--no-rebuild", "--destdir", destdir,
            "--tags", "man", "--quiet"]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            print("FAIL: %s\n%s" % (" ".join(cmd), r.stdout))
            return 1
        root = os.path.join(destdir, mandir.lstrip("/"))
        installed = {}
        for top, _, files in os.walk(destdir):
            for n in files:
                path = os.path.join(top, n)
                m = PAGE_NAME.match(n)
                if (m and os.path.dirname(path) == os.path.join(root, "man" + m.group(2))):
                    installed[n] = path
                else:
                    problems.append("installed with the manual pages, but not one: %s"
                                    % os.path.relpath(path, destdir))
        for n in wanted:
            if n not in installed:
                problems.append("man/%s is not installed as %s/man%s/%s"
                                % (n, mandir, n.rsplit(".", 1)[1], n))
        for n in sorted(set(installed) - set(wanted)):
            problems.append("%s is installed but is not a page in man/" % n)

        texts = {}
        for n, path in sorted(installed.items()):
            with open(path, encoding="utf-8") as f:
                texts[n] = f.read()
        for n, text in texts.items():
            if "@VERSION@" in text:
                problems.append("%s: @VERSION@ was not replaced" % n)
            if not re.search(r"^\.Os ralon %s$" % re.escape(args.version), text, re.M):
                problems.append("%s: `.Os` does not give `ralon %s`" % (n, args.version))
            for name, sec in re.findall(r"^\.Xr (\S+) (\d)", text, re.M):
                if own(name) and "%s.%s" % (name, sec) not in installed:
                    problems.append("%s names %s(%s), which is not installed"
                                    % (n, name, sec))
            lines = text.splitlines()
            for i, line in enumerate(lines):
                m = re.match(r"^\.Sx (.+?)(?: [,.;:()]+(?: .*)?)?$", line)
                if not m:
                    continue
                # `.Sx NAME` `in` `.Xr PAGE N`: a section of another page.
                where = n
                x = re.match(r"^\.Xr (\S+) (\d)", lines[i + 2]) if i + 2 < len(lines) else None
                if x and lines[i + 1] == "in":
                    where = "%s.%s" % x.groups()
                    if where not in texts:
                        continue  # another project's page; not ours to check
                if m.group(1).strip('"') not in sections(texts[where]):
                    problems.append("%s: `%s` names no section of %s" % (n, line, where))
        # The journal catalog's Documentation: lines, which journalctl -x
        # shows, name pages too.
        catalog = os.path.join(args.sourcedir, "data", "catalog", "ralon.catalog")
        with open(catalog, encoding="utf-8") as f:
            for name, sec in re.findall(r"man:([^\s()]+)\((\d)\)", f.read()):
                if own(name) and "%s.%s" % (name, sec) not in installed:
                    problems.append("data/catalog/ralon.catalog names %s(%s), which is "
                                    "not installed" % (name, sec))
        main_page = "ralon.1"
        if main_page in texts:
            refs = see_also(texts[main_page])
            for n in texts:
                if n == main_page:
                    continue
                name, sec = n.rsplit(".", 1)
                if (name, sec) not in refs:
                    problems.append("ralon(1)'s SEE ALSO does not name %s(%s)" % (name, sec))
                if ("ralon", "1") not in see_also(texts[n]):
                    problems.append("%s's SEE ALSO does not name ralon(1)" % n)

        linted = False
        if args.mandoc and texts:
            r = subprocess.run([args.mandoc, "-Tlint", "-Wwarning"] + sorted(installed.values()),
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            out = r.stdout.replace(destdir, "DESTDIR")
            if r.returncode != 0 or out.strip():
                problems.append("mandoc -Tlint -Wwarning:\n" + out)
            linted = True

    if problems:
        for p in problems:
            print("FAIL: " + p)
        return 1
    print("%d pages installed, cross-referenced both ways%s" %
          (len(installed), ", lint clean" if linted else ""))
    if not linted:
        print("mandoc not found: the installed pages were not linted")
        return 77
    return 0


if __name__ == "__main__":
    sys.exit(main())
