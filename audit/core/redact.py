"""Secrets kept out of everything judge-audit records or prints.

A key can reach a command line in several ways: in a URL's query (``?api_key=sk-...``), in
its user-info (``https://user:pass@host``), as the value of an option named like a key
(``--x-api-key VALUE``), or pasted bare (``sk-...``). The recorded command (result.json,
report.html) and every error message go through these functions, which replace the secret
with ``REDACTED`` and keep the rest, so the record still says *that* a key was given and
where.

Rules
-----
* URL query or fragment parameters whose name contains ``key``, ``token``, ``secret``,
  ``passw``, ``auth``, ``signature``, ``credential`` or ``session`` (any case): the value.
* URL user-info (``user:pass@``): all of it.
* Options ``--*-key``, ``--*-token``, ``--*-secret``, ``--*-password`` (and ``--key`` etc.):
  the value (``--opt VALUE`` or ``--opt=VALUE``). ``--*-key-env NAME`` names a variable and
  is kept.
* Strings shaped like provider keys: ``sk-...``, ``Bearer ...``.
"""

from __future__ import annotations

import re
from urllib.parse import parse_qsl, quote, urlsplit, urlunsplit

REDACTED = "REDACTED"

_SECRET_NAME = re.compile(r"key|token|secret|passw|auth|signature|credential|session", re.IGNORECASE)
_SECRET_OPTION = re.compile(r"^--?(?:[\w-]*[-_])?(?:key|api[-_]?key|token|secret|password|passwd|pass)$", re.IGNORECASE)
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>`]+")
_KEY_SHAPED = re.compile(r"\bsk-[A-Za-z0-9_\-]{6,}")
_BEARER = re.compile(r"(\bBearer\s+)[A-Za-z0-9._~+/=\-]{6,}", re.IGNORECASE)


def _redact_params(part: str) -> str:
    if "=" not in part:
        return part
    pairs = parse_qsl(part, keep_blank_values=True)
    if not any(_SECRET_NAME.search(name) for name, _ in pairs):
        return part
    return "&".join(
        f"{quote(name, safe='')}={REDACTED if _SECRET_NAME.search(name) else quote(value, safe='')}"
        for name, value in pairs
    )


def redact_url(url: str) -> str:
    """``url`` with user-info and secret-named query/fragment values replaced by ``REDACTED``."""
    try:
        parts = urlsplit(url)
        netloc = parts.netloc
        if "@" in netloc:
            netloc = f"{REDACTED}@{netloc.rsplit('@', 1)[1]}"
        redacted = urlunsplit(
            (parts.scheme, netloc, parts.path, _redact_params(parts.query), _redact_params(parts.fragment))
        )
    except ValueError:  # not parseable as a URL (e.g. a broken IPv6 literal): redact by pattern
        redacted = re.sub(r"//[^/@\s]*@", f"//{REDACTED}@", url)
        redacted = re.sub(
            r"([?&#][^=&#\s]*(?:key|token|secret|passw|auth|signature|credential|session)[^=&#\s]*=)[^&#\s]*",
            rf"\g<1>{REDACTED}",
            redacted,
            flags=re.IGNORECASE,
        )
    return _KEY_SHAPED.sub(f"sk-{REDACTED}", redacted)


def _redact_url_match(match: re.Match) -> str:
    url = match.group()
    body = url.rstrip(".,;:!?)]}")  # sentence punctuation after a URL is not part of it
    return redact_url(body) + url[len(body) :]


def redact_text(text: str) -> str:
    """Free text (a message, one argument) with every URL redacted and key-shaped strings removed."""
    text = _URL.sub(_redact_url_match, text)
    text = _BEARER.sub(rf"\g<1>{REDACTED}", text)
    return _KEY_SHAPED.sub(f"sk-{REDACTED}", text)


def redact_argv(argv: list[str]) -> list[str]:
    """A command line with the values of secret-named options and every secret in a value redacted."""
    out: list[str] = []
    hide_next = False
    for arg in argv:
        if hide_next:
            out.append(REDACTED)
            hide_next = False
            continue
        name, eq, _ = arg.partition("=")
        if arg.startswith("-") and _SECRET_OPTION.match(name):
            if eq:
                out.append(f"{name}={REDACTED}")
            else:
                out.append(arg)
                hide_next = True
            continue
        out.append(redact_text(arg))
    return out


def redact_command(command: str) -> str:
    """A recorded command line (``shlex.join`` of its arguments) with its secrets redacted.

    What ``audit run`` records is redacted already and comes back unchanged; a command edited
    into a saved result (``--api-key sk-...``) is redacted before it is shown. A line that does
    not split as shell words is redacted word by word.
    """
    import shlex

    try:
        return shlex.join(redact_argv(shlex.split(command)))
    except ValueError:  # an unbalanced quote
        return " ".join(redact_argv(command.split(" ")))


__all__ = ["REDACTED", "redact_argv", "redact_command", "redact_text", "redact_url"]
