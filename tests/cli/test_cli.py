#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""End-to-end tests of the real `ralon` binary on real temporary projects.

The binary is $RALON_BINARY (meson sets it to the one it built; point it at
/usr/bin/ralon to test an installed package), or build/src/ralon in the
source tree. Python 3 standard library only.

Every invocation runs with LC_ALL=C.UTF-8 (so messages are untranslated), a
fresh empty HOME, no NO_COLOR and TERM=xterm-256color, so that "no colour"
can only come from stdout not being a terminal.
"""

import errno
import json
import os
import re
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
import unicodedata
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RALON = os.environ.get("RALON_BINARY") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build", "src", "ralon"))

# Every command that scans the project warns when it runs as root.
ROOT_WARNING = "ralon: warning: running as root"

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")

# The hard-link finding, word for word as the Rust ralon prints it.
HARD_LINKS = ("has {n} hard links; the other names are not protected and "
              "writing one changes this file")


class Result:
    def __init__(self, rc, out, err):
        self.rc = rc
        self.out = out
        self.err = err

    def __repr__(self):
        return "Result(rc=%r, out=%r, err=%r)" % (self.rc, self.out, self.err)


def clean_env(home):
    env = {}
    for k, v in os.environ.items():
        if k.startswith(("RALON_", "LC_", "XDG_")) or k in (
                "LANG", "LANGUAGE", "NO_COLOR", "CLICOLOR", "CLICOLOR_FORCE",
                "FORCE_COLOR", "TERM"):
            continue
        env[k] = v
    env["LC_ALL"] = "C.UTF-8"
    env["TERM"] = "xterm-256color"
    env["HOME"] = home
    env["XDG_CONFIG_HOME"] = os.path.join(home, ".config")
    env["XDG_STATE_HOME"] = os.path.join(home, ".local", "state")
    env["XDG_DATA_HOME"] = os.path.join(home, ".local", "share")
    env["XDG_CACHE_HOME"] = os.path.join(home, ".cache")
    return env


def write(path, data="x\n"):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    mode = "wb" if isinstance(data, bytes) else "w"
    with open(path, mode) as f:
        f.write(data)


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def policy_items(text):
    """The `- item` lines of a policy that are not commented out."""
    items = []
    for line in text.splitlines():
        m = re.match(r"^\s*-\s+(\S.*?)\s*$", line)
        if m:
            items.append(m.group(1))
    return items


def not_a_policy(path, kind):
    """What every command says of an agent.lock that is no regular file."""
    return ("ralon: %s is %s; a policy must be a regular file. Which paths are protected "
            "here is unknown, so ralon refuses to go on (make it the policy it should be, "
            "or remove it and run `ralon init`)\n" % (path, kind))


def locked(rel, pattern):
    return "locked    %s  (matches `%s`)" % (rel, pattern)


def locked_via(rel, resolved, pattern):
    return "locked    %s  (resolves to %s, matches `%s`)" % (rel, resolved, pattern)


def writable(rel):
    return "writable  %s" % rel


def outside(path):
    return "outside   %s" % path


class RalonTestCase(unittest.TestCase):
    maxDiff = None

    def setUp(self):
        self._tmp = tempfile.TemporaryDirectory(prefix="ralon-cli-")
        self.addCleanup(self._tmp.cleanup)
        # Real path: the tool reports the working directory as getcwd(3)
        # sees it, with every symbolic link resolved.
        self.base = os.path.realpath(self._tmp.name)
        self.home = os.path.join(self.base, "home")
        os.mkdir(self.home)
        self.env = clean_env(self.home)

    # -- running ---------------------------------------------------------

    def run_ralon(self, *args, cwd=None, env=None, stdout=subprocess.PIPE,
                  **kwargs):
        p = subprocess.run(
            [RALON, *args], cwd=cwd or self.base, env=env or self.env,
            stdin=subprocess.DEVNULL, stdout=stdout, stderr=subprocess.PIPE,
            timeout=120, **kwargs)
        out = p.stdout.decode("utf-8") if p.stdout is not None else ""
        return Result(p.returncode, out, p.stderr.decode("utf-8"))

    def project(self, policy, files=(), dirs=(), name="proj"):
        root = os.path.join(self.base, name)
        os.makedirs(root, exist_ok=True)
        if policy is not None:
            write(os.path.join(root, "agent.lock"), policy)
        for d in dirs:
            os.makedirs(os.path.join(root, d), exist_ok=True)
        for f in files:
            write(os.path.join(root, f))
        return root

    # -- asserting -------------------------------------------------------

    def audit_err(self, r):
        """stderr of a command that scanned the project (check without
        PATH, status), less the warning every such command gives when run
        as root, which must be there exactly when euid is 0."""
        lines = r.err.splitlines(keepends=True)
        root = [l for l in lines if l.startswith(ROOT_WARNING)]
        self.assertEqual(len(root), 1 if os.geteuid() == 0 else 0, r)
        return "".join(l for l in lines if not l.startswith(ROOT_WARNING))

    def assertOutput(self, r, rc, out, err="", scanned=False):
        got_err = self.audit_err(r) if scanned else r.err
        self.assertEqual((r.rc, r.out, got_err), (rc, out, err), r)

    def assertLines(self, r, rc, lines, err="", scanned=False):
        self.assertOutput(r, rc, "".join(l + "\n" for l in lines), err, scanned)

    def assertFails(self, r, err=None, err_re=None):
        """Exit 2, nothing on stdout, one `ralon: ` diagnostic on stderr."""
        self.assertEqual(r.rc, 2, r)
        self.assertEqual(r.out, "", r)
        self.assertTrue(r.err.startswith("ralon: "), r)
        self.assertTrue(r.err.endswith("\n"), r)
        if err is not None:
            self.assertEqual(r.err, err)
        if err_re is not None:
            self.assertRegex(r.err, err_re)

    def assertSubsequence(self, needles, haystack):
        it = iter(haystack)
        for n in needles:
            for h in it:
                if h == n:
                    break
            else:
                self.fail("%r not found (in order) in %r" % (n, haystack))


GOLDEN = "protect:\n  - tests/golden/**\n"


# ===========================================================================
class VersionAndHelpTest(RalonTestCase):

    VERSION_RE = r"\Aralon [0-9]+\.[0-9]+\.[0-9]+\n\Z"

    def test_version(self):
        for opt in ("--version", "-V"):
            with self.subTest(opt=opt):
                r = self.run_ralon(opt)
                self.assertEqual((r.rc, r.err), (0, ""), r)
                self.assertRegex(r.out, self.VERSION_RE)

    def test_version_matches_the_source_tree(self):
        meson = os.path.join(HERE, "..", "..", "meson.build")
        if os.path.realpath(RALON).startswith("/usr/"):
            self.skipTest("installed binary: its version need not be this tree's")
        if not os.path.exists(meson):
            self.skipTest("no meson.build beside the tests")
        with open(meson) as f:
            m = re.search(r"version:\s*'([0-9.]+)'", f.read())
        r = self.run_ralon("--version")
        self.assertOutput(r, 0, "ralon %s\n" % m.group(1))

    def test_version_needs_no_policy_and_ignores_a_bogus_dir(self):
        expected = self.run_ralon("--version").out
        empty = os.path.join(self.base, "empty")
        os.mkdir(empty)
        cases = [
            (["--version"], empty),
            (["-C", "/nonexistent/ralon-test", "--version"], empty),
            (["--dir", "/nonexistent/ralon-test", "-V"], empty),
            (["-C", "/nonexistent/ralon-test", "check", "--version"], empty),
        ]
        for args, cwd in cases:
            with self.subTest(args=args):
                self.assertOutput(self.run_ralon(*args, cwd=cwd), 0, expected)

    def test_help(self):
        for opt in ("--help", "-h"):
            with self.subTest(opt=opt):
                r = self.run_ralon(opt)
                self.assertEqual((r.rc, r.err), (0, ""), r)
                self.assertTrue(r.out.startswith("Usage: ralon "), r.out)
                for cmd in ("init", "check", "status", "help"):
                    self.assertRegex(r.out, r"(?m)^  %s  " % cmd)
                for opt2 in ("--dir", "--json", "--help", "--version"):
                    self.assertIn(opt2, r.out)

    def test_help_command_equals_dash_dash_help(self):
        self.assertEqual(self.run_ralon("help").out, self.run_ralon("--help").out)
        r = self.run_ralon("help")
        self.assertEqual((r.rc, r.err), (0, ""), r)

    def test_command_help(self):
        tool_help = self.run_ralon("--help").out
        for cmd in ("init", "check", "status"):
            for opt in ("--help", "-h"):
                with self.subTest(cmd=cmd, opt=opt):
                    r = self.run_ralon(cmd, opt, cwd=self.base)
                    self.assertEqual((r.rc, r.err), (0, ""), r)
                    self.assertTrue(r.out.startswith("Usage: ralon %s" % cmd), r.out)
                    self.assertNotEqual(r.out, tool_help)
        init = self.run_ralon("init", "--help").out
        self.assertIn("--force", init)
        self.assertIn("--no-hooks", init)
        # Asking for help writes nothing.
        self.assertEqual(os.listdir(self.base), ["home"])

    def test_help_check(self):
        r = self.run_ralon("help", "check")
        self.assertOutput(r, 0, self.run_ralon("check", "--help").out)
        self.assertTrue(r.out.startswith("Usage: ralon check"), r.out)
        for line in ("locked    REL  (matches `PATTERN`)", "writable  REL", "outside   PATH"):
            self.assertIn(line, r.out)

    def test_help_unknown_command(self):
        r = self.run_ralon("help", "frobnicate")
        self.assertFails(r, err_re=r"\Aralon: [^\n]*`frobnicate`[^\n]*\n\Z")

    def test_no_command(self):
        self.assertFails(self.run_ralon(), err_re=r"\Aralon: [^\n]*--help[^\n]*\n\Z")
        self.assertFails(self.run_ralon("-C", self.base),
                         err_re=r"\Aralon: [^\n]*--help[^\n]*\n\Z")

    def test_unknown_command(self):
        root = self.project(GOLDEN)
        r = self.run_ralon("frobnicate", cwd=root)
        self.assertFails(r, err_re=r"\Aralon: unknown command `frobnicate`[^\n]*\n\Z")

    def test_unknown_option(self):
        root = self.project(GOLDEN)
        cases = [
            (["--bogus"], "--bogus"),
            (["-x", "check"], "-x"),
            (["check", "--bogus"], "--bogus"),
            (["check", "-x", "src/a"], "-x"),
            (["status", "--force"], "--force"),   # an init option
            (["init", "--frob"], "--frob"),
        ]
        for args, opt in cases:
            with self.subTest(args=args):
                r = self.run_ralon(*args, cwd=root)
                self.assertFails(r, err_re=r"\Aralon: unknown option `%s`[^\n]*\n\Z"
                                 % re.escape(opt))
        # Nothing written by a refused init.
        self.assertEqual(sorted(os.listdir(root)), ["agent.lock"])

    def test_ambiguous_option_and_option_with_a_value(self):
        # getopt_long takes an unambiguous prefix of a long option; an
        # ambiguous one is named as such, with what it could be, and a
        # value given to an option that takes none is refused by name.
        root = self.project(GOLDEN)
        cases = [
            (["run", "--s", "--", "true"],
             "option `--s` is ambiguous: it could be --strict, --seal; see `ralon run --help`"),
            (["hook", "--d", "list"],
             "option `--d` is ambiguous: it could be --dir, --dry-run; see `ralon hook --help`"),
            (["run", "--dry-run=yes", "--", "true"],
             "option `--dry-run` takes no value; see `ralon run --help`"),
            (["--json=1", "status"], "option `--json` takes no value; see `ralon --help`"),
            (["status", "--js=1"], "option `--json` takes no value; see `ralon status --help`"),
        ]
        for args, msg in cases:
            with self.subTest(args=args):
                self.assertFails(self.run_ralon(*args, cwd=root), err="ralon: %s\n" % msg)
        # A prefix of one option is that option.
        r = self.run_ralon("run", "--dry", "--if-pol", "--", "true", cwd=root)
        self.assertIn(r.rc, (0, 1), r)  # 1 where no backend works
        self.assertRegex(r.out, r"(?m)^command\s+true$", r)

    def test_missing_option_value(self):
        root = self.project(GOLDEN)
        for args, opt in ((["-C"], "-C"), (["--dir"], "--dir"),
                          (["check", "-C"], "-C"), (["status", "--dir"], "--dir")):
            with self.subTest(args=args):
                r = self.run_ralon(*args, cwd=root)
                self.assertFails(r, err_re=r"\Aralon: [^\n]*`%s`[^\n]*\n\Z" % re.escape(opt))

    def test_unexpected_argument(self):
        root = self.project(GOLDEN)
        for cmd in ("status", "init"):
            with self.subTest(cmd=cmd):
                r = self.run_ralon(cmd, "extra", cwd=root)
                self.assertFails(r, err_re=r"\Aralon: [^\n]*`extra`[^\n]*\n\Z")
        self.assertEqual(read_bytes(os.path.join(root, "agent.lock")), GOLDEN.encode())


# ===========================================================================
class InitTest(RalonTestCase):

    def init(self, *args, cwd=None):
        return self.run_ralon("init", "--no-hooks", *args, cwd=cwd)

    def test_init_writes_a_policy_status_accepts(self):
        root = self.project(None)
        r = self.init(cwd=root)
        path = os.path.join(root, "agent.lock")
        self.assertEqual((r.rc, r.err), (0, ""), r)
        lines = r.out.splitlines()
        self.assertEqual(lines[0], "wrote %s" % path)
        # The Rust ralon's next lines, which users have seen in its docs.
        self.assertSubsequence(["", "Now edit agent.lock, then protect it:",
                                "  ralon run -- <your agent>   the agent and everything it spawns"],
                               lines[1:])
        self.assertTrue(stat.S_ISREG(os.lstat(path).st_mode))
        s = self.run_ralon("status", cwd=root)
        self.assertEqual(s.rc, 0, s)
        self.assertIn("policy     %s" % path, s.out.splitlines())
        c = self.run_ralon("check", "agent.lock", cwd=root)
        self.assertLines(c, 1, [locked("agent.lock", "agent.lock")])

    def test_init_file_is_commented_and_mode_follows_umask(self):
        root = self.project(None)
        r = self.run_ralon("init", "--no-hooks", cwd=root, preexec_fn=lambda: os.umask(0o027))
        self.assertEqual(r.rc, 0, r)
        path = os.path.join(root, "agent.lock")
        self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), 0o640)
        text = read_bytes(path).decode("utf-8")
        self.assertTrue(text.startswith("#"), text)
        self.assertIn("agent.lock", policy_items(text))

    def test_init_without_no_hooks(self):
        root = self.project(None)
        r = self.run_ralon("init", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.out.splitlines()[0], "wrote %s" % os.path.join(root, "agent.lock"))
        self.assertEqual(self.run_ralon("status", cwd=root).rc, 0)

    def test_init_refuses_to_overwrite(self):
        root = self.project(None)
        path = os.path.join(root, "agent.lock")
        custom = b"# mine\nprotect:\n  - precious.txt\n"
        write(path, custom)
        before = os.lstat(path)
        for args in ([], ["--no-hooks"]):
            with self.subTest(args=args):
                r = self.run_ralon("init", *args, cwd=root)
                self.assertFails(r, err="ralon: %s already exists (use --force to overwrite)\n"
                                 % path)
                self.assertEqual(read_bytes(path), custom)
                after = os.lstat(path)
                self.assertEqual((after.st_ino, after.st_mtime_ns), (before.st_ino, before.st_mtime_ns))
        self.assertEqual(sorted(os.listdir(root)), ["agent.lock"])

    def test_init_refuses_a_second_time(self):
        root = self.project(None)
        path = os.path.join(root, "agent.lock")
        self.assertEqual(self.init(cwd=root).rc, 0)
        first = read_bytes(path)
        r = self.init(cwd=root)
        self.assertFails(r, err="ralon: %s already exists (use --force to overwrite)\n" % path)
        self.assertEqual(read_bytes(path), first)

    def test_init_force_replaces(self):
        root = self.project(None)
        path = os.path.join(root, "agent.lock")
        write(path, "protect:\n  - precious.txt\n")
        r = self.init("--force", cwd=root)
        self.assertEqual((r.rc, r.err), (0, ""), r)
        self.assertEqual(r.out.splitlines()[0], "wrote %s" % path)
        text = read_bytes(path).decode()
        self.assertNotIn("precious.txt", text)
        self.assertIn("agent.lock", policy_items(text))
        self.assertEqual(sorted(os.listdir(root)), ["agent.lock"])
        self.assertEqual(self.run_ralon("status", cwd=root).rc, 0)

    def test_init_dash_C(self):
        target = self.project(None, name="target")
        for n, args in enumerate((["-C", "target", "init", "--no-hooks"],
                                  ["init", "--no-hooks", "-C", "target"],
                                  ["init", "--dir=target", "--no-hooks"])):
            with self.subTest(args=args):
                path = os.path.join(target, "agent.lock")
                if os.path.exists(path):
                    os.unlink(path)
                r = self.run_ralon(*args, cwd=self.base)
                self.assertEqual((r.rc, r.err), (0, ""), r)
                self.assertEqual(r.out.splitlines()[0], "wrote %s" % path)
                self.assertTrue(os.path.isfile(path))
                self.assertFalse(os.path.exists(os.path.join(self.base, "agent.lock")))

    def test_init_does_not_walk_up(self):
        parent = self.project(GOLDEN)
        sub = os.path.join(parent, "sub")
        os.mkdir(sub)
        r = self.init(cwd=sub)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.out.splitlines()[0], "wrote %s" % os.path.join(sub, "agent.lock"))
        self.assertEqual(read_bytes(os.path.join(parent, "agent.lock")), GOLDEN.encode())

    def test_init_in_a_git_repository(self):
        root = self.project(None, dirs=[".git/hooks"], files=[".git/config"])
        self.assertEqual(self.init(cwd=root).rc, 0)
        items = policy_items(read_bytes(os.path.join(root, "agent.lock")).decode())
        self.assertIn(".git/hooks", items)
        self.assertIn(".git/config", items)
        # Then status has nothing to say about git.
        s = self.run_ralon("status", cwd=root)
        self.assertEqual(s.rc, 0, s)
        self.assertNotIn(".git/", s.err)
        c = self.run_ralon("check", ".git/hooks/pre-commit", ".git/config", cwd=root)
        self.assertLines(c, 1, [locked(".git/hooks/pre-commit", ".git/hooks"),
                                locked(".git/config", ".git/config")])

    def test_init_in_a_repository_with_submodules(self):
        root = self.project(None, dirs=[".git/hooks", ".git/modules/lib/hooks"],
                            files=[".git/config", ".git/modules/lib/config",
                                   ".git/modules/lib/HEAD"])
        # Before a policy covers them, status names the submodule's.
        write(os.path.join(root, "agent.lock"), "protect: [.git/hooks, .git/config]\n")
        s = self.run_ralon("status", "--json", cwd=root)
        self.assertEqual(s.rc, 0, s)
        subjects = {(f["kind"], f["subject"]) for f in json.loads(s.out)["findings"]}
        self.assertIn(("git-hooks-unprotected", ".git/modules/lib/hooks"), subjects, s)
        self.assertIn(("git-config-unprotected", ".git/modules/lib/config"), subjects, s)
        os.unlink(os.path.join(root, "agent.lock"))
        self.assertEqual(self.init(cwd=root).rc, 0)
        items = policy_items(read_bytes(os.path.join(root, "agent.lock")).decode())
        for p in (".git/hooks", ".git/config", ".git/modules/**/hooks",
                  ".git/modules/**/config"):
            self.assertIn(p, items)
        s = self.run_ralon("status", cwd=root)
        self.assertEqual(s.rc, 0, s)
        self.assertNotIn(".git/", s.err)
        c = self.run_ralon("check", ".git/modules/lib/hooks/post-checkout", cwd=root)
        self.assertLines(c, 1, [locked(".git/modules/lib/hooks/post-checkout",
                                       ".git/modules/**/hooks")])

    def git_repo(self, root, *then):
        """Makes root a git repository with everything committed, then
        runs each of `then` (git arguments) in it."""
        env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=self.base,
                   GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.invalid",
                   GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.invalid")
        for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "c"]) + then:
            subprocess.run(["git"] + list(args), cwd=root, env=env, check=True,
                           stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def assertInitCovers(self, root, finding, pattern):
        """With .git/hooks and .git/config protected, status reports
        `finding` (kind, subject); the policy init writes holds `pattern`
        and leaves status quiet about .git."""
        write(os.path.join(root, "agent.lock"), "protect: [.git/hooks, .git/config]\n")
        s = self.run_ralon("status", "--json", cwd=root)
        self.assertEqual(s.rc, 0, s)
        subjects = {(f["kind"], f["subject"]) for f in json.loads(s.out)["findings"]}
        self.assertIn(finding, subjects, s)
        os.unlink(os.path.join(root, "agent.lock"))
        self.assertEqual(self.init(cwd=root).rc, 0)
        items = policy_items(read_bytes(os.path.join(root, "agent.lock")).decode())
        self.assertIn(pattern, items)
        s = self.run_ralon("status", cwd=root)
        self.assertEqual(s.rc, 0, s)
        self.assertNotIn(".git/", s.err)

    def test_init_in_a_repository_with_linked_worktrees(self):
        # Each linked worktree's .git/worktrees/NAME/commondir names the
        # repository whose hooks and configuration git runs there.
        root = self.project(None, files=["README"])
        self.git_repo(root, ["worktree", "add", "-q", os.path.join(self.base, "wt")])
        commondir = ".git/worktrees/wt/commondir"
        self.assertTrue(os.path.isfile(os.path.join(root, commondir)))
        self.assertInitCovers(root, ("git-commondir-unprotected", commondir),
                              ".git/worktrees/*/commondir")
        c = self.run_ralon("check", commondir, cwd=root)
        self.assertLines(c, 1, [locked(commondir, ".git/worktrees/*/commondir")])

        # A commondir in .git itself, which git never makes there, sends
        # git elsewhere for hooks and configuration: a weakening finding
        # whatever the policy says, naming where.
        elsewhere = os.path.join(self.base, "elsewhere")
        os.makedirs(elsewhere)
        write(os.path.join(root, ".git/commondir"), elsewhere + "\n")
        s = self.run_ralon("status", cwd=root)
        self.assertEqual(s.rc, 0, s)
        self.assertRegex(s.err, r"(?m)^ralon: warning: \.git/commondir sends git elsewhere: .*%s"
                         % re.escape(os.path.realpath(elsewhere)), s)
        r = self.run_ralon("run", "--strict", "--dry-run", "--", "true", cwd=root)
        self.assertEqual(r.rc, 1, r)
        self.assertIn(".git/commondir", r.err)

    def test_init_with_sparse_checkout(self):
        # `git sparse-checkout` turns on extensions.worktreeConfig: git then
        # reads .git/config.worktree, where core.hooksPath runs hooks too.
        root = self.project(None, files=["README", "a/x"])
        self.git_repo(root, ["sparse-checkout", "set", "a"])
        self.assertInitCovers(root, ("git-config-unprotected", ".git/config.worktree"),
                              ".git/config.worktree")

    def test_init_in_a_git_worktree(self):
        # .git is a file naming a git directory elsewhere: init protects
        # the file (so it keeps pointing there), not paths below it, and
        # status says the hooks are outside the project.
        main = self.project(None, dirs=[".git/hooks", ".git/worktrees/wt"],
                            files=[".git/config"], name="main")
        with open(os.path.join(main, ".git/worktrees/wt/commondir"), "w") as f:
            f.write("../..\n")
        root = self.project(None, name="wt")
        with open(os.path.join(root, ".git"), "w") as f:
            f.write("gitdir: %s\n" % os.path.join(main, ".git/worktrees/wt"))
        self.assertEqual(self.init(cwd=root).rc, 0)
        items = policy_items(read_bytes(os.path.join(root, "agent.lock")).decode())
        self.assertIn(".git", items)
        self.assertNotIn(".git/hooks", items)
        self.assertNotIn(".git/config", items)
        s = self.run_ralon("status", "--json", cwd=root)
        self.assertEqual(s.rc, 0, s)
        findings = {f["kind"]: f for f in json.loads(s.out)["findings"]}
        self.assertIn("git-dir-outside-project", findings, s)
        self.assertIn(os.path.realpath(os.path.join(main, ".git")),
                      findings["git-dir-outside-project"]["message"], s)
        self.assertNotIn("add `.git` to agent.lock",
                         findings["git-dir-outside-project"]["message"], s)
        c = self.run_ralon("check", ".git", cwd=root)
        self.assertLines(c, 1, [locked(".git", ".git")])

    def test_init_outside_git_does_not_list_git(self):
        root = self.project(None)
        self.assertEqual(self.init(cwd=root).rc, 0)
        items = policy_items(read_bytes(os.path.join(root, "agent.lock")).decode())
        self.assertNotIn(".git/hooks", items)
        self.assertNotIn(".git/config", items)
        self.assertNotIn("Cargo.lock", items)

    def test_init_lists_existing_ci_and_lock_files(self):
        root = self.project(None, dirs=[".github/workflows"], files=["Cargo.lock", "go.sum"])
        self.assertEqual(self.init(cwd=root).rc, 0)
        items = policy_items(read_bytes(os.path.join(root, "agent.lock")).decode())
        for p in ("Cargo.lock", ".github/workflows", "go.sum"):
            self.assertIn(p, items)
        for p in ("yarn.lock", "package-lock.json", ".gitlab-ci.yml"):
            self.assertNotIn(p, items)
        c = self.run_ralon("check", cwd=root)
        self.assertEqual(c.rc, 0, c)
        out = c.out.splitlines()
        self.assertIn(locked(".github/workflows/", ".github/workflows"), out)
        self.assertIn(locked("Cargo.lock", "Cargo.lock"), out)
        self.assertIn(locked("agent.lock", "agent.lock"), out)

    def test_init_in_a_missing_directory(self):
        missing = os.path.join(self.base, "no", "such", "dir")
        for args in (["-C", missing, "init", "--no-hooks"], ["init", "-C", missing]):
            with self.subTest(args=args):
                r = self.run_ralon(*args)
                self.assertFails(r, err_re=re.escape(missing))
        self.assertFalse(os.path.exists(os.path.join(self.base, "no")))

    def test_init_on_a_file_as_dir(self):
        f = os.path.join(self.base, "plain")
        write(f)
        r = self.run_ralon("init", "--no-hooks", "-C", f)
        self.assertFails(r, err_re=re.escape(f))
        self.assertEqual(read_bytes(f), b"x\n")

    def test_init_failing_to_replace_leaves_nothing_behind(self):
        root = self.project(None, dirs=["agent.lock/inner"])
        path = os.path.join(root, "agent.lock")
        r = self.init("--force", cwd=root)
        self.assertFails(r, err_re=r"\Aralon: [^\n]*%s[^\n]*\n\Z" % re.escape(path))
        r = self.init(cwd=root)
        self.assertFails(r, err=not_a_policy(path, "a directory"))
        self.assertEqual(sorted(os.listdir(root)), ["agent.lock"])
        self.assertEqual(os.listdir(path), ["inner"])

    def test_init_leaves_no_temporary_files(self):
        root = self.project(None)
        self.assertEqual(self.init(cwd=root).rc, 0)
        self.assertEqual(self.init(cwd=root).rc, 2)
        self.assertEqual(self.init("--force", cwd=root).rc, 0)
        self.assertEqual(sorted(os.listdir(root)), ["agent.lock"])


# ===========================================================================
class CheckPathsTest(RalonTestCase):

    def test_the_documented_example(self):
        root = self.project(GOLDEN, files=["tests/golden/a.txt"])
        r = self.run_ralon("check", "src/auth.c", "tests/golden/a.txt", "../elsewhere", cwd=root)
        self.assertOutput(r, 1, "writable  src/auth.c\n"
                                "locked    tests/golden/a.txt  (matches `tests/golden/**`)\n"
                                "outside   ../elsewhere\n")

    def test_all_writable_exits_zero(self):
        root = self.project(GOLDEN, files=["src/a.c"])
        r = self.run_ralon("check", "src/a.c", "README", "tests/goldenish", "tests", cwd=root)
        self.assertLines(r, 0, [writable("src/a.c"), writable("README"),
                                writable("tests/goldenish"), writable("tests")])

    def test_only_outside_exits_zero(self):
        root = self.project(GOLDEN)
        r = self.run_ralon("check", "/", "../x", self.base, cwd=root)
        self.assertLines(r, 0, [outside("/"), outside("../x"), outside(self.base)])

    def test_dash_C_before_and_after_the_command(self):
        self.project(GOLDEN, files=["tests/golden/a.txt"])
        expected = [locked("tests/golden/a.txt", "tests/golden/**"), writable("src/x.c")]
        for args in (["-C", "proj", "check"], ["check", "-C", "proj"],
                     ["--dir", "proj", "check"], ["check", "--dir=proj"]):
            with self.subTest(args=args):
                r = self.run_ralon(*args, "tests/golden/a.txt", "src/x.c", cwd=self.base)
                self.assertLines(r, 1, expected)
        # Options after the paths, too (GNU argument order).
        r = self.run_ralon("check", "tests/golden/a.txt", "src/x.c", "-C", "proj", cwd=self.base)
        self.assertLines(r, 1, expected)

    def test_dash_C_with_absolute_paths(self):
        root = self.project(GOLDEN)
        other = os.path.join(self.base, "other")
        os.mkdir(other)
        r = self.run_ralon("-C", root, "check", os.path.join(root, "tests/golden/z"),
                           os.path.join(root, "src"), os.path.join(other, "f"), cwd=other)
        self.assertLines(r, 1, [locked("tests/golden/z", "tests/golden/**"), writable("src"),
                                outside(os.path.join(other, "f"))])

    def test_double_dash_ends_options(self):
        root = self.project(GOLDEN)
        r = self.run_ralon("check", "--", "-weird", "--json", cwd=root)
        self.assertLines(r, 0, [writable("-weird"), writable("--json")])

    def test_dotdot_is_resolved_lexically(self):
        root = self.project(GOLDEN, files=["tests/golden/x"])
        r = self.run_ralon("check", "src/../tests/golden/x", "nonexistent/../../proj/tests/golden/y",
                           "tests/golden/../../src/a", "./tests//golden/./z", cwd=root)
        self.assertLines(r, 1, [locked("tests/golden/x", "tests/golden/**"),
                                locked("tests/golden/y", "tests/golden/**"),
                                writable("src/a"),
                                locked("tests/golden/z", "tests/golden/**")])

    def test_lexical_dotdot_wins_over_a_symlinked_parent(self):
        # `link/..` is the project lexically, even though `link` leads elsewhere.
        root = self.project(GOLDEN)
        elsewhere = os.path.join(self.base, "elsewhere", "deep")
        os.makedirs(elsewhere)
        os.symlink(elsewhere, os.path.join(root, "link"))
        r = self.run_ralon("check", "link/../tests/golden/a", cwd=root)
        self.assertLines(r, 1, [locked("tests/golden/a", "tests/golden/**")])

    def test_symlink_inside_to_a_protected_file(self):
        root = self.project(GOLDEN, files=["tests/golden/a.txt"])
        os.symlink("tests/golden/a.txt", os.path.join(root, "link"))
        r = self.run_ralon("check", "link", cwd=root)
        self.assertEqual((r.rc, r.err), (1, ""), r)
        # The name as typed, and the protected name it leads to.
        self.assertEqual(r.out, locked_via("link", "tests/golden/a.txt", "tests/golden/**") + "\n")

    def test_symlink_inside_to_a_protected_directory(self):
        root = self.project(GOLDEN, dirs=["tests/golden"])
        os.symlink("tests/golden", os.path.join(root, "g"))
        r = self.run_ralon("check", "g/new.txt", cwd=root)
        self.assertEqual((r.rc, r.err), (1, ""), r)
        self.assertEqual(r.out,
                         locked_via("g/new.txt", "tests/golden/new.txt", "tests/golden/**") + "\n")

    def test_symlink_outside_into_a_protected_directory(self):
        root = self.project(GOLDEN, files=["tests/golden/a.txt"], dirs=["src"])
        out = os.path.join(self.base, "out")
        os.mkdir(out)
        os.symlink(os.path.join(root, "tests", "golden"), os.path.join(out, "gl"))
        os.symlink(os.path.join(root, "tests", "golden", "a.txt"), os.path.join(out, "file"))
        os.symlink(os.path.join(root, "src"), os.path.join(out, "src"))
        r = self.run_ralon("check", os.path.join(out, "gl", "a.txt"), "../out/gl/new",
                           "../out/file", "../out/src/main.c", "../out/other", cwd=root)
        self.assertLines(r, 1, [locked("tests/golden/a.txt", "tests/golden/**"),
                                locked("tests/golden/new", "tests/golden/**"),
                                locked("tests/golden/a.txt", "tests/golden/**"),
                                writable("src/main.c"),
                                outside("../out/other")])

    def test_project_reached_through_a_symlinked_dir(self):
        root = self.project(GOLDEN, files=["tests/golden/a.txt"])
        alias = os.path.join(self.base, "alias")
        os.symlink(root, alias)
        r = self.run_ralon("-C", alias, "check", "tests/golden/a.txt",
                           os.path.join(root, "tests/golden/a.txt"),
                           os.path.join(alias, "src/x"), cwd=self.base)
        self.assertLines(r, 1, [locked("tests/golden/a.txt", "tests/golden/**"),
                                locked("tests/golden/a.txt", "tests/golden/**"),
                                writable("src/x")])

    def test_dangling_symlink_into_a_protected_directory(self):
        # Writing through `dl` creates tests/golden/new.txt: the link's
        # resolved name is protected although nothing exists there yet.
        root = self.project(GOLDEN, dirs=["tests/golden"])
        os.symlink("tests/golden/new.txt", os.path.join(root, "dl"))
        r = self.run_ralon("check", "dl", cwd=root)
        self.assertEqual((r.rc, r.err), (1, ""), r)
        self.assertEqual(r.out,
                         locked_via("dl", "tests/golden/new.txt", "tests/golden/**") + "\n")

    def test_paths_that_do_not_exist_yet(self):
        root = self.project(GOLDEN + "  - Cargo.lock\n")
        r = self.run_ralon("check", "tests/golden/new/deeper.txt", "Cargo.lock",
                           "not/there/either", cwd=root)
        self.assertLines(r, 1, [locked("tests/golden/new/deeper.txt", "tests/golden/**"),
                                locked("Cargo.lock", "Cargo.lock"),
                                writable("not/there/either")])

    def test_agent_lock_is_always_locked(self):
        root = self.project("protect:\n  - other.txt\n")
        r = self.run_ralon("check", "agent.lock", "./agent.lock", os.path.join(root, "agent.lock"),
                           "agent.lock/x", "agent.lockx", cwd=root)
        self.assertLines(r, 1, [locked("agent.lock", "agent.lock")] * 3 +
                         [locked("agent.lock/x", "agent.lock"), writable("agent.lockx")])

    def test_agent_lock_listed_explicitly_is_still_pattern_zero(self):
        root = self.project("protect:\n  - other.txt\n  - ./agent.lock\n")
        r = self.run_ralon("check", "agent.lock", cwd=root)
        self.assertLines(r, 1, [locked("agent.lock", "agent.lock")])

    def test_the_project_root_itself(self):
        root = self.project(GOLDEN)
        r = self.run_ralon("check", ".", root, "tests/..", cwd=root)
        self.assertLines(r, 0, [writable(".")] * 3)
        r = self.run_ralon("check", "..", cwd=root)
        self.assertLines(r, 0, [outside("..")])

    def test_from_a_subdirectory(self):
        root = self.project(GOLDEN, dirs=["tests/golden", "src/deep/er"])
        tests = os.path.join(root, "tests")
        r = self.run_ralon("check", "golden/a.txt", "../src/x", "../../x", "unit.c", cwd=tests)
        self.assertLines(r, 1, [locked("tests/golden/a.txt", "tests/golden/**"),
                                writable("src/x"), outside("../../x"), writable("tests/unit.c")])
        deep = os.path.join(root, "src", "deep", "er")
        r = self.run_ralon("check", "../../../agent.lock", "f", cwd=deep)
        self.assertLines(r, 1, [locked("agent.lock", "agent.lock"), writable("src/deep/er/f")])

    def test_a_directory_pattern(self):
        root = self.project("protect:\n  - config\n")
        r = self.run_ralon("check", "config", "config/a/b", "configuration", "config.bak",
                           "src/config", cwd=root)
        self.assertLines(r, 1, [locked("config", "config"), locked("config/a/b", "config"),
                                writable("configuration"), writable("config.bak"),
                                writable("src/config")])

    def test_pattern_normalisation(self):
        root = self.project("protect:\n  - ./docs/\n  - 'a\\b'\n  - \"  spaced  \"\n")
        r = self.run_ralon("check", "docs/x", "a/b", "a\\b", "spaced", cwd=root)
        # A name with a backslash is shown quoted, as git shows it.
        self.assertLines(r, 1, [locked("docs/x", "docs"), locked("a/b", "a/b"),
                                writable('"a\\\\b"'), locked("spaced", "spaced")])

    def test_glob_syntax(self):
        root = self.project("protect:\n  - 'src/*.c'\n  - 'docs/**/*.md'\n  - 'f?.txt'\n"
                            "  - 'data[12]'\n")
        r = self.run_ralon("check", "src/a.c", "src/sub/a.c", "src/a.c/x", "docs/a.md",
                           "docs/x/y/b.md", "docs/a.txt", "f1.txt", "f12.txt", "f/.txt",
                           "data1/x", "data3", cwd=root)
        self.assertLines(r, 1, [locked("src/a.c", "src/*.c"), writable("src/sub/a.c"),
                                locked("src/a.c/x", "src/*.c"), locked("docs/a.md", "docs/**/*.md"),
                                locked("docs/x/y/b.md", "docs/**/*.md"), writable("docs/a.txt"),
                                locked("f1.txt", "f?.txt"), writable("f12.txt"),
                                writable("f/.txt"), locked("data1/x", "data[12]"),
                                writable("data3")])

    def test_first_matching_pattern_is_reported(self):
        root = self.project("protect:\n  - 'tests/**'\n  - tests/golden\n")
        r = self.run_ralon("check", "tests/golden/a", cwd=root)
        self.assertLines(r, 1, [locked("tests/golden/a", "tests/**")])

    @unittest.skipUnless(sys.platform.startswith("linux"), "case-sensitive only on Linux")
    def test_case_sensitive_on_linux(self):
        root = self.project("protect:\n  - Cargo.lock\n")
        r = self.run_ralon("check", "cargo.lock", "CARGO.LOCK", "Agent.lock", cwd=root)
        self.assertLines(r, 0, [writable("cargo.lock"), writable("CARGO.LOCK"),
                                writable("Agent.lock")])

    def test_json(self):
        root = self.project(GOLDEN, files=["tests/golden/a.txt"])
        for args in (["check", "--json"], ["--json", "check"]):
            with self.subTest(args=args):
                r = self.run_ralon(*args, "src/auth.c", "tests/golden/a.txt", "../elsewhere",
                                   cwd=root)
                self.assertEqual((r.rc, r.err), (1, ""), r)
                doc = json.loads(r.out)
                self.assertEqual(doc, {
                    "policy": os.path.join(root, "agent.lock"),
                    "root": root,
                    "paths": [
                        {"path": "src/auth.c", "status": "writable", "relative": "src/auth.c",
                         "pattern": None},
                        {"path": "tests/golden/a.txt", "status": "locked",
                         "relative": "tests/golden/a.txt", "pattern": "tests/golden/**"},
                        {"path": "../elsewhere", "status": "outside", "relative": None,
                         "pattern": None},
                    ],
                    "locked": True,
                })

    def test_json_nothing_locked(self):
        root = self.project(GOLDEN)
        r = self.run_ralon("check", "--json", ".", "src", cwd=root)
        self.assertEqual((r.rc, r.err), (0, ""), r)
        doc = json.loads(r.out)
        self.assertIs(doc["locked"], False)
        self.assertEqual([(p["path"], p["status"], p["relative"]) for p in doc["paths"]],
                         [(".", "writable", "."), ("src", "writable", "src")])
        self.assertNotIn("\x1b", r.out)


# ===========================================================================
class CheckListTest(RalonTestCase):

    def test_lists_what_is_protected_sorted_directories_once(self):
        policy = ("protect:\n  - zeta.txt\n  - tests/golden/**\n  - Cargo.lock\n"
                  "  - big\n  - 'logs/*.log'\n")
        files = ["zeta.txt", "Cargo.lock", "tests/golden/a", "tests/golden/sub/b",
                 "logs/b.log", "logs/a.log", "logs/c.txt", "src/main.c"]
        files += ["big/f%03d" % i for i in range(100)]
        root = self.project(policy, files=files)
        r = self.run_ralon("check", cwd=root)
        self.assertLines(r, 0, [
            locked("Cargo.lock", "Cargo.lock"),
            locked("agent.lock", "agent.lock"),
            locked("big/", "big"),
            locked("logs/a.log", "logs/*.log"),
            locked("logs/b.log", "logs/*.log"),
            locked("tests/golden/", "tests/golden/**"),
            locked("zeta.txt", "zeta.txt"),
        ], scanned=True)

    def test_list_from_a_subdirectory_and_with_dash_C(self):
        root = self.project(GOLDEN, files=["tests/golden/a"])
        expected = [locked("agent.lock", "agent.lock"), locked("tests/golden/", "tests/golden/**")]
        self.assertLines(self.run_ralon("check", cwd=os.path.join(root, "tests", "golden")),
                         0, expected, scanned=True)
        self.assertLines(self.run_ralon("check", "-C", "proj", cwd=self.base), 0, expected,
                         scanned=True)

    def test_unmatched_patterns_are_warned_about(self):
        root = self.project("protect:\n  - missing.txt\n  - 'nothing/**'\n  - here\n",
                            files=["here"])
        r = self.run_ralon("check", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.out, locked("agent.lock", "agent.lock") + "\n" +
                         locked("here", "here") + "\n")
        err = self.audit_err(r).splitlines()
        self.assertEqual(len(err), 2, r.err)
        self.assertTrue(err[0].startswith(
            "ralon: warning: `missing.txt` matches nothing on disk, so there is nothing to lock"),
            err)
        self.assertTrue(err[1].startswith(
            "ralon: warning: `nothing/**` matches nothing on disk, so there is nothing to lock"),
            err)

    def test_no_warning_when_everything_matches(self):
        root = self.project(GOLDEN, files=["tests/golden/a"])
        self.assertEqual(self.audit_err(self.run_ralon("check", cwd=root)), "")

    def test_symlinks_are_not_followed_by_the_listing(self):
        # A symlink to a directory full of files is one entry, not a tree.
        root = self.project("protect:\n  - 'vendor/**'\n  - ln\n", files=["real/a", "real/b"])
        os.symlink("real", os.path.join(root, "ln"))
        r = self.run_ralon("check", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(r.out, locked("agent.lock", "agent.lock") + "\n" +
                         locked("ln", "ln") + "\n")

    def test_json(self):
        root = self.project(GOLDEN + "  - missing.txt\n", files=["tests/golden/a"])
        r = self.run_ralon("check", "--json", cwd=root)
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.out)
        self.assertEqual(doc["policy"], os.path.join(root, "agent.lock"))
        self.assertEqual(doc["root"], root)
        self.assertEqual([(p["path"], p["kind"], p["pattern"]) for p in doc["protected"]],
                         [("agent.lock", "file", "agent.lock"),
                          ("tests/golden", "directory", "tests/golden/**")])
        for p in doc["protected"]:
            st = os.lstat(os.path.join(root, p["path"]))
            self.assertEqual(p["absolute"], os.path.join(root, p["path"]))
            self.assertEqual((p["device"], p["inode"], p["links"]),
                             (st.st_dev, st.st_ino, st.st_nlink))
        self.assertIn("`missing.txt`", [f["subject"] for f in doc["findings"]])


# ===========================================================================
class StatusTest(RalonTestCase):

    def test_status_lines(self):
        root = self.project(GOLDEN + "  - Cargo.lock\n  - missing.txt\n",
                            files=["tests/golden/a", "tests/golden/b", "Cargo.lock"])
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertSubsequence([
            "policy     %s" % os.path.join(root, "agent.lock"),
            "root       %s" % root,
            "version    1",
            "patterns   3 declared (+1 implicit: agent.lock)",
            "protected  3 path(s) currently on disk",
        ], r.out.splitlines())
        self.assertEqual(r.out.splitlines()[0], "policy     %s" % os.path.join(root, "agent.lock"))
        self.assertNotIn("\x1b", r.out + r.err)
        err = self.audit_err(r)
        self.assertEqual(len(err.splitlines()), 1, r.err)
        self.assertTrue(err.startswith("ralon: warning: `missing.txt` matches nothing on disk"),
                        r.err)

    def test_status_counts_every_pattern_that_matches(self):
        # A pattern counts every protected path it matches, not only those
        # no earlier pattern matched first; one that could match only
        # inside a protected directory (which is not walked) is not said
        # to match nothing.
        root = self.project('protect: [Cargo.lock, "*.lock", "g/**", g/a, "h/*.txt"]\n',
                            files=["Cargo.lock", "g/a"], dirs=["h"])
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertSubsequence([
            "  agent.lock                     1 path",
            "  Cargo.lock                     1 path",
            "  *.lock                         2 paths",
            "  g/**                           1 path",
            "  g/a                            only inside protected directories, if anything",
            "  h/*.txt                        nothing on disk",
        ], r.out.splitlines())
        doc = json.loads(self.run_ralon("status", "--json", cwd=root).out)
        self.assertEqual([(e["pattern"], e["matches"]) for e in doc["patterns"]],
                         [("agent.lock", 1), ("Cargo.lock", 1), ("*.lock", 2), ("g/**", 1),
                          ("g/a", 0), ("h/*.txt", 0)])

    def test_status_hooks(self):
        # No agent here: nothing installed, and how to add them.
        root = self.project(GOLDEN)
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        lines = r.out.splitlines()
        self.assertIn("hooks", lines)
        self.assertEqual(lines[lines.index("hooks") + 1],
                         "  none installed (`ralon hook install --agent NAME` adds one)")
        # Claude Code's directory: found, without the hook.
        os.mkdir(os.path.join(root, ".claude"))
        settings = os.path.join(root, ".claude", "settings.json")
        r = self.run_ralon("status", cwd=root)
        lines = r.out.splitlines()
        self.assertEqual(lines[lines.index("hooks") + 1],
                         "  claude       project  not installed  %s" % settings)
        # Installed: said so, in text and JSON; the other agents are not
        # listed in text (hook list shows them all).
        self.assertEqual(self.run_ralon("hook", "install", "--agent", "claude", cwd=root).rc, 0)
        r = self.run_ralon("status", cwd=root)
        lines = r.out.splitlines()
        i = lines.index("hooks")
        self.assertEqual(lines[i + 1], "  claude       project  installed      %s" % settings)
        # Where Claude Code must be started for it to run.
        self.assertEqual(lines[i + 2], "    note: Claude Code reads %s only when started in %s "
                         "itself, not in a subdirectory; a hook installed with --user runs "
                         "wherever it starts." % (settings, root))
        self.assertFalse(len(lines) > i + 3 and lines[i + 3].startswith("  "), r.out)
        doc = json.loads(self.run_ralon("status", "--json", cwd=root).out)
        states = {(h["agent"], h["scope"]): h["state"] for h in doc["hooks"]}
        self.assertEqual(states[("claude", "project")], "installed")
        self.assertEqual(states[("claude", "user")], "absent")
        self.assertEqual(states[("codex", "project")], "absent")
        hook_list = json.loads(self.run_ralon("hook", "list", "--json", cwd=root).out)
        self.assertEqual(doc["hooks"], hook_list["hooks"])
        # A configuration that cannot be read is an error, named.
        write(settings, "{not json")
        r = self.run_ralon("status", cwd=root)
        lines = r.out.splitlines()
        self.assertTrue(lines[lines.index("hooks") + 1].startswith("  claude       project  error  ("),
                        r.out)

    def test_status_counts_with_explicit_agent_lock_and_duplicates(self):
        root = self.project("version: 1\nprotect:\n  - agent.lock\n  - a\n  - ./a/\n  - b\n",
                            files=["a", "b"])
        r = self.run_ralon("status", cwd=root)
        self.assertEqual((r.rc, self.audit_err(r)), (0, ""), r)
        self.assertSubsequence(["version    1",
                                "patterns   2 declared (+1 implicit: agent.lock)",
                                "protected  3 path(s) currently on disk"], r.out.splitlines())

    def test_status_from_a_deep_subdirectory(self):
        root = self.project(GOLDEN, dirs=["a/b/c/d"])
        r = self.run_ralon("status", cwd=os.path.join(root, "a", "b", "c", "d"))
        self.assertEqual(r.rc, 0, r)
        self.assertSubsequence(["policy     %s" % os.path.join(root, "agent.lock"),
                                "root       %s" % root], r.out.splitlines())

    def test_nearest_policy_wins(self):
        outer = self.project(GOLDEN)
        inner = os.path.join(outer, "vendor", "lib")
        write(os.path.join(inner, "agent.lock"), "protect:\n  - x\n")
        r = self.run_ralon("status", cwd=inner)
        self.assertEqual(r.rc, 0, r)
        self.assertIn("root       %s" % inner, r.out.splitlines())
        c = self.run_ralon("check", "x", "../../tests/golden/a", cwd=inner)
        self.assertLines(c, 1, [locked("x", "x"), outside("../../tests/golden/a")])

    def test_a_directory_named_agent_lock_is_not_a_policy(self):
        # Nor is it passed by for the policy above: a policy was meant
        # here, and which one is unknown.
        root = self.project(GOLDEN)
        sub = os.path.join(root, "sub")
        os.makedirs(os.path.join(sub, "agent.lock"))
        r = self.run_ralon("status", cwd=sub)
        self.assertFails(r, err=not_a_policy(os.path.join(sub, "agent.lock"), "a directory"))

    def test_hard_link_warning(self):
        root = self.project("protect:\n  - secret.txt\n", files=["secret.txt"])
        os.link(os.path.join(root, "secret.txt"), os.path.join(root, "copy.txt"))
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(self.audit_err(r),
                         "ralon: warning: secret.txt %s\n" % HARD_LINKS.format(n=2))
        os.link(os.path.join(root, "secret.txt"), os.path.join(root, "third.txt"))
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(self.audit_err(r),
                         "ralon: warning: secret.txt %s\n" % HARD_LINKS.format(n=3))

    def test_symlink_warning(self):
        root = self.project("protect:\n  - link\n", files=["target.txt"])
        os.symlink("target.txt", os.path.join(root, "link"))
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        lines = self.audit_err(r).splitlines()
        self.assertEqual(len(lines), 1, r.err)
        self.assertTrue(lines[0].startswith("ralon: warning: link "), lines)
        self.assertIn("symbolic link", lines[0])

    def test_git_warnings(self):
        root = self.project("protect:\n  - src\n", dirs=[".git/hooks", "src"],
                            files=[".git/config"])
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        lines = self.audit_err(r).splitlines()
        self.assertEqual(len(lines), 2, r.err)
        self.assertTrue(lines[0].startswith("ralon: warning: .git/hooks "), lines)
        self.assertTrue(lines[1].startswith("ralon: warning: .git/config "), lines)
        for line in lines:
            self.assertIn("not protected", line)

    def test_no_git_warnings_when_protected(self):
        for policy in ("protect:\n  - .git/hooks\n  - .git/config\n", "protect:\n  - .git\n"):
            with self.subTest(policy=policy):
                root = self.project(policy, dirs=[".git/hooks"], files=[".git/config"])
                r = self.run_ralon("status", cwd=root)
                self.assertEqual((r.rc, self.audit_err(r)), (0, ""), r)
                os.unlink(os.path.join(root, "agent.lock"))

    def test_no_git_warnings_without_git(self):
        root = self.project("protect:\n  - src\n", dirs=["src"])
        r = self.run_ralon("status", cwd=root)
        self.assertEqual((r.rc, self.audit_err(r)), (0, ""), r)

    def test_json(self):
        root = self.project(GOLDEN + "  - secret.txt\n  - missing.txt\n",
                            files=["tests/golden/a", "secret.txt"], dirs=[".git"])
        os.link(os.path.join(root, "secret.txt"), os.path.join(root, "copy.txt"))
        r = self.run_ralon("status", "--json", cwd=root)
        self.assertEqual(r.rc, 0, r)
        doc = json.loads(r.out)
        for key in ("policy", "root", "version", "patterns", "protected", "findings"):
            self.assertIn(key, doc)
        self.assertEqual(doc["policy"], os.path.join(root, "agent.lock"))
        self.assertEqual(doc["root"], root)
        self.assertEqual(doc["version"], 1)
        self.assertEqual([p["pattern"] for p in doc["patterns"]],
                         ["agent.lock", "tests/golden/**", "secret.txt", "missing.txt"])
        self.assertEqual([p["path"] for p in doc["protected"]],
                         ["agent.lock", "secret.txt", "tests/golden"])
        kinds = {"agent.lock": "file", "secret.txt": "file", "tests/golden": "directory"}
        pats = {"agent.lock": "agent.lock", "secret.txt": "secret.txt",
                "tests/golden": "tests/golden/**"}
        for p in doc["protected"]:
            for key in ("path", "absolute", "kind", "pattern", "device", "inode", "links"):
                self.assertIn(key, p)
            abspath = os.path.join(root, p["path"])
            st = os.lstat(abspath)
            self.assertEqual(p["absolute"], abspath)
            self.assertEqual(p["kind"], kinds[p["path"]])
            self.assertEqual(p["pattern"], pats[p["path"]])
            self.assertEqual((p["device"], p["inode"], p["links"]),
                             (st.st_dev, st.st_ino, st.st_nlink))
        self.assertEqual([p["links"] for p in doc["protected"] if p["path"] == "secret.txt"], [2])
        for f in doc["findings"]:
            self.assertEqual(sorted(f), ["kind", "message", "pattern", "subject"])
            # The pattern as written, for the findings about a pattern only.
            self.assertEqual(f["pattern"], "missing.txt" if f["subject"] == "`missing.txt`"
                             else None, f)
        by_subject = {f["subject"]: f for f in doc["findings"]}
        self.assertEqual(by_subject["secret.txt"]["kind"], "hard-links")
        self.assertEqual(by_subject["secret.txt"]["message"],
                         "secret.txt " + HARD_LINKS.format(n=2))
        self.assertTrue(by_subject["`missing.txt`"]["message"].startswith(
            "`missing.txt` matches nothing on disk"))
        self.assertIn(".git/hooks", by_subject)
        self.assertIn(".git/config", by_subject)
        self.assertNotIn("`tests/golden/**`", by_subject)


# ===========================================================================
class BadPolicyTest(RalonTestCase):
    """Every command refuses a malformed agent.lock: exit 2, nothing on
    stdout, `ralon: FILE:LINE:COL: ...` on stderr."""

    COMMANDS = (["check"], ["check", "src/a"], ["check", "--json", "src/a"], ["check", "--json"],
                ["status"], ["status", "--json"])

    def check_rejected(self, content, line=None, col=None, contains=()):
        root = self.project(content, dirs=["src/deep"])
        file = os.path.join(root, "agent.lock")
        runs = []
        for cwd in (root, os.path.join(root, "src", "deep")):
            for args in self.COMMANDS:
                runs.append((args, cwd, self.run_ralon(*args, cwd=cwd)))
        runs.append((["-C", "proj", "check", "src/a"], self.base,
                     self.run_ralon("-C", "proj", "check", "src/a", cwd=self.base)))
        r = runs[0][2]
        # Every command, from anywhere, says the same thing the same way.
        self.assertEqual([(a, c, x.rc, x.out, x.err) for a, c, x in runs],
                         [(a, c, 2, "", r.err) for a, c, _ in runs])
        m = re.match(r"ralon: %s:([0-9]+):([0-9]+): \S" % re.escape(file), r.err)
        self.assertIsNotNone(m, "no `ralon: FILE:LINE:COL: ` in %r" % r.err)
        if line is not None:
            self.assertEqual((int(m.group(1)), int(m.group(2))), (line, col), r.err)
        for text in contains:
            self.assertIn(text, r.err)
        self.assertTrue(r.err.endswith("\n"), r.err)

    def test_unknown_key(self):
        self.check_rejected("protect:\n  - a\nfoo: 1\n", 3, 1, ["`foo`"])

    def test_misspelled_key(self):
        self.check_rejected("protects:\n  - a\n", 1, 1, ["`protects`"])

    def test_alias(self):
        self.check_rejected("protect:\n  - *a\n", 2, 5, ["alias"])

    def test_anchor(self):
        self.check_rejected("protect:\n  - &x a\n  - *x\n", 2, 5, ["anchor"])

    def test_tag(self):
        self.check_rejected("protect:\n  - !foo a\n", 2, 5, ["tag"])

    def test_tag_on_the_list(self):
        self.check_rejected("protect: !!seq\n  - a\n", 1, 10, ["tag"])

    def test_duplicate_key(self):
        self.check_rejected("protect:\n  - a\nprotect:\n  - b\n", 3, 1, ["duplicate", "protect"])

    def test_leading_slash(self):
        self.check_rejected("protect:\n  - ok\n  - /etc/passwd\n", 3, 5, ["/etc/passwd"])

    def test_dotdot(self):
        self.check_rejected("protect:\n  - a/../b\n", 2, 5, ["`..`"])

    def test_leading_dotdot(self):
        self.check_rejected("protect:\n  - ../outside\n", 2, 5, ["`..`"])

    def test_tilde(self):
        self.check_rejected("protect:\n  - ~/x\n", 2, 5, ["~"])

    def test_negation(self):
        self.check_rejected("protect:\n  - \"!x\"\n", 2, 5, ["!x"])

    def test_colon(self):
        self.check_rejected("protect:\n  - \"c:/x\"\n", 2, 5, ["c:/x"])

    def test_empty_pattern(self):
        self.check_rejected("protect:\n  - \"\"\n", 2, 5)

    def test_non_string_item(self):
        self.check_rejected("protect:\n  - [a, b]\n", 2, 5)

    def test_plain_scalars_are_names(self):
        # Not rejected as non-strings: a single value is a name, as the
        # Rust ralon reads it (README, agent.lock(5)).
        root = self.project("protect:\n  - 1\n  - true\n  - null\n  - 2024\n",
                            files=["1", "true", "null", "2024", "false"])
        r = self.run_ralon("check", "1", "true", "null", "2024", "false", cwd=root)
        self.assertLines(r, 1, [locked("1", "1"), locked("true", "true"), locked("null", "null"),
                                locked("2024", "2024"), writable("false")])

    def test_protect_not_a_list(self):
        self.check_rejected("protect: a\n", 1, 10)

    def test_protect_empty(self):
        # The example is on lines of its own (diagnostics escape control
        # characters, but keep a message's own lines).
        self.check_rejected("protect:\n", contains=["one per line:\n\n    protect:\n      - "])

    def test_top_level_list(self):
        self.check_rejected("- a\n- b\n", 1, 1)

    def test_unsupported_version(self):
        self.check_rejected("version: 2\nprotect:\n  - a\n", 1, 10, ["version"])

    def test_second_document(self):
        self.check_rejected("protect:\n  - a\n---\nprotect:\n  - b\n", 3, 1)

    # The likeliest typos get the fix, not libyaml's words.
    def test_unquoted_star_pattern(self):
        self.check_rejected("protect:\n  - **/*.pem\n", 2, 5,
                            ["a pattern that starts with `*` must be quoted, or YAML reads it "
                             "as an alias: write \"**/*.pem\"\n"])

    def test_unquoted_star_pattern_after_others_with_comment(self):
        self.check_rejected("protect:\n  - a\n  - *.key   # keys\n", 3, 5,
                            ["must be quoted", "write \"*.key\"\n"])

    def test_unquoted_star_pattern_in_flow_list(self):
        self.check_rejected("protect: [a, **/*.pem, b]\n", 1, 14, ["write \"**/*.pem\"\n"])

    def test_unquoted_star_pattern_with_backslash(self):
        # In double quotes the backslash would be an escape: single ones.
        self.check_rejected("protect:\n  - *\\x'y\n", 2, 5, ["write '*\\x''y'\n"])

    def test_unquoted_reserved_character(self):
        self.check_rejected("protect:\n  - @types\n", 2, 5,
                            ["`@` must be quoted (YAML reserves the character): "
                             "write \"@types\"\n"])

    def test_tab_indent(self):
        tab = "a tab character: YAML indents with spaces only; replace the tab with spaces\n"
        self.check_rejected("protect:\n\t- a\n", 2, 1, [tab])
        self.check_rejected("protect:\n  - a\n\t- b\n", 3, 1, [tab])
        self.check_rejected("protect:\n  - a\n \t- b\n", 3, 2, [tab])

    def test_yaml_syntax_error(self):
        self.check_rejected("protect: [a\n")

    def test_empty_file(self):
        self.check_rejected("", contains=["protects nothing", "protect:"])

    def test_whitespace_only(self):
        self.check_rejected("\n   \n\n", contains=["protects nothing", "protect:"])

    def test_comment_only(self):
        self.check_rejected("# nothing yet\n# really\n", contains=["protects nothing", "protect:"])

    def test_nul_byte(self):
        self.check_rejected(b"protect:\n  - a\x00b\n", 2, 6)

    def test_invalid_utf8(self):
        self.check_rejected(b"protect:\n  - \xff\n", 2, 5, ["UTF-8"])

    def test_overlong_utf8(self):
        self.check_rejected(b"protect:\n  - a\xc0\xaf\n", 2, 6, ["UTF-8"])

    def test_larger_than_one_mib(self):
        body = "protect:\n  - a\n"
        self.check_rejected(body + "#" * (1024 * 1024 + 1 - len(body)) + "\n")

    def test_exactly_one_mib_is_accepted(self):
        body = "protect:\n  - a\n"
        text = body + "#" * (1024 * 1024 - len(body) - 1) + "\n"
        self.assertEqual(len(text), 1024 * 1024)
        root = self.project(text, files=["a"])
        r = self.run_ralon("check", "a", cwd=root)
        self.assertLines(r, 1, [locked("a", "a")])


# ===========================================================================
class NotAPolicyTest(RalonTestCase):
    """An agent.lock that is no regular file, on the way up from the
    working directory: every command refuses to go on (exit 2, naming it and
    what it is), whether or not a policy lies further up, and none hangs on
    a FIFO. Before, discovery passed it by: `status` said "no agent.lock
    found" (or used the policy above), and `run --if-policy` ran the
    command unprotected."""

    # (name, how to make it in directory d, what the message calls it)
    KINDS = (
        ("directory", lambda d: os.mkdir(os.path.join(d, "agent.lock")), "a directory"),
        ("fifo", lambda d: os.mkfifo(os.path.join(d, "agent.lock")), "a FIFO"),
        ("socket", lambda d: NotAPolicyTest.bind_socket(os.path.join(d, "agent.lock")),
         "a socket"),
        ("dangling link", lambda d: os.symlink("gone/agent.lock", os.path.join(d, "agent.lock")),
         "a symbolic link that leads nowhere (to gone/agent.lock)"),
        ("link to a directory", lambda d: (os.mkdir(os.path.join(d, "dir")),
                                           os.symlink("dir", os.path.join(d, "agent.lock"))),
         "a symbolic link to dir, a directory"),
        ("link to a FIFO", lambda d: (os.mkfifo(os.path.join(d, "fifo")),
                                      os.symlink("fifo", os.path.join(d, "agent.lock"))),
         "a symbolic link to fifo, a FIFO"),
        ("link loop", lambda d: os.symlink("agent.lock", os.path.join(d, "agent.lock")),
         "a symbolic link that leads nowhere (to agent.lock, through too many links)"),
    )

    @staticmethod
    def bind_socket(path):
        import socket
        s = socket.socket(socket.AF_UNIX)
        s.bind(path)
        s.close()

    def commands(self, marker):
        return (["check"], ["check", "x"], ["check", "--json", "x"], ["status"],
                ["status", "--json"], ["run", "--", "true"], ["run", "--dry-run", "--", "true"],
                ["run", "--dry-run", "--json", "--", "true"],
                ["run", "--if-policy", "--dry-run", "--", "true"],
                ["run", "--if-policy", "--", "sh", "-c", 'echo ran > "$1"', "sh", marker],
                ["run", "--if-policy", "--backend", "landlock", "--", "touch", marker],
                ["hook", "list"], ["hook", "install", "--agent", "claude"],
                ["hook", "uninstall", "--agent", "claude"], ["guard"])

    def test_every_command_refuses(self):
        marker = os.path.join(self.base, "ran")
        for above in (False, True):
            for name, make, kind in self.KINDS:
                with self.subTest(kind=name, policy_above=above):
                    base = os.path.join(self.base, "%s-%s" % (name.replace(" ", "-"), above))
                    sub = os.path.join(base, "proj", "sub")
                    os.makedirs(sub)
                    if above:
                        write(os.path.join(base, "agent.lock"), "protect: [x]\n")
                    proj = os.path.join(base, "proj")
                    make(proj)
                    msg = not_a_policy(os.path.join(proj, "agent.lock"), kind)
                    for args in self.commands(marker):
                        for cwd, pre in ((sub, []), (base, ["-C", "proj/sub"]), (proj, [])):
                            r = self.run_ralon(*pre, *args, cwd=cwd)
                            self.assertFails(r, err=msg)
                            self.assertFalse(os.path.exists(marker), (args, r))
                    # No hook written, anywhere.
                    self.assertEqual(sorted(os.listdir(sub)), [])
                    self.assertFalse(os.path.lexists(os.path.join(proj, ".claude")))
                    # `init` there says what is in the way, and leaves it.
                    before = os.lstat(os.path.join(proj, "agent.lock"))
                    self.assertFails(self.run_ralon("init", "--no-hooks", cwd=proj), err=msg)
                    after = os.lstat(os.path.join(proj, "agent.lock"))
                    self.assertEqual((before.st_ino, before.st_mode), (after.st_ino, after.st_mode))

    def test_hook_check_refuses(self):
        # The agent's edit is refused in its own dialect, with the reason;
        # before, it was allowed (no policy was found).
        proj = os.path.join(self.base, "proj")
        os.makedirs(os.path.join(proj, "src"))
        os.mkfifo(os.path.join(proj, "agent.lock"))
        payload = json.dumps({
            "hook_event_name": "PreToolUse", "tool_name": "Write", "cwd": proj,
            "tool_input": {"file_path": os.path.join(proj, "src", "a.c"), "content": "x"}})
        p = subprocess.run([RALON, "hook", "check"], input=payload.encode(), cwd=proj,
                           env=self.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        self.assertEqual(p.returncode, 2, p)
        out = json.loads(p.stdout)["hookSpecificOutput"]
        self.assertEqual(out["permissionDecision"], "deny", out)
        reason = not_a_policy(os.path.join(proj, "agent.lock"), "a FIFO")[len("ralon: "):-1]
        self.assertEqual(out["permissionDecisionReason"],
                         "this call cannot be checked against agent.lock (%s), so it was "
                         "refused and changed nothing. Tell the user." % reason)

    def test_init_force_replaces_what_a_rename_can(self):
        for name, make, kind in self.KINDS:
            with self.subTest(kind=name):
                proj = os.path.join(self.base, name.replace(" ", "-"))
                os.makedirs(proj)
                make(proj)
                r = self.run_ralon("init", "--no-hooks", "--force", cwd=proj)
                lock = os.path.join(proj, "agent.lock")
                if name == "directory":
                    # rename(2) does not put a file over a directory.
                    self.assertFails(r, err="ralon: cannot write %s: Is a directory\n" % lock)
                    continue
                self.assertEqual(r.rc, 0, r)
                self.assertTrue(stat.S_ISREG(os.lstat(lock).st_mode))
                self.assertEqual(self.run_ralon("check", "x", cwd=proj).rc, 0)

    def test_a_link_to_a_regular_file_is_a_policy(self):
        proj = os.path.join(self.base, "proj")
        os.makedirs(proj)
        write(os.path.join(self.base, "shared.lock"), "protect: [x]\n")
        os.symlink("../shared.lock", os.path.join(proj, "agent.lock"))
        r = self.run_ralon("check", "x", cwd=proj)
        self.assertLines(r, 1, [locked("x", "x")])


# ===========================================================================
class NoPolicyTest(RalonTestCase):

    def setUp(self):
        super().setUp()
        d = self.base
        while True:
            if os.path.isfile(os.path.join(d, "agent.lock")):
                self.skipTest("this machine has %s/agent.lock above the temporary directory" % d)
            if d == "/":
                break
            d = os.path.dirname(d)

    def test_no_policy_anywhere(self):
        empty = os.path.join(self.base, "empty", "sub")
        os.makedirs(empty)
        msg = ("ralon: no agent.lock found in %s or any parent directory (run `ralon init`)\n"
               % empty)
        for args in (["check"], ["check", "x"], ["check", "--json", "x"], ["status"],
                     ["status", "--json"]):
            with self.subTest(args=args):
                self.assertFails(self.run_ralon(*args, cwd=empty), err=msg)
                self.assertFails(self.run_ralon("-C", empty, *args, cwd=self.base), err=msg)
                self.assertFails(self.run_ralon("-C", "empty/sub", *args, cwd=self.base), err=msg)

    def test_dry_run_lists_the_landlock_grants(self):
        # Each directory on the way to a protected path, then the entries
        # in it that get a write rule, sorted: what the carve-out grants.
        root = self.project("protect: [tests/golden/**]\n",
                            files=["docs/a.md", "src/x.c", "tests/golden/a", "tests/unit.c",
                                   "tests/b c.txt"])
        r = self.run_ralon("run", "--dry-run", "--backend", "landlock", "--", "true", cwd=root)
        lines = r.out.splitlines()
        i = lines.index("  no new entries in  %s" % root)
        self.assertEqual(lines[i + 1], "    write granted  docs src", r.out)
        i = lines.index("  no new entries in  %s/tests" % root)
        self.assertEqual(lines[i + 1], '    write granted  "b c.txt" unit.c', r.out)
        doc = json.loads(self.run_ralon("run", "--dry-run", "--json", "--backend", "landlock",
                                        "--", "true", cwd=root).out)
        for name in ("docs", "src", "tests/unit.c", "tests/b c.txt"):
            self.assertIn(os.path.join(root, name), doc["granted"])

    def test_dry_run_wraps_the_grants_by_columns(self):
        # Wrapped at 78 terminal columns, not 78 bytes (which breaks each
        # line early) nor 78 characters (which lets wide ones run over).
        # Both sets of names take 11 columns: 18 columns of label, then
        # 12 a name, so 5 names a line (by bytes 4; by characters, 中文 6).
        def columns(text):
            return sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in text)

        for k, pattern in enumerate(("d\u00e9j\u00e0-%02d.txt", "\u4e2d\u6587-%02d.txt")):
            with self.subTest(pattern=pattern):
                names = [pattern % i for i in range(30)]
                self.assertEqual(columns(names[0]), 11)
                root = self.project("protect: [tests/golden/**]\n", name="proj%d" % k,
                                    files=["tests/golden/a"] + ["tests/" + n for n in names])
                r = self.run_ralon("run", "--dry-run", "--backend", "landlock", "--", "true",
                                   cwd=root)
                lines = r.out.splitlines()
                i = lines.index("  no new entries in  %s/tests" % root)
                block = [lines[i + 1]]
                for line in lines[i + 2:]:
                    if not line.startswith(" " * 19):
                        break
                    block.append(line)
                self.assertTrue(block[0].startswith("    write granted  "), r.out)
                self.assertEqual(" ".join(block).split()[2:], sorted(names), r.out)
                for line in block:
                    self.assertLessEqual(columns(line), 78, r.out)
                for n, line in enumerate(block[:-1]):
                    self.assertEqual(len(line.split()) - (2 if n == 0 else 0), 5, r.out)

    def test_dry_run_names_what_a_link_leads_to(self):
        # A protected name that is a link: what is made read-only is its
        # target (the mount backend binds only that), so the plan names
        # it; a link whose target does not exist says which name is missing.
        root = self.project("protect: [link-a, dangling, plain.txt]\n",
                            files=["src/main.c", "plain.txt"])
        os.symlink("src/main.c", os.path.join(root, "link-a"))
        os.symlink("nowhere/x", os.path.join(root, "dangling"))
        for backend, missing in (
                ("mount", "  dangling leads to nowhere/x, which does not exist, so it cannot "
                          "be made read-only"),
                ("landlock", "  dangling leads to nowhere/x, which does not exist; it cannot "
                             "be created while the agent runs")):
            with self.subTest(backend=backend):
                r = self.run_ralon("run", "--dry-run", "--backend", backend, "--", "true",
                                   cwd=root)
                lines = r.out.splitlines()
                self.assertIn("  read-only  src/main.c  (where link-a leads)", lines, r)
                self.assertIn("  read-only  plain.txt", lines, r)
                self.assertIn(missing, lines, r)

    def test_if_policy_without_policy(self):
        empty = os.path.join(self.base, "empty")
        os.makedirs(empty)
        marker = os.path.join(self.base, "ran")
        cmd = ["run", "--if-policy", "--", "sh", "-c", 'echo "$1" > "$2"; exit 5', "sh",
               "hello", marker]
        # --dry-run only says what would happen; the command does not run.
        r = self.run_ralon("run", "--if-policy", "--dry-run", *cmd[2:], cwd=empty)
        self.assertOutput(r, 0, "no agent.lock here: `sh` would run unchanged\n")
        self.assertFalse(os.path.exists(marker))
        # With --json, the plan's members: none protected, no backend.
        r = self.run_ralon("run", "--if-policy", "--dry-run", "--json", *cmd[2:], cwd=empty)
        self.assertEqual((r.rc, r.err), (0, ""), r)
        doc = json.loads(r.out)
        self.assertFalse(os.path.exists(marker))
        planned = self.run_ralon("run", "--dry-run", "--json", "--", "true",
                                 cwd=self.project(GOLDEN))
        self.assertIn(planned.rc, (0, 1), planned)  # 1 where no backend works
        self.assertEqual(list(doc), list(json.loads(planned.out)), r)
        for key in ("policy", "root", "backend", "seal", "error"):
            self.assertIsNone(doc[key], key)
        self.assertIs(doc["enforceable"], True)
        self.assertIs(doc["guard"], False)
        self.assertEqual(doc["reason"], "no agent.lock here: the command would run unchanged")
        self.assertEqual([k for k, v in doc.items() if v != [] and k not in
                          ("policy", "root", "backend", "reason", "seal", "guard", "enforceable",
                           "error")], [], r)
        # Without it, the command runs unchanged and its status is ralon's.
        r = self.run_ralon(*cmd, cwd=empty)
        self.assertOutput(r, 5, "")
        with open(marker) as f:
            self.assertEqual(f.read(), "hello\n")
        # Without --if-policy, no policy is an error.
        r = self.run_ralon("run", "--", "true", cwd=empty)
        self.assertFails(r, err_re=r"\Aralon: no agent.lock found in ")

    def test_discovery_stops_at_a_name_it_cannot_look_at(self):
        # A policy above, and below it an agent.lock that cannot be
        # resolved: whether the subdirectory has a policy of its own is
        # unknown, so neither check nor run --if-policy goes on to the one
        # above (or to none at all).
        root = self.project("protect: [a.txt]\n", files=["a.txt"], dirs=["sub"])
        os.symlink("agent.lock", os.path.join(root, "sub", "agent.lock"))
        sub = os.path.join(root, "sub")
        msg = not_a_policy(sub + "/agent.lock",
                           "a symbolic link that leads nowhere (to agent.lock, through too "
                           "many links)")
        self.assertFails(self.run_ralon("check", "x", cwd=sub), err=msg)
        marker = os.path.join(self.base, "ran")
        r = self.run_ralon("run", "--if-policy", "--", "sh", "-c", 'echo > "$1"', "sh", marker,
                           cwd=sub)
        self.assertFails(r, err=msg)
        self.assertFalse(os.path.exists(marker))
        # A name that is simply not there lets the walk go on.
        os.unlink(os.path.join(sub, "agent.lock"))
        r = self.run_ralon("check", "../a.txt", cwd=sub)
        self.assertEqual(r.rc, 1, r)

    def test_working_directory_reached_through_a_link(self):
        # $PWD, as a shell sets it, names the working directory through a
        # link. Along that way and along the real path the policy must be
        # the same: a project directory replaced by a link to one outside
        # must not lead to another policy, or to none.
        root = self.project("protect: [a.txt]\n", files=["a.txt"], dirs=["sub"])
        link = os.path.join(self.base, "link")
        os.symlink(root, link)

        def env(pwd):
            return dict(self.env, PWD=pwd)
        # A project reached through a link (and a directory in it): the
        # same policy both ways.
        for pwd, cwd in ((link, root), (os.path.join(link, "sub"), os.path.join(root, "sub"))):
            with self.subTest(pwd=pwd):
                r = self.run_ralon("check", "a.txt" if cwd == root else "../a.txt", cwd=cwd,
                                   env=env(pwd))
                self.assertEqual(r.rc, 1, r)
        # The directory replaced by a link to one outside, with no policy.
        outside = os.path.join(self.base, "outside")
        os.rename(os.path.join(root, "sub"), outside)
        os.symlink(outside, os.path.join(root, "sub"))
        logical = os.path.join(root, "sub")
        marker = os.path.join(self.base, "ran")
        run_if = ["run", "--if-policy", "--", "sh", "-c", 'echo > "$1"', "sh", marker]
        msg = ("ralon: the working directory %s is reached through the symbolic link %s: along "
               "that way the policy is %s/agent.lock, but from the directory's real path, %s, "
               "there is none (start from the project root, and look at the link: an agent may "
               "have replaced a directory with it)\n" % (logical, logical, root, outside))
        for args in (run_if, ["check", "x"], ["status"]):
            with self.subTest(args=args[0]):
                self.assertFails(self.run_ralon(*args, cwd=outside, env=env(logical)), err=msg)
        self.assertFalse(os.path.exists(marker))
        # ...and with a policy above it on the real path.
        write(os.path.join(self.base, "agent.lock"), "protect: []\n")
        r = self.run_ralon(*run_if, cwd=outside, env=env(logical))
        self.assertFails(r, err_re=r"\Aralon: the working directory %s [^\n]* it is %s "
                         % (re.escape(logical), re.escape(os.path.join(self.base, "agent.lock"))))
        self.assertFalse(os.path.exists(marker))
        os.unlink(os.path.join(self.base, "agent.lock"))
        # A policy in the directory itself is the nearest both ways; the
        # project's, further up only the way through the link, encloses
        # it, as one above does on a real path: a weakening finding.
        write(os.path.join(outside, "agent.lock"), "protect: []\n")
        r = self.run_ralon("status", cwd=outside, env=env(logical))
        self.assertEqual(r.rc, 0, r)
        self.assertIn("ralon: warning: %s/agent.lock also governs this directory" % root, r.err)
        r = self.run_ralon("run", "--strict", *run_if[2:], cwd=outside, env=env(logical))
        self.assertFails(r, err_re=r"\Aralon: %s/agent.lock also governs [^\n]*--strict\)\n\Z"
                         % re.escape(root))
        self.assertFalse(os.path.exists(marker))
        os.unlink(os.path.join(outside, "agent.lock"))
        # Above the target, an agent.lock that links to the project's: the
        # same file, but another root (patterns would be relative to it).
        planted = os.path.join(self.base, "agent.lock")
        os.symlink(os.path.join(root, "agent.lock"), planted)
        r = self.run_ralon(*run_if, cwd=outside, env=env(logical))
        self.assertFails(r, err_re=r"\Aralon: the working directory %s [^\n]* it is %s "
                         % (re.escape(logical), re.escape(planted)))
        self.assertFalse(os.path.exists(marker))
        os.unlink(planted)
        # A name along that way that cannot be looked at: unknown, so no
        # run, as on the real path.
        os.makedirs(os.path.join(root, "deep"))
        os.rename(outside, os.path.join(self.base, "outside2"))
        outside = os.path.join(self.base, "outside2")
        os.symlink(outside, os.path.join(root, "deep", "sub"))
        os.symlink("agent.lock", os.path.join(root, "deep", "agent.lock"))
        logical = os.path.join(root, "deep", "sub")
        r = self.run_ralon(*run_if, cwd=outside, env=env(logical))
        self.assertFails(r, err=not_a_policy(root + "/deep/agent.lock",
                                             "a symbolic link that leads nowhere (to "
                                             "agent.lock, through too many links)"))
        self.assertFalse(os.path.exists(marker))
        os.unlink(os.path.join(root, "deep", "agent.lock"))
        os.unlink(os.path.join(root, "sub"))
        os.symlink(outside, os.path.join(root, "sub"))
        logical = os.path.join(root, "sub")
        # $PWD naming another directory (stale), or relative, is not the
        # way the working directory was reached: the real path decides.
        for pwd in (root, "sub"):
            with self.subTest(pwd=pwd):
                r = self.run_ralon(*run_if, cwd=outside, env=env(pwd))
                self.assertEqual(r.rc, 0, r)
                self.assertTrue(os.path.exists(marker))
                os.unlink(marker)
        # -C names the directory itself: the walk goes up from that name.
        r = self.run_ralon("-C", logical, "check", "../a.txt", cwd=self.base)
        self.assertEqual(r.rc, 1, r)

    def test_missing_dash_C_directory(self):
        missing = os.path.join(self.base, "missing")
        for args in (["check"], ["check", "x"], ["status"]):
            with self.subTest(args=args):
                r = self.run_ralon("-C", missing, *args)
                self.assertFails(r, err_re=r"\Aralon: [^\n]*%s[^\n]*\n\Z" % re.escape(missing))


# ===========================================================================
class AwkwardNamesTest(RalonTestCase):
    """A file name may hold any byte but `/` and NUL, and a project's names
    are chosen by whoever wrote it. Shown to a person they are quoted like
    git quotes them wherever they could drive a terminal or forge a line;
    in JSON a name that is not UTF-8 is an array of its bytes. Python
    gives such a name to the OS with surrogateescape (U+DCFF is byte
    0xff)."""

    NAMES = {
        # name on disk: how stdout shows it
        "a b.key": "sec rets/a b.key",
        "new\nline.key": '"sec rets/new\\nline.key"',
        "bad\udcffbyte.key": '"sec rets/bad\\377byte.key"',
        "esc\x1b[2J.key": '"sec rets/esc\\033[2J.key"',
        "c1\u009b2J.key": '"sec rets/c1\\302\\2332J.key"',
        "back\\slash.key": '"sec rets/back\\\\slash.key"',
        "d\u00e4t\u00e9.key": "sec rets/d\u00e4t\u00e9.key",
    }

    def awkward_project(self):
        root = self.project("protect:\n  - 'sec rets/*.key'\n", dirs=["sec rets"])
        for name in self.NAMES:
            write(os.path.join(root, "sec rets", name))
        write(os.path.join(root, "sec rets", "plain.txt"))
        # A protected symbolic link, whose name a warning gives.
        os.symlink("a b.key", os.path.join(root, "sec rets", "ln\x01\n.key"))
        return root

    def assertShowable(self, r):
        """stdout and stderr are UTF-8 (run_ralon decodes them strictly)
        with no control character but the line ends."""
        for text in (r.out, r.err):
            bad = [c for c in text if (ord(c) < 0x20 and c != "\n") or 0x7f <= ord(c) < 0xa0]
            self.assertEqual(bad, [], r)

    def test_status_lists_names_quoted(self):
        root = self.awkward_project()
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertShowable(r)
        lines = r.out.splitlines()
        i = lines.index("protected  %d path(s) currently on disk" % (len(self.NAMES) + 2))
        self.assertEqual(sorted(lines[i + 1:i + 2 + len(self.NAMES) + 1]),
                         sorted(["  agent.lock", '  "sec rets/ln\\001\\n.key"'] +
                                ["  " + shown for shown in self.NAMES.values()]), r.out)
        # The warning about the link names it escaped, on one line.
        self.assertTrue([l for l in self.audit_err(r).splitlines() if l.startswith(
            "ralon: warning: sec rets/ln\\001\\n.key is a symbolic link")], r.err)

    def test_check_quotes_what_it_was_given(self):
        root = self.awkward_project()
        r = self.run_ralon("check", "--", *("sec rets/" + n for n in self.NAMES),
                           "sec rets/plain.txt", "sec rets/new\nfile.txt", cwd=root)
        self.assertEqual(r.rc, 1, r)
        self.assertShowable(r)
        self.assertEqual(r.out.splitlines(),
                         ["locked    %s  (matches `sec rets/*.key`)" % shown
                          for shown in self.NAMES.values()] +
                         ["writable  sec rets/plain.txt", 'writable  "sec rets/new\\nfile.txt"'])

    def test_patterns_are_escaped_too(self):
        """agent.lock is the project's too, and YAML's double quotes make
        any character: a pattern is shown with its controls escaped."""
        root = self.project('protect:\n  - "esc\\e(0.txt"\n  - "c1\\x9b2J"\n')
        write(os.path.join(root, "esc\x1b(0.txt"))
        r = self.run_ralon("check", "esc\x1b(0.txt", cwd=root)
        self.assertEqual(r.rc, 1, r)
        self.assertShowable(r)
        self.assertEqual(r.out, 'locked    "esc\\033(0.txt"  (matches `esc\\033(0.txt`)\n')
        r = self.run_ralon("status", cwd=root)
        self.assertShowable(r)
        self.assertIn("  esc\\033(0.txt", r.out)
        self.assertIn("  c1\\302\\2332J", r.out)
        self.assertIn("ralon: warning: `c1\\302\\2332J` matches nothing on disk", r.err)

    def test_hook_install_dry_run_shows_settings_escaped(self):
        """The settings `hook install --dry-run` prints are the project's:
        a C1 control in them (JSON's \\u009b, written back as it is) is
        shown escaped."""
        root = self.project(GOLDEN, dirs=[".claude"])
        write(os.path.join(root, ".claude", "settings.json"), '{"note": "\\u009b2J\\u007f"}\n')
        r = self.run_ralon("hook", "install", "--agent", "claude", "--dry-run", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertShowable(r)
        self.assertIn('"note": "\\302\\2332J\\177"', r.out)

    def test_a_project_root_with_an_awkward_name(self):
        """The project's own directory may be named so too: every line that
        shows it (init, status, hook install and hook list) quotes it."""
        root = self.project(None, dirs=[".claude"], name="pro\x1bj\nx")
        q = '"%s/pro\\033j\\nx' % self.base
        r = self.run_ralon("init", "--no-hooks", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertShowable(r)
        self.assertEqual(r.out.splitlines()[0], "wrote %s/agent.lock\"" % q, r.out)
        r = self.run_ralon("status", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertShowable(r)
        self.assertEqual(r.out.splitlines()[:2], ["policy     %s/agent.lock\"" % q,
                                                  "root       %s\"" % q], r.out)
        self.assertIn("  claude       project  not installed  %s/.claude/settings.json\"" % q,
                      r.out.splitlines())
        r = self.run_ralon("hook", "install", "--agent", "claude", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertShowable(r)
        self.assertIn("%s/.claude/settings.json\"" % q, r.out)
        r = self.run_ralon("hook", "list", cwd=root)
        self.assertShowable(r)
        self.assertIn("claude       project  installed      %s/.claude/settings.json\"" % q,
                      r.out.splitlines())

    def test_json_gives_names_exactly(self):
        root = self.awkward_project()
        p = subprocess.run([RALON, "status", "--json"], cwd=root, env=self.env,
                           stdin=subprocess.DEVNULL, capture_output=True, timeout=120)
        self.assertEqual(p.returncode, 0, p)
        doc = json.loads(p.stdout.decode("utf-8"))  # strict: JSON is UTF-8

        def name(v):
            return bytes(v) if isinstance(v, list) else v.encode("utf-8")

        got = sorted(name(e["path"]) for e in doc["protected"])
        want = sorted([b"agent.lock", os.fsencode("sec rets/ln\x01\n.key")] +
                      [os.fsencode("sec rets/" + n) for n in self.NAMES])
        self.assertEqual(got, want)
        # Only the name that is not UTF-8 is an array.
        arrays = [e["path"] for e in doc["protected"] if isinstance(e["path"], list)]
        self.assertEqual(arrays, [list(b"sec rets/bad\xffbyte.key")])
        # A finding's message is text, escaped; its subject the name itself.
        link = [f for f in doc["findings"] if f["kind"] == "symlink"]
        self.assertEqual([f["subject"] for f in link], ["sec rets/ln\x01\n.key"], doc["findings"])
        self.assertTrue(link[0]["message"].startswith("sec rets/ln\\001\\n.key is a symbolic link"),
                        link)

    def test_json_messages_are_strings(self):
        # An error naming a file that is not UTF-8 is still a string, the
        # byte escaped: an inherited descriptor open for writing on one.
        root = self.awkward_project()
        bad = os.path.join(os.fsencode(root), b"sec rets/bad\xffbyte.key")
        fd = os.open(bad, os.O_WRONLY | os.O_APPEND)
        try:
            p = subprocess.run([RALON, "run", "--dry-run", "--json", "--", "true"], cwd=root,
                               env=self.env, stdin=subprocess.DEVNULL, capture_output=True,
                               timeout=120, pass_fds=(fd,))
        finally:
            os.close(fd)
        self.assertEqual(p.returncode, 1, p)
        doc = json.loads(p.stdout.decode("utf-8"))
        self.assertIsInstance(doc["error"], str, doc["error"])
        self.assertIn("descriptor %d" % fd, doc["error"])
        self.assertIn("bad\\377byte.key", doc["error"])
        # It is a finding too, as status lists it.
        self.assertIn("inherited-write-descriptor", [f["kind"] for f in doc["findings"]], doc)


class OutputTest(RalonTestCase):

    def run_pty(self, args, cwd, env):
        """Runs ralon with stdout on a pseudo-terminal; returns (rc, out, err)."""
        master, slave = os.openpty()
        try:
            p = subprocess.Popen([RALON, *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                                 stdout=slave, stderr=subprocess.PIPE)
        finally:
            os.close(slave)
        chunks = []
        try:
            while True:
                try:
                    data = os.read(master, 65536)
                except OSError as e:
                    if e.errno == errno.EIO:
                        break
                    raise
                if not data:
                    break
                chunks.append(data)
        finally:
            os.close(master)
        err = p.stderr.read()
        p.stderr.close()
        rc = p.wait(timeout=60)
        return rc, b"".join(chunks).decode("utf-8").replace("\r\n", "\n"), err.decode("utf-8")

    def colour_project(self):
        return self.project(GOLDEN, files=["tests/golden/a.txt"])

    def test_colour_on_a_terminal(self):
        root = self.colour_project()
        args = ["check", "tests/golden/a.txt", "src/b.c"]
        plain = [locked("tests/golden/a.txt", "tests/golden/**"), writable("src/b.c")]
        for no_color in (None, ""):
            with self.subTest(NO_COLOR=no_color):
                env = dict(self.env)
                if no_color is not None:
                    env["NO_COLOR"] = no_color   # empty means unset (no-color.org)
                rc, out, err = self.run_pty(args, root, env)
                self.assertEqual((rc, err), (1, ""))
                self.assertIn("\x1b[", out)
                self.assertEqual(ANSI.sub("", out).splitlines(), plain)

    def test_no_colour_with_NO_COLOR(self):
        root = self.colour_project()
        env = dict(self.env, NO_COLOR="1")
        rc, out, err = self.run_pty(["check", "tests/golden/a.txt", "src/b.c"], root, env)
        self.assertEqual((rc, err), (1, ""))
        self.assertEqual(out, locked("tests/golden/a.txt", "tests/golden/**") + "\n" +
                         writable("src/b.c") + "\n")
        rc, out, err = self.run_pty(["check"], root, env)
        self.assertEqual(rc, 0)
        self.assertNotIn("\x1b", out)

    def test_no_colour_when_piped(self):
        root = self.colour_project()
        r = self.run_ralon("check", "tests/golden/a.txt", "src/b.c", cwd=root)
        self.assertLines(r, 1, [locked("tests/golden/a.txt", "tests/golden/**"), writable("src/b.c")])
        for args in (["check"], ["status"], ["check", "--json"], ["--help"]):
            r = self.run_ralon(*args, cwd=root)
            self.assertNotIn("\x1b", r.out + r.err)

    def many_protected_files(self):
        files = ["data/file-%05d.txt" % i for i in range(3000)]
        root = self.project("protect:\n  - 'data/*.txt'\n", files=files)
        return root

    def test_sigpipe_ends_quietly(self):
        root = self.many_protected_files()
        # Even when the parent ignores SIGPIPE (Python does, and
        # restore_signals=False passes that on), ralon must not complain.
        self.assertEqual(signal.getsignal(signal.SIGPIPE), signal.SIG_IGN)
        p = subprocess.Popen([RALON, "check"], cwd=root, env=self.env, stdin=subprocess.DEVNULL,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             restore_signals=False)
        self.assertEqual(p.stdout.read(1), b"l")
        p.stdout.close()
        err = p.stderr.read()
        p.stderr.close()
        rc = p.wait(timeout=60)
        self.assertEqual(err, b"")
        self.assertEqual(rc, -signal.SIGPIPE)

    def test_pipe_into_head(self):
        root = self.many_protected_files()
        p = subprocess.run(["sh", "-c", '"$0" check | head -c1', RALON], cwd=root, env=self.env,
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        self.assertEqual((p.returncode, p.stdout, p.stderr), (0, b"l", b""))

    @unittest.skipUnless(os.path.exists("/dev/full"), "no /dev/full")
    def test_write_error_is_reported(self):
        # `missing` makes every scanning command print a warning too, which
        # must not hide the write error.
        root = self.project(GOLDEN + "  - missing\n", files=["tests/golden/a"])
        for args in (["check"], ["check", "tests/golden/a"], ["check", "--json", "x"],
                     ["status"], ["status", "--json"], ["hook", "list", "--json"],
                     ["--version"], ["--help"], ["help", "check"]):
            with self.subTest(args=args):
                with open("/dev/full", "wb") as full:
                    r = self.run_ralon(*args, cwd=root, stdout=full)
                self.assertEqual(r.rc, 2, r)
                self.assertTrue(r.err.endswith("\n"), r)
                lines = r.err.splitlines()
                # Warnings may come first; the last word is the write error.
                for line in lines[:-1]:
                    self.assertTrue(line.startswith("ralon: warning: "), r)
                self.assertRegex(lines[-1], r"\Aralon: .*No space left on device")

def tree(top):
    """Every entry below `top`: relative name -> (mode, bytes of a file)."""
    entries = {}
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            st = os.lstat(path)
            data = read_bytes(path) if stat.S_ISREG(st.st_mode) else None
            entries[os.path.relpath(path, top)] = (st.st_mode, data)
    return entries


AGENTS = ["claude", "cursor", "opencode", "copilot", "codex", "gemini", "antigravity",
          "windsurf", "cline", "qwen"]


class HookInstallTest(RalonTestCase):
    """`hook install` and `hook uninstall` through the real binary: what is
    written where, and that an uninstall gives back the tree it found."""

    def test_every_agent_is_listed(self):
        """--help, `hook list` and the names --agent takes all come from the
        one list of agents, in its order."""
        root = self.project(GOLDEN)
        expected = textwrap.fill(
            "Agents: %s. auto: those whose configuration directory exists in the project "
            "or the home directory; all: every one." % ", ".join(AGENTS),
            width=76, break_long_words=False, break_on_hyphens=False) + "\n"
        r = self.run_ralon("hook", "--help")
        self.assertEqual((r.rc, r.err), (0, ""), r)
        self.assertTrue(r.out.endswith("\n\n" + expected), r.out)
        doc = json.loads(self.run_ralon("hook", "list", "--json", cwd=root).out)
        listed = [h["agent"] for h in doc["hooks"] if h["scope"] == "project"]
        self.assertEqual(listed, AGENTS)
        for a in AGENTS:
            with self.subTest(agent=a):
                r = self.run_ralon("hook", "install", "--agent", a, "--dry-run", cwd=root)
                self.assertEqual(r.rc, 0, r)
        self.assertFails(self.run_ralon("hook", "install", "--agent", "nope", cwd=root),
                         err_re=r"\Aralon: unknown agent `nope`\n\Z")

    def test_no_agent_found_writes_nothing(self):
        root = self.project(GOLDEN, dirs=[".github/workflows"])
        before = tree(self.base)
        for args in ([], ["--dry-run"], ["--agent", "auto"]):
            with self.subTest(args=args):
                r = self.run_ralon("hook", "install", *args, cwd=root)
                self.assertEqual(r.rc, 2, r)
                self.assertEqual(r.out, "", r)
                self.assertIn("so no hook was written; name the agent: "
                              "`ralon hook install --agent NAME` (NAME: claude, cursor, ", r.err)
                self.assertEqual(tree(self.base), before)
        r = self.run_ralon("hook", "install", "--user", cwd=root)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("`ralon hook install --user --agent NAME`", r.err)
        self.assertEqual(tree(self.base), before)
        # init: no hook, and a line that says how to add one.
        os.unlink(os.path.join(root, "agent.lock"))
        r = self.run_ralon("init", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertIn("  ralon hook install --agent NAME   adds one to this project", r.out)
        self.assertIn("  ralon hook install --user --agent NAME   the robust choice", r.out)
        self.assertEqual(sorted(os.listdir(root)), [".github", "agent.lock"])

    @unittest.skipUnless(os.geteuid() == 0, "needs root")
    def test_root_home_does_not_choose_project_hooks(self):
        for d in (".claude", ".codex", ".gemini", ".copilot"):
            os.makedirs(os.path.join(self.home, d))
        root = self.project(None)
        r = self.run_ralon("init", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(os.listdir(root), ["agent.lock"])
        self.assertNotIn("wrote %s/." % root, r.out)
        r = self.run_ralon("hook", "install", cwd=root)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("as root, agents found only in your home directory do not count", r.err)
        self.assertEqual(os.listdir(root), ["agent.lock"])
        # The project's own agent directory still counts; at user level,
        # home is where the hooks go.
        os.mkdir(os.path.join(root, ".qwen"))
        r = self.run_ralon("hook", "install", cwd=root)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(sorted(tree(root)), [".qwen", ".qwen/settings.json", "agent.lock"])
        r = self.run_ralon("hook", "install", "--user", cwd=root)
        self.assertEqual(r.rc, 0, r)
        for f in (".claude/settings.json", ".codex/hooks.json", ".gemini/settings.json",
                  ".copilot/hooks/ralon.json"):
            self.assertTrue(os.path.isfile(os.path.join(self.home, f)), f)

    def round_trip(self, root, install_args, uninstall_args, env=None):
        before = tree(self.base)
        r = self.run_ralon("hook", "install", *install_args, cwd=root, env=env)
        self.assertEqual(r.rc, 0, r)
        self.assertNotEqual(tree(self.base), before)
        r = self.run_ralon("hook", "uninstall", *uninstall_args, cwd=root, env=env)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(tree(self.base), before, r.out)
        return r

    def test_uninstall_gives_back_the_tree(self):
        """Every agent, project and user level: files, directories and
        stubs ralon made go; what was there stays byte for byte."""
        root = self.project(GOLDEN, dirs=[".github/workflows", ".claude"])
        write(os.path.join(root, ".gemini", "settings.json"), '{"theme": "x"}')
        write(os.path.join(self.home, ".qwen", "settings.json"), '{\n  "model": "y"\n}\n')
        r = self.round_trip(root, ["--agent", "all"], [])
        self.assertEqual(len([x for x in r.out.splitlines() if x.startswith("removed ")]), 10,
                         r.out)
        user = [a for a in AGENTS if a != "antigravity"]
        self.round_trip(root, ["--user", "--agent", ",".join(user)], ["--user"])
        # Named agents, one at a time.
        for a in AGENTS:
            with self.subTest(agent=a):
                self.round_trip(root, ["--agent", a], ["--agent", a])

    def test_a_rewritten_record_cannot_put_settings_into_the_file(self):
        """The record of what the user's file held is outside every sandbox:
        an agent that rewrites it gets the hook taken out on uninstall, and
        nothing of its own written into the (protected) settings file."""
        root = self.project(GOLDEN, dirs=[".claude"])
        settings = os.path.join(root, ".claude", "settings.json")
        write(settings, '{\n  "permissions": {"allow": ["Read"]}\n}\n')
        r = self.run_ralon("hook", "install", "--agent", "claude", cwd=root)
        self.assertEqual(r.rc, 0, r)
        record = os.path.join(self.home, ".local", "state", "ralon", "created.json")
        with open(record, encoding="utf-8") as f:
            doc = json.load(f)
        (entry,) = [e for e in doc["created"] if e.get("path") == settings]
        entry["before"] = json.dumps({"permissions": {"allow": ["Bash(*)"]},
                                      "hooks": {"SessionStart": [{"hooks": [
                                          {"type": "command", "command": "touch PWNED"}]}]}})
        write(record, json.dumps(doc))
        r = self.run_ralon("hook", "uninstall", "--agent", "claude", cwd=root)
        self.assertEqual(r.rc, 0, r)
        with open(settings, encoding="utf-8") as f:
            after = json.load(f)
        self.assertEqual(after.get("permissions"), {"allow": ["Read"]}, after)
        self.assertNotIn("SessionStart", json.dumps(after))
        self.assertNotIn("ralon hook check", json.dumps(after))

    def test_a_record_behind_a_link_is_not_used(self):
        """A state directory that is a symbolic link (to a directory the
        user keeps a created.json of their own in) is neither written nor
        read, and its file is not removed."""
        root = self.project(GOLDEN, dirs=[".claude"])
        elsewhere = os.path.join(self.base, "elsewhere")
        write(os.path.join(elsewhere, "created.json"), "precious\n")
        state = os.path.join(self.home, ".local", "state")
        os.makedirs(state, exist_ok=True)
        os.symlink(elsewhere, os.path.join(state, "ralon"))
        for verb in ("install", "uninstall"):
            r = self.run_ralon("hook", verb, "--agent", "claude", cwd=root)
            self.assertEqual(r.rc, 0, r)
            self.assertEqual(read_bytes(os.path.join(elsewhere, "created.json")), b"precious\n")
        self.assertEqual(sorted(os.listdir(elsewhere)), ["created.json"])

    def test_json_content_only_with_dry_run(self):
        """--json's `content` is what a dry run would write (null: the file
        would go); a real run only says what it did."""
        root = self.project(GOLDEN, dirs=[".claude"])
        r = self.run_ralon("--json", "hook", "install", "--agent", "claude", "--dry-run",
                           cwd=root)
        self.assertEqual(r.rc, 0, r)
        (h,) = json.loads(r.out)["hooks"]
        self.assertIn("ralon hook check", h["content"])
        r = self.run_ralon("--json", "hook", "install", "--agent", "claude", cwd=root)
        (h,) = json.loads(r.out)["hooks"]
        self.assertEqual((h["change"], "content" in h), ("wrote", False), h)
        r = self.run_ralon("--json", "hook", "uninstall", "--agent", "claude", "--dry-run",
                           cwd=root)
        (h,) = json.loads(r.out)["hooks"]
        self.assertEqual((h["change"], h["content"]), ("removed", None), h)
        r = self.run_ralon("--json", "hook", "uninstall", "--agent", "claude", cwd=root)
        (h,) = json.loads(r.out)["hooks"]
        self.assertEqual((h["change"], "content" in h), ("removed", False), h)
        self.assertEqual(os.listdir(os.path.join(root, ".claude")), [])

    def test_no_ralon_on_path_warned_by_a_dry_run_too(self):
        root = self.project(GOLDEN, dirs=[".claude"])
        env = dict(self.env, PATH="/nonexistent")
        warning = ("ralon: warning: `ralon` is not on PATH, so the agents cannot run the hooks: "
                   "they will refuse the tool calls the hooks check\n")
        for args in (["--dry-run"], []):
            with self.subTest(args=args):
                r = self.run_ralon("hook", "install", "--agent", "claude", *args, cwd=root,
                                   env=env)
                self.assertEqual(r.rc, 0, r)
                self.assertIn(warning, r.err)

    def test_guard_names_linux_properly(self):
        root = self.project(GOLDEN)
        r = self.run_ralon("guard", cwd=root)
        self.assertEqual(r.rc, 2, r)
        self.assertIn("it did not start on Linux.", r.err)

    def test_whether_the_hook_runs_here(self):
        """hook install, hook list and status say whether the agent will run
        the hook here, from its own trust records, and what to do."""
        root = self.project(GOLDEN, dirs=[".gemini"])
        r = self.run_ralon("--json", "hook", "install", "--agent", "gemini", cwd=root)
        self.assertEqual(r.rc, 0, r)
        (h,) = json.loads(r.out)["hooks"]
        self.assertEqual(h["runs"], "unknown")
        self.assertIn("--skip-trust", h["note"])
        trust = os.path.join(self.home, ".gemini", "trustedFolders.json")

        def gemini_project(args):
            doc = json.loads(self.run_ralon(*args, "--json", cwd=root).out)
            (g,) = [h for h in doc["hooks"] if (h["agent"], h["scope"]) == ("gemini", "project")]
            return g["runs"], g["note"]

        write(trust, json.dumps({root: "DO_NOT_TRUST"}))
        for args in (["hook", "list"], ["status"]):
            runs, note = gemini_project(args)
            self.assertEqual(runs, "no", args)
            self.assertIn("Gemini CLI does not trust %s (%s)" % (root, trust), note)
        r = self.run_ralon("hook", "list", cwd=root)
        lines = r.out.splitlines()
        i = lines.index("gemini       project  installed      %s/.gemini/settings.json" % root)
        self.assertTrue(lines[i + 1].startswith("  will not run here: Gemini CLI does not trust "),
                        r.out)
        r = self.run_ralon("status", cwd=root)
        self.assertIn("    will not run here: Gemini CLI does not trust %s" % root, r.out)
        r = self.run_ralon("hook", "install", "--agent", "gemini", cwd=root)
        self.assertIn("ralon: Gemini CLI does not trust %s" % root, r.err)

        write(trust, json.dumps({os.path.dirname(root): "TRUST_FOLDER"}))
        self.assertEqual(gemini_project(["hook", "list"]), ("yes", None))
        # A user-level hook runs everywhere.
        r = self.run_ralon("hook", "install", "--user", "--agent", "codex", cwd=root)
        doc = json.loads(self.run_ralon("hook", "list", "--json", cwd=root).out)
        (c,) = [h for h in doc["hooks"] if (h["agent"], h["scope"]) == ("codex", "user")]
        self.assertEqual((c["state"], c["runs"], c["note"]), ("installed", "yes", None))
        (a,) = [h for h in doc["hooks"] if (h["agent"], h["scope"]) == ("claude", "project")]
        self.assertEqual((a["state"], a["runs"], a["note"]), ("absent", None, None))

    def test_agents_own_directories_from_the_environment(self):
        """CODEX_HOME, CLAUDE_CONFIG_DIR, COPILOT_HOME, GEMINI_CLI_HOME and
        XDG_CONFIG_HOME (opencode) choose the user-level files, as they do
        for the agents: install, list, status and uninstall."""
        root = self.project(GOLDEN)
        env = dict(self.env)
        places = {
            "codex": ("CODEX_HOME", "codex-home", "hooks.json"),
            "claude": ("CLAUDE_CONFIG_DIR", "claude-dir", "settings.json"),
            "copilot": ("COPILOT_HOME", "copilot-home", "hooks/ralon.json"),
            "opencode": ("XDG_CONFIG_HOME", "xdg", "opencode/plugins/ralon.js"),
            # Gemini's stands for the home directory.
            "gemini": ("GEMINI_CLI_HOME", "gemini-home", ".gemini/settings.json"),
        }
        for var, d, _ in places.values():
            env[var] = os.path.join(self.base, d)
        before = tree(self.base)
        r = self.run_ralon("hook", "install", "--user", "--agent", ",".join(places), cwd=root,
                           env=env)
        self.assertEqual(r.rc, 0, r)
        for agent, (var, d, f) in places.items():
            path = os.path.join(self.base, d, f)
            self.assertIn("wrote %s" % path, r.out.splitlines())
            self.assertTrue(os.path.isfile(path), path)
        self.assertEqual(os.listdir(self.home), [".local"])  # the record only
        listed = json.loads(self.run_ralon("hook", "list", "--json", cwd=root, env=env).out)
        states = {(h["agent"], h["scope"]): (h["state"], h["path"]) for h in listed["hooks"]}
        status = json.loads(self.run_ralon("status", "--json", cwd=root, env=env).out)
        self.assertEqual(status["hooks"], listed["hooks"])
        for agent, (var, d, f) in places.items():
            self.assertEqual(states[(agent, "user")],
                             ("installed", os.path.join(self.base, d, f)))
        # Found through the variable, by auto too.
        r = self.run_ralon("hook", "uninstall", "--user", cwd=root, env=env)
        self.assertEqual(r.rc, 0, r)
        self.assertEqual(tree(self.base), before)
        # A relative value is no directory to use: home it is.
        env["CODEX_HOME"] = "codex-home"
        r = self.run_ralon("hook", "install", "--user", "--agent", "codex", cwd=root, env=env)
        self.assertIn("wrote %s" % os.path.join(self.home, ".codex", "hooks.json"), r.out)


if __name__ == "__main__":
    if not os.access(RALON, os.X_OK):
        sys.exit("test_cli.py: no executable ralon at %s (set RALON_BINARY)" % RALON)
    unittest.main()
