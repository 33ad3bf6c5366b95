#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Gemini CLI, the real CLI, against the Gemini API mock: write_file,
replace and run_shell_command (with dir_path) on protected and unprotected
paths, with ralon's hook at project and at user level, with ralon missing,
with a ralon that dies silently, and started with --skip-trust. See
agentutil.py for what a row checks."""

import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentutil  # noqa: E402
import mock_gemini  # noqa: E402
from agentutil import SAME, Row  # noqa: E402

VERSION = "0.61.0"
ROOT = "@ROOT@"



def rows():
    out = [
        Row("write-protected", "refused",
            [("write_file", {"file_path": ROOT + "/tests/golden/w1.txt", "content": "x\n"})],
            files={"tests/golden/w1.txt": "w1\n"}, fixture="write-file-protected"),
        Row("write-new-protected", "refused",
            [("write_file", {"file_path": ROOT + "/migrations/002_new.sql", "content": "x\n"})],
            after={"migrations/002_new.sql": SAME}),
        Row("write-allowed", "allowed",
            [("write_file", {"file_path": ROOT + "/src/w2.txt", "content": "x\n"})],
            after={"src/w2.txt": "x\n"}, fixture="write-file-allowed"),
        Row("write-relative-protected", "refused",
            [("write_file", {"file_path": "tests/golden/w3.txt", "content": "x\n"})],
            files={"tests/golden/w3.txt": "w3\n"}, fixture="write-file-relative"),
        Row("replace-protected", "refused",
            [("replace", {"file_path": ROOT + "/src/auth.c", "old_string": "int auth;",
                          "new_string": "int auth = 1;", "instruction": "change auth"})],
            after={"src/auth.c": SAME}, fixture="replace-protected"),
        Row("replace-allowed", "allowed",
            [("replace", {"file_path": ROOT + "/src/r2.c", "old_string": "r2",
                          "new_string": "changed", "instruction": "change r2"})],
            files={"src/r2.c": "r2\n"}, after={"src/r2.c": "changed\n"}),
        Row("shell-append-protected", "refused",
            [("run_shell_command", {"command": "echo x >> tests/golden/b1.txt",
                                    "description": "append"})],
            files={"tests/golden/b1.txt": "b1\n"}, fixture="run-shell-command-protected"),
        Row("shell-append-allowed", "allowed",
            [("run_shell_command", {"command": "echo x >> src/b2.txt", "description": "append"})],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"}),
        Row("shell-dir-path-protected", "refused",
            [("run_shell_command", {"command": "rm -f 002_data.sql", "dir_path": "migrations",
                                    "description": "rm"})],
            files={"migrations/002_data.sql": "insert;\n"}, fixture="run-shell-command-dir-path"),
        Row("shell-mv-into-protected", "refused",
            [("run_shell_command", {"command": "mv src/m1.txt tests/golden/m1.txt",
                                    "description": "mv"})],
            files={"src/m1.txt": "m1\n"},
            after={"src/m1.txt": SAME, "tests/golden/m1.txt": SAME}),
        Row("shell-mv-out-of-protected", "refused",
            [("run_shell_command", {"command": "mv tests/golden/m2.txt src/m2.txt",
                                    "description": "mv"})],
            files={"tests/golden/m2.txt": "m2\n"},
            after={"tests/golden/m2.txt": SAME, "src/m2.txt": SAME}),
        Row("shell-git-rm-protected", "refused",
            [("run_shell_command", {"command": "git rm -q tests/golden/g1.txt",
                                    "description": "git rm"})],
            files={"tests/golden/g1.txt": "g1\n"}),
    ]
    for r in out:
        r.modes = ("project", "user", "missing", "crashed")
    return out


class Gemini:
    AGENT = "gemini"
    PACKAGE = "@google/gemini-cli"
    VERSION = VERSION
    BINARY = "gemini"
    DIALECT = mock_gemini
    MODES = ("project", "user", "missing", "crashed")
    TRUST = True
    SKIP_TRUST = False

    def prepare(self, s, env, mode):
        env["GEMINI_API_KEY"] = "mock"
        env["GOOGLE_GEMINI_BASE_URL"] = s.url
        # One node process instead of a relaunch with a larger heap: the
        # start takes half as long.
        env["GEMINI_CLI_NO_RELAUNCH"] = "true"
        d = os.path.join(s.home, ".gemini")
        os.makedirs(d, exist_ok=True)
        # The user settings: API-key auth, no update checks or statistics,
        # merged into what a user-level hook install wrote there.
        def settings(doc):
            doc.setdefault("security", {})["auth"] = {"selectedType": "gemini-api-key"}
            doc.setdefault("general", {}).update({"enableAutoUpdate": False,
                                                  "enableAutoUpdateNotification": False})
            doc.setdefault("privacy", {})["usageStatisticsEnabled"] = False
            doc.setdefault("telemetry", {})["enabled"] = False
        agentutil.edit_json(os.path.join(d, "settings.json"), settings)
        if self.TRUST:
            # Gemini CLI's trust step ("Trust folder" in its dialog, /permissions),
            # kept in ~/.gemini/trustedFolders.json.
            with open(os.path.join(d, "trustedFolders.json"), "w") as f:
                json.dump({s.root: "TRUST_FOLDER"}, f)

    def command(self, s, env, prompt):
        argv = [self.exe, "-p", prompt, "-m", "gemini-2.5-pro", "--approval-mode", "yolo",
                "-o", "json"]
        if self.SKIP_TRUST:
            argv.append("--skip-trust")
        return argv


@agentutil.add_row_tests
class GeminiCLI(Gemini, agentutil.AgentTest):
    ROWS = rows()


SKIP_TRUST_XFAIL = ("issue 30: with --skip-trust (which Gemini's own error message "
                    "recommends) Gemini skips the project's settings: the hook is silently off")


@agentutil.add_row_tests
class GeminiSkipTrust(Gemini, agentutil.AgentTest):
    """Started with --skip-trust in a folder never trusted."""

    TRUST = False
    SKIP_TRUST = True
    MODES = ("project", "user")
    ROWS = [
        Row("write-protected", "refused",
            [("write_file", {"file_path": ROOT + "/tests/golden/w1.txt", "content": "x\n"})],
            files={"tests/golden/w1.txt": "w1\n"}, xfail={"project": SKIP_TRUST_XFAIL}),
        Row("write-allowed", "allowed",
            [("write_file", {"file_path": ROOT + "/src/w2.txt", "content": "x\n"})],
            after={"src/w2.txt": "x\n"}),
    ]


if __name__ == "__main__":
    agentutil.main()
