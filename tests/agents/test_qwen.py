#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Qwen Code, the real CLI, against the Chat Completions mock: write_file,
edit, run_shell_command (with its directory), the monitor tool and a
subagent, on protected and unprotected paths, with ralon's hook at project
and at user level, with ralon missing and with a ralon that fails
silently. See agentutil.py for what a row checks."""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import agentutil  # noqa: E402
import mock_openai  # noqa: E402
from agentutil import SAME, Row  # noqa: E402

VERSION = "0.24.4"
ROOT = "@ROOT@"


def read(rel):
    """Qwen refuses to write or edit an existing file it has not read in
    the session: each such row reads it first."""
    return ("read_file", {"file_path": ROOT + "/" + rel})


def rows():
    out = [
        Row("write-protected", "refused",
            [read("tests/golden/w1.txt"),
             ("write_file", {"file_path": ROOT + "/tests/golden/w1.txt", "content": "x\n"})],
            files={"tests/golden/w1.txt": "w1\n"}, fixture="write-file-protected"),
        Row("write-allowed", "allowed",
            [("write_file", {"file_path": ROOT + "/src/w2.txt", "content": "x\n"})],
            after={"src/w2.txt": "x\n"}, fixture="write-file-allowed"),
        Row("write-new-protected", "refused",
            [("write_file", {"file_path": ROOT + "/migrations/002_new.sql", "content": "x\n"})],
            after={"migrations/002_new.sql": SAME}),
        Row("edit-protected", "refused",
            [read("src/auth.c"),
             ("edit", {"file_path": ROOT + "/src/auth.c", "old_string": "int auth;",
                       "new_string": "int auth = 1;"})],
            after={"src/auth.c": SAME}, fixture="edit-protected"),
        Row("edit-allowed", "allowed",
            [read("src/e2.c"),
             ("edit", {"file_path": ROOT + "/src/e2.c", "old_string": "e2",
                       "new_string": "changed"})],
            files={"src/e2.c": "e2\n"}, after={"src/e2.c": "changed\n"}),
        Row("shell-append-protected", "refused",
            [("run_shell_command", {"command": "echo x >> tests/golden/b1.txt",
                                    "is_background": False, "description": "append"})],
            files={"tests/golden/b1.txt": "b1\n"}, fixture="run-shell-command-protected"),
        Row("shell-append-allowed", "allowed",
            [("run_shell_command", {"command": "echo x >> src/b2.txt",
                                    "is_background": False, "description": "append"})],
            files={"src/b2.txt": "b2\n"}, after={"src/b2.txt": "b2\nx\n"}),
        Row("shell-mv-into-protected", "refused",
            [("run_shell_command", {"command": "mv src/m1.txt tests/golden/m1.txt",
                                    "is_background": False, "description": "mv"})],
            files={"src/m1.txt": "m1\n"},
            after={"src/m1.txt": SAME, "tests/golden/m1.txt": SAME}),
        Row("shell-mv-out-of-protected", "refused",
            [("run_shell_command", {"command": "mv tests/golden/m2.txt src/m2.txt",
                                    "is_background": False, "description": "mv"})],
            files={"tests/golden/m2.txt": "m2\n"},
            after={"tests/golden/m2.txt": SAME, "src/m2.txt": SAME}),
        Row("shell-directory-protected", "refused",
            [("run_shell_command", {"command": "echo x >> d1.txt", "is_background": False,
                                    "directory": ROOT + "/tests/golden",
                                    "description": "append"})],
            files={"tests/golden/d1.txt": "d1\n"},
            fixture="run-shell-command-directory"),
        Row("monitor-protected", "refused",
            [("monitor", {"command": "echo x >> tests/golden/mo1.txt", "description": "m",
                          "max_events": 1, "idle_timeout_ms": 1000})],
            files={"tests/golden/mo1.txt": "mo1\n"}),
        Row("subagent-write-protected", "refused",
            [("agent", {"description": "edit golden", "subagent_type": "general-purpose",
                        "prompt": "RALON-SUB-1: write the golden file."})],
            subs={"RALON-SUB-1": [
                read("tests/golden/s1.txt"),
                ("write_file", {"file_path": ROOT + "/tests/golden/s1.txt", "content": "x\n"})]},
            files={"tests/golden/s1.txt": "s1\n"}, reason_in="sub:RALON-SUB-1",
            fixture="subagent-write-file-protected"),
    ]
    for r in out:
        r.modes = ("project", "user", "missing", "crashed")
    return out


class Qwen:
    AGENT = "qwen"
    PACKAGE = "@qwen-code/qwen-code"
    VERSION = VERSION
    BINARY = "qwen"
    DIALECT = mock_openai
    PAYLOAD_HAS_ID = True
    MODES = ("project", "user", "missing", "crashed")

    def prepare(self, s, env, mode):
        env.update({"OPENAI_API_KEY": "sk-mock", "OPENAI_BASE_URL": s.url + "/v1",
                    "OPENAI_MODEL": "gpt-mock", "QWEN_CODE_NO_RELAUNCH": "true",
                    "QWEN_CODE_SUPPRESS_YOLO_WARNING": "1"})
        d = os.path.join(s.home, ".qwen")
        os.makedirs(d, exist_ok=True)
        def settings(doc):
            doc.setdefault("security", {})["auth"] = {"selectedType": "openai"}
            doc.setdefault("general", {}).update({"enableAutoUpdate": False})
            doc.setdefault("privacy", {})["usageStatisticsEnabled"] = False
            doc.setdefault("telemetry", {})["enabled"] = False
        agentutil.edit_json(os.path.join(d, "settings.json"), settings)

    def command(self, s, env, prompt):
        return [self.exe, prompt, "--approval-mode", "yolo", "-o", "json"]


@agentutil.add_row_tests
class QwenCode(Qwen, agentutil.AgentTest):
    ROWS = rows()


if __name__ == "__main__":
    agentutil.main()
