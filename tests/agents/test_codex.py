#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""OpenAI Codex CLI, the real binary, against the Responses API mock: its
freeform apply_patch tool (adds, updates, deletes, both ends of a move)
and its exec_command tool (redirections, moves, a working directory, an
apply_patch heredoc after a cd), with ralon's hook at project and at user
level and with ralon missing. See agentutil.py for what a row checks."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentutil  # noqa: E402
import mock_openai  # noqa: E402
from agentutil import SAME, Row  # noqa: E402

VERSION = "0.171.0"


def patch(*lines):
    return "*** Begin Patch\n" + "".join(l + "\n" for l in lines) + "*** End Patch\n"


def sh(cmd, workdir=None):
    args = {"cmd": cmd}
    if workdir:
        args["workdir"] = workdir
    return ("exec_command", args)






def rows():
    out = [
        Row("patch-add-protected", "refused",
            [("apply_patch", patch("*** Add File: tests/golden/n1.txt", "+x"))],
            after={"tests/golden/n1.txt": SAME}, fixture="apply-patch-add-protected"),
        Row("patch-update-protected", "refused",
            [("apply_patch", patch("*** Update File: tests/golden/u1.txt", "@@", "-u1", "+x"))],
            files={"tests/golden/u1.txt": "u1\n"}),
        Row("patch-update-allowed", "allowed",
            [("apply_patch", patch("*** Update File: src/u2.txt", "@@", "-u2", "+x"))],
            files={"src/u2.txt": "u2\n"}, after={"src/u2.txt": "x\n"},
            fixture="apply-patch-allowed"),
        Row("patch-delete-protected", "refused",
            [("apply_patch", patch("*** Delete File: migrations/001_init.sql"))],
            files={"migrations/001_init.sql": "create table t;\n"}),
        Row("patch-move-into-protected", "refused",
            [("apply_patch", patch("*** Update File: src/mv1.txt",
                                   "*** Move to: tests/golden/mv1.txt", "@@", "-mv1", "+x"))],
            files={"src/mv1.txt": "mv1\n"},
            after={"src/mv1.txt": SAME, "tests/golden/mv1.txt": SAME},
            fixture="apply-patch-move-to-protected"),
        Row("patch-move-out-of-protected", "refused",
            [("apply_patch", patch("*** Update File: tests/golden/mv2.txt",
                                   "*** Move to: src/mv2.txt", "@@", "-mv2", "+x"))],
            files={"tests/golden/mv2.txt": "mv2\n"},
            after={"tests/golden/mv2.txt": SAME, "src/mv2.txt": SAME}),
        Row("patch-move-allowed", "allowed",
            [("apply_patch", patch("*** Update File: src/mv3.txt",
                                   "*** Move to: src/mv3b.txt", "@@", "-mv3", "+x"))],
            files={"src/mv3.txt": "mv3\n"}, after={"src/mv3.txt": None, "src/mv3b.txt": "x\n"}),
        Row("exec-append-protected", "refused",
            [sh("echo x >> tests/golden/b1.txt")],
            files={"tests/golden/b1.txt": "b1\n"}, fixture="exec-command-protected"),
        Row("exec-append-allowed", "allowed",
            [sh("echo x >> src/b2.txt")],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"},
            fixture="exec-command-allowed"),
        Row("exec-mv-into-protected", "refused",
            [sh("mv src/m1.txt tests/golden/m1.txt")],
            files={"src/m1.txt": "m1\n"},
            after={"src/m1.txt": SAME, "tests/golden/m1.txt": SAME}),
        Row("exec-workdir-protected", "refused",
            [sh("echo x >> 002_data.sql", workdir="migrations")],
            files={"migrations/002_data.sql": "insert;\n"}, fixture="exec-command-workdir"),
        Row("exec-workdir-allowed", "allowed",
            [sh("echo x >> w1.txt", workdir="src")],
            files={"src/w1.txt": "w1\n"}, after={"src/w1.txt": "w1\nx\n"}),
        Row("exec-cd-apply-patch-heredoc", "refused",
            [sh("cd tests && apply_patch <<'EOF'\n" +
                patch("*** Update File: golden/h1.txt", "@@", "-h1", "+x") + "EOF\n")],
            files={"tests/golden/h1.txt": "h1\n"},
            fixture="exec-command-cd-apply-patch"),
        Row("exec-git-mv-protected", "refused",
            [sh("git mv tests/golden/g1.txt src/g1.txt")],
            files={"tests/golden/g1.txt": "g1\n"},
            after={"tests/golden/g1.txt": SAME, "src/g1.txt": SAME}),
    ]
    return out


class Codex:
    AGENT = "codex"
    PACKAGE = "@openai/codex"
    VERSION = VERSION
    BINARY = "codex"
    DIALECT = mock_openai
    PAYLOAD_HAS_ID = True

    CODEX_HOME = ".codex"

    def extra_env(self, home):
        return {"CODEX_HOME": os.path.join(home, self.CODEX_HOME)}

    def prepare(self, s, env, mode):
        codex_home = env["CODEX_HOME"]
        os.makedirs(codex_home, exist_ok=True)
        env["MOCK_API_KEY"] = "sk-mock"
        # A model provider of our own (Codex's config.toml), speaking the
        # Responses API at the mock. Hook installs may have written here too.
        with open(os.path.join(codex_home, "config.toml"), "a") as f:
            f.write('\nmodel = "gpt-5.5"\nmodel_provider = "mock"\n'
                    'check_for_update_on_startup = false\n'
                    '[model_providers.mock]\nname = "mock"\nbase_url = "%s/v1"\n'
                    'wire_api = "responses"\nenv_key = "MOCK_API_KEY"\n'
                    'request_max_retries = 0\nstream_max_retries = 0\n' % s.url)

    def command(self, s, env, prompt):
        # Codex's trust steps for automation, as its documentation gives
        # them: --trust saves the project's trust (project hooks load only in
        # a trusted project), and --dangerously-bypass-hook-trust runs the
        # enabled hooks without the interactive /hooks review "for one-off
        # automation that has verified the hook sources outside Codex".
        return [self.exe, "exec", "--trust", "--dangerously-bypass-hook-trust",
                "--dangerously-bypass-approvals-and-sandbox", "--color", "never", prompt]


@agentutil.add_row_tests
class CodexCLI(Codex, agentutil.AgentTest):
    ROWS = rows()




@agentutil.add_row_tests
class CodexHome(Codex, agentutil.AgentTest):
    """The user-level hook with CODEX_HOME set elsewhere, as Codex honours it."""

    CODEX_HOME = "codex-home"
    MODES = ("user",)
    ROWS = [
        Row("patch-add-protected", "refused",
            [("apply_patch", patch("*** Add File: tests/golden/n1.txt", "+x"))],
            after={"tests/golden/n1.txt": SAME}),
        Row("exec-append-allowed", "allowed",
            [sh("echo x >> src/b2.txt")],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"}),
    ]


if __name__ == "__main__":
    agentutil.main()
