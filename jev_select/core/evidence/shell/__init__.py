"""The simple commands of a GitHub Actions ``run:`` step, read as bash reads them. Pure.

A step is shell source, so a question about one command (is it ``pnpm test``, and where does it
run?) has to be asked of that command alone, not of the whole step text: a ``cd`` on one line
says nothing about a command that ran before it, or inside a subshell beside it.
``split_commands`` reads the source once and gives every simple command in source order, with
its words after quote removal and the directory it runs in, relative to the repository root.
That includes the commands the shell runs inside others (substitutions, and the scripts a shell
is given), since a command hidden there runs all the same.

Order and text: commands come in source order, except that the commands of a substitution come
before the command that holds it, since they run first (``echo "$(npm run build)"`` gives
``npm run build``, then ``echo`` with its word ``$(npm run build)`` as written). Each command's
``text`` is its own source text, at ``offset``, so that ``script[offset:offset + len(text)] ==
text`` always holds; the one exception to "its own" is a shell's ``-c`` word whose quote
removal changed more than the quotes around it (``bash -c "echo \\"x\\""``): its commands'
text is not written as such anywhere, so each is given the text and offset of the ``bash``
command itself.

What is modelled:

- lists and pipelines (newline, ``;``, ``&``, ``&&``, ``||``, ``|``, ``|&``), line
  continuations and comments;
- single, double and ANSI-C (``$'...'``) quoting, with quote removal; parameter expansions,
  command and process substitutions and backticks stay in the word as written (callers read a
  ``$`` as "only known at run time");
- the commands inside ``$(...)``, backquotes (where a backslash before ``$``, a backquote or a
  backslash is removed first) and ``<(...)``/``>(...)``, at any nesting and wherever they stand:
  in assignments, arguments, redirection targets, double quotes, ``${...}``, ``for`` lists,
  ``case`` words, ``[[ ]]``, arithmetic and array words. They are commands of their own, in
  the directory where the command holding them runs; a substitution is a subshell, so its
  ``cd`` does not move what follows. ``$((...))`` is arithmetic, not a substitution, and
  ``$(<file)`` runs nothing;
- GitHub's ``${{ ... }}``, substituted before any shell sees the text: one opaque piece of a
  word wherever it stands, whatever spaces, quotes or operators it holds;
- here-documents, redirections and leading assignments (not words). A here-document body is
  data, but an unquoted delimiter's body runs its substitutions (``$(...)``, backquotes, not
  after a backslash), from where the redirection is made; their commands come after those of
  the line, where the body stands;
- the script of a shell (``bash``, ``sh``, ``zsh``, ``dash``, ``ksh``, by name or absolute
  path, behind wrappers too), read as the commands of a new shell, in the shell command's
  directory, without the caller's functions or directory stack, and whose ``cd`` stays in it:
  the word ``-c`` runs (the first word after the shell's options, read as bash reads them), or,
  with no script file named (or ``-s``), standard input when its last redirection is a
  here-document (``bash <<EOF``, ``sh -e <<'EOF'``, ``bash -s <<EOF``) or a here-string. Those
  commands come after the shell's. The outer shell expands a double-quoted or unquoted word
  first, so its substitutions are reported once, as the outer shell's; likewise an unquoted
  delimiter's body: its substitutions are the outer shell's, from where the redirection is
  made, and the inner shell reads the rest with its escapes removed;
- compound commands (``if``, ``while``, ``until``, ``for``, ``select``, ``case``, groups,
  subshells, ``[[ ]]``, ``(( ))``) and function definitions: the reserved words are syntax, the
  commands inside are commands (``[[ ... ]]`` and ``(( ... ))`` are reported as commands of
  their own, starting with ``[[`` and ``((``);
- the wrapper commands of ``WRAPPER_COMMANDS``, whose options are dropped so that ``words``
  starts at the command they run;
- the working directory that literal ``cd``, ``pushd``, ``popd`` and ``dirs -c`` give each
  later command, where a subshell, a pipeline element or a background list keeps its changes to
  itself, ``env -C``/``sudo -D`` move one command only, and a call of a function defined earlier
  in the step applies what its body does. A function body's commands run where the function is
  called: their directory is known only when every call in the step is from the same known
  directory.

What is not: control flow. A directory change inside ``if``, ``case``, a loop or after ``||`` is
applied in source order as if every command ran once, in order (a straight-line approximation),
and ``exit``, ``return`` or a failed ``cd`` stop nothing. Aliases, ``CDPATH``, shell options
(``extglob``, ``lastpipe``) and the scripts run by ``source``/``.`` are not read; a sourced
script is assumed not to change the directory, and ``eval`` is assumed to change it (to an
unknown one) only when its words name ``cd``, ``pushd`` or ``popd``; the text ``eval`` runs
and the text piped into a shell (``... | bash``) are not read as commands. Exported functions are
not followed into a new shell. Expansions are not performed: no word splitting, globbing, brace
or tilde expansion; a shell's script that a substitution's output would change is read as
written.

Anything else the reader does not model gives a command whose directory is None, or whose words
are left literal, never a guess that hides a command: a ``cd`` to anything but a literal
relative path or the workspace root makes the directory unknown until a later ``cd`` to a known
place (or a ``popd`` back to one); an option a wrapper is not known to take leaves the wrapper
in the words. Source that cannot be read (an unterminated quote, substitution, here-document or
``${{``, a ``)`` that closes nothing, nesting deeper than the reader follows) ends the reading:
the commands read so far are returned (those inside the command that cannot be read too), then
the rest of the text as one command split at whitespace, with directory None. Text whose extent
is known before it is read (a backquoted command, a here-document body, a shell's ``-c`` word or
here-string, an arithmetic expression) ends only itself that way: what was read in it, then its
rest as one command of directory None, and the reading goes on after it; a shell's
here-document body that the outer shell cannot expand gives only that. Nothing raises.

The modules: ``scanner`` finds where quotes, substitutions and ``${{ }}`` end, ``lexer`` makes
the tokens (words, operators, here-documents), ``parser`` reads the grammar into commands,
``inner`` reads the commands inside others (substitutions, expanding here-document bodies, a
shell's script; each text of known extent as a region of its own),
``directories`` follows what ``cd``, ``pushd`` and ``popd`` do, and ``wrappers`` holds
``WRAPPER_COMMANDS``.
"""

from __future__ import annotations

import attrs

from .directories import start_directory
from .parser import Reader
from .wrappers import WRAPPER_COMMANDS

__all__ = ["WRAPPER_COMMANDS", "ShellCommand", "split_commands"]


@attrs.frozen
class ShellCommand:
    """One simple command of a step, as the shell would run it."""

    # After quote removal, without leading assignments, redirections and wrapper prefixes.
    words: tuple[str, ...]
    # The command's source text as written (from its first to its last token); for a command of
    # a shell's -c word not written 1:1 in the source, the shell command's text.
    text: str
    # Where ``text`` starts in the script.
    offset: int
    # Relative to the repository root: "." or a normalised relative path; None when unknown.
    directory: str | None


def split_commands(script: str, directory: str | None = ".") -> tuple[ShellCommand, ...]:
    """Every simple command of ``script``, in source order; ``directory`` is where the step
    starts, relative to the repository root (None when unknown)."""
    reader = Reader(script, start_directory(directory))
    unread = reader.read()
    commands = [
        ShellCommand(
            words=words,
            text=script[start:end],
            offset=start,
            directory=reader.directory(place),
        )
        for words, start, end, place in reader.commands
    ]
    if unread is not None:
        rest = script[unread:]
        stripped = rest.strip()
        if stripped:
            offset = unread + len(rest) - len(rest.lstrip())
            end = max(offset + len(stripped), reader.read_inside(unread))
            commands.append(
                ShellCommand(
                    words=tuple(rest.split()),
                    text=script[offset:end],
                    offset=offset,
                    directory=None,
                )
            )
    return tuple(commands)
