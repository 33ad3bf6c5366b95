# SPDX-License-Identifier: Apache-2.0
"""The built ralon speaks German in a German locale, and English in C.

ralon finds its catalogs only in its compiled LOCALEDIR (config.h), and has
no override, on purpose. So each run of the binary happens in a private
user and mount namespace (`unshare -rm`) in which the build's po directory
(BUILDDIR/po/LANG/LC_MESSAGES/ralon.mo) is bind-mounted over LOCALEDIR;
nothing outside the namespace sees it. Where LOCALEDIR does not exist, a
tmpfs is put over its nearest existing ancestor, every entry of that
ancestor bound back into it, and LOCALEDIR created there.

The expected texts are never copies: the English output of the C locale
is looked up in po/de.po, and the German output must be its msgstr.

Skips (exit 77), with the reason, when the German locale is not generated
or user namespaces are not available; RALON_REQUIRE_I18N=1 makes those
skips failures.
"""
import argparse
import ctypes
import os
import stat
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True  # no __pycache__ in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pofile  # noqa: E402

MS_BIND = 4096
MS_REC = 16384


def _mount(source, target, fstype=None, flags=0, data=None):
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p] * 3 + [ctypes.c_ulong, ctypes.c_char_p]
    enc = (lambda s: None if s is None else os.fsencode(s))
    if libc.mount(enc(source), enc(target), enc(fstype), flags, enc(data)) != 0:
        e = ctypes.get_errno()
        raise OSError(e, f"mount {source} on {target}: {os.strerror(e)}")


def _cover_ancestor(anc):
    """Puts a tmpfs over ANC with every entry of ANC bound back into it, so
    that a missing directory can be created below ANC while everything that
    was there stays where it was."""
    keep = os.open(anc, os.O_PATH | os.O_DIRECTORY)
    st = os.stat(keep)
    _mount("tmpfs", anc, "tmpfs", 0, "mode=%o" % stat.S_IMODE(st.st_mode))
    old = f"/proc/self/fd/{keep}"
    for name in os.listdir(old):
        src = os.path.join(old, name)
        dst = os.path.join(anc, name)
        lst = os.lstat(src)
        if stat.S_ISLNK(lst.st_mode):
            os.symlink(os.readlink(src), dst)
            continue
        if stat.S_ISDIR(lst.st_mode):
            os.mkdir(dst)
        else:
            open(dst, "w").close()
        _mount(src, dst, None, MS_BIND | MS_REC)


def in_namespace(localedir, catalogs, argv):
    """Runs inside `unshare -rm`: mounts the catalogs over LOCALEDIR, then
    becomes ARGV."""
    if not os.path.isdir(localedir):
        anc = localedir
        while not os.path.isdir(anc):
            anc = os.path.dirname(anc)
        if anc == "/":
            print(f"ralon-i18n-namespace: {localedir}: no ancestor but / exists", file=sys.stderr)
            sys.exit(125)
        _cover_ancestor(anc)
        os.makedirs(localedir)
    _mount(catalogs, localedir, None, MS_BIND | MS_REC)
    os.execv(argv[0], argv)


class Runner:
    def __init__(self, ralon, localedir, catalogs):
        self.ralon = ralon
        self.localedir = localedir
        self.catalogs = catalogs

    def run(self, args, env, cwd=None, text=True):
        full_env = {k: v for k, v in os.environ.items()
                    if not k.startswith("LC_") and k not in ("LANG", "LANGUAGE")}
        full_env.update(env)
        full_env["NO_COLOR"] = "1"
        cmd = ["unshare", "-rm", sys.executable, os.path.abspath(__file__), "--in-namespace",
               "--localedir", self.localedir, "--catalogs", self.catalogs, "--",
               self.ralon] + args
        return subprocess.run(cmd, env=full_env, cwd=cwd, capture_output=True, text=text)


GERMAN = {"LANG": "de_DE.UTF-8"}
C = {"LANG": "de_DE.UTF-8", "LC_ALL": "C"}


class Failed(Exception):
    pass


def check(cond, msg):
    if not cond:
        raise Failed(msg)


def english_and_german(entries, english, german, what):
    """ENGLISH must be printed by exactly a msgid of de.po, and GERMAN by that
    entry's msgstr (a translation, different from the msgid)."""
    e = pofile.find_entry(entries, english)
    check(e is not None, f"{what}: no msgid in de.po prints the English {english!r}")
    check(e.translated and not e.fuzzy, f"{what}: {e.msgid!r} is not translated in de.po")
    check(e.msgstr[0] != e.msgid, f"{what}: the msgstr of {e.msgid!r} is the msgid itself")
    fmt = e.msgstr[0] if "c-format" in e.flags else e.msgstr[0].replace("%", "%%")
    check(pofile.format_matches(fmt, german),
          f"{what}: expected the msgstr of {e.msgid!r} from de.po,\n"
          f"  msgstr: {e.msgstr[0]!r}\n  got:    {german!r}")
    return e


def strip_prog(stderr, what):
    check(stderr.startswith("ralon: ") and stderr.endswith("\n"),
          f"{what}: expected one 'ralon: ...' error, got {stderr!r}")
    return stderr[len("ralon: "):-1]


def test_help(r, entries):
    c = r.run(["--help"], C)
    de = r.run(["--help"], GERMAN)
    check(c.returncode == 0 and de.returncode == 0,
          f"--help exits {c.returncode} (C) and {de.returncode} (de), not 0")
    e = english_and_german(entries, c.stdout, de.stdout, "ralon --help")
    check(c.stdout == e.msgid, "LC_ALL=C ralon --help is not the English msgid")
    print("ok: --help is German with LANG=de_DE.UTF-8 and English with LC_ALL=C")
    print("    " + de.stdout.splitlines()[0])


def test_help_c_utf8(r):
    c = r.run(["--help"], C)
    cu = r.run(["--help"], {"LC_ALL": "C.UTF-8", "LANG": "de_DE.UTF-8"})
    check(cu.stdout == c.stdout, "LC_ALL=C.UTF-8 ralon --help is not the English text")
    print("ok: LC_ALL=C.UTF-8 keeps --help English")


def test_error_no_policy(r, entries):
    with tempfile.TemporaryDirectory(prefix="ralon-i18n-") as d:
        # Nothing above the temporary directory may hold an agent.lock.
        p = d
        while p != "/":
            p = os.path.dirname(p)
            if os.path.exists(os.path.join(p, "agent.lock")):
                raise Failed(f"{p}/agent.lock exists, so `ralon check` finds a policy")
        c = r.run(["check"], C, cwd=d)
        de = r.run(["check"], GERMAN, cwd=d)
    check(c.returncode == 2, f"ralon check without agent.lock exits {c.returncode} (C), not 2")
    check(de.returncode == c.returncode,
          f"ralon check without agent.lock exits {de.returncode} in German, {c.returncode} in C")
    english_and_german(entries, strip_prog(c.stderr, "check (C)"),
                       strip_prog(de.stderr, "check (de)"), "ralon check without agent.lock")
    print("ok: the error of `ralon check` without agent.lock is German, exit status 2")
    print("    " + de.stderr.strip())


def test_error_unknown_option(r, entries):
    c = r.run(["--no-such-option"], C)
    de = r.run(["--no-such-option"], GERMAN)
    check(c.returncode == 2, f"an unknown option exits {c.returncode} (C), not 2")
    check(de.returncode == c.returncode,
          f"an unknown option exits {de.returncode} in German, {c.returncode} in C")
    english_and_german(entries, strip_prog(c.stderr, "unknown option (C)"),
                       strip_prog(de.stderr, "unknown option (de)"), "unknown option")
    print("ok: the unknown-option error is German, exit status 2")
    print("    " + de.stderr.strip())


def test_latin1_is_not_escaped(r, locales):
    """In a German locale whose character set is ISO 8859-1, gettext gives
    the messages in that set: ralon shows them as they are (only names are
    escaped, and only their control characters), not as bytes that are not
    UTF-8. A name's escape sequence is escaped all the same."""
    def charmap(name):
        return subprocess.run(["locale", "charmap"], env={"LC_ALL": name}, capture_output=True,
                              text=True).stdout.strip()

    latin1 = next((l for l in locales if l.lower().replace("-", "") in ("de_de.iso88591", "de_de")
                   and charmap(l) == "ISO-8859-1"), None)
    if latin1 is None:
        if os.environ.get("RALON_REQUIRE_I18N") == "1":
            raise Failed("the de_DE.ISO-8859-1 locale is not generated (scripts/bootstrap "
                         "generates it)")
        print("skip: the de_DE.ISO-8859-1 locale is not generated")
        return
    with tempfile.TemporaryDirectory(prefix="ralon-i18n-") as d:
        cwd = os.path.join(d, "w\x1b[2Jx")
        os.mkdir(cwd)
        utf8 = r.run(["check"], GERMAN, cwd=cwd, text=False)
        lat = r.run(["check"], {"LANG": latin1}, cwd=cwd, text=False)
    check(utf8.returncode == 2 and lat.returncode == 2,
          f"ralon check without agent.lock exits {utf8.returncode} (UTF-8), "
          f"{lat.returncode} (ISO 8859-1), not 2")
    german = utf8.stderr.decode("utf-8")
    check("\u00fc" in german, f"the German error has no \u00fc: {german!r}")
    check("w\\033[2Jx" in german, f"the name is not escaped: {german!r}")
    check(lat.stderr == german.encode("latin-1"),
          f"in ISO 8859-1 the error is not the German text in that set:\n"
          f"  UTF-8:      {utf8.stderr!r}\n  ISO 8859-1: {lat.stderr!r}")
    print("ok: in de_DE.ISO-8859-1 the German error is shown in that set, the name escaped")


def test_check_columns(r):
    """`ralon check PATH...` prints the same lines in every language: scripts
    written for the Rust ralon parse them."""
    with tempfile.TemporaryDirectory(prefix="ralon-i18n-") as d:
        with open(os.path.join(d, "agent.lock"), "w") as f:
            f.write("version: 1\nprotect:\n  - secret.txt\n")
        for name in ("secret.txt", "free.txt"):
            open(os.path.join(d, name), "w").close()
        args = ["check", "secret.txt", "free.txt", "/"]
        c = r.run(args, C, cwd=d)
        de = r.run(args, GERMAN, cwd=d)
    check(c.returncode == 1 and de.returncode == 1,
          f"ralon check of a protected path exits {c.returncode} (C), {de.returncode} (de), not 1")
    check(c.stdout.startswith("locked    secret.txt  (matches `secret.txt`)\n"),
          f"unexpected check output in C: {c.stdout!r}")
    check(de.stdout == c.stdout,
          f"ralon check prints other lines in German:\n  C:  {c.stdout!r}\n  de: {de.stdout!r}")
    print("ok: the `ralon check` lines scripts parse are the same in German")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--in-namespace", action="store_true")
    ap.add_argument("--ralon")
    ap.add_argument("--localedir", required=True)
    ap.add_argument("--catalogs", required=True)
    ap.add_argument("--po")
    ap.add_argument("--domain", default="ralon")
    ap.add_argument("--nls-disabled", action="store_true")
    ap.add_argument("argv", nargs="*")
    a = ap.parse_args()

    if a.in_namespace:
        in_namespace(a.localedir, a.catalogs, a.argv)
        return 125  # not reached

    if a.nls_disabled:
        pofile.skip_or_fail("ralon is configured without NLS (-Dnls=disabled or no libintl)")
    mo = os.path.join(a.catalogs, "de", "LC_MESSAGES", a.domain + ".mo")
    if not os.path.isfile(mo):
        print(f"FAIL: the German catalog {mo} was not built")
        return 1
    locales = subprocess.run(["locale", "-a"], capture_output=True, text=True).stdout.split()
    if not any(l.lower().replace("-", "") == "de_de.utf8" for l in locales):
        pofile.skip_or_fail("the de_DE.UTF-8 locale is not generated (scripts/bootstrap "
                            "generates it; or: locale-gen de_DE.UTF-8)")
    if not os.path.isabs(a.localedir):
        print(f"FAIL: LOCALEDIR {a.localedir} is not absolute")
        return 1

    r = Runner(a.ralon, a.localedir, a.catalogs)
    probe = subprocess.run(["unshare", "-rm", "true"], capture_output=True, text=True)
    if probe.returncode != 0:
        pofile.skip_or_fail("user namespaces are not available here (`unshare -rm true`: "
                            f"{probe.stderr.strip() or 'exit %d' % probe.returncode})")
    probe = r.run(["--version"], C)
    if probe.returncode != 0:
        pofile.skip_or_fail(f"cannot mount the catalogs over {a.localedir} in a user "
                            f"namespace: {probe.stderr.strip()}")

    _, entries = pofile.parse(a.po)
    failures = 0
    tests = [lambda: test_help(r, entries), lambda: test_help_c_utf8(r),
             lambda: test_error_no_policy(r, entries),
             lambda: test_error_unknown_option(r, entries), lambda: test_check_columns(r),
             lambda: test_latin1_is_not_escaped(r, locales)]
    for t in tests:
        try:
            t()
        except Failed as e:
            print(f"FAIL: {e}")
            failures += 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
