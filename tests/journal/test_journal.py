#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ralon's journal records, read back from a real systemd-journald.

The test starts systemd-journald in a private mount namespace, with tmpfs
over /run/systemd/journal and the journal directories, so nothing reaches
the machine's own journal; runs ralon there (as root and as nobody), and
reads the records back with `journalctl -o json`, asserting the fields
ARCHITECTURE.md §6 and ralon-journal(7) promise. It also checks that without a journal
socket ralon loads no libsystemd and says nothing.

Needs root (for the namespace and tmpfs mounts). Where it cannot start
journald it skips with the reason, unless RALON_REQUIRE_JOURNAL=1, which
makes that a failure (.ci/run sets it).

Environment: RALON_BINARY (the ralon to test), RALON_REQUIRE_JOURNAL,
RALON_TEST_TMPDIR (default /tmp; must be reachable by nobody).
"""

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
from ralontest import as_user  # noqa: E402

RALON_SRC = os.environ.get("RALON_BINARY") or os.path.normpath(
    os.path.join(os.path.dirname(__file__), "..", "..", "build", "src", "ralon"))
REQUIRED = os.environ.get("RALON_REQUIRE_JOURNAL") == "1"
TMP_ROOT = os.environ.get("RALON_TEST_TMPDIR") or "/tmp"
INSIDE = "RALON_JOURNAL_NAMESPACE"
JOURNALD_CANDIDATES = ("/lib/systemd/systemd-journald", "/usr/lib/systemd/systemd-journald")
NOBODY = 65534

# The MESSAGE_IDs ralon-journal(7) and data/catalog/ralon.catalog document.
ID_RUN = "5f8fa535faf947df8e4d9779d80cba7e"
ID_PASS = "1f2bae7ceb8b42fca8e2d559eccdf4bf"
ID_HOOK = "811933fd90844332a969e540053f478a"
ID_FAIL = "619cc12248c74036a8afef4c9b727030"
ID_FINDING = "1301f0c7ac424508899dafcfcc1dd1fb"
ID_STOP = "b2669b203ae24889b60ef3b335e8cd54"
ID_PAUSE = "616d2462b7df4c49af17fd690cdcc750"

JOURNAL_DIRS = ("/run/systemd/journal", "/run/log/journal", "/var/log/journal")


def skip_or_fail(reason):
    if REQUIRED:
        print("FAIL: %s (RALON_REQUIRE_JOURNAL=1)" % reason, file=sys.stderr)
        sys.exit(1)
    print("SKIP: %s" % reason)
    sys.exit(77)


def enter_namespace():
    """Re-runs this script in a private mount namespace."""
    if os.geteuid() != 0:
        skip_or_fail("needs root to start systemd-journald in a private mount namespace")
    if not any(os.access(p, os.X_OK) for p in JOURNALD_CANDIDATES):
        skip_or_fail("no systemd-journald on this machine")
    if shutil.which("journalctl") is None or shutil.which("unshare") is None:
        skip_or_fail("journalctl or unshare missing")
    env = dict(os.environ, **{INSIDE: "1"})
    r = subprocess.run(["unshare", "--mount", "--propagation", "private", sys.executable,
                        os.path.abspath(__file__)] + sys.argv[1:], env=env)
    sys.exit(r.returncode)


class Journal:
    """systemd-journald on tmpfs, in this (private) mount namespace."""

    def __init__(self):
        for d in JOURNAL_DIRS:
            if d == "/var/log/journal" and not os.path.isdir(d):
                continue
            os.makedirs(d, exist_ok=True)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "mode=0755", "tmpfs", d], check=True)
        journald = next(p for p in JOURNALD_CANDIDATES if os.access(p, os.X_OK))
        self.proc = subprocess.Popen([journald], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while not os.path.exists("/run/systemd/journal/socket"):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                skip_or_fail("systemd-journald did not start (exit %s)" % self.proc.poll())
            time.sleep(0.05)

    def stop(self):
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5)
        except subprocess.TimeoutExpired:
            self.proc.kill()

    @staticmethod
    def records(match, want=1, timeout=10.0):
        """Every ralon record with the given field values; waits until at
        least `want` are there (journald writes asynchronously)."""
        deadline = time.monotonic() + timeout
        while True:
            subprocess.run(["journalctl", "--sync"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
            out = subprocess.run(["journalctl", "-o", "json", "--no-pager", "-q",
                                  "SYSLOG_IDENTIFIER=ralon"],
                                 capture_output=True, text=True).stdout
            found = []
            for line in out.splitlines():
                rec = json.loads(line)
                if all(rec.get(k) == v for k, v in match.items()):
                    found.append(rec)
            if len(found) >= want or time.monotonic() > deadline:
                return found
            time.sleep(0.1)


JOURNAL = None


class Project:
    """A temporary project owned by `uid`, with its own ralon copy."""

    def __init__(self, uid=0, policy="protect:\n  - secret.txt\n  - tests/**\n"):
        self.uid = uid
        self.top = tempfile.mkdtemp(prefix="ralon-journal-", dir=TMP_ROOT)
        os.chmod(self.top, 0o755)
        self.ralon = os.path.join(self.top, "ralon")
        shutil.copy2(RALON_SRC, self.ralon)
        os.chmod(self.ralon, 0o755)
        self.root = os.path.join(self.top, "project")
        os.makedirs(os.path.join(self.root, "tests"))
        for rel, text in (("agent.lock", "version: 1\n" + policy), ("secret.txt", "s\n"),
                          ("tests/a.txt", "a\n"), ("notes.txt", "n\n")):
            with open(os.path.join(self.root, rel), "w") as f:
                f.write(text)
        if uid:
            for dirpath, dirnames, filenames in os.walk(self.root):
                for n in dirnames + filenames + [""]:
                    os.chown(os.path.join(dirpath, n), uid, uid)
        self.root = os.path.realpath(self.root)

    def cleanup(self):
        shutil.rmtree(self.top, ignore_errors=True)

    def run(self, *args, stdin=None, env=None, cwd=None, launcher=None):
        """`launcher`: shell code run first, in the shell that starts ralon."""
        e = {"PATH": "/usr/bin:/bin:/usr/sbin:/sbin", "LC_ALL": "C.UTF-8",
             "HOME": self.root, "NO_COLOR": "1"}
        e.update(env or {})
        argv = [self.ralon] + list(args)
        if launcher:
            argv = ["sh", "-c", launcher + ' && exec "$@"', "sh"] + argv
        return subprocess.run(argv, input=stdin, capture_output=True,
                              text=True, env=e, cwd=cwd or self.root,
                              preexec_fn=as_user(self.uid), timeout=60)


def claude_payload(root, rel, tool="Write"):
    return json.dumps({"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": tool,
                       "cwd": root,
                       "tool_input": {"file_path": os.path.join(root, rel), "content": "x"}})


class JournalTest(unittest.TestCase):
    def setUp(self):
        self.projects = []

    def tearDown(self):
        for p in self.projects:
            p.cleanup()

    def project(self, **kw):
        p = Project(**kw)
        self.projects.append(p)
        return p

    def common(self, rec, message_id, priority):
        self.assertEqual(rec["MESSAGE_ID"], message_id)
        self.assertEqual(rec["PRIORITY"], str(priority))
        self.assertEqual(rec["SYSLOG_IDENTIFIER"], "ralon")
        self.assertTrue(rec["RALON_VERSION"])
        self.assertTrue(rec["MESSAGE"])

    def check_run(self, backend, uid):
        p = self.project(uid=uid)
        r = p.run("run", "--backend", backend, "--", "sh", "-c", "echo ok; exit 3")
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertEqual(r.stdout, "ok\n")
        # The journal's socket did not stay open across execve.
        fds = p.run("run", "--backend", backend, "-q", "--", "sh", "-c",
                    "ls -l /proc/$$/fd/").stdout
        self.assertNotIn("socket:", fds)
        self.assertIn("->", fds)
        recs = JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root}, want=2)
        self.assertEqual(len(recs), 2, recs)
        rec = recs[0]
        self.common(rec, ID_RUN, 5)
        self.assertEqual(rec["RALON_BACKEND"], backend)
        self.assertEqual(rec["RALON_POLICY"], os.path.join(p.root, "agent.lock"))
        # agent.lock, secret.txt and tests (a directory, once).
        self.assertEqual(rec["RALON_PROTECTED"], "3")
        self.assertEqual(rec["RALON_COMMAND"], "sh -c 'echo ok; exit 3'")
        self.assertRegex(rec["RALON_LANDLOCK_ABI"], r"^[0-9]+$")
        self.assertTrue(rec["RALON_BACKEND_REASON"])
        self.assertNotIn("RALON_FALLBACK", rec)
        self.assertEqual(rec["_UID"], str(uid))
        self.assertIn(backend, rec["MESSAGE"])

    def test_run_mount_root(self):
        self.check_run("mount", 0)

    def test_run_landlock_root(self):
        self.check_run("landlock", 0)

    def test_run_mount_nobody(self):
        self.check_run("mount", NOBODY)

    def test_run_landlock_nobody(self):
        self.check_run("landlock", NOBODY)

    def test_guard_stop(self):
        # A protected file replaced from outside (by a process started
        # before ralon, in the background) while the command runs.
        for uid in (0, NOBODY):
            with self.subTest(uid=uid):
                p = self.project(uid=uid)
                secret = os.path.join(p.root, "secret.txt")
                r = p.run("run", "--backend", "mount", "-q", "--", "sleep", "30",
                          launcher="{ (sleep 1; cp secret.txt x && mv x secret.txt) & }")
                self.assertEqual(r.returncode, 125, r.stderr)
                recs = JOURNAL.records({"MESSAGE_ID": ID_STOP, "RALON_ROOT": p.root})
                self.assertEqual(len(recs), 1, recs)
                self.common(recs[0], ID_STOP, 2)
                self.assertEqual(recs[0]["RALON_PATH"], secret)
                self.assertEqual(recs[0]["RALON_COMMAND"], "sleep 30")
                self.assertEqual(recs[0]["_UID"], str(uid))

    def test_pause_and_resume(self):
        p = self.project(uid=NOBODY)
        r = p.run("run", "--backend", "mount", "-q", "--", "sleep", "3",
                  launcher='{ (sleep 1; "%s" pause -- sh -c "cp secret.txt x && mv x secret.txt")'
                  ' >/dev/null & }' % p.ralon)
        self.assertEqual(r.returncode, 0, r.stderr)
        recs = JOURNAL.records({"MESSAGE_ID": ID_PAUSE, "RALON_ROOT": p.root}, want=2)
        self.assertEqual([x["RALON_ACTION"] for x in recs], ["pause", "resume"], recs)
        for rec in recs:
            self.common(rec, ID_PAUSE, 5)
            self.assertEqual(rec["RALON_SANDBOXES"], "1")
        self.assertEqual(recs[1]["RALON_REPROTECTED"], "1")

    def test_pass_through_without_policy(self):
        p = self.project()
        elsewhere = tempfile.mkdtemp(prefix="ralon-journal-none-", dir=TMP_ROOT)
        self.addCleanup(shutil.rmtree, elsewhere, True)
        r = p.run("run", "--if-policy", "--", "sh", "-c", "pwd", cwd=elsewhere)
        self.assertEqual(r.returncode, 0, r.stderr)
        recs = JOURNAL.records({"MESSAGE_ID": ID_PASS,
                                "RALON_DIRECTORY": os.path.realpath(elsewhere)})
        self.assertEqual(len(recs), 1, recs)
        self.common(recs[0], ID_PASS, 6)
        self.assertEqual(recs[0]["RALON_COMMAND"], "sh -c pwd")
        self.assertEqual(recs[0]["RALON_REASON"], "no agent.lock")

    def test_pass_through_inside_same_project(self):
        # A wrapper's `run --if-policy` inside `ralon run` of the same
        # project (which sets RALON_ACTIVE_ROOT): that sandbox holds.
        for backend in ("mount", "landlock"):
            with self.subTest(backend=backend):
                p = self.project()
                sub = os.path.join(p.root, "tests")
                r = p.run("run", "-q", "--backend", backend, "--", p.ralon, "run", "--if-policy",
                          "--", "true", cwd=sub)
                self.assertEqual(r.returncode, 0, r.stderr)
                recs = JOURNAL.records({"MESSAGE_ID": ID_PASS, "RALON_DIRECTORY": sub})
                self.assertEqual(len(recs), 1, recs)
                self.assertIn("already inside", recs[0]["RALON_REASON"])
                # One run record, the outer one: nothing was enforced twice.
                self.assertEqual(len(JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root},
                                                     want=2, timeout=0.5)), 1)

    def test_forged_active_root_still_wraps(self):
        # The variable alone, outside any sandbox, where agent.lock can be
        # written: not trusted, the command is restricted as usual.
        p = self.project()
        sub = os.path.join(p.root, "tests")
        r = p.run("run", "-q", "--if-policy", "--", "true", cwd=sub,
                  env={"RALON_ACTIVE_ROOT": p.root})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root})), 1)
        self.assertEqual(JOURNAL.records({"MESSAGE_ID": ID_PASS, "RALON_DIRECTORY": sub},
                                         want=0, timeout=0.5), [])

    def test_nested_wrapper_in_other_project_wraps(self):
        p = self.project()
        r = p.run("run", "--if-policy", "--backend", "landlock", "--", "true",
                  env={"RALON_ACTIVE_ROOT": "/somewhere/else"})
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root})), 1)

    def test_hook_refusal_one_record_per_path(self):
        p = self.project(uid=NOBODY)
        payload = json.dumps({
            "session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "cwd": p.root,
            "tool_input": {"command": "rm secret.txt tests/a.txt notes.txt"}})
        r = p.run("hook", "check", stdin=payload)
        # Claude Code's Bash tool: exit 2 and the reason on stderr.
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("secret.txt", r.stderr)
        recs = JOURNAL.records({"MESSAGE_ID": ID_HOOK, "RALON_ROOT": p.root}, want=2)
        self.assertEqual(sorted(x["RALON_RELATIVE_PATH"] for x in recs),
                         ["secret.txt", "tests/a.txt"])
        for rec in recs:
            self.common(rec, ID_HOOK, 5)
            self.assertEqual(rec["RALON_AGENT"], "claude")
            self.assertEqual(rec["RALON_TOOL"], "Bash")
            self.assertEqual(rec["RALON_POLICY"], os.path.join(p.root, "agent.lock"))
            self.assertEqual(rec["_UID"], str(NOBODY))
        pattern = {x["RALON_RELATIVE_PATH"]: x["RALON_PATTERN"] for x in recs}
        self.assertEqual(pattern, {"secret.txt": "secret.txt", "tests/a.txt": "tests/**"})

    def test_hook_allowed_writes_nothing(self):
        p = self.project()
        r = p.run("hook", "check", stdin=claude_payload(p.root, "notes.txt"))
        self.assertEqual((r.returncode, r.stdout), (0, ""), r.stderr)
        # A refusal after it, to know the journal has caught up.
        p.run("hook", "check", stdin=claude_payload(p.root, "secret.txt"))
        recs = JOURNAL.records({"MESSAGE_ID": ID_HOOK, "RALON_ROOT": p.root})
        self.assertEqual([x["RALON_RELATIVE_PATH"] for x in recs], ["secret.txt"])

    def test_hook_refusal_not_understood(self):
        p = self.project()
        r = p.run("hook", "check", "--agent", "claude", stdin="{not json")
        self.assertNotEqual(r.stdout + r.stderr, "")
        recs = JOURNAL.records({"MESSAGE_ID": ID_HOOK, "RALON_AGENT": "claude",
                                "RALON_TOOL": "?"})
        self.assertTrue(recs)
        self.assertIn("not JSON", recs[-1]["RALON_REASON"])

    def test_strict_refusal_and_findings(self):
        p = self.project(policy="protect:\n  - secret.txt\n  - missing.txt\n")
        r = p.run("run", "--strict", "--backend", "mount", "--", "true")
        self.assertEqual(r.returncode, 2)
        self.assertIn("missing.txt", r.stderr)
        fails = JOURNAL.records({"MESSAGE_ID": ID_FAIL, "RALON_ROOT": p.root})
        self.assertEqual(len(fails), 1, fails)
        self.common(fails[0], ID_FAIL, 3)
        self.assertEqual(fails[0]["RALON_BACKEND"], "mount")
        self.assertIn("--strict", fails[0]["RALON_ERROR"])
        self.assertEqual(fails[0]["RALON_COMMAND"], "true")
        found = JOURNAL.records({"MESSAGE_ID": ID_FINDING, "RALON_ROOT": p.root,
                                 "RALON_PATTERN": "missing.txt"})
        self.assertEqual(len(found), 1, found)
        self.common(found[0], ID_FINDING, 4)
        self.assertEqual(found[0]["RALON_FINDING"], "unmatched-path")
        self.assertEqual(found[0]["RALON_COMMAND"], "run")
        self.assertEqual(JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root},
                                         want=0, timeout=0.5), [])

    def test_quiet_run_findings(self):
        # -q prints no warnings; with a journal listening the audit still
        # runs, and what it finds is recorded (and --strict still refuses).
        for backend in ("mount", "landlock"):
            with self.subTest(backend=backend):
                p = self.project(policy="protect:\n  - secret.txt\n  - gone-%s.txt\n" % backend)
                r = p.run("run", "-q", "--backend", backend, "--", "true")
                self.assertEqual((r.returncode, r.stderr), (0, ""), r.stderr)
                found = JOURNAL.records({"MESSAGE_ID": ID_FINDING, "RALON_ROOT": p.root,
                                         "RALON_PATTERN": "gone-%s.txt" % backend})
                self.assertEqual(len(found), 1, found)
                self.assertEqual(found[0]["RALON_COMMAND"], "run")
                r = p.run("run", "-q", "--strict", "--backend", backend, "--", "true")
                self.assertEqual(r.returncode, 2, r.stderr)
                self.assertIn("gone-%s.txt" % backend, r.stderr)

    def test_session_end_git_findings(self):
        # What the agent left for git to run later, recorded once it
        # exited (RALON_SESSION=ended), with -q too; what was there before
        # is not.
        if shutil.which("git") is None:
            self.skipTest("git is not installed")
        p = self.project()
        os.makedirs(os.path.join(p.root, "old", "objects"))
        os.makedirs(os.path.join(p.root, "old", "refs"))
        with open(os.path.join(p.root, "old", "HEAD"), "w") as f:
            f.write("ref: refs/heads/main\n")
        r = p.run("run", "-q", "--backend", "mount", "--", "sh", "-ec",
                  "mkdir -p sub && git -C sub init -q")
        self.assertEqual((r.returncode, r.stderr), (0, ""), r.stderr)
        found = JOURNAL.records({"MESSAGE_ID": ID_FINDING, "RALON_ROOT": p.root,
                                 "RALON_SESSION": "ended"})
        self.assertEqual([(x["RALON_FINDING"], x["RALON_PATH"], x["RALON_COMMAND"])
                          for x in found], [("git-nested-repository", "sub/.git", "run")])
        self.assertIn("added during the session: sub/.git", found[0]["MESSAGE"])

    def test_status_findings(self):
        p = self.project(policy="protect:\n  - nothing-here.txt\n")
        r = p.run("status")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("nothing-here.txt", r.stderr)
        found = JOURNAL.records({"MESSAGE_ID": ID_FINDING, "RALON_ROOT": p.root,
                                 "RALON_COMMAND": "status"}, want=2)
        self.assertEqual(sorted(x["RALON_FINDING"] for x in found), ["root", "unmatched-path"])
        self.assertEqual([x.get("RALON_PATTERN") for x in found
                          if x["RALON_FINDING"] == "unmatched-path"], ["nothing-here.txt"])
        self.assertEqual([x["RALON_WEAKENS"] for x in found
                          if x["RALON_FINDING"] == "unmatched-path"], ["1"])

    def test_enforcement_failure(self):
        # Restricted, and then the command cannot be started.
        p = self.project()
        r = p.run("run", "--backend", "landlock", "--", "ralon-no-such-command")
        self.assertEqual(r.returncode, 127)
        fails = JOURNAL.records({"MESSAGE_ID": ID_FAIL, "RALON_ROOT": p.root})
        self.assertEqual(len(fails), 1, fails)
        self.assertIn("ralon-no-such-command", fails[0]["RALON_ERROR"])
        self.assertEqual(fails[0]["ERRNO"], str(2))
        # Refused once the plan is made (a descriptor open for writing on
        # agent.lock): a failure record, and no record of paths locked.
        r = p.run("run", "--backend", "landlock", "--", "true", launcher="exec 7>>agent.lock")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("descriptor 7", r.stderr)
        fails = JOURNAL.records({"MESSAGE_ID": ID_FAIL, "RALON_ROOT": p.root}, want=2)
        self.assertEqual(len(fails), 2, fails)
        self.assertIn("descriptor 7", fails[1]["RALON_ERROR"])
        # Sent before the failure, had it been sent: there by now.
        self.assertEqual(JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root}, want=0),
                         [])

    def test_libsystemd_loaded_only_to_write(self):
        p = self.project()
        allowed = p.run("hook", "check", stdin=claude_payload(p.root, "notes.txt"),
                        env={"LD_DEBUG": "libs"})
        refused = p.run("hook", "check", stdin=claude_payload(p.root, "secret.txt"),
                        env={"LD_DEBUG": "libs"})
        self.assertNotIn("libsystemd", allowed.stderr)
        self.assertIn("libsystemd", refused.stderr)


class CatalogTest(unittest.TestCase):
    """data/catalog/ralon.catalog, compiled by journalctl and shown by
    `journalctl -x` under a real record of each kind."""

    def test_catalog_explains_each_record(self):
        catalog = os.environ.get("RALON_CATALOG")
        if not catalog:
            self.skipTest("RALON_CATALOG not set")
        d = tempfile.mkdtemp(prefix="ralon-catalog-", dir=TMP_ROOT)
        self.addCleanup(shutil.rmtree, d, True)
        shutil.copy(catalog, os.path.join(d, "ralon.catalog"))
        os.makedirs("/var/lib/systemd/catalog", exist_ok=True)
        for src, dst, kind in ((d, "/usr/lib/systemd/catalog", "--bind"),
                               ("tmpfs", "/var/lib/systemd/catalog", "tmpfs")):
            args = ["mount", "--bind", src, dst] if kind == "--bind" else \
                ["mount", "-t", "tmpfs", "tmpfs", dst]
            subprocess.run(args, check=True)
            self.addCleanup(subprocess.run, ["umount", dst])
        r = subprocess.run(["journalctl", "--update-catalog"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        listed = subprocess.run(["journalctl", "--list-catalog"], capture_output=True,
                                text=True).stdout
        ids = (ID_RUN, ID_PASS, ID_HOOK, ID_FAIL, ID_FINDING, ID_STOP, ID_PAUSE)
        for i in ids:
            self.assertIn(i, listed)
        p = Project()
        self.addCleanup(p.cleanup)
        p.run("run", "--backend", "landlock", "--", "true")
        JOURNAL.records({"MESSAGE_ID": ID_RUN, "RALON_ROOT": p.root})
        shown = subprocess.run(["journalctl", "-x", "--no-pager", "-q", "MESSAGE_ID=" + ID_RUN,
                                "RALON_ROOT=" + p.root], capture_output=True, text=True).stdout
        # The subject with the record's own fields filled in.
        self.assertIn("Subject: ralon locked 3 path(s) of %s and started a command" % p.root,
                      shown)
        self.assertIn("with the landlock backend", shown)


class NoJournalTest(unittest.TestCase):
    """Outside: no journal socket (tmpfs over its directory, nothing
    listening)."""

    def test_silent_and_nothing_loaded(self):
        p = Project()
        self.addCleanup(p.cleanup)
        r = p.run("hook", "check", stdin=claude_payload(p.root, "secret.txt"),
                  env={"LD_DEBUG": "libs"})
        self.assertIn('"deny"', r.stdout)
        self.assertNotIn("libsystemd", r.stderr)
        r = p.run("run", "-q", "--backend", "landlock", "--", "sh", "-c", "echo fine")
        self.assertEqual((r.returncode, r.stdout, r.stderr), (0, "fine\n", ""))

    def test_quiet_run_skips_the_audit(self):
        """With -q and no journal, nothing would show the audit's findings:
        it is not run. Told from outside by access times: the audit reads
        .git/config and lists protected directories, and reading updates
        an atime that lies a day behind (relatime). Without -q it does;
        with --strict too (as root, the root finding alone refuses)."""
        p = Project()
        self.addCleanup(p.cleanup)
        os.makedirs(os.path.join(p.root, "tests", "sub"))
        os.makedirs(os.path.join(p.root, ".git"))
        with open(os.path.join(p.root, ".git", "config"), "w") as f:
            f.write("[core]\n")
        watched = [os.path.join(p.root, rel) for rel in (".git/config", "tests/sub")]
        old = 946684800  # 2000-01-01

        def read_since_reset(*args):
            for w in watched:
                os.utime(w, (old, os.stat(w).st_mtime))
            r = p.run(*args)
            return r, {os.path.relpath(w, p.root) for w in watched if os.stat(w).st_atime != old}

        for backend in ("mount", "landlock"):
            with self.subTest(backend=backend):
                r, read = read_since_reset("run", "--backend", backend, "--", "true")
                self.assertEqual(r.returncode, 0, r.stderr)
                if not read:
                    self.skipTest("this file system does not update access times (noatime)")
                self.assertEqual(read, {".git/config", "tests/sub"}, r.stderr)
                r, read = read_since_reset("run", "-q", "--backend", backend, "--", "true")
                self.assertEqual((r.returncode, r.stderr), (0, ""))
                self.assertEqual(read, set())
                if os.geteuid() == 0:
                    r, read = read_since_reset("run", "-q", "--strict", "--backend", backend,
                                               "--", "true")
                    self.assertEqual(r.returncode, 2, r.stderr)
                    self.assertIn("refusing to run with --strict", r.stderr)
                    self.assertEqual(read, {".git/config", "tests/sub"}, r.stderr)


def main():
    global JOURNAL
    if not os.access(RALON_SRC, os.X_OK):
        skip_or_fail("no ralon binary at %s (set RALON_BINARY)" % RALON_SRC)
    if os.environ.get(INSIDE) != "1":
        enter_namespace()
    # First without a journal: tmpfs over the socket's directory.
    subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run/systemd/journal"], check=False)
    suite = unittest.TestSuite()
    loader = unittest.TestLoader()
    suite.addTests(loader.loadTestsFromTestCase(NoJournalTest))
    ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful()
    subprocess.run(["umount", "/run/systemd/journal"], check=False)
    JOURNAL = Journal()
    try:
        suite = loader.loadTestsFromTestCase(JournalTest)
        suite.addTests(loader.loadTestsFromTestCase(CatalogTest))
        ok = unittest.TextTestRunner(verbosity=2).run(suite).wasSuccessful() and ok
    finally:
        JOURNAL.stop()
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
