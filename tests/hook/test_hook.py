#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`ralon hook check` against every agent's payloads, through the real binary.

Each fixture under fixtures/<agent>/ is a raw payload as that agent writes it
on the hook's stdin (docs/ARCHITECTURE.md §5 and ralon(1); a few are not JSON on
purpose). `@ROOT@` stands for the temporary project and `@OUT@` for a
directory outside any project. The table CASES says, for each fixture, which
dialect must answer, whether the call is allowed, and which protected paths
(with their patterns) the refusal must name; the exact stdout, stderr and exit
status each dialect needs are in `expected_answer`.

The binary is $RALON_BINARY, else build/src/ralon in the source tree. Python 3
standard library only. Run: RALON_BINARY=… python3 tests/hook/test_hook.py -v
"""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import unittest

from hookutil import Result, clean_env

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
RALON = os.environ.get("RALON_BINARY") or os.path.normpath(
    os.path.join(HERE, "..", "..", "build", "src", "ralon"))

POLICY = ("version: 1\n"
          "protect: [tests/golden/**, Cargo.lock, .github/workflows, migrations/**]\n")
# A flow sequence that is never closed: a YAML error.
BAD_POLICY = "version: 1\nprotect: [tests/golden/**, Cargo.lock\n"

GOLDEN = "tests/golden/**"
CARGO = "Cargo.lock"
WORKFLOWS = ".github/workflows"
MIGRATIONS = "migrations/**"
LOCK = "agent.lock"  # the implicit pattern zero

HOOK_MAX_PAYLOAD = 4 * 1024 * 1024

# ---- what ralon says ---------------------------------------------------------
# The wording of the reasons, in one place.

PROTECTED_ONE = "`{shown}` is protected by agent.lock (pattern `{pattern}`, {policy})"
PROTECTED_MANY = "{n} paths in this call are protected by agent.lock:"
PROTECTED_ITEM = "{sep} `{shown}` (pattern `{pattern}`, {policy})"
PROTECTED_TAIL = (": this call was refused and changed nothing. Edit other files, or ask "
                  "the user to change agent.lock; you cannot, and renaming, copying over "
                  "or writing it from the shell is refused too.")
NOT_UNDERSTOOD = ("this hook call could not be understood ({}), so it was refused and "
                  "changed nothing. If it keeps happening, ralon does not know this "
                  "agent's hook format: tell the user.")
UNKNOWN_TARGET = ("which file this `{}` call changes could not be found, so it was refused "
                  "and changed nothing. Name the file explicitly.")
UNREAD = ("which files this command changes is known only when it runs (names xargs reads, "
          "files find finds, words the shell expands), so they may be any below `{shown}`, "
          "where agent.lock protects paths (pattern `{pattern}`, {policy}): this call was "
          "refused and changed nothing. Name the files explicitly, leaving out the protected "
          "ones.")
TOO_LARGE = ("this call is too large for ralon to check in the time an agent gives its hook "
             "(too much shell to read, or too many paths), so it was refused and changed "
             "nothing. Split it into smaller calls, and write long content with the edit tool "
             "rather than through the shell.")
POLICY_ERROR = ("this call cannot be checked against agent.lock ({}), so it was refused "
                "and changed nothing. Tell the user.")


def protected_reason(hits, policy):
    """The reason naming every protected path, in the order of the call."""
    if len(hits) == 1:
        shown, pattern = hits[0]
        text = PROTECTED_ONE.format(shown=shown, pattern=pattern, policy=policy)
    else:
        text = PROTECTED_MANY.format(n=len(hits)) + "".join(
            PROTECTED_ITEM.format(sep="," if i else "", shown=s, pattern=p, policy=policy)
            for i, (s, p) in enumerate(hits))
    return text + PROTECTED_TAIL


def not_understood(what):
    return NOT_UNDERSTOOD.format(what)


def not_understood_re(what_re):
    """NOT_UNDERSTOOD with a regular expression for the part in brackets."""
    head, tail = NOT_UNDERSTOOD.split("{}")
    return re.compile(re.escape(head) + what_re + re.escape(tail))


# Refused for a reason not pinned word for word (where ralon is wrong today
# and the fix will choose the words): a non-empty paragraph saying so.
ANY_REFUSAL = re.compile(r"(?s).*\brefused\b.*")

# ---- dialects ----------------------------------------------------------------
# How each agent wants to hear a refusal and a consent (docs/ARCHITECTURE.md §5).


def expected_answer(dialect, reason):
    """(stdout JSON object or None for empty, stderr, exit status); reason
    None means the call is allowed."""
    line = "ralon: %s\n" % reason if reason is not None else ""
    if dialect in ("claude", "qwen"):
        if reason is None:
            return None, "", 0
        return ({"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                        "permissionDecision": "deny",
                                        "permissionDecisionReason": reason}}, line, 2)
    if dialect in ("codex", "windsurf", "opencode", "generic"):
        # Codex: exit 2 with a reason on stderr and NOTHING on stdout (its
        # output schema rejects unknown keys, and then the tool runs).
        return (None, line, 2) if reason is not None else (None, "", 0)
    if dialect == "gemini":
        if reason is None:
            return None, "", 0
        return {"decision": "deny", "reason": reason}, "", 0
    if dialect == "copilot":
        if reason is None:
            return None, "", 0
        return {"permissionDecision": "deny", "permissionDecisionReason": reason}, "", 0
    if dialect == "cursor":
        # With failClosed the IDE takes an empty answer for a refusal.
        if reason is None:
            return {"permission": "allow"}, "", 0
        return ({"permission": "deny", "user_message": "ralon: " + reason,
                 "agent_message": reason}, "", 0)
    if dialect == "cline":
        # Cline reads stdout only and ignores the exit status.
        if reason is None:
            return {"cancel": False}, "", 0
        return {"cancel": True, "errorMessage": reason}, "", 0
    if dialect == "antigravity":
        if reason is None:
            return None, "", 0
        return {"decision": "deny", "reason": reason}, line, 2
    raise AssertionError("unknown dialect " + dialect)


def reason_given(dialect, out, err):
    """The reason as the answer carries it, to compare against a pattern."""
    if dialect == "gemini" or dialect == "antigravity":
        return json.loads(out)["reason"] if out else None
    if dialect == "copilot":
        return json.loads(out)["permissionDecisionReason"] if out else None
    if dialect == "cursor":
        return json.loads(out).get("agent_message") if out else None
    if dialect == "cline":
        return json.loads(out).get("errorMessage") if out else None
    if err.startswith("ralon: ") and err.endswith("\n"):
        return err[len("ralon: "):-1]
    return None


# ---- the table -----------------------------------------------------------------


class Case:
    """One run of one fixture.

    dialect  who must answer (usually the fixture's agent)
    deny     list of (shown, pattern) the refusal must name, in order;
             None: allowed; a str or regex: refused for that reason;
             an Unread: refused for names xargs reads below `shown`
    args     extra arguments to `ralon hook check` (@ROOT@, @OUT@ replaced)
    cwd      "root", "out" or "root/src": where ralon runs
    """

    def __init__(self, agent, fixture, dialect=None, deny=None, args=(), cwd="root",
                 name=None, note=None):
        self.agent = agent
        self.fixture = fixture
        self.dialect = dialect or agent
        self.deny = deny
        self.args = list(args)
        self.cwd = cwd
        self.name = name or "%s_%s" % (agent, fixture)
        self.note = note

    @property
    def path(self):
        return os.path.join(FIXTURES, self.agent, self.fixture + ".json")

    @property
    def hits(self):
        return self.deny if isinstance(self.deny, list) else None


class Unread(tuple):
    """(shown, pattern): the directory below which xargs' names may go."""


def allow(agent, fixture, **kw):
    return Case(agent, fixture, deny=None, **kw)


def deny(agent, fixture, *hits, **kw):
    assert hits
    return Case(agent, fixture, deny=list(hits), **kw)


def unread(agent, fixture, hit, **kw):
    return Case(agent, fixture, deny=Unread(hit), **kw)


def refuse(agent, fixture, reason, **kw):
    return Case(agent, fixture, deny=reason, **kw)


A_TXT = ("tests/golden/a.txt", GOLDEN)
CARGO_LOCK = ("Cargo.lock", CARGO)
CI_YML = (".github/workflows/ci.yml", WORKFLOWS)

CASES = [
    # ---- Claude Code -------------------------------------------------------
    deny("claude", "write_abs", A_TXT),
    # Relative to the payload's cwd, wherever the hook process runs.
    deny("claude", "write_rel", ("tests/golden/new.txt", GOLDEN), cwd="out"),
    allow("claude", "write_allowed"),
    allow("claude", "write_outside"),
    deny("claude", "write_policy", ("agent.lock", LOCK)),
    deny("claude", "write_dotdot", CARGO_LOCK),
    deny("claude", "write_dotdot_rel", CARGO_LOCK),
    deny("claude", "write_symlink", ("src/link", GOLDEN)),
    deny("claude", "write_dangling_symlink", ("src/newlink", GOLDEN), cwd="out"),
    deny("claude", "edit_abs", CI_YML),
    allow("claude", "edit_allowed"),
    deny("claude", "multiedit", CARGO_LOCK),
    deny("claude", "notebookedit", ("tests/golden/nb.ipynb", GOLDEN)),
    allow("claude", "notebookedit_allowed"),
    refuse("claude", "write_no_path", UNKNOWN_TARGET.format("Write")),
    refuse("claude", "write_input_number", NOT_UNDERSTOOD.format("`tool_input` is not an object")),
    # A list where a string belongs: its paths are checked like any others.
    allow("claude", "write_path_list"),
    allow("claude", "read"),
    allow("claude", "grep"),
    allow("claude", "glob"),
    allow("claude", "todowrite"),
    deny("claude", "mcp_write", CARGO_LOCK),
    allow("claude", "mcp_harmless"),
    deny("claude", "bash_redirect", A_TXT),
    deny("claude", "bash_append", CARGO_LOCK),
    deny("claude", "bash_rm", CARGO_LOCK),
    deny("claude", "bash_rm_rf_ancestor", ("tests/", GOLDEN)),
    deny("claude", "bash_rm_rf_glob", ("tests/*", GOLDEN)),
    deny("claude", "bash_mv_onto", ("tests/golden/main.c", GOLDEN)),
    deny("claude", "bash_mv_from", A_TXT),
    deny("claude", "bash_cp_onto", CARGO_LOCK),
    allow("claude", "bash_cp_from"),
    deny("claude", "bash_sed_i", A_TXT),
    allow("claude", "bash_sed_print"),
    deny("claude", "bash_tee", CI_YML),
    deny("claude", "bash_truncate", CARGO_LOCK),
    deny("claude", "bash_cd_rm", A_TXT),
    # A glob is decided against the patterns as written, never expanded:
    # a hook does not list directories.
    deny("claude", "bash_glob", ("tests/golden/*", GOLDEN)),
    deny("claude", "bash_symlink", ("src/link", GOLDEN)),
    deny("claude", "bash_dotdot", CARGO_LOCK),
    deny("claude", "bash_several", CARGO_LOCK, A_TXT),
    deny("claude", "bash_redirect_heredoc", CARGO_LOCK),
    # `cat <<'EOF' > file`: the redirection follows the heredoc operator.
    deny("claude", "bash_heredoc_then_redirect", CARGO_LOCK),
    deny("claude", "bash_sh_c", CARGO_LOCK, note="the script given to bash -c"),
    # Into a directory: the file written there, DIR/basename(SRC).
    deny("claude", "bash_mv_into_dir", ("tests/golden/main.c", GOLDEN)),
    deny("claude", "bash_cp_into_dir", ("tests/golden/main.c", GOLDEN)),
    allow("claude", "bash_ls"),
    allow("claude", "bash_cat"),
    allow("claude", "bash_echo_src"),
    allow("claude", "bash_outside"),
    refuse("claude", "bash_no_command", UNKNOWN_TARGET.format("Bash")),
    # cp/install/ln/rsync/mv -t into a directory write DIR/basename(SRC)
    # (a tree with -r), whether DIR ends in `/`, exists or is given by -t.
    deny("claude", "bash_cp_into_dot", CARGO_LOCK),
    deny("claude", "bash_cp_target_dir", CARGO_LOCK),
    deny("claude", "bash_cp_r_into_dir", ("tests/golden", GOLDEN)),
    deny("claude", "bash_cd_cp_r_into_dot", ("tests/golden", GOLDEN),
         note="`.` after `cd tests` is a directory"),
    deny("claude", "bash_ln_into_dir", (".github/workflows", WORKFLOWS)),
    deny("claude", "bash_ln_one_operand", CARGO_LOCK, note="ln TARGET links ./basename"),
    deny("claude", "bash_install_into_dir", CARGO_LOCK),
    deny("claude", "bash_rsync_into_dir", ("tests/golden", GOLDEN)),
    deny("claude", "bash_mv_target_dir_file", CARGO_LOCK),
    allow("claude", "bash_cp_into_src_dir"),
    allow("claude", "bash_cp_r_into_src_dir"),
    allow("claude", "bash_mv_target_dir_src"),
    # Into a directory above the root: the file lands there, the root's
    # parent is not moved.
    allow("claude", "bash_mv_into_parent"),
    # >&WORD is bash's &>WORD unless WORD is a descriptor (N, -, N-).
    deny("claude", "bash_dup_redirect_file", CARGO_LOCK),
    deny("claude", "bash_dup_redirect_file_space", CARGO_LOCK),
    allow("claude", "bash_dup_redirect_fd"),
    # Reserved words and wrappers (with their options) before the command.
    deny("claude", "bash_if_then", CARGO_LOCK),
    allow("claude", "bash_if_then_allowed"),
    deny("claude", "bash_for_do", CARGO_LOCK),
    deny("claude", "bash_brace_group", CARGO_LOCK),
    deny("claude", "bash_bang", CARGO_LOCK),
    deny("claude", "bash_env_i", CARGO_LOCK),
    deny("claude", "bash_env_chdir", ("tests/golden", GOLDEN), note="env -C DIR runs it in DIR"),
    deny("claude", "bash_sudo_u", CARGO_LOCK),
    deny("claude", "bash_nice_n", CARGO_LOCK),
    deny("claude", "bash_command_p", CARGO_LOCK),
    allow("claude", "bash_command_v"),
    deny("claude", "bash_timeout", CARGO_LOCK),
    deny("claude", "bash_stdbuf", CARGO_LOCK),
    deny("claude", "bash_setsid", CARGO_LOCK),
    deny("claude", "bash_flock", CARGO_LOCK),
    deny("claude", "bash_flock_c", CARGO_LOCK),
    deny("claude", "bash_ionice", CARGO_LOCK),
    deny("claude", "bash_chrt", CARGO_LOCK),
    # xargs CMD: the files it names come from stdin, anything below where it
    # runs; refused when something protected is there, saying so. What the
    # command names itself is named alone.
    unread("claude", "bash_xargs", ("./", LOCK)),
    deny("claude", "bash_xargs_replace", ("tests/golden", GOLDEN)),
    deny("claude", "bash_xargs_named", CARGO_LOCK),
    deny("claude", "bash_xargs_dest_file", CARGO_LOCK),
    allow("claude", "bash_xargs_subdir", note="nothing protected below src/"),
    allow("claude", "bash_xargs_reads"),
    # find: what -delete removes and -exec's command is given lie below the
    # start points, as the arguments of a script it runs; reading is no write.
    unread("claude", "bash_find_delete", ("tests/", GOLDEN)),
    unread("claude", "bash_find_exec_script", ("./", LOCK)),
    allow("claude", "bash_find_exec_reads"),
    deny("claude", "bash_eval", CARGO_LOCK),
    deny("claude", "bash_pushd", ("tests/golden", GOLDEN)),
    allow("claude", "bash_pushd_popd"),
    deny("claude", "bash_backquote", CARGO_LOCK),
    deny("claude", "bash_quoted_subst", CARGO_LOCK),
    deny("claude", "bash_subshell_cd", CARGO_LOCK, note="a subshell's cd ends with it"),
    # << in $(( )) and (( )) is a shift; a heredoc that never ends hides nothing.
    deny("claude", "bash_arith_shift", CARGO_LOCK),
    deny("claude", "bash_arith_command", CARGO_LOCK),
    deny("claude", "bash_heredoc_unterminated", CARGO_LOCK,
         note="its lines are read as commands rather than trusted"),
    allow("claude", "bash_heredoc_body_allowed"),
    # -R makes chmod/chown/chgrp change a tree; chmod's -r is a mode.
    deny("claude", "bash_chmod_recursive", ("tests/", GOLDEN)),
    deny("claude", "bash_chown_recursive", (".github/", WORKFLOWS)),
    deny("claude", "bash_chgrp_recursive", ("tests/", GOLDEN)),
    allow("claude", "bash_chmod_mode_r"),
    deny("claude", "bash_chmod_mode_r_file", CARGO_LOCK),
    # $'…' (C escapes) and $"…" are quotes.
    deny("claude", "bash_ansi_c_quote", CARGO_LOCK),
    deny("claude", "bash_locale_quote", CARGO_LOCK),
    deny("claude", "powershell", CARGO_LOCK),
    # Fields real payloads carry (prompt_id, effort, agent_id, agent_type,
    # transcript_path, permission_mode): recognition and decisions as ever.
    deny("claude", "write_real_fields", A_TXT),
    allow("claude", "write_real_fields_allowed"),
    deny("claude", "bash_subagent", CARGO_LOCK),
    allow("claude", "edit_subagent_plan_allowed"),

    # ---- Qwen Code ---------------------------------------------------------
    deny("qwen", "write_file", A_TXT),
    allow("qwen", "write_file_allowed"),
    deny("qwen", "edit_rel", CARGO_LOCK, cwd="out"),
    deny("qwen", "run_shell_command", (".github/workflows", WORKFLOWS)),
    allow("qwen", "run_shell_command_allowed"),
    allow("qwen", "read_file"),
    refuse("qwen", "write_file_no_path", UNKNOWN_TARGET.format("write_file")),
    # The shell tools run their command in `directory` (absolute or
    # relative to cwd); monitor starts one in the background.
    deny("qwen", "run_shell_command_directory", A_TXT),
    deny("qwen", "run_shell_command_directory_rel", A_TXT, cwd="out"),
    allow("qwen", "run_shell_command_directory_allowed"),
    deny("qwen", "monitor", A_TXT),
    deny("qwen", "monitor_no_directory", CARGO_LOCK),
    allow("qwen", "monitor_allowed"),
    deny("qwen", "write_file_real_fields", A_TXT),
    allow("qwen", "write_file_real_fields_allowed"),

    # ---- Gemini CLI ----------------------------------------------------------
    deny("gemini", "write_file_abs", A_TXT),
    deny("gemini", "write_file_rel", CARGO_LOCK, cwd="out"),
    allow("gemini", "write_file_allowed"),
    deny("gemini", "replace_abs", CI_YML),
    # replace "corrects" a relative path that does not exist to a workspace
    # file ending with it: tests/golden/a.txt could be meant.
    deny("gemini", "replace_corrected", (".../golden/a.txt", GOLDEN)),
    deny("gemini", "replace_corrected_basename", (".../a.txt", GOLDEN)),
    allow("gemini", "replace_rel_existing"),
    deny("gemini", "replace_symlink", ("src/link", GOLDEN)),
    deny("gemini", "run_shell_command", CARGO_LOCK),
    deny("gemini", "run_shell_command_dir_path", A_TXT),
    deny("gemini", "run_shell_command_dir_path_abs", A_TXT),
    allow("gemini", "run_shell_command_allowed"),
    allow("gemini", "read_file"),
    refuse("gemini", "replace_no_path", UNKNOWN_TARGET.format("replace")),
    deny("gemini", "write_file_real_fields", CARGO_LOCK),

    # ---- OpenAI Codex CLI ------------------------------------------------------
    deny("codex", "apply_patch_several", A_TXT, CARGO_LOCK),
    allow("codex", "apply_patch_allowed"),
    deny("codex", "apply_patch_move_to", ("tests/golden/main.c", GOLDEN)),
    deny("codex", "apply_patch_move_from", A_TXT),
    deny("codex", "apply_patch_whitespace", CARGO_LOCK, CI_YML),
    deny("codex", "apply_patch_crlf_payload", ("tests/golden/crlf.txt", GOLDEN)),
    deny("codex", "apply_patch_abs", CI_YML),
    deny("codex", "apply_patch_subdir_cwd", CARGO_LOCK),
    deny("codex", "apply_patch_symlink", ("src/newlink", GOLDEN)),
    refuse("codex", "apply_patch_empty", UNKNOWN_TARGET.format("apply_patch")),
    deny("codex", "bash_heredoc", A_TXT),
    allow("codex", "bash_heredoc_allowed"),
    deny("codex", "bash_heredoc_append", A_TXT),
    deny("codex", "bash_rm", (".github/", WORKFLOWS)),
    allow("codex", "bash_allowed"),
    # A heredoc's envelope is applied where the command runs, after a `cd`.
    deny("codex", "bash_cd_apply_patch", A_TXT),
    deny("codex", "bash_cd_apply_patch_semicolon", A_TXT),
    deny("codex", "bash_subshell_cd_apply_patch", A_TXT),
    allow("codex", "bash_cd_apply_patch_allowed", note="src/tests/golden/a.txt"),
    deny("codex", "apply_patch_real_fields", CARGO_LOCK),

    # ---- GitHub Copilot ----------------------------------------------------------
    deny("copilot", "create_object", ("tests/golden/b.txt", GOLDEN)),
    deny("copilot", "create_string", CARGO_LOCK),
    allow("copilot", "create_allowed"),
    deny("copilot", "edit_object", CI_YML),
    deny("copilot", "edit_string_rel", A_TXT, cwd="out"),
    allow("copilot", "str_replace_editor_view"),
    deny("copilot", "str_replace_editor_str_replace", CARGO_LOCK),
    deny("copilot", "str_replace_editor_create_string", ("tests/golden/c.txt", GOLDEN)),
    deny("copilot", "apply_patch_raw", CARGO_LOCK),
    deny("copilot", "apply_patch_string", A_TXT),
    allow("copilot", "apply_patch_allowed"),
    deny("copilot", "bash_object", ("tests/", GOLDEN)),
    deny("copilot", "bash_string", CARGO_LOCK),
    allow("copilot", "bash_allowed"),
    allow("copilot", "view"),
    refuse("copilot", "create_no_path", UNKNOWN_TARGET.format("create")),
    # PascalCase PreToolUse: Copilot sends Claude's shape; any exit 2 denies.
    deny("copilot", "pascal_edit", A_TXT, dialect="claude"),
    deny("copilot", "pascal_bash", CARGO_LOCK, dialect="claude"),
    # GPT-5-class models: the freeform apply_patch arrives as an Edit whose
    # tool_input is the patch itself.
    deny("copilot", "gpt5_edit_patch", A_TXT, dialect="claude"),
    deny("copilot", "gpt5_edit_patch_abs", CARGO_LOCK, dialect="claude"),
    allow("copilot", "gpt5_edit_patch_allowed", dialect="claude"),
    refuse("copilot", "gpt5_edit_patch_empty", UNKNOWN_TARGET.format("Edit"), dialect="claude"),
    refuse("copilot", "gpt5_edit_not_patch", NOT_UNDERSTOOD.format("`tool_input` is not an object"),
           dialect="claude"),
    deny("copilot", "gpt5_edit_patch_camel", A_TXT),
    allow("copilot", "gpt5_edit_patch_camel_allowed"),

    # ---- Cursor ----------------------------------------------------------------------
    deny("cursor", "write_path", A_TXT),
    # Relative to workspace_roots[0], wherever the hook runs.
    deny("cursor", "write_file_path_rel", CARGO_LOCK, cwd="out"),
    allow("cursor", "write_allowed"),
    deny("cursor", "strreplace", CI_YML),
    deny("cursor", "delete", A_TXT, cwd="out"),
    deny("cursor", "delete_dotdot", A_TXT),
    deny("cursor", "editnotebook", ("tests/golden/nb.ipynb", GOLDEN)),
    deny("cursor", "applypatch_object", ("tests/golden/main.c", GOLDEN)),
    # ApplyPatch with the patch as the whole tool_input string.
    deny("cursor", "applypatch_string", CARGO_LOCK),
    allow("cursor", "applypatch_string_allowed"),
    deny("cursor", "no_tool_name", CARGO_LOCK),
    allow("cursor", "no_tool_name_allowed"),
    deny("cursor", "tool_call_name", ("tests/golden/x.txt", GOLDEN)),
    refuse("cursor", "no_tool_no_path", UNKNOWN_TARGET.format("?")),
    deny("cursor", "shell", A_TXT),
    allow("cursor", "read"),
    deny("cursor", "before_shell", CARGO_LOCK),
    allow("cursor", "before_shell_allowed"),
    deny("cursor", "before_shell_cwd", A_TXT),
    allow("cursor", "before_read_file"),
    # Cursor running the hook from Claude's settings (third-party configs).
    deny("cursor", "claude_config_pretooluse", A_TXT),
    deny("cursor", "before_mcp_execution", CARGO_LOCK),
    # The bare, non-JSON envelope Cursor has sent for ApplyPatch: only Cursor
    # does that, and with failClosed it needs an explicit allow.
    deny("cursor", "raw_applypatch", A_TXT),
    allow("cursor", "raw_applypatch_allowed"),
    deny("cursor", "raw_applypatch", A_TXT, args=["--agent", "cursor"],
         name="cursor_raw_applypatch_agent_cursor"),
    allow("cursor", "raw_applypatch_allowed", args=["--agent", "cursor"],
          name="cursor_raw_applypatch_allowed_agent_cursor"),

    # ---- Windsurf (Cascade) ------------------------------------------------------------
    deny("windsurf", "pre_write_code", A_TXT),
    deny("windsurf", "pre_write_code_rel", (".github/workflows/release.yml", WORKFLOWS)),
    allow("windsurf", "pre_write_code_allowed"),
    deny("windsurf", "pre_write_code_symlink", ("src/newlink", GOLDEN)),
    refuse("windsurf", "pre_write_code_no_path", UNKNOWN_TARGET.format("pre_write_code")),
    deny("windsurf", "pre_run_command", ("tests/", GOLDEN)),
    deny("windsurf", "pre_run_command_cd", A_TXT),
    allow("windsurf", "pre_run_command_allowed"),
    allow("windsurf", "pre_read_code"),
    deny("windsurf", "pre_mcp_tool_use", CARGO_LOCK),

    # ---- Cline -------------------------------------------------------------------------
    deny("cline", "editor", A_TXT),
    deny("cline", "editor_rel", CARGO_LOCK, cwd="out"),
    allow("cline", "editor_allowed"),
    deny("cline", "editor_insert_symlink", ("src/link", GOLDEN)),
    refuse("cline", "editor_no_path", UNKNOWN_TARGET.format("editor")),
    deny("cline", "apply_patch", A_TXT, CI_YML),
    deny("cline", "run_commands", (".github/", WORKFLOWS)),
    allow("cline", "run_commands_allowed"),
    allow("cline", "read_files"),
    deny("cline", "vscode_write_to_file", A_TXT),
    deny("cline", "vscode_editor_stringified", CI_YML),
    deny("cline", "vscode_run_commands_stringified", CARGO_LOCK),
    deny("cline", "vscode_execute_command", A_TXT),
    allow("cline", "vscode_replace_in_file_allowed"),

    # ---- opencode: the plugin ralon installs -------------------------------------------
    deny("opencode", "write", A_TXT),
    allow("opencode", "write_allowed"),
    deny("opencode", "edit", CARGO_LOCK),
    deny("opencode", "apply_patch", (".github/workflows/main.yml", WORKFLOWS), A_TXT),
    deny("opencode", "bash", ("src/link", GOLDEN)),
    allow("opencode", "bash_allowed"),
    # bash runs its command in workdir (relative to the project, or absolute).
    deny("opencode", "bash_workdir", ("migrations/001_init.sql", MIGRATIONS)),
    deny("opencode", "bash_workdir_abs", A_TXT),
    allow("opencode", "bash_workdir_allowed"),
    allow("opencode", "read"),
    refuse("opencode", "write_no_path", UNKNOWN_TARGET.format("write")),
    # ---- opencode: the Rust ralon's plugin ({tool_name, tool_input} only) --------------
    deny("opencode", "rust_write", A_TXT, dialect="generic"),
    allow("opencode", "rust_write_allowed", dialect="generic"),
    deny("opencode", "rust_edit", CARGO_LOCK, dialect="generic"),
    deny("opencode", "rust_apply_patch", (".github/workflows/main.yml", WORKFLOWS), A_TXT,
         dialect="generic"),
    deny("opencode", "rust_bash", ("src/link", GOLDEN), dialect="generic"),
    allow("opencode", "rust_bash_allowed", dialect="generic"),
    allow("opencode", "rust_read", dialect="generic"),
    deny("opencode", "rust_bash_workdir", ("migrations/001_init.sql", MIGRATIONS),
         dialect="generic"),

    # ---- Google Antigravity: named by --agent ------------------------------------------
    deny("antigravity", "write_to_file", A_TXT, args=["--agent", "antigravity"]),
    allow("antigravity", "write_to_file_allowed", args=["--agent", "antigravity"]),
    deny("antigravity", "replace_file_content", CARGO_LOCK, args=["--agent", "antigravity"]),
    deny("antigravity", "bash", CI_YML, args=["--agent", "antigravity"]),
    # Antigravity's own tool names (run_command/CommandLine, view_file):
    # from its published system prompt, not from the hook documentation.
    deny("antigravity", "run_command", ("tests/", GOLDEN), args=["--agent", "antigravity"]),
    allow("antigravity", "read", args=["--agent", "antigravity"]),

    # ---- callers that cannot be recognised: exit 2, reason on stderr -------------------
    refuse("generic", "empty", not_understood("the payload is empty")),
    refuse("generic", "whitespace", not_understood("the payload is empty")),
    refuse("generic", "truncated", not_understood("the payload is JSON cut short")),
    refuse("generic", "malformed", not_understood_re(r"the payload is not JSON: [^()]+")),
    refuse("generic", "trailing_garbage", not_understood_re(r"the payload is not JSON: [^()]+")),
    refuse("generic", "not_json_text", not_understood_re(r"the payload is not JSON: [^()]+")),
    refuse("generic", "array", not_understood("the payload is not a JSON object")),
    refuse("generic", "string", not_understood("the payload is not a JSON object")),
    refuse("generic", "input_number", ANY_REFUSAL,
           note="a Write whose tool_input is a number cannot be understood"),
    deny("generic", "path_list", CARGO_LOCK),
    deny("generic", "unknown_agent_write", CARGO_LOCK),
    allow("generic", "unknown_agent_allowed"),
    deny("generic", "unknown_agent_shell", A_TXT),

    # ---- --agent names the dialect, whatever the payload looks like --------------------
    deny("claude", "write_abs", A_TXT, dialect="gemini", args=["--agent", "gemini"],
         name="agent_gemini_overrides_claude"),
    allow("claude", "write_allowed", dialect="cursor", args=["--agent", "cursor"],
          name="agent_cursor_overrides_claude_allow"),
    deny("claude", "write_abs", A_TXT, dialect="qwen", args=["--agent", "qwen"],
         name="agent_qwen_overrides_claude"),
    deny("claude", "bash_tee", CI_YML, dialect="antigravity", args=["--agent", "antigravity"],
         name="agent_antigravity_overrides_claude"),
    deny("cursor", "write_path", A_TXT, dialect="claude", args=["--agent", "claude"],
         name="agent_claude_overrides_cursor"),
    refuse("generic", "empty", not_understood("the payload is empty"), dialect="claude",
           args=["--agent", "claude"], name="agent_claude_empty"),
    refuse("generic", "truncated", not_understood("the payload is JSON cut short"),
           dialect="cursor", args=["--agent", "cursor"], name="agent_cursor_truncated"),
    refuse("generic", "array", not_understood("the payload is not a JSON object"),
           dialect="cline", args=["--agent", "cline"], name="agent_cline_array"),
    refuse("generic", "malformed", not_understood_re(r"the payload is not JSON: [^()]+"),
           dialect="gemini", args=["--agent", "gemini"], name="agent_gemini_malformed"),
    refuse("generic", "empty", not_understood("the payload is empty"), dialect="codex",
           args=["--agent", "codex"], name="agent_codex_empty"),
    refuse("generic", "not_json_text", not_understood_re(r"the payload is not JSON: [^()]+"),
           dialect="copilot", args=["--agent", "copilot"], name="agent_copilot_not_json"),
    refuse("generic", "empty", not_understood("the payload is empty"), dialect="antigravity",
           args=["--agent", "antigravity"], name="agent_antigravity_empty"),
    refuse("generic", "empty", not_understood("the payload is empty"), dialect="windsurf",
           args=["--agent", "windsurf"], name="agent_windsurf_empty"),
    refuse("generic", "empty", not_understood("the payload is empty"), dialect="opencode",
           args=["--agent", "opencode"], name="agent_opencode_empty"),
    refuse("generic", "empty", not_understood("the payload is empty"), dialect="qwen",
           args=["--agent", "qwen"], name="agent_qwen_empty"),

    # --agent names a dialect that cannot read this payload at all (no tool
    # name, none of its fields): not understood, so refused, never allowed.
    refuse("claude", "write_abs", ANY_REFUSAL, dialect="windsurf", args=["--agent", "windsurf"],
           name="agent_windsurf_cannot_read_claude"),
    refuse("claude", "write_abs", ANY_REFUSAL, dialect="cline", args=["--agent", "cline"],
           name="agent_cline_cannot_read_claude"),
    refuse("windsurf", "pre_write_code", ANY_REFUSAL, dialect="claude",
           args=["--agent", "claude"], name="agent_claude_cannot_read_windsurf"),
    refuse("windsurf", "pre_write_code", ANY_REFUSAL, dialect="opencode",
           args=["--agent", "opencode"], name="agent_opencode_cannot_read_windsurf"),
    refuse("gemini", "write_file_abs", ANY_REFUSAL, dialect="copilot",
           args=["--agent", "copilot"], name="agent_copilot_cannot_read_gemini"),
    refuse("cline", "editor", ANY_REFUSAL, dialect="gemini", args=["--agent", "gemini"],
           name="agent_gemini_cannot_read_cline"),

    # ---- -C DIR: where agent.lock is looked for -----------------------------------------
    deny("claude", "write_abs", A_TXT, args=["-C", "@ROOT@"], cwd="out",
         name="dir_option_from_outside"),
    deny("windsurf", "pre_write_code", A_TXT, args=["-C", "@ROOT@/src"], cwd="out",
         name="dir_option_subdir"),
    # ---- payloads the real agents sent (tests/agents captured them) --------
    allow("claude", "real-bash-allowed"),
    deny("claude", "real-bash-cwd-protected", ("tests/golden/c1.txt", GOLDEN)),
    deny("claude", "real-bash-protected", ("tests/golden/b1.txt", GOLDEN)),
    allow("claude", "real-edit-protected"),  # src/auth.c: protected in tests/agents only
    deny("claude", "real-subagent-write-protected", ("tests/golden/s1.txt", GOLDEN)),
    allow("claude", "real-write-allowed"),
    deny("claude", "real-write-protected", ("tests/golden/w1.txt", GOLDEN)),
    deny("codex", "real-apply-patch-add-protected", ("tests/golden/n1.txt", GOLDEN)),
    allow("codex", "real-apply-patch-allowed"),
    deny("codex", "real-apply-patch-move-to-protected", ("tests/golden/mv1.txt", GOLDEN)),
    allow("codex", "real-exec-command-allowed"),
    deny("codex", "real-exec-command-cd-apply-patch", ("tests/golden/h1.txt", GOLDEN)),
    deny("codex", "real-exec-command-protected", ("tests/golden/b1.txt", GOLDEN)),
    deny("codex", "real-exec-command-workdir", ("migrations/002_data.sql", MIGRATIONS)),
    # Copilot's PascalCase events carry Claude's shape, answered as Claude.
    deny("copilot", "real-bash-protected", ("tests/golden/b1.txt", GOLDEN), dialect="claude"),
    allow("copilot", "real-create-allowed", dialect="claude"),
    deny("copilot", "real-create-protected", ("migrations/002_new.sql", MIGRATIONS),
         dialect="claude"),
    allow("copilot", "real-edit-protected", dialect="claude"),  # src/auth.c
    allow("gemini", "real-replace-protected"),  # src/auth.c
    deny("gemini", "real-run-shell-command-dir-path", ("migrations/002_data.sql", MIGRATIONS)),
    deny("gemini", "real-run-shell-command-protected", ("tests/golden/b1.txt", GOLDEN)),
    allow("gemini", "real-write-file-allowed"),
    deny("gemini", "real-write-file-protected", ("tests/golden/w1.txt", GOLDEN)),
    deny("gemini", "real-write-file-relative", ("tests/golden/w3.txt", GOLDEN)),
    deny("opencode", "real-apply-patch-add-protected", ("tests/golden/n1.txt", GOLDEN)),
    allow("opencode", "real-apply-patch-allowed"),
    deny("opencode", "real-apply-patch-move-out-of-protected", ("tests/golden/mv2.txt", GOLDEN)),
    deny("opencode", "real-apply-patch-move-to-protected", ("tests/golden/mv1.txt", GOLDEN)),
    deny("opencode", "real-apply-patch-update-protected", ("tests/golden/u1.txt", GOLDEN)),
    allow("opencode", "real-bash-allowed"),
    deny("opencode", "real-bash-protected", ("tests/golden/b1.txt", GOLDEN)),
    deny("opencode", "real-bash-workdir", ("migrations/001_init.sql", MIGRATIONS)),
    deny("opencode", "real-bash-workdir-abs", ("tests/golden/d1.txt", GOLDEN)),
    allow("opencode", "real-bash-workdir-allowed"),
    allow("opencode", "real-edit-allowed"),
    allow("opencode", "real-edit-protected"),  # src/auth.c
    deny("opencode", "real-subagent-write-protected", ("tests/golden/s1.txt", GOLDEN)),
    allow("opencode", "real-write-allowed"),
    deny("opencode", "real-write-protected", ("tests/golden/w1.txt", GOLDEN)),
    deny("opencode", "real-write-relative", ("tests/golden/w3.txt", GOLDEN)),
    allow("qwen", "real-edit-protected"),  # src/auth.c
    deny("qwen", "real-run-shell-command-directory", ("tests/golden/d1.txt", GOLDEN)),
    deny("qwen", "real-run-shell-command-protected", ("tests/golden/b1.txt", GOLDEN)),
    deny("qwen", "real-subagent-write-file-protected", ("tests/golden/s1.txt", GOLDEN)),
    allow("qwen", "real-write-file-allowed"),
    deny("qwen", "real-write-file-protected", ("tests/golden/w1.txt", GOLDEN)),
]

# The cases refused for naming protected paths (without options): in a
# project with no agent.lock anywhere, every one of them is allowed.
POLICY_CASES = [c for c in CASES if c.hits and not c.args]


# ---- running ralon --------------------------------------------------------------------


def make_project(root, policy):
    for d in ("tests/golden", "src", ".github/workflows", "migrations"):
        os.makedirs(os.path.join(root, d))
    files = {"tests/golden/a.txt": "a\n", "src/main.c": "int main(void) { return 0; }\n",
             "Cargo.lock": "# cargo\n", ".github/workflows/ci.yml": "on: push\n",
             "migrations/001_init.sql": "create table t (x int);\n"}
    if policy is not None:
        files["agent.lock"] = policy
    for rel, text in files.items():
        with open(os.path.join(root, rel), "w") as f:
            f.write(text)
    os.symlink("../tests/golden/a.txt", os.path.join(root, "src/link"))
    os.symlink("../tests/golden/new.txt", os.path.join(root, "src/newlink"))


class HookTest(unittest.TestCase):
    maxDiff = None

    @classmethod
    def setUpClass(cls):
        if not os.access(RALON, os.X_OK):
            raise unittest.SkipTest("no ralon binary at %s (set RALON_BINARY)" % RALON)
        cls.base = os.path.realpath(tempfile.mkdtemp(prefix="ralon-hook-"))
        # No agent.lock above the temporary projects, or "no policy" means nothing.
        d = cls.base
        while True:
            if os.path.lexists(os.path.join(d, "agent.lock")):
                shutil.rmtree(cls.base)
                raise unittest.SkipTest("%s/agent.lock would govern the test projects" % d)
            if d == "/":
                break
            d = os.path.dirname(d)
        cls.root = os.path.join(cls.base, "project")
        cls.nolock = os.path.join(cls.base, "nolock")
        cls.bad = os.path.join(cls.base, "bad")
        cls.out = os.path.join(cls.base, "outside")
        cls.home = os.path.join(cls.base, "home")
        make_project(cls.root, POLICY)
        make_project(cls.nolock, None)
        make_project(cls.bad, BAD_POLICY)
        # agent.lock there is no regular file (a FIFO, a directory) with a
        # valid policy above it that must not be reached instead.
        cls.not_files = os.path.join(cls.base, "not-files")
        make_project(cls.not_files, POLICY)
        cls.fifo = os.path.join(cls.not_files, "fifo")
        make_project(cls.fifo, None)
        os.mkfifo(os.path.join(cls.fifo, "agent.lock"))
        cls.dirlock = os.path.join(cls.not_files, "dir")
        make_project(cls.dirlock, None)
        os.mkdir(os.path.join(cls.dirlock, "agent.lock"))
        os.makedirs(cls.out)
        os.makedirs(cls.home)
        cls.env = clean_env(cls.home)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base, ignore_errors=True)

    def fill(self, text, root):
        return text.replace("@ROOT@", root).replace("@OUT@", self.out)

    def hook(self, payload, args=(), cwd=None, root=None, env=None):
        root = root or self.root
        if isinstance(payload, str):
            payload = payload.encode()
        p = subprocess.run([RALON, "hook", "check"] + [self.fill(a, root) for a in args],
                           input=payload, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           cwd=cwd or root, env=env or self.env, timeout=60)
        return Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                      p.stderr.decode("utf-8", "replace"))

    def payload(self, case, root=None):
        with open(case.path, "rb") as f:
            return self.fill(f.read().decode("utf-8"), root or self.root)

    def run_case(self, case, root=None):
        root = root or self.root
        payload = self.payload(case, root)
        cwd = {"root": root, "out": self.out, "root/src": os.path.join(root, "src")}[case.cwd]
        return self.hook(payload, case.args, cwd=cwd, root=root)

    # -- assertions ------------------------------------------------------------------

    def assertJsonLine(self, out, obj, res):
        """stdout is exactly one line holding exactly this JSON object."""
        self.assertTrue(out.endswith("\n") and out.count("\n") == 1,
                        "stdout must be one JSON line: %r" % (res,))
        try:
            got = json.loads(out)
        except ValueError:
            self.fail("stdout is not JSON: %r" % (res,))
        self.assertEqual(got, obj, res)

    def assertAnswer(self, dialect, res, reason):
        """The exact answer `dialect` needs; reason None: allowed; a compiled
        regex: refused for a reason matching it (the answer must then be
        exact around the reason it gives)."""
        if isinstance(reason, re.Pattern):
            given = reason_given(dialect, res.out, res.err)
            self.assertIsNotNone(given, "a refusal was expected: %r" % (res,))
            self.assertTrue(given.strip(), "the reason is empty: %r" % (res,))
            self.assertTrue(reason.fullmatch(given),
                            "the reason %r does not match %r" % (given, reason.pattern))
            reason = given
        out, err, rc = expected_answer(dialect, reason)
        if out is None:
            self.assertEqual(res.out, "", res)
        else:
            self.assertJsonLine(res.out, out, res)
        self.assertEqual(res.err, err, res)
        self.assertEqual(res.rc, rc, res)
        if dialect == "codex":
            # Whatever happens, nothing Codex's strict schema could reject.
            self.assertEqual(res.out, "", res)
            if rc == 2:
                self.assertTrue(res.err.strip(), res)

    def expected_reason(self, case, root):
        if case.deny is None:
            return None
        if case.hits is not None:
            return protected_reason(case.hits, os.path.join(root, "agent.lock"))
        if isinstance(case.deny, Unread):
            return UNREAD.format(shown=case.deny[0], pattern=case.deny[1],
                                 policy=os.path.join(root, "agent.lock"))
        return case.deny

    def check_case(self, case):
        res = self.run_case(case)
        self.assertAnswer(case.dialect, res, self.expected_reason(case, self.root))

    # -- whole-table checks -------------------------------------------------------------

    def test_every_fixture_is_in_the_table(self):
        used = {os.path.relpath(c.path, FIXTURES) for c in CASES}
        found = set()
        for agent in os.listdir(FIXTURES):
            for f in os.listdir(os.path.join(FIXTURES, agent)):
                found.add(os.path.join(agent, f))
        self.assertEqual(sorted(found - used), [], "fixtures no case runs")
        self.assertEqual(sorted(used - found), [], "cases without a fixture")

    def agents(self):
        """Every agent the binary knows, in the order it lists them."""
        p = subprocess.run([RALON, "hook", "list", "--json"], cwd=self.out, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        self.assertEqual(p.returncode, 0, p)
        names = []
        for h in json.loads(p.stdout)["hooks"]:
            if h["agent"] not in names:
                names.append(h["agent"])
        return names

    def test_every_agent_has_fixtures(self):
        """An agent added to ralon without payloads of its own fails here."""
        agents = self.agents()
        self.assertIn("claude", agents)
        self.assertLessEqual(set(agents), set(os.listdir(FIXTURES)))
        for a in agents:
            self.assertTrue(any(c.agent == a and c.hits for c in CASES), a)
            self.assertTrue(any(c.agent == a and c.deny is None for c in CASES), a)

    def test_no_policy_allows_everything(self):
        """In a project with no agent.lock anywhere, nothing is refused."""
        for case in POLICY_CASES:
            with self.subTest(case=case.name):
                self.assertAnswer(case.dialect, self.run_case(case, root=self.nolock), None)

    def policy_error(self):
        """The parse error of the malformed agent.lock, as `ralon check` says it."""
        p = subprocess.run([RALON, "check", "Cargo.lock"], cwd=self.bad, env=self.env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        err = p.stderr.decode()
        self.assertNotEqual(p.returncode, 0)
        self.assertTrue(err.startswith("ralon: ") and err.endswith("\n"), err)
        message = err[len("ralon: "):-1]
        self.assertIn(os.path.join(self.bad, "agent.lock") + ":3:", message)
        self.assertIn("YAML", message)
        return message

    def test_malformed_policy_refuses(self):
        """An agent.lock that cannot be read: every write is refused, and the
        reason carries the parse error (also for a file that would be
        writable)."""
        reason = POLICY_ERROR.format(self.policy_error())
        for agent, fixture in (("claude", "write_abs"), ("claude", "write_allowed"),
                               ("claude", "bash_redirect"), ("codex", "apply_patch_several"),
                               ("gemini", "write_file_abs"), ("copilot", "create_object"),
                               ("cursor", "write_path"), ("cline", "editor"),
                               ("windsurf", "pre_write_code"), ("opencode", "write"),
                               ("qwen", "write_file")):
            with self.subTest(fixture="%s/%s" % (agent, fixture)):
                case = Case(agent, fixture)
                res = self.run_case(case, root=self.bad)
                self.assertAnswer(case.dialect, res, reason)

    def test_policy_not_a_file_refuses(self):
        """An agent.lock that is no regular file: every write is refused with
        what it is, as for one that cannot be read, and no hook call hangs on
        a FIFO. Neither is passed by for the policy above (which would allow
        src/main.c) nor taken for "no policy" (which would allow all)."""
        for root, kind in ((self.fifo, "a FIFO"), (self.dirlock, "a directory")):
            message = ("%s/agent.lock is %s; a policy must be a regular file. Which paths "
                       "are protected here is unknown, so ralon refuses to go on (make it "
                       "the policy it should be, or remove it and run `ralon init`)"
                       % (root, kind))
            for agent, fixture in (("claude", "write_abs"), ("claude", "write_allowed"),
                                   ("claude", "bash_redirect"), ("codex", "apply_patch_several"),
                                   ("gemini", "write_file_abs"), ("copilot", "create_object"),
                                   ("cursor", "write_path"), ("cline", "editor"),
                                   ("windsurf", "pre_write_code"), ("opencode", "write"),
                                   ("qwen", "write_file")):
                with self.subTest(kind=kind, fixture="%s/%s" % (agent, fixture)):
                    case = Case(agent, fixture)
                    res = self.run_case(case, root=root)
                    self.assertAnswer(case.dialect, res, POLICY_ERROR.format(message))
            with self.subTest(kind=kind, fixture="claude/read"):
                case = Case("claude", "read")
                self.assertAnswer(case.dialect, self.run_case(case, root=root), None)

    def test_malformed_policy_read_allowed(self):
        for agent, fixture in (("claude", "read"), ("cursor", "before_read_file"),
                               ("cline", "read_files")):
            with self.subTest(fixture="%s/%s" % (agent, fixture)):
                case = Case(agent, fixture)
                self.assertAnswer(case.dialect, self.run_case(case, root=self.bad), None)

    def test_dir_option_selects_the_policy(self):
        """-C DIR is where agent.lock is looked for when the path has none
        above it: a write outside every project is allowed, unless -C names
        a project whose agent.lock cannot be read."""
        payload = self.payload(Case("claude", "write_outside"))
        self.assertAnswer("claude", self.hook(payload, cwd=self.out), None)
        res = self.hook(payload, ["-C", self.bad], cwd=self.out)
        self.assertAnswer("claude", res, POLICY_ERROR.format(self.policy_error()))
        res = self.hook(payload, ["-C", self.nolock], cwd=self.out)
        self.assertAnswer("claude", res, None)

    def write_payload(self, target, size, fill=b"x"):
        """A Claude Code Write of `target` exactly `size` bytes long."""
        head = ('{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"%s",'
                '"tool_input":{"file_path":"%s","content":"' % (self.root, target)).encode()
        tail = b'"}}'
        return head + fill * (size - len(head) - len(tail)) + tail

    def piped_hook(self, size, args=(), linger=None):
        """`hook check` reading a Write of `size` bytes from a pipe whose
        writer is a process of its own, as an agent's is: it exits 0 when
        every byte was taken, 3 when its write failed (EPIPE: the hook
        closed its end first). With linger "linger", the writer then keeps
        its end open, sleeping, as a writer that never closes would; with
        "endless", it goes on writing for ever. Returns the hook's Result,
        the writer's exit status (None: still running when the hook had
        answered) and the writer's standard error."""
        writer_code = (
            "import os, sys, time\n"
            "head = sys.argv[1].encode(); size = int(sys.argv[2])\n"
            "tail = b'\"}}'\n"
            "data = head + b'x' * (size - len(head) - len(tail)) + tail\n"
            "view = memoryview(data)\n"
            "try:\n"
            "    while view:\n"  # a write cut short by a closed pipe says so next time
            "        view = view[os.write(1, view):]\n"
            "except OSError as e:\n"
            "    sys.stderr.write('write failed: %s\\n' % e); sys.exit(3)\n"
            "if sys.argv[3] == 'linger':\n"
            "    time.sleep(600)\n"
            "while sys.argv[3] == 'endless':\n"
            "    os.write(1, b'x' * 65536)\n")
        head = ('{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"%s",'
                '"tool_input":{"file_path":"%s/src/big.c","content":"' % (self.root, self.root))
        with tempfile.TemporaryFile() as werr:
            writer = subprocess.Popen(
                [sys.executable, "-c", writer_code, head, str(size), linger or "close"],
                stdout=subprocess.PIPE, stderr=werr)
            try:
                p = subprocess.run([RALON, "hook", "check"] + list(args), stdin=writer.stdout,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   cwd=self.root, env=self.env, timeout=120)
                writer.stdout.close()
                wrc = writer.poll() if linger else writer.wait(timeout=120)
            finally:
                if writer.poll() is None:
                    writer.kill()
                    writer.wait()
            werr.seek(0)
            return (Result(p.returncode, p.stdout.decode("utf-8", "replace"),
                           p.stderr.decode("utf-8", "replace")), wrc,
                    werr.read().decode("utf-8", "replace"))

    def test_huge_payload_refused(self):
        """More than 4 MiB: refused unread, in the generic form unless
        --agent names a dialect."""
        payload = self.write_payload(os.path.join(self.root, "src/big.c"),
                                     HOOK_MAX_PAYLOAD + 1024)
        reason = not_understood("a payload of more than %d bytes" % HOOK_MAX_PAYLOAD)
        self.assertAnswer("generic", self.hook(payload), reason)
        self.assertAnswer("claude", self.hook(payload, ["--agent", "claude"]), reason)
        self.assertAnswer("cursor", self.hook(payload, ["--agent", "cursor"]), reason)
        self.assertAnswer("cline", self.hook(payload, ["--agent", "cline"]), reason)

    def test_payload_at_the_limit(self):
        """A payload of exactly the limit is read and decided like any
        other, allowed or refused for the path it names; one byte more is
        refused with the limit named, whatever it names."""
        golden = protected_reason([("tests/golden/big.txt", GOLDEN)],
                                  os.path.join(self.root, "agent.lock"))
        too_large = not_understood("a payload of more than %d bytes" % HOOK_MAX_PAYLOAD)
        # Unread, the payload names no agent: the generic answer.
        for size, target, dialect, reason in (
                (HOOK_MAX_PAYLOAD, "src/big.c", "claude", None),
                (HOOK_MAX_PAYLOAD, "tests/golden/big.txt", "claude", golden),
                (HOOK_MAX_PAYLOAD + 1, "src/big.c", "generic", too_large),
                (HOOK_MAX_PAYLOAD + 1, "tests/golden/big.txt", "generic", too_large)):
            with self.subTest(size=size, target=target):
                payload = self.write_payload(target, size, b"y")
                self.assertEqual(len(payload), size)
                self.assertAnswer(dialect, self.hook(payload), reason)

    def test_oversized_payload_drained(self):
        """16 MiB and 64 MiB written into the hook's pipe by a writer that
        checks its write: refused with the limit named, and every byte
        taken, so the agent's write never fails with EPIPE."""
        reason = not_understood("a payload of more than %d bytes" % HOOK_MAX_PAYLOAD)
        for size in (16 * 1024 * 1024, 64 * 1024 * 1024):
            for args, dialect in (((), "generic"), (("--agent", "claude"), "claude")):
                with self.subTest(size=size, agent=dialect):
                    res, wrc, werr = self.piped_hook(size, args)
                    self.assertAnswer(dialect, res, reason)
                    self.assertEqual((wrc, werr), (0, ""), "the writer's write failed")

    def test_oversized_payload_writer_never_closes(self):
        """A writer that sends more than the limit and then keeps its end
        open without writing: the hook still answers, refusing, while the
        writer is alive (the drain is bounded), and the writer's write of
        what it sent succeeded."""
        reason = not_understood("a payload of more than %d bytes" % HOOK_MAX_PAYLOAD)
        res, wrc, werr = self.piped_hook(HOOK_MAX_PAYLOAD + 64 * 1024, linger="linger")
        self.assertAnswer("generic", res, reason)
        self.assertEqual((wrc, werr), (None, ""), "the writer was to be still running")

    def test_oversized_payload_writer_never_stops(self):
        """A writer that goes on writing for ever: the hook stops draining
        past its bound (256 MiB) and answers, refusing."""
        reason = not_understood("a payload of more than %d bytes" % HOOK_MAX_PAYLOAD)
        res, _, _ = self.piped_hook(HOOK_MAX_PAYLOAD + 64 * 1024, linger="endless")
        self.assertAnswer("generic", res, reason)

    def test_large_payload_under_limit_is_read(self):
        """3 MiB of content is read and decided like any other."""
        for target, reason in (("src/big.c", None),
                               ("tests/golden/big.txt",
                                protected_reason([("tests/golden/big.txt", GOLDEN)],
                                                 os.path.join(self.root, "agent.lock")))):
            with self.subTest(target=target):
                head = ('{"hook_event_name":"PreToolUse","tool_name":"Write","cwd":"%s",'
                        '"tool_input":{"file_path":"%s","content":"' % (self.root, target))
                payload = head.encode() + b"y" * (3 * 1024 * 1024) + b'"}}'
                self.assertAnswer("claude", self.hook(payload), reason)

    def test_no_crash_whatever_agent_is_named(self):
        """Every fixture under every --agent: an answer, never a crash (a
        crash exits with neither 0 nor 2, which Claude Code, Gemini, Codex
        and Qwen take as consent)."""
        crashes = []
        for agent in self.agents():
            for case in CASES:
                if case.args:
                    continue
                res = self.hook(self.payload(case), ["--agent", agent])
                if res.rc not in (0, 2) or (res.rc == 2 and not res.err.strip()):
                    crashes.append("--agent %s %s/%s: %r" % (agent, case.agent, case.fixture,
                                                              res))
        self.assertEqual(sorted(set(crashes)), [])

    def test_glob_costs_no_scan(self):
        """A hook never scans the tree (ARCHITECTURE.md §5): a command globbing
        thousands of files reads the directories its glob names and no
        other, which is what keeps it in milliseconds for Cursor (10 s)
        and Copilot (whose timeouts let the tool run). Told from outside
        by access times: reading a directory updates its atime (relatime
        does when the old one is a day behind), so every directory starts
        at a year-2000 atime and the ones read are those that move."""
        project = os.path.join(self.base, "wide")
        make_project(project, POLICY)
        globbed, others = [], []
        for i in range(10):
            for j in range(10):
                d = os.path.join(project, "build", str(i), str(j))
                os.makedirs(d)
                globbed.append(d)
                for k in range(30):
                    open(os.path.join(d, "%d.o" % k), "w").close()
            globbed.append(os.path.join(project, "build", str(i)))
        globbed.append(os.path.join(project, "build"))
        # Beside the glob: a deep tree, and a directory under build/ that
        # the glob's `*/*/` cannot reach below.
        for rel in ("node_modules/a/b/c", "src/lib/deep", "build/0/0/sub"):
            d = os.path.join(project, rel)
            os.makedirs(d, exist_ok=True)
            open(os.path.join(d, "x.o"), "w").close()
        for rel in ("node_modules", "node_modules/a", "node_modules/a/b", "node_modules/a/b/c",
                    "src", "src/lib", "src/lib/deep", "build/0/0/sub"):
            others.append(os.path.join(project, rel))
        old = 946684800  # 2000-01-01
        for d in globbed + others + [project]:
            os.utime(d, (old, os.stat(d).st_mtime))
        control = others.pop()  # build/0/0/sub: read here, to see atimes move
        os.listdir(control)
        payload = json.dumps({"session_id": "s", "cwd": project, "hook_event_name": "PreToolUse",
                              "tool_name": "Bash",
                              "tool_input": {"command": "rm -f build/*/*/*.o"}})
        try:
            if os.stat(control).st_atime == old:
                self.skipTest("this file system does not update access times (noatime)")
            os.utime(control, (old, os.stat(control).st_mtime))
            res = self.hook(payload, cwd=project, root=project)
            read = {os.path.relpath(d, project) for d in globbed + others + [control, project]
                    if os.stat(d).st_atime != old}
        finally:
            shutil.rmtree(project, ignore_errors=True)
        self.assertAnswer("claude", res, None)
        self.assertEqual(read, {os.path.relpath(d, project) for d in globbed})

    def bash_payload(self, command):
        return json.dumps({"session_id": "s", "cwd": self.root, "hook_event_name": "PreToolUse",
                           "tool_name": "Bash", "tool_input": {"command": command}})

    def test_large_shell_commands_are_read(self):
        """Shell commands of a megabyte and more are read to their end
        (reading is linear: one of 1.1 MiB took 4 s, one of 9 MiB did not
        finish in 180 s): a long heredoc, and long lines of words, then
        what the command writes at the very end."""
        policy = os.path.join(self.root, "agent.lock")
        body = "int f(int a) { return a * 2; /* it's \"q\" $(y) `z` */ }\n" * 22000
        words = "echo " + "abcdefg 'h i' \"$j\" k\\ l " * 48000 + "> src/out.txt\n"
        # Heredocs that never end are looked for once, not on every line.
        unended = "cat <<EOF$((1))\n" * 80000
        for name, command, reason in (
                ("heredoc", "cat > src/big.c <<'EOF'\n%sEOF\n" % body, None),
                ("heredoc into Cargo.lock", "cat > Cargo.lock <<'EOF'\n%sEOF\n" % body,
                 protected_reason([CARGO_LOCK], policy)),
                ("heredoc, then rm", "cat > src/big.c <<'EOF'\n%sEOF\nrm -f Cargo.lock\n" % body,
                 protected_reason([CARGO_LOCK], policy)),
                ("words", words, None),
                ("words, then rm", words + "rm tests/golden/a.txt\n",
                 protected_reason([A_TXT], policy)),
                ("heredocs never ended", unended + "rm tests/golden/a.txt\n",
                 protected_reason([A_TXT], policy))):
            with self.subTest(name=name):
                self.assertGreater(len(command), 1024 * 1024)
                self.assertAnswer("claude", self.hook(self.bash_payload(command)), reason)

    def test_too_large_to_check_is_refused(self):
        """Past the work a hook can do before the agent gives up on it (and
        some agents then let the tool run), the call is refused, saying
        why: 3 MiB of shell words, a substitution nested in every word,
        a patch naming 100,000 files, each payload under the 4 MiB limit.
        Also where nothing is protected: what was not read may name any
        file. Never a partial reading."""
        words = "echo " + "abcdefgh " * (350 * 1024) + "\n"
        nested = "echo " + "$(echo $(echo $(echo x))) " * 140000
        patch = "*** Begin Patch\n" + "".join(
            "*** Add File: src/gen/f%d.c\n+int x;\n" % i for i in range(100000)) + \
            "*** End Patch\n"
        codex = json.dumps({"session_id": "s", "turn_id": "t", "cwd": self.root,
                            "hook_event_name": "PreToolUse", "tool_name": "apply_patch",
                            "tool_input": {"command": patch}})
        for name, payload, dialect in (("words", self.bash_payload(words), "claude"),
                                       ("nested", self.bash_payload(nested), "claude"),
                                       ("patch", codex, "codex")):
            for root in (self.root, self.nolock):
                with self.subTest(name=name, root=root):
                    text = payload.replace(self.root, root)
                    self.assertLess(len(text.encode()), HOOK_MAX_PAYLOAD)
                    res = self.hook(text, root=root)
                    self.assertAnswer(dialect, res, TOO_LARGE)

    def test_shell_tilde_is_home(self):
        """A leading `~` (and `NAME=~`) in a shell word is $HOME, as bash
        expands it; HOME is a sibling of the project here. Quoted, it is a
        name like any other. With no HOME the word cannot be placed: the
        directory the command runs in stands for it, so it is refused when
        anything protected lies below."""
        def bash(command):
            return json.dumps({"session_id": "s", "cwd": self.root,
                               "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": command}})
        policy = os.path.join(self.root, "agent.lock")
        cargo = protected_reason([CARGO_LOCK], policy)
        for command, reason in (("rm ~/../project/Cargo.lock", cargo),
                                ("cd ~/../project && rm Cargo.lock", cargo),
                                ("dd if=/dev/zero of=~/../project/Cargo.lock", cargo),
                                ("rm '~/../project/Cargo.lock'", None),
                                ("ls ~", None)):
            with self.subTest(command=command):
                self.assertAnswer("claude", self.hook(bash(command)), reason)
        no_home = {k: v for k, v in self.env.items() if k != "HOME"}
        for command, reason in (("rm ~/../project/Cargo.lock",
                                 protected_reason([("./", LOCK)], policy)),
                                ("ls ~", None)):
            with self.subTest(command=command, home=None):
                self.assertAnswer("claude", self.hook(bash(command), env=no_home), reason)

    def test_names_that_could_drive_a_terminal(self):
        """A path in the payload is shown in the reason with its control
        characters and bytes that are not UTF-8 escaped: the answer is
        valid UTF-8 JSON (or text), and no escape sequence reaches the
        agent's terminal. Both kinds of agent: a JSON answer and exit 2."""
        policy = os.path.join(self.root, "agent.lock")
        for name, raw, shown in (
                ("escape", b"tests/golden/\\u001b[2Jx.txt", "tests/golden/\\033[2Jx.txt"),
                ("newline", b"tests/golden/a\\nb", "tests/golden/a\\nb"),
                ("C1", b"tests/golden/\\u009b2J", "tests/golden/\\302\\2332J"),
                ("not UTF-8", b"tests/golden/bad\xffbyte", "tests/golden/bad\\377byte")):
            payload = (b'{"session_id": "s", "cwd": "' + self.root.encode() +
                       b'", "hook_event_name": "PreToolUse", "tool_name": "Write", '
                       b'"tool_input": {"file_path": "' + raw + b'", "content": "x"}}')
            for agent in ("claude", "codex"):
                with self.subTest(name=name, agent=agent):
                    p = subprocess.run([RALON, "hook", "check", "--agent", agent], input=payload,
                                       capture_output=True, cwd=self.root, env=self.env,
                                       timeout=60)
                    out, err = p.stdout.decode("utf-8"), p.stderr.decode("utf-8")  # strict
                    for text in (out, err):
                        self.assertEqual([c for c in text.rstrip("\n")
                                          if ord(c) < 0x20 or 0x7f <= ord(c) < 0xa0], [], p)
                    res = Result(p.returncode, out, err)
                    self.assertAnswer(agent, res, protected_reason([(shown, GOLDEN)], policy))

    def test_unknown_agent_name_fails_closed(self):
        """A mistyped --agent must still block in the exit-2 agents."""
        res = self.hook(self.payload(Case("claude", "write_allowed")), ["--agent", "bogus"])
        self.assertEqual(res.out, "")
        self.assertEqual(res.err, "ralon: unknown agent `bogus`\n")
        self.assertEqual(res.rc, 2)


def add_case_tests():
    seen = set()
    for case in CASES:
        name = "test_case_" + re.sub(r"\W", "_", case.name)
        assert name not in seen, name
        seen.add(name)

        def t(self, case=case):
            self.check_case(case)

        doc = "%s/%s.json -> %s %s" % (case.agent, case.fixture, case.dialect,
                                       "allow" if case.deny is None else "refuse")
        if case.note:
            doc += " (%s)" % case.note
        t.__doc__ = doc
        setattr(HookTest, name, t)


add_case_tests()

if __name__ == "__main__":
    unittest.main()
