#!/usr/bin/env zsh
# SPDX-License-Identifier: Apache-2.0
# Real zsh completion, for tests/completion/test_completion.py.
#
# usage: zsh -f zsh-complete.zsh FPATH_DIR WORKDIR EXTRA LINE...
#
# Starts one interactive `zsh -f` in a pseudo-terminal (zsh/zpty), puts
# FPATH_DIR first in its $fpath, runs compinit and sources the file EXTRA
# (unless it is the empty string). Then for each LINE: types it and a Tab
# bound to complete-word, prints every match the completion system added,
# one per line, then a line `## end`, and clears the line. A wrapper
# around compadd records the matches; calls that only compute (-O, -A,
# -D) are passed through unrecorded. Exit status 2 when zsh cannot be
# driven.

emulate -L zsh
setopt err_return no_unset

zmodload zsh/zpty || { print -u2 'zsh/zpty is not available'; exit 2 }

local fpath_dir=$1 workdir=$2 extra=$3
shift 3
local setup=$workdir/setup.zsh

# What the interactive zsh runs before the line is typed.
cat >$setup <<'EOF'
PS1='' PS2='' RPS1=''
unsetopt beep auto_list list_ambiguous auto_menu
bindkey -e
bindkey '^I' complete-word
fpath=($RALON_TEST_FPATH $fpath)
autoload -Uz compinit
compinit -u -D
# Every match offered, into $RALON_TEST_OUT.
compadd() {
  local a
  for a in "$@"; do
    [[ $a == (-|--) ]] && break
    if [[ $a == -[OAD]* ]]; then
      builtin compadd "$@"
      return
    fi
  done
  local -a __ralon_m
  builtin compadd -O __ralon_m "$@"
  (( $#__ralon_m )) && print -rl -- $__ralon_m >>$RALON_TEST_OUT
  builtin compadd "$@"
}
# _main_complete empties comppostfuncs before calling them: re-arm.
_ralon_test_done() {
  print -r -- '## done' >>$RALON_TEST_OUT
  comppostfuncs+=(_ralon_test_done)
}
comppostfuncs=(_ralon_test_done)
[[ -z $RALON_TEST_EXTRA ]] || source $RALON_TEST_EXTRA
EOF

local line i chunk out=$workdir/matches
: >$out
export RALON_TEST_FPATH=$fpath_dir RALON_TEST_OUT=$out RALON_TEST_EXTRA=$extra
zpty ralon_test zsh -f -i
zpty -w ralon_test "source ${(q)setup}"
for line in "$@"; do
  : >$out
  zpty -w -n ralon_test "$line"$'\t'
  # Wait for the completion to finish (up to 20 s), draining the terminal.
  for i in {1..2000}; do
    while zpty -r -t ralon_test chunk 2>/dev/null; do :; done
    [[ -s $out && $(<$out) == *'## done'* ]] && break
    sleep 0.01
  done
  if [[ $(<$out) != *'## done'* ]]; then
    print -u2 "zsh did not complete: $line"
    zpty -d ralon_test
    exit 2
  fi
  grep -v '^## done$' $out || true
  print -r -- '## end'
  # Clear the line for the next one: end of line, kill the whole line.
  zpty -w -n ralon_test $'\C-e\C-u'
done
zpty -d ralon_test
