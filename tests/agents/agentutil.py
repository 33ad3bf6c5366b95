# SPDX-License-Identifier: Apache-2.0
"""The real-client suite's harness: installs an agent CLI at a pinned
version into a cache directory, makes a project, installs ralon's hook the
way a user would, runs the agent against a scripted mock model on
127.0.0.1, and turns the outcome into one unittest method per row and mode.

A row is one scripted step of the model (one or more tool calls, maybe a
subagent's) with the files it touches and what must become of them:

  refused   every file it names is byte-for-byte what it was (or still
            absent), and the tool result the agent sent back to the model
            carries ralon's reason
  allowed   the files hold what the call wrote, and no reason came back

The modes a session runs in:

  project   `ralon hook install --agent A` in the project root
  user      `ralon hook install --agent A --user` (a private HOME per test)
  missing   the project install, with `ralon` missing from PATH: every call
            the hook sees is blocked, allowed ones too, and the agent says so
  crashed   the project install, with a `ralon` that fails silently (exit 1,
            no output) when the hook runs it: blocked the same way, with a
            reason

Every row of a mode runs in one agent session (the agents take seconds to
start); each row still gets its own files, so rows do not see each other.
Rows ralon is known to get wrong carry the issue's reason and run as
expected failures: a fix turns them into unexpected passes, to be
un-marked.

Outcomes are read from outside: content hashes of the project's files
before and after, the tool results the mock received, and the payloads
the hook received on stdin (a `ralon` on PATH that keeps a copy of its
standard input and runs the real binary).

Environment:
  RALON_BINARY           the ralon to test (default: build/src/ralon)
  RALON_AGENTS_CACHE     where agents are installed
                         (default: ~/.cache/ralon-agents)
  RALON_REQUIRE_AGENTS   1: an agent that cannot be installed or started
                         is a failure instead of a skip
  RALON_AGENTS_FIXTURES  a directory: captured payloads are written there
                         as <agent>/real-<row>.json (tests/hook/fixtures)
  RALON_TEST_TMPDIR      where projects are made (default /tmp)
"""

import fcntl
import hashlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import mockmodel  # noqa: E402

RALON = os.path.abspath(os.environ.get("RALON_BINARY") or os.path.join(
    HERE, "..", "..", "build", "src", "ralon"))
CACHE = os.environ.get("RALON_AGENTS_CACHE") or os.path.join(
    os.path.expanduser("~"), ".cache", "ralon-agents")
REQUIRED = os.environ.get("RALON_REQUIRE_AGENTS") == "1"
TMP_ROOT = os.environ.get("RALON_TEST_TMPDIR") or "/tmp"
FIXTURES = os.environ.get("RALON_AGENTS_FIXTURES") or ""
SYSTEM_PATH = "/usr/local/bin:/usr/bin:/bin"

# ralon's reason for a protected path, as every agent's hook answer has it.
REASON = "is protected by agent.lock"

POLICY = """\
version: 1
protect:
  - tests/golden/**
  - migrations/**
  - src/auth.c
"""

# What the model must be told when the hook could not run ralon: that ralon
# is missing or failed, or how to remove the hook.
HOOK_FAILED = re.compile(r"\bralon\b(?!\.json)[^\n]*\b(not found|not installed|missing|failed|"
                         r"could not|cannot|died|crashed)|ralon hook uninstall", re.I)

SAME = object()      # the file is what it was before (or still absent)


def skip_or_fail(reason):
    """The agent cannot be installed or started: skip the whole program,
    or fail with RALON_REQUIRE_AGENTS=1."""
    if REQUIRED:
        print("FAIL: %s (RALON_REQUIRE_AGENTS=1 turns this skip into a failure)" % reason,
              file=sys.stderr)
        sys.exit(1)
    print("SKIP: %s" % reason)
    sys.exit(77)


def npm_install(package, version, ready, save):
    """The prefix CACHE/<package>-<version>, where npm installs
    package@version on first use (never into the system), complete once
    the file `ready` (relative to the prefix) exists. One install at a
    time: the suite's programs share the cache. `save` is npm's flag for
    package.json: --no-save for an agent's CLI, --save-exact where the test
    needs npm's package.json and package-lock.json too."""
    name = package.strip("@").replace("/", "+")
    prefix = os.path.join(CACHE, "%s-%s" % (name, version))
    if os.path.exists(os.path.join(prefix, ready)):
        return prefix
    if shutil.which("npm") is None:
        skip_or_fail("npm is not installed, so %s@%s cannot be installed" % (package, version))
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.exists(os.path.join(prefix, ready)):
            return prefix
        tmp = prefix + ".partial"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        r = subprocess.run(["npm", "install", "--prefix", tmp, "--no-audit", "--no-fund",
                            save, "--loglevel=error", "%s@%s" % (package, version)],
                           stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=900)
        if r.returncode != 0 or not os.path.exists(os.path.join(tmp, ready)):
            shutil.rmtree(tmp, ignore_errors=True)
            skip_or_fail("cannot install %s@%s with npm: %s" % (
                package, version, (r.stderr or r.stdout).strip()[-600:]))
        shutil.rmtree(prefix, ignore_errors=True)
        os.rename(tmp, prefix)
    return prefix


def install_agent(package, version, binary):
    """The path of `binary` of npm package@version (npm_install)."""
    bin_rel = os.path.join("node_modules", ".bin", binary)
    exe = os.path.join(npm_install(package, version, bin_rel, "--no-save"), bin_rel)
    if not os.access(exe, os.X_OK):
        skip_or_fail("%s of %s@%s is not executable" % (exe, package, version))
    return exe


def install_package(package, version):
    """The prefix of npm package@version, with the package.json and
    package-lock.json npm saves: for a package an agent would otherwise
    fetch from the registry while it runs (opencode's plugin SDK), so that
    the test can hand it over ready and the run stays on 127.0.0.1."""
    return npm_install(package, version, "package-lock.json", "--save-exact")


def edit_json(path, edit):
    """Applies `edit` to the JSON document at `path` (an empty object
    where there is none yet, or what a user-level hook install wrote
    there) and writes it back."""
    doc = {}
    if os.path.exists(path):
        with open(path, encoding="utf-8") as f:
            doc = json.load(f)
    edit(doc)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)


def subst(obj, root):
    """obj with every "@ROOT@" in its strings replaced by root."""
    if isinstance(obj, str):
        return obj.replace("@ROOT@", root)
    if isinstance(obj, list):
        return [subst(v, root) for v in obj]
    if isinstance(obj, dict):
        return {k: subst(v, root) for k, v in obj.items()}
    return obj


def sha256(path):
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except FileNotFoundError:
        return None
    except IsADirectoryError:
        return "directory"


def digest(content):
    return hashlib.sha256(content.encode()).hexdigest()


class Row:
    """One scripted step. calls: [(tool, args)] in the main conversation
    (ids are given by the session); subs: {marker: [(tool, args)]} for
    subagent conversations; files: {relative path: initial content};
    after: {relative path: SAME, None (absent) or the content expected};
    reason_in: which call's result must carry the reason ("last" of the
    main conversation, or "sub:MARKER"); xfail: {mode or mode:part: reason}
    for rows ralon is known to get wrong (see add_row_tests)."""

    def __init__(self, name, expect, calls, files=None, after=None, subs=None,
                 reason_in="last", xfail=None,
                 modes=("project", "user", "missing", "crashed"),
                 fixture=None):
        assert expect in ("refused", "allowed")
        self.name = name
        self.expect = expect
        self.calls = calls
        self.subs = subs or {}
        self.files = files or {}
        self.after = after if after is not None else {p: SAME for p in self.files}
        self.reason_in = reason_in
        self.xfail = xfail or {}
        self.modes = modes
        self.fixture = fixture


class Session:
    """What one run of the agent left: the project, its files' hashes
    before and after, the tool results, the hook's payloads, the agent's
    output."""

    def __init__(self):
        self.root = None
        self.before = {}
        self.results = {}
        self.ids = {}          # row name -> [call ids of the main conversation]
        self.calls = {}        # call id -> its arguments
        self.sub_ids = {}      # marker -> [call ids]
        self.payloads = []
        self.output = ""
        self.requests = []


class AgentTest(unittest.TestCase):
    """Subclasses set AGENT (ralon's name), PACKAGE, VERSION, BINARY, DIALECT
    (a mock module), ROWS, and implement command() and, where needed,
    prepare() (the agent's own configuration and trust step)."""

    AGENT = None
    PACKAGE = None
    VERSION = None
    BINARY = None
    DIALECT = None
    ROWS = []
    MODES = ("project", "user", "missing", "crashed")
    PAYLOAD_HAS_ID = False  # the hook payload carries the call's id
    START_DIR = ""          # where the agent starts, relative to the root
    TIMEOUT = 300
    sessions = {}
    exe = None
    tmp = None

    @classmethod
    def setUpClass(cls):
        cls.exe = install_agent(cls.PACKAGE, cls.VERSION, cls.BINARY)
        cls.tmp = tempfile.mkdtemp(prefix="agenttest-%s-" % cls.AGENT, dir=TMP_ROOT)
        cls.sessions = {}

    @classmethod
    def tearDownClass(cls):
        if cls.tmp and not os.environ.get("RALON_AGENTS_KEEP"):
            shutil.rmtree(cls.tmp, ignore_errors=True)

    # --- what an agent module provides -------------------------------------

    def command(self, s, env, prompt):
        """argv to run the agent non-interactively with `prompt`."""
        raise NotImplementedError

    def prepare(self, s, env, mode):
        """The agent's own configuration in the private HOME (its model
        endpoint: s.url) and the trust step its documentation asks for."""

    def extra_env(self, home):
        """Variables set for both the hook's installation and the agent
        (an agent's configuration directory, say)."""
        return {}

    def call_id(self, row, i):
        return "call_%s_%d" % (row.replace("-", "_"), i)

    # --- the session ---------------------------------------------------------

    def make_project(self, root):
        os.makedirs(root)
        for d in ("src", "tests/golden", "migrations"):
            os.makedirs(os.path.join(root, d))
        with open(os.path.join(root, "agent.lock"), "w") as f:
            f.write(POLICY)
        files = {"src/auth.c": "int auth;\n", "src/main.c": "int main;\n",
                 "README": "readme\n"}
        for row in self.ROWS:
            files.update(row.files)
        for rel, content in files.items():
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w") as f:
                f.write(content)
        git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid",
               "-c", "init.defaultBranch=main"]
        subprocess.run(git + ["init", "-q"], cwd=root, check=True)
        subprocess.run(git + ["add", "-A"], cwd=root, check=True)
        subprocess.run(git + ["commit", "-qm", "init"], cwd=root, check=True)

    def snapshot(self, root):
        out = {}
        for dirpath, dirs, names in os.walk(root):
            dirs[:] = [d for d in dirs if d != ".git"]
            for n in names:
                p = os.path.join(dirpath, n)
                out[os.path.relpath(p, root)] = sha256(p)
        return out

    def bin_dir(self, base, capture, name="bin", crash=False):
        """A directory holding `ralon`: a script that keeps each hook
        payload in `capture` and runs the real binary on it; with crash,
        one that fails (exit 1) without a word when asked to check."""
        d = os.path.join(base, name)
        os.makedirs(d)
        os.makedirs(capture, exist_ok=True)
        script = os.path.join(d, "ralon")
        with open(script, "w") as f:
            if crash:
                f.write('#!/bin/sh\n'
                        'if [ "$1" = hook ] && [ "$2" = check ]; then exit 1; fi\n'
                        'exec "%s" "$@"\n' % RALON)
            else:
                f.write('#!/bin/sh\n'
                        'if [ "$1" = hook ] && [ "$2" = check ]; then\n'
                        '  f=$(mktemp "%s/payload-XXXXXXXX") || exit 1\n'
                        '  cat > "$f"\n'
                        '  exec "%s" "$@" < "$f"\n'
                        'fi\n'
                        'exec "%s" "$@"\n' % (capture, RALON, RALON))
        os.chmod(script, 0o755)
        return d

    def system_bin(self, base):
        """The system's commands without any `ralon` a package may have
        installed there: one directory of links to every other program in
        SYSTEM_PATH, so that the agent finds only the ralon under test, or
        none at all."""
        d = os.path.join(base, "system")
        os.makedirs(d)
        for sysdir in SYSTEM_PATH.split(":"):
            try:
                names = os.listdir(sysdir)
            except OSError:
                continue
            for n in names:
                link = os.path.join(d, n)
                if n == "ralon" or os.path.lexists(link):
                    continue
                os.symlink(os.path.join(sysdir, n), link)
        return d

    def base_env(self, home, path):
        env = {"HOME": home, "PATH": path, "LC_ALL": "C.UTF-8", "LANG": "C.UTF-8",
               "TERM": "dumb", "NO_COLOR": "1", "CI": "1",
               "XDG_CONFIG_HOME": os.path.join(home, ".config"),
               "XDG_DATA_HOME": os.path.join(home, ".local", "share"),
               "XDG_STATE_HOME": os.path.join(home, ".local", "state"),
               "XDG_CACHE_HOME": os.path.join(home, ".cache"),
               "TMPDIR": os.path.join(home, "tmp"),
               "NO_PROXY": "127.0.0.1", "no_proxy": "127.0.0.1"}
        os.makedirs(env["TMPDIR"], exist_ok=True)
        return env

    def session(self, mode):
        if mode in self.sessions:
            return self.sessions[mode]
        s = Session()
        base = os.path.join(self.tmp, mode)
        os.makedirs(base)
        s.root = os.path.join(base, "project")
        home = os.path.join(base, "home")
        os.makedirs(home)
        capture = os.path.join(base, "payloads")
        bindir = self.bin_dir(base, capture)
        self.make_project(s.root)

        # The hook, installed as a user would (ralon on PATH while installing).
        inst_env = self.base_env(home, bindir + ":" + SYSTEM_PATH)
        inst_env.update(self.extra_env(home))
        args = [RALON, "hook", "install", "--agent", self.AGENT]
        if mode == "user":
            args.append("--user")
        r = subprocess.run(args, cwd=s.root, env=inst_env, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, "hook install: %s" % r.stderr)

        system = self.system_bin(base)
        path = system if mode == "missing" else bindir + ":" + system
        if mode == "crashed":
            path = self.bin_dir(base, capture, "crashbin", crash=True) + ":" + system
        env = self.base_env(home, path)
        env.update(self.extra_env(home))
        s.before = self.snapshot(s.root)
        s.home = home

        script = mockmodel.Script()
        main = []
        for row in self.ROWS:
            if mode not in row.modes:
                continue
            ids = []
            for i, (tool, targs) in enumerate(row.calls):
                ids.append(self.call_id(row.name, i))
                main.append(mockmodel.Call(ids[-1], tool, subst(targs, s.root)))
                s.calls[ids[-1]] = main[-1].args
            s.ids[row.name] = ids
            for marker, calls in row.subs.items():
                sub = []
                for i, (tool, targs) in enumerate(calls):
                    sub.append(mockmodel.Call(self.call_id(marker, i), tool,
                                              subst(targs, s.root)))
                    s.calls[sub[-1].id] = sub[-1].args
                s.sub_ids[marker] = [c.id for c in sub]
                script.add(marker, sub)
        script.add("RALON-MAIN", main)
        prompt = "RALON-MAIN: carry out the scripted steps."
        with mockmodel.MockModel(self.DIALECT, script) as m:
            s.url = m.url
            self.prepare(s, env, mode)
            argv = self.command(s, env, prompt)
            # The agent in a process group of its own, so that whatever it
            # leaves behind (background shells, monitors) ends with it.
            p = subprocess.Popen(argv, cwd=os.path.join(s.root, self.START_DIR), env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                 stderr=subprocess.PIPE, text=True, start_new_session=True)
            try:
                out, err = p.communicate(timeout=self.TIMEOUT)
                s.output = "exit %d\n--- stdout\n%s\n--- stderr\n%s" % (
                    p.returncode, out[-4000:], err[-4000:])
            except subprocess.TimeoutExpired:
                s.output = "timed out after %ds" % self.TIMEOUT
            finally:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                if p.returncode is None:
                    p.communicate()
            s.results = dict(m.results)
            s.requests = list(m.requests)
        if not any(req[0] == "POST" for req in s.requests):
            skip_or_fail("%s %s never reached the mock model: %s" % (
                self.AGENT, self.VERSION, s.output))
        s.after = self.snapshot(s.root)
        for n in sorted(os.listdir(capture)):
            with open(os.path.join(capture, n), "rb") as f:
                raw = f.read()
            try:
                s.payloads.append(json.loads(raw))
            except ValueError:
                s.payloads.append({"_raw": raw.decode("utf-8", "replace")})
        self.sessions[mode] = s
        with open(os.path.join(base, "session.json"), "w") as f:
            json.dump({"output": s.output, "results": s.results, "ids": s.ids,
                       "sub_ids": s.sub_ids, "requests": s.requests}, f, indent=1)
        if FIXTURES and mode == "project":
            self.save_fixtures(s)
        return s

    # --- fixtures ------------------------------------------------------------

    def payload_for(self, s, call_id, by_args=False):
        """The payload the hook received for one call, found by the call's
        id or (by_args, for agents whose payload carries none) by its
        arguments."""
        for p in s.payloads:
            if call_id in json.dumps(p):
                return p
        args = s.calls.get(call_id)
        if not by_args or args is None:
            return None
        values = [v for v in (args.values() if isinstance(args, dict) else [args])
                  if isinstance(v, str)]
        for p in s.payloads:
            text = json.dumps(p)
            if values and all(json.dumps(v)[1:-1] in text for v in values):
                return p
        return None

    def save_fixtures(self, s):
        d = os.path.join(FIXTURES, self.AGENT)
        os.makedirs(d, exist_ok=True)
        for row in self.ROWS:
            if not row.fixture:
                continue
            ids = s.ids.get(row.name, []) + [i for m in row.subs for i in s.sub_ids.get(m, [])]
            for cid in reversed(ids):
                p = self.payload_for(s, cid, by_args=True)
                if p is None:
                    continue
                text = json.dumps(p, indent=2, ensure_ascii=False) + "\n"
                # Agents name their per-project state after the path too
                # (Claude Code: ~/.claude/projects/-tmp-...-project/).
                text = text.replace(s.root.replace("/", "-"), "p")
                text = text.replace(re.sub(r"[^A-Za-z0-9]", "-", s.root), "p")
                text = text.replace(s.root, "@ROOT@").replace(s.home, "/home/dev")
                with open(os.path.join(d, "real-%s.json" % row.fixture), "w") as f:
                    f.write(text)
                break

    # --- the checks ----------------------------------------------------------

    def result_of(self, s, row):
        if row.reason_in.startswith("sub:"):
            cid = s.sub_ids[row.reason_in[4:]][-1]
        else:
            cid = s.ids[row.name][-1]
        return cid, s.results.get(cid)

    def check_effect(self, mode, row):
        """The files the row touches, compared from outside."""
        s = self.session(mode)
        info = "\nagent: %s" % s.output
        for rel, want in row.after.items():
            got = s.after.get(rel)
            before = s.before.get(rel)
            if mode in ("missing", "crashed") or row.expect == "refused" or want is SAME:
                self.assertEqual(got, before, "%s changed (%s)%s" % (rel, row.name, info))
            elif want is None:
                self.assertIsNone(got, "%s still exists%s" % (rel, info))
            else:
                self.assertEqual(got, digest(want), "%s does not hold %r%s" % (rel, want, info))

    def check_report(self, mode, row):
        """What the agent told the model, and that the hook saw the call."""
        s = self.session(mode)
        info = "\nagent: %s" % s.output
        cid, text = self.result_of(s, row)
        self.assertIsNotNone(text, "no tool result came back for %s%s" % (cid, info))
        if mode not in ("missing", "crashed") and self.PAYLOAD_HAS_ID:
            self.assertIsNotNone(self.payload_for(s, cid),
                                 "the hook never saw %s, so it did not run%s" % (cid, info))
        if mode in ("missing", "crashed"):
            # Blocked because the hook cannot run: the agent must say that
            # ralon is missing or failed (not merely name a file of ralon's;
            # the project's paths do not contain the word).
            self.assertRegex(text, HOOK_FAILED, "%s: %r" % (cid, text))
            self.assertNotIn(REASON, text)
        elif row.expect == "refused":
            self.assertIn(REASON, text, "%s: %r%s" % (cid, text, info))
        else:
            self.assertNotIn("agent.lock", text, "%s: %r" % (cid, text))


def add_row_tests(cls):
    """Two test methods per mode and row: test_<mode>__<row>__effect (the
    files, from outside) and test_<mode>__<row>__report (the tool result the
    model got, and that the hook ran). A row's xfail key "MODE" marks both
    as expected failures, "MODE:effect" or "MODE:report" one of them."""
    for mode in cls.MODES:
        for row in cls.ROWS:
            if mode not in row.modes:
                continue
            for part in ("effect", "report"):
                def t(self, mode=mode, row=row, part=part):
                    getattr(self, "check_" + part)(mode, row)
                t.__doc__ = None
                reason = row.xfail.get("%s:%s" % (mode, part)) or row.xfail.get(mode)
                if reason:
                    t = unittest.expectedFailure(t)
                    t.__doc__ = "expected failure: " + reason
                setattr(cls, "test_%s__%s__%s" % (mode, row.name.replace("-", "_"), part), t)
    return cls


def main():
    unittest.main(verbosity=2)
