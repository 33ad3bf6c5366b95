# SPDX-License-Identifier: Apache-2.0
# fish completion for ralon(1).
#
# Completes the commands, the global options and each command's options,
# the backends after `run --backend`, the agents after `hook ... --agent`
# (a comma-separated list for install and uninstall), the `hook` actions,
# paths after `check`, directories after -C/--dir, and after `run --` (or
# the first word that is not an option of `run`) the command to run, with
# that command's own completion.
#
# Keep the lists below in step with src/cli.c and the agents listed in
# src/hook/agents.h; the test tests/completion (suite "completion")
# compares them with what the built ralon prints in its --help (and the
# agents' names for people with `ralon hook list --json`).

# Read the tokens before the cursor as ralon does, into globals:
#   __ralon_cmd      the command (init, check, ...), or empty
#   __ralon_action   the `hook` action, or empty
#   __ralon_npos     how many arguments the command has been given
#   __ralon_runpos   for `run`: the index of the token that starts the
#                    command it runs (possibly the token being completed),
#                    or 0 while run's own options are being given
#   __ralon_pending  the option whose value the current token is, or empty
function __ralon_parse
    set -g __ralon_cmd ''
    set -g __ralon_action ''
    set -g __ralon_npos 0
    set -g __ralon_runpos 0
    set -g __ralon_pending ''
    set -l tokens (commandline -opc)
    set -l n (count $tokens)
    set -l endopts 0
    set -l i 1
    while test $i -lt $n
        set i (math $i + 1)
        set -l t $tokens[$i]
        if test -n "$__ralon_pending"
            set __ralon_pending ''
            continue
        end
        if test $endopts = 0
            switch $t
                case --
                    if test "$__ralon_cmd" = run
                        set __ralon_runpos (math $i + 1)
                        return 0
                    end
                    test -n "$__ralon_cmd"; and set endopts 1
                    continue
                case -C --dir
                    set __ralon_pending $t
                    continue
                case --backend
                    test "$__ralon_cmd" = run; and set __ralon_pending $t
                    continue
                case --agent
                    test "$__ralon_cmd" = hook; and set __ralon_pending $t
                    continue
                case '-?*'
                    continue
            end
        end
        if test -z "$__ralon_cmd"
            set __ralon_cmd $t
        else if test "$__ralon_cmd" = run
            set __ralon_runpos $i
            return 0
        else
            if test "$__ralon_cmd" = hook; and test -z "$__ralon_action"
                set __ralon_action $t
            end
            set __ralon_npos (math $__ralon_npos + 1)
        end
    end
    # `run` followed by a word that is neither an option nor an option's
    # value: the command to run starts here.
    if test "$__ralon_cmd" = run; and test -z "$__ralon_pending"
        and not string match -q -- '-*' (commandline -ct)
        set __ralon_runpos (math $n + 1)
    end
    return 0
end

# True when no command has been given yet.
function __ralon_no_command
    __ralon_parse
    test -z "$__ralon_cmd"
end

# True when the command is one of $argv, and the current token is ralon's
# (not part of the command `run` runs).
function __ralon_using
    __ralon_parse
    test $__ralon_runpos = 0; and contains -- "$__ralon_cmd" $argv
end

# True when ralon's own options may be completed here.
function __ralon_options
    __ralon_parse
    test $__ralon_runpos = 0
end

# `hook` and its action is one of $argv ('' for none yet).
function __ralon_hook_action
    __ralon_parse
    test "$__ralon_cmd" = hook; and contains -- "$__ralon_action" $argv
end

function __ralon_in_run_command
    __ralon_parse
    test $__ralon_runpos -gt 0
end

# The command `run` runs, completed as if it were typed on its own.
function __ralon_run_complete
    __ralon_parse
    set -l tokens (commandline -opc)
    set -l words
    if test $__ralon_runpos -le (count $tokens)
        set words (string escape -- $tokens[$__ralon_runpos..-1])
    end
    complete -C (string join ' ' -- $words (commandline -ct))
end

# Agent names for `hook install/uninstall --agent`: a comma-separated list
# of auto, all and agent names; the current item is completed, and a name
# already in the list is not offered again.
function __ralon_agent_list
    set -l token (commandline -ct)
    set token (string replace -r -- '^--agent=' '' $token)
    set -l head (string match -r -- '^.*,' $token)
    set -l listed (string split , -- "$head")
    for a in auto all $__ralon_agents
        contains -- $a $listed; and continue
        printf '%s%s\t%s\n' "$head" $a (__ralon_agent_description $a)
    end
end

function __ralon_agent_description
    switch $argv[1]
        case auto
            echo 'agents whose configuration directory exists'
        case all
            echo 'every agent'
        case claude
            echo 'Claude Code'
        case cursor
            echo Cursor
        case opencode
            echo opencode
        case copilot
            echo 'GitHub Copilot'
        case codex
            echo 'OpenAI Codex CLI'
        case gemini
            echo 'Gemini CLI'
        case antigravity
            echo 'Google Antigravity'
        case windsurf
            echo 'Windsurf (Cascade)'
        case cline
            echo Cline
        case qwen
            echo 'Qwen Code'
    end
end

function __ralon_agent_names
    for a in $__ralon_agents
        printf '%s\t%s\n' $a (__ralon_agent_description $a)
    end
end

set -g __ralon_agents claude cursor opencode copilot codex gemini antigravity windsurf cline qwen

complete -c ralon -e
# No file names unless asked for below.
complete -c ralon -f

# The commands.
complete -c ralon -n __ralon_no_command -a init -d 'write a commented agent.lock here'
complete -c ralon -n __ralon_no_command -a check -d 'say whether paths are protected, or list what is'
complete -c ralon -n __ralon_no_command -a status -d 'show the policy, what it protects, and its weak spots'
complete -c ralon -n __ralon_no_command -a run -d 'run an agent that cannot modify what the policy protects'
complete -c ralon -n __ralon_no_command -a hook -d "check an agent's edit, or install hooks into agents"
complete -c ralon -n __ralon_no_command -a pause -d "freeze this project's sandboxes to change protected files"
complete -c ralon -n __ralon_no_command -a resume -d 're-protect what changed and thaw them'
complete -c ralon -n __ralon_no_command -a guard -d 'Linux: explains that ralon run guards its own session'
complete -c ralon -n __ralon_no_command -a help -d 'show the help of a command'

# Options every command accepts, before or after its name.
complete -c ralon -n __ralon_options -s C -l dir -x -a '(__fish_complete_directories)' -d 'act as if started in DIR'
complete -c ralon -n __ralon_options -l json -d 'machine-readable output'
complete -c ralon -n __ralon_options -s h -l help -d 'show the help'
complete -c ralon -n __ralon_options -s V -l version -d 'show the version'

# init
complete -c ralon -n '__ralon_using init' -l force -d 'replace an existing agent.lock'
complete -c ralon -n '__ralon_using init' -l no-hooks -d 'do not install agent hooks'

# check PATH... | --range A..B | --staged
complete -c ralon -n '__ralon_using check' -F
complete -c ralon -n '__ralon_using check' -l range -x -d 'the commits B has and A has not (A..B)'
complete -c ralon -n '__ralon_using check' -l staged -d 'the changes staged for the next commit'

# run [OPTIONS] -- COMMAND [ARGS...]
complete -c ralon -n '__ralon_using run' -l backend -x -d 'the enforcement backend' -a '
    auto\t"mount, else landlock (default)"
    mount\t"read-only bind mounts in a user and mount namespace"
    landlock\t"a Landlock carve-out"'
complete -c ralon -n '__ralon_using run' -l dry-run -d 'print the plan instead'
complete -c ralon -n '__ralon_using run' -s q -l quiet -d 'no summary line and no warnings'
complete -c ralon -n '__ralon_using run' -l if-policy -d 'without an agent.lock, run COMMAND unchanged'
complete -c ralon -n '__ralon_using run' -l strict -d 'make every warning that weakens protection fatal'
complete -c ralon -n '__ralon_using run' -l seal -d 'also forbid mounts, scope signals and sockets'
complete -c ralon -n __ralon_in_run_command -a '(__ralon_run_complete)'

# pause [--minutes N | --indefinitely] [-- COMMAND...]
complete -c ralon -n '__ralon_using pause' -l minutes -x -d 'resume on its own after N minutes'
complete -c ralon -n '__ralon_using pause' -l indefinitely -d 'stay frozen until ralon resume'

# guard
complete -c ralon -n '__ralon_using guard' -l detach -d 'nothing to start on Linux'
complete -c ralon -n '__ralon_using guard' -l stop -d 'nothing to stop on Linux'

# hook check|install|uninstall|list
complete -c ralon -n "__ralon_hook_action ''" -a check -d "refuse an agent's edit of a protected path"
complete -c ralon -n "__ralon_hook_action ''" -a install -d "write ralon's hook into agents' configuration"
complete -c ralon -n "__ralon_hook_action ''" -a uninstall -d "remove ralon's hook from agents' configuration"
complete -c ralon -n "__ralon_hook_action ''" -a list -d 'list every agent and its hook'
complete -c ralon -n '__ralon_hook_action check' -l agent -x -a '(__ralon_agent_names)' -d 'the agent that sent the payload'
complete -c ralon -n "__ralon_hook_action '' install uninstall" -l agent -x -a '(__ralon_agent_list)' -d 'auto, all or agent names, comma-separated'
complete -c ralon -n "__ralon_hook_action '' install uninstall" -l user -d "the user's configuration instead of the project's"
complete -c ralon -n "__ralon_hook_action '' install uninstall" -l dry-run -d 'show what would be written'

# help COMMAND
complete -c ralon -n '__ralon_using help; and test $__ralon_npos = 0' -a 'init check status run pause resume guard hook help'
