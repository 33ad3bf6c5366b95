#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""opencode, the real CLI, against the Chat Completions mock: write, edit,
apply_patch (adds, updates, deletes, both ends of a move), bash (with and
without its workdir, relative and absolute), relative paths and a subagent
(the task tool), on protected and unprotected paths, with ralon's plugin at
project level (.opencode/plugins/ralon.js) and at user level
($XDG_CONFIG_HOME/opencode/plugins/ralon.js), with ralon missing and with a
ralon that fails silently; with opencode started in a subdirectory, with
the user-level plugin under another XDG_CONFIG_HOME, and with the two
switches of opencode's own that load no ralon.js (where `ralon hook list`
must say so). See agentutil.py for what a row checks.

opencode offers a model either write and edit or apply_patch, by the
model's name (apply_patch for GPT-named models), so the file tools run in
two sessions per mode: OpencodeCLI with a model named mock-model, and
OpencodePatch with one named gpt-mock.

Offline: at start opencode installs its plugin SDK (@opencode-ai/plugin at
its own version) with npm into every configuration directory it reads
(.opencode/ in the project, $XDG_CONFIG_HOME/opencode/), unless the
directory already has a node_modules and a package-lock.json naming it.
Offline that install fails only after more than a minute of retries, on
every start. The suite installs the SDK once into the agents' cache, as it
installs the CLIs, and gives each of those directories the state opencode's
own install leaves there. Every other fetch is switched off by opencode's
own variables, and HTTP(S)_PROXY points at the mock, so that any request
for another host would reach it and fail the run's test_offline."""

import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentutil  # noqa: E402
import mock_openai  # noqa: E402
from agentutil import SAME, Row  # noqa: E402

# The newest release when this suite was written (npm's `latest`), and the
# one the survey used.
VERSION = "1.18.33"
ROOT = "@ROOT@"


def read(rel):
    """opencode refuses to edit or overwrite a file it has not read in the
    session: each such row reads it first."""
    return ("read", {"filePath": ROOT + "/" + rel})


def bash(command, workdir=None):
    args = {"command": command, "description": "scripted step"}
    if workdir is not None:
        args["workdir"] = workdir
    return ("bash", args)


def patch(*lines):
    return ("apply_patch", {"patchText": "*** Begin Patch\n" + "".join(l + "\n" for l in lines) +
                            "*** End Patch"})


def file_rows():
    return [
        Row("write-protected", "refused",
            [read("tests/golden/w1.txt"),
             ("write", {"filePath": ROOT + "/tests/golden/w1.txt", "content": "x\n"})],
            files={"tests/golden/w1.txt": "w1\n"}, fixture="write-protected"),
        Row("write-allowed", "allowed",
            [("write", {"filePath": ROOT + "/src/w2.txt", "content": "x\n"})],
            after={"src/w2.txt": "x\n"}, fixture="write-allowed"),
        Row("write-new-protected", "refused",
            [("write", {"filePath": ROOT + "/migrations/002_new.sql", "content": "x\n"})],
            after={"migrations/002_new.sql": SAME}),
        Row("write-relative-protected", "refused",
            [("write", {"filePath": "tests/golden/w3.txt", "content": "x\n"})],
            after={"tests/golden/w3.txt": SAME}, fixture="write-relative"),
        Row("edit-protected", "refused",
            [read("src/auth.c"),
             ("edit", {"filePath": ROOT + "/src/auth.c", "oldString": "int auth;",
                       "newString": "int auth = 1;"})],
            after={"src/auth.c": SAME}, fixture="edit-protected"),
        Row("edit-allowed", "allowed",
            [read("src/e2.c"),
             ("edit", {"filePath": ROOT + "/src/e2.c", "oldString": "e2",
                       "newString": "changed"})],
            files={"src/e2.c": "e2\n"}, after={"src/e2.c": "changed\n"},
            fixture="edit-allowed"),
        Row("bash-append-protected", "refused",
            [bash("echo x >> tests/golden/b1.txt")],
            files={"tests/golden/b1.txt": "b1\n"}, fixture="bash-protected"),
        Row("bash-append-allowed", "allowed",
            [bash("echo x >> src/b2.txt")],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"},
            fixture="bash-allowed"),
        Row("bash-mv-into-protected", "refused",
            [bash("mv src/m1.txt tests/golden/m1.txt")],
            files={"src/m1.txt": "m1\n"},
            after={"src/m1.txt": SAME, "tests/golden/m1.txt": SAME}),
        Row("bash-mv-out-of-protected", "refused",
            [bash("mv tests/golden/m2.txt src/m2.txt")],
            files={"tests/golden/m2.txt": "m2\n"},
            after={"tests/golden/m2.txt": SAME, "src/m2.txt": SAME}),
        # The case: the bash tool's workdir, relative to the project.
        Row("bash-workdir-protected", "refused",
            [bash("rm -f 001_init.sql", workdir="migrations")],
            files={"migrations/001_init.sql": "create table t;\n"},
            fixture="bash-workdir"),
        Row("bash-workdir-abs-protected", "refused",
            [bash("echo x >> d1.txt", workdir=ROOT + "/tests/golden")],
            files={"tests/golden/d1.txt": "d1\n"}, fixture="bash-workdir-abs"),
        Row("bash-workdir-allowed", "allowed",
            [bash("echo x >> w1.txt", workdir="src")],
            files={"src/w1.txt": "w1\n"}, after={"src/w1.txt": "w1\nx\n"},
            fixture="bash-workdir-allowed"),
    ] + subagent_rows()


def subagent_rows():
    """The task tool starts a subagent, whose tool calls go through the
    plugin too. With ralon missing or failing the task call itself is
    refused (the plugin puts every tool call to ralon), so there the reason
    is looked for in the task call's result."""
    out = []
    for modes, reason_in in ((("project", "user"), "sub:"), (("missing", "crashed"), "last")):
        tag = "" if reason_in == "sub:" else "-blocked"
        out += [
            Row("subagent-write-protected" + tag, "refused",
                [("task", {"description": "edit golden", "subagent_type": "general",
                           "prompt": "RALON-SUB-1%s: write the golden file." % tag})],
                subs={"RALON-SUB-1" + tag: [
                    read("tests/golden/s1%s.txt" % tag),
                    ("write", {"filePath": ROOT + "/tests/golden/s1%s.txt" % tag,
                               "content": "x\n"})]},
                files={"tests/golden/s1%s.txt" % tag: "s1\n"},
                reason_in=reason_in + ("RALON-SUB-1" if reason_in == "sub:" else ""),
                modes=modes, fixture="subagent-write-protected" if not tag else None),
            Row("subagent-bash-protected" + tag, "refused",
                [("task", {"description": "append golden", "subagent_type": "general",
                           "prompt": "RALON-SUB-2%s: append to the golden file." % tag})],
                subs={"RALON-SUB-2" + tag: [bash("echo x >> tests/golden/s2%s.txt" % tag)]},
                files={"tests/golden/s2%s.txt" % tag: "s2\n"},
                reason_in=reason_in + ("RALON-SUB-2" if reason_in == "sub:" else ""),
                modes=modes),
        ]
    return out


def patch_rows():
    return [
        Row("patch-add-protected", "refused",
            [patch("*** Add File: tests/golden/n1.txt", "+x")],
            after={"tests/golden/n1.txt": SAME}, fixture="apply-patch-add-protected"),
        Row("patch-update-protected", "refused",
            [patch("*** Update File: tests/golden/u1.txt", "@@", "-u1", "+x")],
            files={"tests/golden/u1.txt": "u1\n"}, fixture="apply-patch-update-protected"),
        Row("patch-update-allowed", "allowed",
            [patch("*** Update File: src/u2.txt", "@@", "-u2", "+x")],
            files={"src/u2.txt": "u2\n"}, after={"src/u2.txt": "x\n"},
            fixture="apply-patch-allowed"),
        Row("patch-delete-protected", "refused",
            [patch("*** Delete File: migrations/001_init.sql")],
            files={"migrations/001_init.sql": "create table t;\n"}),
        Row("patch-move-into-protected", "refused",
            [patch("*** Update File: src/mv1.txt", "*** Move to: tests/golden/mv1.txt",
                   "@@", "-mv1", "+x")],
            files={"src/mv1.txt": "mv1\n"},
            after={"src/mv1.txt": SAME, "tests/golden/mv1.txt": SAME},
            fixture="apply-patch-move-to-protected"),
        Row("patch-move-out-of-protected", "refused",
            [patch("*** Update File: tests/golden/mv2.txt", "*** Move to: src/mv2.txt",
                   "@@", "-mv2", "+x")],
            files={"tests/golden/mv2.txt": "mv2\n"},
            after={"tests/golden/mv2.txt": SAME, "src/mv2.txt": SAME},
            fixture="apply-patch-move-out-of-protected"),
        Row("patch-move-allowed", "allowed",
            [patch("*** Update File: src/mv3.txt", "*** Move to: src/mv3b.txt",
                   "@@", "-mv3", "+x")],
            files={"src/mv3.txt": "mv3\n"}, after={"src/mv3.txt": None, "src/mv3b.txt": "x\n"}),
    ]


class Opencode:
    AGENT = "opencode"
    PACKAGE = "opencode-ai"
    VERSION = VERSION
    BINARY = "opencode"
    DIALECT = mock_openai
    MODEL = "mock-model"
    PAYLOAD_HAS_ID = False
    # Four to eight model turns, each a few seconds for a Bun binary of
    # 180 MB on a loaded machine.
    TIMEOUT = 600

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        # The plugin SDK opencode would install at start, at its own version.
        cls.sdk = agentutil.install_package("@opencode-ai/plugin", VERSION)

    def provide_sdk(self, d):
        """Give configuration directory d what opencode's own npm install
        leaves there, so that it has nothing to fetch: package.json and
        package-lock.json naming the SDK, and node_modules (a link into
        the cache)."""
        os.makedirs(d, exist_ok=True)
        for f in ("package.json", "package-lock.json"):
            shutil.copyfile(os.path.join(self.sdk, f), os.path.join(d, f))
        link = os.path.join(d, "node_modules")
        if not os.path.lexists(link):
            os.symlink(os.path.join(self.sdk, "node_modules"), link)

    def prepare(self, s, env, mode):
        config = os.path.join(env["XDG_CONFIG_HOME"], "opencode")
        self.provide_sdk(config)
        if os.path.isdir(os.path.join(s.root, ".opencode")):
            self.provide_sdk(os.path.join(s.root, ".opencode"))
        # The mock as an OpenAI-compatible provider (bundled in opencode:
        # nothing to install), in the user's opencode.json.
        with open(os.path.join(config, "opencode.json"), "w") as f:
            json.dump({
                "$schema": "https://opencode.ai/config.json",
                "provider": {"mock": {
                    "npm": "@ai-sdk/openai-compatible", "name": "mock",
                    "options": {"baseURL": s.url + "/v1", "apiKey": "sk-mock"},
                    "models": {self.MODEL: {"name": self.MODEL, "tool_call": True}}}},
                "model": "mock/" + self.MODEL,
                "small_model": "mock/" + self.MODEL,
                "autoupdate": False,
                "share": "disabled",
                # No git snapshot of the project at every step: seconds a
                # turn on a loaded machine, and nothing the hook sees.
                "snapshot": False,
            }, f, indent=2)
        env.update({
            "OPENCODE_DISABLE_AUTOUPDATE": "1",
            "OPENCODE_DISABLE_MODELS_FETCH": "1",
            "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
            "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
            "OPENCODE_DISABLE_SHARE": "1",
            # Whatever still asks for another host asks the mock, which
            # records it (test_offline) and refuses it.
            "HTTP_PROXY": s.url, "HTTPS_PROXY": s.url,
            "http_proxy": s.url, "https_proxy": s.url,
            "NO_PROXY": "127.0.0.1,localhost", "no_proxy": "127.0.0.1,localhost",
        })

    def command(self, s, env, prompt):
        # --auto: approve every permission that is not denied (opencode's
        # non-interactive mode), as the other agents' yolo modes.
        return [self.exe, "run", "--format", "json", "--auto",
                "--model", "mock/" + self.MODEL, prompt]

    def check_report(self, mode, row):
        """Also that the plugin ran ralon on the call: opencode's hook input
        carries the call's id, but the plugin does not pass it on, so the
        payload is found by the call's arguments."""
        super().check_report(mode, row)
        if mode in ("project", "user"):
            s = self.session(mode)
            cid = self.result_of(s, row)[0]
            self.assertIsNotNone(self.payload_for(s, cid, by_args=True),
                                 "ralon never saw %s, so the plugin did not run" % cid)

    def check_offline(self, mode):
        """Nothing but the model's endpoint was asked for: no request for
        another host came through the proxy variables."""
        s = self.session(mode)
        away = [(m, p) for m, p, _, _ in s.requests if m == "CONNECT" or "://" in p]
        self.assertEqual(away, [], "opencode asked for other hosts")

    def test_offline(self):
        for mode in self.MODES:
            with self.subTest(mode=mode):
                self.check_offline(mode)


@agentutil.add_row_tests
class OpencodeCLI(Opencode, agentutil.AgentTest):
    ROWS = file_rows()


@agentutil.add_row_tests
class OpencodePatch(Opencode, agentutil.AgentTest):
    """A GPT-named model, to which opencode offers apply_patch instead of
    write and edit."""

    MODEL = "gpt-mock"
    ROWS = patch_rows()


@agentutil.add_row_tests
class OpencodeXdgConfig(Opencode, agentutil.AgentTest):
    """The user-level plugin with XDG_CONFIG_HOME elsewhere, where opencode
    looks for it."""

    MODES = ("user",)
    ROWS = [
        Row("write-new-protected", "refused",
            [("write", {"filePath": ROOT + "/migrations/002_new.sql", "content": "x\n"})],
            after={"migrations/002_new.sql": SAME}),
        Row("bash-append-allowed", "allowed",
            [bash("echo x >> src/b2.txt")],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"}),
    ]

    def extra_env(self, home):
        return {"XDG_CONFIG_HOME": os.path.join(home, "xdg-config")}


@agentutil.add_row_tests
class OpencodeSubdir(Opencode, agentutil.AgentTest):
    """Started in a subdirectory of the project: opencode looks for
    .opencode/ from there up to the repository's root, so the project's
    plugin still runs, and relative paths are the subdirectory's."""

    MODES = ("project",)
    START_DIR = "src"
    ROWS = [
        Row("write-relative-protected", "refused",
            [("write", {"filePath": "../tests/golden/sd1.txt", "content": "x\n"})],
            after={"tests/golden/sd1.txt": SAME}),
        Row("bash-append-protected", "refused",
            [bash("echo x >> ../migrations/sd2.sql")],
            files={"migrations/sd2.sql": "sd2\n"}),
        Row("write-relative-allowed", "allowed",
            [("write", {"filePath": "sd3.txt", "content": "x\n"})],
            after={"src/sd3.txt": "x\n"}),
    ]



class SwitchedOff(Opencode):
    """opencode's own switches that keep it from loading ralon.js: with one
    set, a protected file changes. opencode decides that, not ralon, and
    only the kernel (`ralon run`) stops the write then. What ralon owes is
    to say so: `ralon hook list`, in the same environment, says the hook
    will not run here and names the variable."""

    SWITCH = {}
    ROWS = [
        Row("write-protected-unguarded", "allowed",
            [("write", {"filePath": ROOT + "/tests/golden/off1.txt", "content": "x\n"})],
            after={"tests/golden/off1.txt": "x\n"}),
    ]

    def prepare(self, s, env, mode):
        super().prepare(s, env, mode)
        env.update(self.SWITCH)

    def check_report(self, mode, row):
        s = self.session(mode)
        cid = self.result_of(s, row)[0]
        self.assertIsNotNone(s.results.get(cid), "no tool result came back for %s" % cid)
        self.assertIsNone(self.payload_for(s, cid, by_args=True),
                          "the plugin ran with %s set" % self.SWITCH)

    def test_hook_list_says_so(self):
        for mode in self.MODES:
            s = self.session(mode)
            env = self.base_env(s.home, agentutil.SYSTEM_PATH)
            env.update(self.extra_env(s.home))
            env.update(self.SWITCH)
            r = subprocess.run([agentutil.RALON, "--json", "hook", "list"], cwd=s.root, env=env,
                               capture_output=True, text=True)
            self.assertEqual(r.returncode, 0, r.stderr)
            (h,) = [h for h in json.loads(r.stdout)["hooks"]
                    if (h["agent"], h["scope"]) == ("opencode", mode)]
            self.assertEqual((h["state"], h["runs"]), ("installed", "no"), h)
            self.assertIn(list(self.SWITCH)[0], h["note"])


@agentutil.add_row_tests
class OpencodeNoProjectConfig(SwitchedOff, agentutil.AgentTest):
    MODES = ("project",)
    SWITCH = {"OPENCODE_DISABLE_PROJECT_CONFIG": "1"}


@agentutil.add_row_tests
class OpencodePure(SwitchedOff, agentutil.AgentTest):
    """OPENCODE_PURE, which `opencode run --pure` sets: no plugin at all,
    the user-level one included."""

    MODES = ("user",)
    SWITCH = {"OPENCODE_PURE": "1"}

if __name__ == "__main__":
    agentutil.main()
