"""Dynamic text in GitHub Flavoured Markdown (CommonMark, GFM tables, GFM autolinks).

The step summary shows values this package did not write itself: task IDs, reason and gap codes
and ``force_paths`` patterns from the task table, workflow and action references from the base
branch or another repository, model identifiers from the provider, refs, notes. Each one is
rendered by exactly one of two functions here; the summary's own wording (the constants of
``contracts``) is written as it is.

``code_span`` is the rule for everything. Inside a CommonMark code span no other construct is
recognised: no emphasis, link, image, raw HTML, entity or autolink (GFM's extended autolinks
only rewrite text, and a code span holds none), so ``<``, ``&``, ``[``, ``!``, ``*`` and ``_``
stay literal and need no escaping (an entity would even show as typed). What could still end the
span early is taken away:

- the fence is one backtick longer than the longest run of backticks in the value, so no run
  inside can close it;
- a value that begins or ends with a backtick or a space is padded with one space each side,
  which CommonMark strips again (a value of spaces only is not padded: it is never stripped);
- CR and LF become spaces, since a line ending would end a table row (and a paragraph line
  could start a block);
- in a table cell every ``|`` is written ``\\|``: GFM splits a row into cells before it parses
  inlines, even inside code spans, and removes exactly that backslash again.

CommonMark has no empty code span, so an empty value renders as a span holding one space.

``bare`` is for values shown outside a code span (a status in the heading, byte counts, scores):
a word of ASCII letters and digits joined by single hyphens, or a decimal number, is written as
it is, since no Markdown construct, HTML or autolink can start from those characters (a GFM
autolink needs ``:``, ``@`` or ``www.``); anything else gets a code span, so free text (a note,
a task description) is never interpreted.
"""

from __future__ import annotations

import re

__all__ = ["bare", "code_span"]

_BACKTICK_RUN = re.compile(r"`+")
_LINE_ENDING = re.compile(r"\r\n|\r|\n")
_BARE = re.compile(
    r"[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?", re.ASCII
)
_PAD_EDGES = ("`", " ")


def code_span(value: object, *, in_table: bool) -> str:
    """``value`` as one inline code span whose content reads back as ``value`` (line endings
    as spaces); ``in_table`` when the span sits in a GFM table cell."""
    text = _LINE_ENDING.sub(" ", str(value))
    if not text:
        return "` `"
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    fence = "`" * (longest + 1)
    if text.strip(" ") and (text.startswith(_PAD_EDGES) or text.endswith(_PAD_EDGES)):
        text = f" {text} "
    if in_table:
        text = text.replace("|", "\\|")
    return f"{fence}{text}{fence}"


def bare(value: object, *, in_table: bool) -> str:
    """``value`` as plain text when it is a simple word or number, else as ``code_span``."""
    text = str(value)
    if _BARE.fullmatch(text):
        return text
    return code_span(text, in_table=in_table)
