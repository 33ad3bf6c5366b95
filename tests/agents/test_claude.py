#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Claude Code, the real CLI, against the Anthropic Messages API mock: its
Write, Edit and Bash tools and a subagent on protected and unprotected
paths, with ralon's hook at project and at user level and with ralon
missing. See agentutil.py for what a row checks."""

import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentutil  # noqa: E402
import mock_anthropic  # noqa: E402
from agentutil import SAME, Row  # noqa: E402

# The newest 2.1 release on the registry when this was written.
VERSION = "2.1.332"

ROOT = "@ROOT@"   # replaced by the project's absolute path




def rows():
    out = [
        Row("write-protected", "refused",
            [("Write", {"file_path": ROOT + "/tests/golden/w1.txt", "content": "x\n"})],
            files={"tests/golden/w1.txt": "w1\n"}, fixture="write-protected"),
        Row("write-new-protected", "refused",
            [("Write", {"file_path": ROOT + "/migrations/002_new.sql", "content": "x\n"})],
            after={"migrations/002_new.sql": SAME}),
        Row("write-allowed", "allowed",
            [("Write", {"file_path": ROOT + "/src/w2.txt", "content": "x\n"})],
            after={"src/w2.txt": "x\n"}, fixture="write-allowed"),
        Row("write-relative-protected", "refused",
            [("Write", {"file_path": "tests/golden/w3.txt", "content": "x\n"})],
            files={"tests/golden/w3.txt": "w3\n"}),
        Row("edit-protected", "refused",
            [("Edit", {"file_path": ROOT + "/src/auth.c", "old_string": "int auth;",
                       "new_string": "int auth = 1;"})],
            after={"src/auth.c": SAME}, fixture="edit-protected"),
        Row("edit-allowed", "allowed",
            [("Edit", {"file_path": ROOT + "/src/e2.c", "old_string": "e2",
                       "new_string": "changed"})],
            files={"src/e2.c": "e2\n"}, after={"src/e2.c": "changed\n"}),
        Row("bash-append-protected", "refused",
            [("Bash", {"command": "echo x >> tests/golden/b1.txt", "description": "append"})],
            files={"tests/golden/b1.txt": "b1\n"}, fixture="bash-protected"),
        Row("bash-append-allowed", "allowed",
            [("Bash", {"command": "echo x >> src/b2.txt", "description": "append"})],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"},
            fixture="bash-allowed"),
        Row("bash-cd-rm-protected", "refused",
            [("Bash", {"command": "cd migrations && rm -f 001_init.sql", "description": "rm"})],
            files={"migrations/001_init.sql": "create table t;\n"}),
        Row("bash-mv-into-protected", "refused",
            [("Bash", {"command": "mv src/m1.txt tests/golden/m1.txt", "description": "mv"})],
            files={"src/m1.txt": "m1\n"}, after={"src/m1.txt": SAME, "tests/golden/m1.txt": SAME}),
        Row("bash-mv-out-of-protected", "refused",
            [("Bash", {"command": "mv tests/golden/m2.txt src/m2.txt", "description": "mv"})],
            files={"tests/golden/m2.txt": "m2\n"},
            after={"tests/golden/m2.txt": SAME, "src/m2.txt": SAME}),
        Row("bash-mv-allowed", "allowed",
            [("Bash", {"command": "mv src/m3.txt src/m3b.txt", "description": "mv"})],
            files={"src/m3.txt": "m3\n"}, after={"src/m3.txt": None, "src/m3b.txt": "m3\n"}),
        Row("bash-git-rm-protected", "refused",
            [("Bash", {"command": "git rm -q tests/golden/g1.txt", "description": "git rm"})],
            files={"tests/golden/g1.txt": "g1\n"}),
        Row("bash-pwd-redirect-protected", "refused",
            [("Bash", {"command": 'echo x > "$PWD/tests/golden/p1.txt"',
                       "description": "pwd"})],
            files={"tests/golden/p1.txt": "p1\n"}),
        Row("bash-variable-protected", "refused",
            [("Bash", {"command": 'f=tests/golden/v1.txt; echo x > "$f"',
                       "description": "var"})],
            files={"tests/golden/v1.txt": "v1\n"}),
        # A subagent's own tool calls go through the same hook.
        Row("subagent-write-protected", "refused",
            [("Agent", {"description": "edit golden", "subagent_type": "general-purpose",
                        "prompt": "RALON-SUB-1: write the golden file."})],
            subs={"RALON-SUB-1": [
                ("Write", {"file_path": ROOT + "/tests/golden/s1.txt", "content": "x\n"})]},
            files={"tests/golden/s1.txt": "s1\n"}, reason_in="sub:RALON-SUB-1",
            fixture="subagent-write-protected"),
        Row("subagent-write-allowed", "allowed",
            [("Agent", {"description": "edit src", "subagent_type": "general-purpose",
                        "prompt": "RALON-SUB-2: write a source file."})],
            subs={"RALON-SUB-2": [
                ("Write", {"file_path": ROOT + "/src/s2.txt", "content": "x\n"})]},
            after={"src/s2.txt": "x\n"}, reason_in="sub:RALON-SUB-2"),
        # The shell's working directory carries over between Bash calls:
        # last, since it changes where later relative paths land.
        Row("bash-cwd-protected", "refused",
            [("Bash", {"command": "cd tests", "description": "cd"}),
             ("Bash", {"command": "echo x >> golden/c1.txt", "description": "append"})],
            files={"tests/golden/c1.txt": "c1\n"}, fixture="bash-cwd-protected"),
        Row("bash-cwd-allowed", "allowed",
            [("Bash", {"command": "echo x >> c2.txt", "description": "append"})],
            files={"tests/c2.txt": "c2\n"}, after={"tests/c2.txt": "c2\nx\n"}),
    ]
    return out


class Claude:
    """Claude Code's installation, endpoint and command line."""

    AGENT = "claude"
    PACKAGE = "@anthropic-ai/claude-code"
    VERSION = VERSION
    BINARY = "claude"
    DIALECT = mock_anthropic
    PAYLOAD_HAS_ID = True

    def prepare(self, s, env, mode):
        env.update({
            "ANTHROPIC_BASE_URL": s.url,
            "ANTHROPIC_API_KEY": "sk-ant-mock",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
            # bypassPermissions is refused as root outside a sandbox; the
            # hook runs before any permission check either way.
            "IS_SANDBOX": "1",
        })

    def command(self, s, env, prompt):
        # -p skips the workspace trust dialog (Claude Code's documentation:
        # trust verification is disabled in non-interactive mode).
        return [self.exe, "-p", prompt, "--output-format", "json",
                "--permission-mode", "bypassPermissions"]


@agentutil.add_row_tests
class ClaudeCode(Claude, agentutil.AgentTest):
    ROWS = rows()


class ClaudeCodeRefusal(Claude, agentutil.AgentTest):
    """How a refusal reaches the model: as a denial, not as a failed hook."""

    MODES = ("project",)
    ROWS = [r for r in rows() if r.name == "write-protected"]

    @unittest.expectedFailure
    def test_project__refusal_is_no_hook_error(self):
        """expected failure: issue 30: exit 2 makes Claude Code 2.1.332 log every
        refusal as a hook failure; exit 0 with permissionDecision "deny"
        gives the model the same reason without it"""
        s = self.session("project")
        text = s.results.get(s.ids["write-protected"][0]) or ""
        self.assertIn(agentutil.REASON, text)
        self.assertNotIn("hook error", text)


@agentutil.add_row_tests
class ClaudeCodeSubdirectory(Claude, agentutil.AgentTest):
    """Claude Code started in a subdirectory of the project."""

    START_DIR = "src"
    MODES = ("project", "user")
    ROWS = [
        Row("write-protected", "refused",
            [("Write", {"file_path": ROOT + "/tests/golden/w1.txt", "content": "x\n"})],
            files={"tests/golden/w1.txt": "w1\n"},
            xfail={"project": "issue 30: Claude Code started in a subdirectory does not "
                              "read the root's .claude/settings.json (silently off)"}),
        Row("write-allowed", "allowed",
            [("Write", {"file_path": ROOT + "/src/w2.txt", "content": "x\n"})],
            after={"src/w2.txt": "x\n"},
            xfail={"project:report": "issue 30: Claude Code started in a subdirectory does not "
                              "read the root's .claude/settings.json (silently off)"}),
    ]


if __name__ == "__main__":
    agentutil.main()
