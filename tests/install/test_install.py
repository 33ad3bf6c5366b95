#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""The install set, exactly.

Runs `meson install -C BUILDDIR --no-rebuild --destdir TMP --quiet` on the
build directory the test belongs to and compares every file that lands in
TMP with the list below: nothing may be missing and nothing may be extra.

The list is written out here, not read from `meson introspect --installed`
(comparing the install with meson's own idea of it would prove nothing).
Only the directories come from the build: the prefix and the directory
options (bindir, mandir, ...) from meson-info/intro-buildoptions.json, and
where a completion, catalog or AppArmor directory option is left empty,
the default that meson_options.txt documents for it, worked out here
independently (pkg-config, /etc/debian_version, /etc/apparmor.d).

It also checks the modes (only the binary and ralon-wrap are executable),
that the wrapper helper and template point at the installed paths, that
the completions are the ones the build made (every agent the built ralon
knows in each, no placeholder of the templates left), that
no installed text file mentions the build or staging directory, and which
shared libraries the installed binary needs (readelf -d): libyaml unless
the static_libyaml option links it in, and never json-c, libsystemd,
libcap or libseccomp, which every start would then load (json-c, libsystemd
and libcap are loaded with dlopen where they are used, libseccomp is not
used); and that each library loaded with dlopen is named in the binary by
the soname the build was configured with, and can be loaded here.

Arguments:
  --builddir DIR     the meson build directory (meson.project_build_root())
  --sourcedir DIR    the source tree (meson.project_source_root())
  --nls yes|no       whether the build translates (enable_nls)
  --man yes|no       whether the build installs the manual pages
  --meson CMD        fallback meson command when build.ninja names none

Exit status: 0 pass, 1 fail (the differences are printed).
"""

import argparse
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile

PROJECT = "ralon"


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def meson_command(builddir, fallback):
    """The meson that configured BUILDDIR, as its regeneration rule names it,
    so install runs with the same meson version as the build."""
    try:
        with open(os.path.join(builddir, "build.ninja"), encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError:
        lines = []
    for i, line in enumerate(lines):
        if line.strip() == "rule REGENERATE_BUILD" and i + 1 < len(lines):
            cmd = lines[i + 1].strip()
            if cmd.startswith("command = "):
                words = shlex.split(cmd[len("command = "):])
                if "--internal" in words:
                    return words[:words.index("--internal")]
    if fallback:
        return shlex.split(fallback)
    found = shutil.which("meson")
    if found:
        return [found]
    fail("cannot tell which meson configured %s, and none is on PATH" % builddir)
    return []


def build_options(builddir):
    path = os.path.join(builddir, "meson-info", "intro-buildoptions.json")
    with open(path, encoding="utf-8") as f:
        return {o["name"]: o["value"] for o in json.load(f)}


def installed_targets_up_to_date(builddir):
    """Every installed build target must be built before `meson install
    --no-rebuild`; meson test only builds the test's `depends`."""
    ninja = shutil.which("ninja") or shutil.which("samu")
    if ninja is None:
        return
    with open(os.path.join(builddir, "meson-info", "intro-targets.json"), encoding="utf-8") as f:
        targets = json.load(f)
    outputs = []
    for t in targets:
        if t.get("installed"):
            outputs += [os.path.relpath(p, builddir) for p in t["filename"]]
    if not outputs:
        return
    r = subprocess.run([ninja, "-C", builddir, "-n"] + outputs,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0 or "no work to do" not in r.stdout:
        fail("installed targets are not built or out of date; add them to `depends` "
             "of the install test (tests/install/meson.build):\n" + r.stdout)


def pkgconfig_variable(package, variable, defines):
    """What meson's dependency(...).get_variable(pkgconfig: VARIABLE,
    pkgconfig_define: DEFINES) answers, or None."""
    pc = shutil.which("pkg-config") or shutil.which("pkgconf")
    if pc is None:
        return None
    args = [pc]
    for k, v in defines:
        args.append("--define-variable=%s=%s" % (k, v))
    args += ["--variable=" + variable, package]
    r = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    if r.returncode != 0 or not r.stdout.strip():
        return None
    return r.stdout.strip()


class Layout:
    def __init__(self, opts):
        self.opts = opts
        self.prefix = opts["prefix"]
        # ([acceptable paths], whether it gives the agents' names for
        # people) for each completion file.
        self.completions = []

    def abs(self, d):
        """An install_dir as meson resolves it: relative ones under the prefix."""
        return os.path.normpath(d if os.path.isabs(d) else os.path.join(self.prefix, d))

    def dir(self, name):
        return self.abs(self.opts[name])

    def chosen(self, option, defaults):
        """The directories a file may go to: the option when set, else every
        reading of the documented default."""
        value = self.opts.get(option, "")
        if value:
            return [self.abs(value)]
        return sorted({self.abs(d) for d in defaults if d})


def expected_files(opts, nls, man, sourcedir):
    """(name, [acceptable installed paths], executable) for each file."""
    lay = Layout(opts)
    prefix = lay.prefix
    datadir = lay.dir("datadir")
    files = []

    def want(name, dirs, executable=False):
        files.append((name, [os.path.join(d, name) for d in dirs], executable))

    want(PROJECT, [lay.dir("bindir")], executable=True)

    if man:
        want("ralon.1", [os.path.join(lay.dir("mandir"), "man1")])
        want("agent.lock.5", [os.path.join(lay.dir("mandir"), "man5")])
        for page in ("ralon-hooks.7", "ralon-journal.7", "ralon-security.7"):
            want(page, [os.path.join(lay.dir("mandir"), "man7")])

    # bash: "from bash-completion.pc, else DATADIR/bash-completion/completions".
    # bash-completion.pc spells datadir out (/usr/share), so the .pc read as
    # it is and read with the prefix's datadir differ under /usr/local: both
    # readings are accepted, one file either way.
    bash_defaults = [
        pkgconfig_variable("bash-completion", "completionsdir", []),
        pkgconfig_variable("bash-completion", "completionsdir",
                           [("prefix", prefix), ("datadir", datadir)]),
    ]
    if not any(bash_defaults):
        bash_defaults = [os.path.join(datadir, "bash-completion", "completions")]
    want(PROJECT, lay.chosen("bash_completion_dir", bash_defaults))
    lay.completions.append((files[-1][1], False))

    # zsh: "DATADIR/zsh/vendor-completions on Debian, else DATADIR/zsh/site-functions".
    zsh_default = "vendor-completions" if os.path.exists("/etc/debian_version") else "site-functions"
    want("_" + PROJECT, lay.chosen("zsh_completion_dir", [os.path.join(datadir, "zsh", zsh_default)]))
    lay.completions.append((files[-1][1], True))

    # fish: "from fish.pc, else DATADIR/fish/vendor_completions.d".
    fish_defaults = [
        pkgconfig_variable("fish", "completionsdir", []),
        pkgconfig_variable("fish", "completionsdir", [("prefix", prefix), ("datadir", datadir)]),
    ]
    if not any(fish_defaults):
        fish_defaults = [os.path.join(datadir, "fish", "vendor_completions.d")]
    want(PROJECT + ".fish", lay.chosen("fish_completion_dir", fish_defaults))
    lay.completions.append((files[-1][1], True))

    # The journal catalog: "from systemd.pc, else PREFIX/lib/systemd/catalog",
    # the prefix honoured (data/catalog/meson.build).
    catalog = pkgconfig_variable("systemd", "catalogdir", [("prefix", prefix)])
    want(PROJECT + ".catalog",
         lay.chosen("catalog_dir", [catalog or os.path.join(prefix, "lib", "systemd", "catalog")]))

    # AppArmor: "SYSCONFDIR/apparmor.d when /etc/apparmor.d exists; no to skip";
    # the profile is named ralon (src/enforce/linux/apparmor.h).
    apparmor = opts.get("apparmor_dir", "")
    if apparmor == "":
        if os.path.isdir("/etc/apparmor.d"):
            want(PROJECT, [os.path.join(lay.dir("sysconfdir"), "apparmor.d")])
    elif apparmor != "no":
        want(PROJECT, [lay.abs(apparmor)])

    if nls:
        with open(os.path.join(sourcedir, "po", "LINGUAS"), encoding="utf-8") as f:
            langs = [w for line in f for w in line.split("#", 1)[0].split()]
        if not langs:
            fail("po/LINGUAS lists no language")
        for lang in langs:
            want(PROJECT + ".mo", [os.path.join(lay.dir("localedir"), lang, "LC_MESSAGES")])

    docdir = os.path.join(datadir, "doc", PROJECT)
    want("README.md", [docdir])
    want("ARCHITECTURE.md", [docdir])
    want("LICENSE", [docdir])

    want("ralon-wrap", [os.path.join(lay.dir("libexecdir"), PROJECT)], executable=True)
    want("wrapper.sh", [os.path.join(datadir, PROJECT, "wrappers")])
    want("pre-receive", [os.path.join(datadir, PROJECT, "git")], executable=True)
    want("agent.lock.schema.json", [os.path.join(datadir, PROJECT)])
    return lay, files


# Libraries the binary must not name as DT_NEEDED: each would be loaded by
# every start, `hook check` on every agent edit included (issue 3).
NEVER_NEEDED = ("libjson-c.", "libsystemd.", "libcap.", "libseccomp.")


def needed_libraries(path):
    """The DT_NEEDED entries of the ELF file PATH, from readelf -d."""
    readelf = shutil.which("readelf")
    if readelf is None:
        fail("readelf (binutils) is needed to check the binary's libraries")
    r = subprocess.run([readelf, "-d", "-W", path], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        fail("readelf -d %s failed (%d):\n%s" % (path, r.returncode, r.stdout))
    libs = []
    for line in r.stdout.splitlines():
        if "(NEEDED)" in line and "[" in line:
            libs.append(line[line.index("[") + 1:line.rindex("]")])
    if not libs:
        fail("readelf -d %s lists no NEEDED library:\n%s" % (path, r.stdout))
    return libs


def linkage_problems(libs, static_libyaml):
    problems = []
    yaml = [l for l in libs if l.startswith("libyaml")]
    if static_libyaml and yaml:
        problems.append("built with static_libyaml, yet the binary needs %s" % ", ".join(yaml))
    if not static_libyaml and not yaml:
        problems.append("the binary needs no shared libyaml, yet static_libyaml is off "
                        "(needed: %s)" % ", ".join(libs))
    for lib in libs:
        if lib.startswith(NEVER_NEEDED):
            problems.append("the binary needs %s, which every start would load" % lib)
    return problems


# The libraries ralon loads with dlopen(3) where it uses them, by the meson
# option that names each one's soname: the binary must carry that name, and
# it must load here (a package declares them by hand, dpkg-shlibdeps and
# rpm's generator cannot see them).
DLOPENED = (("libjsonc_soname", True), ("libcap_soname", True),
            ("libsystemd_soname", False))


def dlopen_problems(binary, opts):
    import ctypes
    problems = []
    with open(binary, "rb") as f:
        data = f.read()
    for option, always in DLOPENED:
        soname = opts.get(option)
        if not soname:
            problems.append("meson introspect shows no option %s" % option)
            continue
        if (soname.encode() + b"\0") not in data:
            if always:
                problems.append("%s does not name %s (option %s)" % (binary, soname, option))
            continue
        try:
            ctypes.CDLL(soname)
        except OSError as e:
            problems.append("%s, which ralon loads with dlopen, does not load here: %s"
                            % (soname, e))
    return problems


def built_agents(builddir):
    """{agent: name for people} as the built ralon's `hook list --json`
    gives them."""
    with tempfile.TemporaryDirectory(prefix="ralon-install-agents-") as d:
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": d, "LC_ALL": "C.UTF-8",
               "XDG_CONFIG_HOME": os.path.join(d, ".config")}
        r = subprocess.run([os.path.join(builddir, "src", PROJECT), "hook", "list", "--json"],
                           cwd=d, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True)
    try:
        return {h["agent"]: h["name"] for h in json.loads(r.stdout)["hooks"]}
    except (ValueError, KeyError):
        fail("`ralon hook list --json` gave no agents: %r" % r.stdout)
        return {}


def walk(root):
    """Every non-directory under ROOT, as the absolute path it installs to."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(root):
        for name in filenames + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
            full = os.path.join(dirpath, name)
            found["/" + os.path.relpath(full, root)] = full
    return found


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--builddir", required=True)
    ap.add_argument("--sourcedir", required=True)
    ap.add_argument("--nls", choices=["yes", "no"], required=True)
    ap.add_argument("--man", choices=["yes", "no"], required=True)
    ap.add_argument("--meson", default="")
    args = ap.parse_args()
    builddir = os.path.realpath(args.builddir)

    opts = build_options(builddir)
    lay, expected = expected_files(opts, args.nls == "yes", args.man == "yes", args.sourcedir)
    installed_targets_up_to_date(builddir)

    problems = []
    with tempfile.TemporaryDirectory(prefix="ralon-install-") as destdir:
        cmd = meson_command(builddir, args.meson) + [
            "install", "-C", builddir, "--no-rebuild", "--destdir", destdir, "--quiet"]
        print("$ " + shlex.join(cmd))
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode != 0:
            fail("meson install failed (%d):\n%s" % (r.returncode, r.stdout))

        found = walk(destdir)
        print("installed:")
        for path in sorted(found):
            print("  " + path)

        claimed = set()
        for name, candidates, executable in expected:
            hits = [c for c in candidates if c in found]
            if not hits:
                problems.append("missing: %s (expected %s)" % (name, " or ".join(candidates)))
                continue
            if len(hits) > 1:
                problems.append("%s installed twice: %s" % (name, ", ".join(hits)))
            for path in hits:
                claimed.add(path)
                st = os.lstat(found[path])
                if not stat.S_ISREG(st.st_mode):
                    problems.append("%s is not a regular file" % path)
                    continue
                mode = stat.S_IMODE(st.st_mode)
                want_mode = 0o755 if executable else 0o644
                if mode != want_mode:
                    problems.append("%s has mode %o, expected %o" % (path, mode, want_mode))
        for path in sorted(set(found) - claimed):
            problems.append("unexpected: " + path)

        # The wrapper helper runs the installed ralon; the template calls
        # the installed helper.
        checks = [
            ("ralon-wrap", os.path.join(lay.dir("libexecdir"), PROJECT, "ralon-wrap"),
             os.path.join(lay.dir("bindir"), PROJECT)),
            ("wrapper.sh", os.path.join(lay.dir("datadir"), PROJECT, "wrappers", "wrapper.sh"),
             os.path.join(lay.dir("libexecdir"), PROJECT, "ralon-wrap")),
            ("pre-receive", os.path.join(lay.dir("datadir"), PROJECT, "git", "pre-receive"),
             os.path.join(lay.dir("bindir"), PROJECT)),
        ]
        for name, path, needle in checks:
            if path in found:
                with open(found[path], encoding="utf-8", errors="replace") as f:
                    if needle not in f.read():
                        problems.append("%s does not name %s" % (path, needle))

        # The completions installed are those the build made from the
        # templates: every agent the built ralon knows is in each, by name
        # and (zsh, fish) by its name for people, and no placeholder is left.
        agents = built_agents(builddir)
        completions = [(c, described) for candidates, described in lay.completions
                       for c in candidates if c in found]
        if len(completions) != 3:
            problems.append("expected 3 completion files, found %d" % len(completions))
        for path, described in completions:
            with open(found[path], encoding="utf-8") as f:
                text = f.read()
            left = re.findall(r"@[A-Z_]+@", text)
            if left:
                problems.append("%s still holds %s" % (path, ", ".join(left)))
            for agent, name in agents.items():
                if not re.search(r"(^|[\s'])%s([\s':]|$)" % re.escape(agent), text, re.M):
                    problems.append("%s does not name the agent %s" % (path, agent))
                if described and name not in text:
                    problems.append("%s does not give %s's name for people (%s)"
                                    % (path, agent, name))

        binary = os.path.join(lay.dir("bindir"), PROJECT)
        if binary in found:
            libs = needed_libraries(found[binary])
            print("%s needs: %s" % (binary, ", ".join(libs)))
            problems += linkage_problems(libs, bool(opts.get("static_libyaml", False)))
            problems += dlopen_problems(found[binary], opts)

        # No text file may carry the build or staging directory (an rpm
        # build fails on the buildroot; a package must not point at /tmp).
        for path, full in sorted(found.items()):
            with open(full, "rb") as f:
                data = f.read()
            if data.startswith(b"\x7fELF"):
                continue
            for where in (builddir, destdir, os.path.realpath(destdir)):
                if where.encode() in data:
                    problems.append("%s mentions %s" % (path, where))

    print("expected (prefix %s):" % lay.prefix)
    for name, candidates, executable in expected:
        print("  %s%s" % (" or ".join(candidates), " (executable)" if executable else ""))
    if problems:
        for p in problems:
            print("FAIL: " + p)
        return 1
    print("ok: exactly the %d expected files" % len(expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
