"""Names as Kafka carries them: UTF-8 text.

Kafka's protocol writes every name (topic, member id, group.instance.id, client.rack) as
UTF-8, and so do the sticky assignors' user data and the topic ids kassign derives from
names. A Python ``str`` can hold what UTF-8 cannot: a lone surrogate (``"\\ud800"``), which
JSON carries as ``"\\ud800"`` and YAML as ``"\\ud800"`` too. Java would write it as ``?``
(its encoder replaces what it cannot encode), so two different names could become one; no
real group or cluster can have such a name. kassign's readers refuse it, saying where.

``printable`` shows any name as itself on a terminal (controls escaped).
``escaped`` shows such a name with its surrogates written as ``\\udXXX``, so a message
about it can be printed anywhere.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Any


def escaped(text: str) -> str:
    """``text`` with every character UTF-8 cannot carry written as a ``\\udXXX`` escape."""
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def is_utf8(text: str) -> bool:
    """Whether UTF-8 (how Kafka sends names) can carry ``text``."""
    if text.isascii():
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def all_utf8(texts: Iterable[str]) -> bool:
    """Whether every one of ``texts`` is carried by UTF-8: one join and one check for all of them.
    (Two lone surrogates side by side stay two code points in Python, so joining cannot pair them.)"""
    return is_utf8("".join(texts))


def utf8_problem(text: str, what: str) -> str | None:
    """None when ``text`` is UTF-8 text, else a sentence saying where the lone surrogate is."""
    if is_utf8(text):
        return None
    position, char = next((i, c) for i, c in enumerate(text) if "\ud800" <= c <= "\udfff")
    return (f"{what} '{escaped(text)}' has a lone surrogate ({escaped(char)}) at position {position}: not "
            "Unicode text that UTF-8 can carry, and Kafka sends names as UTF-8; fix the name (if it was read "
            "from bytes, decode them as UTF-8)")


# Characters a terminal would act on or cannot show: controls (escape sequences, bells, carriage
# returns), format characters (right-to-left overrides) and lone surrogates (not encodable).
_HIDDEN_CATEGORIES = {"Cc", "Cf", "Cs"}
_LAYOUT = {"\n", "\t"}  # line breaks and tabs only lay text out


def printable(value: Any) -> str:
    """``str(value)`` with every character a terminal would interpret written as an escape,
    so a member named ``\x1b[2J`` or ``[bold]x`` shows as itself."""
    text = str(value)
    if text.isprintable():
        return text
    return "".join(_escape(ch) if ch not in _LAYOUT and unicodedata.category(ch) in _HIDDEN_CATEGORIES else ch
                   for ch in text)


def _escape(ch: str) -> str:
    code = ord(ch)
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"
