"""Is this message the person approving or revoking a folder? Read without a model.

Why no model: the router's prompt lists the agents a model may pick, and every line there
is paid on every plain message. A request about a folder names the folder, and a folder is
named as a path; a path next to a word of permission or reading is that request, honestly
recognisable by its words (docs/behaviour/agents.md#library-roots):

- **A path**: a token that starts with `~`, `/`, `./` or `../`, after a space, a bracket
  or at the start (so `und/oder` and web addresses are not paths); or such a path in
  quotes, which may hold spaces ("„~/Meine Notizen“"). Trailing sentence marks are not part
  of it. The first path counts.
- **Approve**: a word of permission ("darfst", "erlaube", "may", "allowed") or of reading
  ("lies", "lesen", "read") and no negation.
- **Revoke**: a word of revoking ("widerrufe", "vergiss", "revoke", "forget"), or a
  negation ("nicht", "not", "no longer", "stop") with a word of permission or reading —
  and no question mark: "Warum liest du ~/x nicht?" asks, it does not revoke. A revocation
  runs without asking back, so it is read the stricter way.

Everything else is not a folder request ("Was steht in ~/Notizen/plan.md?" names a path
but asks nothing of the kind) and is routed as usual.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

APPROVE: Final = "freigeben"
REVOKE: Final = "widerrufen"
"""The agent's actions (`aktion`), as its audit and open question store them."""

PERMISSION: Final = frozenset(
    {
        # German: addressed to Nova ("du darfst"), or the person granting ("ich erlaube")
        "darfst",
        "dürfen",
        "duerfen",
        "erlaube",
        "erlaub",
        "erlaubt",
        "gestatte",
        "kannst",
        "könntest",
        "koenntest",
        "freigeben",
        "frei",
        "zugriff",
        # English
        "may",
        "allow",
        "allowed",
        "permission",
        "access",
        "can",
        "grant",
    }
)
"""Words that give (or, negated, take back) the permission to read."""

READING: Final = frozenset(
    {
        "lesen",
        "lies",
        "lese",
        "liest",
        "durchsuchen",
        "durchsuche",
        "anschauen",
        "ansehen",
        "indizieren",
        "read",
        "reading",
        "search",
        "index",
    }
)
"""Words of reading a folder: "lies ~/Notizen" asks Nova to read it."""

REVOKING: Final = frozenset(
    {
        "widerrufe",
        "widerrufen",
        "widerruf",
        "entziehe",
        "entzieh",
        "entziehen",
        "vergiss",
        "revoke",
        "forget",
    }
)
"""Words that take a permission back on their own."""

NEGATION: Final = frozenset(
    {
        "nicht",
        "nich",
        "nie",
        "niemals",
        "kein",
        "keine",
        "keinen",
        "nimmer",
        "aufhören",
        "aufhoeren",
        "not",
        "never",
        "dont",
        "cant",
        "cannot",
        "no",
        "stop",
        "stopp",
    }
)
"""A negation anywhere makes a permission or reading word a revocation."""

_QUOTES = "\"'„“”‚‘’«»`"
_QUOTED = re.compile(rf"[{_QUOTES}]((?:~|\.{{1,2}}/|/)[^{_QUOTES}\n]*)[{_QUOTES}]")
_BARE = re.compile(rf"(?:^|(?<=[\s(\[]))((?:~|\.{{1,2}}/|/)[^\s{_QUOTES}()\[\]]*)")
_TRAILING = ".,;:!?)]"
_WORD = re.compile(r"[^\W\d_]+(?:'[^\W\d_]+)*")


@dataclass(frozen=True, slots=True)
class FolderRequest:
    """What the message asks: approve or revoke, and the path as the person wrote it."""

    action: str
    path: str


def first_path(text: str) -> str | None:
    """The first path-like token of `text` (quoted first), or None. `/` alone is no path."""
    for pattern in (_QUOTED, _BARE):
        for match in pattern.finditer(text):
            path = match.group(1).strip().rstrip(_TRAILING)
            if path and path != "/":
                return path
    return None


def _words(text: str, path: str) -> set[str]:
    """The message's words without the path's own ("~/lesen" names a folder)."""
    rest = text.replace(path, " ").lower().replace("\u2019", "'")
    return {word.replace("'", "") for word in _WORD.findall(rest)}


def folder_request(text: str) -> FolderRequest | None:
    """The folder request in `text` (see the module doc), or None."""
    path = first_path(text)
    if path is None:
        return None
    words = _words(text, path)
    asks_to_read = bool(words & (PERMISSION | READING))
    if "?" not in text and (words & REVOKING or (words & NEGATION and asks_to_read)):
        return FolderRequest(REVOKE, path)
    if asks_to_read and not words & (NEGATION | REVOKING):
        return FolderRequest(APPROVE, path)
    return None
