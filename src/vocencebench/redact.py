"""Keep secrets out of everything vocencebench prints, logs, hashes or stores.

Two functions do the work:

* :func:`redact` ``(text) -> str`` — for free text that came from outside (a server's error
  body, an exception message, a URL): masks every secret the process knows, key-shaped tokens
  and a server's masked echo of a key, URL credentials and key-like query parameters, and
  cuts the text to ``limit`` characters (300 by default);
* :func:`safe_url` ``(url) -> str`` — for a URL that becomes part of an id, a cache key, a
  ``repr`` or a log line: drops ``user:password@`` and key-like query parameters entirely, so
  the id does not change when the key does.

"Every secret the process knows" is the union of

* values passed to :func:`register_secret` — every API key handed to a judge backend, the
  speech adapter or the transcriber is registered when the object is built, and so is the
  password or query key of a URL given to them;
* the values of environment variables whose *name* looks like a credential
  (``*_API_KEY``, ``*_KEY``, ``*_TOKEN``, ``*_SECRET``, ``*_PASSWORD``, ``*_CREDENTIALS``, …),
  read at call time.

Values shorter than :data:`MIN_SECRET_CHARS` are never treated as secrets (masking "abc" in
every message would hide more than it protects). A secret is also masked in the forms a
vendor's message may show it in (:func:`secret_forms`): inside the ``repr`` of a ``str`` or
of ``bytes`` (``b'Bearer sk-…\\r'``, where a control character becomes an escape), JSON-escaped,
stripped of surrounding whitespace, and each piece between control characters or spaces.

:func:`check_key` is the other half: a key that an HTTP header cannot carry as it is (a
control character such as CR, LF or NUL, a space, anything outside printable ASCII) is
refused where the component is configured, in one line that names where the key came from
and never shows it.
"""

from __future__ import annotations

import base64
import json
import os
import re
import threading
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

from .errors import ConfigError

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "REDACT_LIMIT",
    "check_key",
    "is_secret_name",
    "known_secrets",
    "redact",
    "register_secret",
    "register_url_secrets",
    "safe_url",
    "secret_forms",
]

#: What a secret is replaced with.
MASK = "[REDACTED]"
#: Shortest value treated as a secret, in characters.
MIN_SECRET_CHARS = 8
#: Default length (characters) :func:`redact` cuts its output to.
REDACT_LIMIT = 300

_lock = threading.Lock()
_registered: set[str] = set()

# An environment variable whose name says it holds a credential.
_SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|APIKEY|KEY|CREDENTIALS?|AUTH)(?:_|$)"
    r"|(?:PASSWORD|PASSWD|PASSPHRASE|SECRET|TOKEN)(?:_|$)",
    re.IGNORECASE,
)
# Query parameters that carry credentials (compared case-insensitively, "-" read as "_").
_SECRET_PARAMS = frozenset({
    "key", "api_key", "apikey", "token", "access_token", "refresh_token", "id_token",
    "auth", "authorization", "sig", "signature", "password", "passwd", "secret",
    "client_secret", "x_amz_signature", "x_amz_credential", "x_amz_security_token",
    "x_goog_signature", "x_goog_credential",
})
_PARAM_NAMES = "|".join(sorted((re.escape(p).replace("_", "[_-]") for p in _SECRET_PARAMS),
                               key=len, reverse=True))
# key=VALUE inside free text (a URL's query, a form body).
_PARAM_IN_TEXT = re.compile(rf"(?i)([?&;]|\b)({_PARAM_NAMES})=([^&\s\"'#<>]+)")
# scheme://user:password@host
_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^/\s@\"'<>]+@")
# Key-shaped tokens: OpenAI-style (sk-, sk-proj-, rk-), Google API keys, Hugging Face tokens.
_KEY_SHAPED = re.compile(
    r"\b(?:sk|rk|pk)-[A-Za-z0-9_\-]{16,}|\bAIza[0-9A-Za-z_\-]{30,}|\bhf_[A-Za-z0-9]{30,}"
)
# A server's masked echo of a key: "sk-…****cdef", "sk-proj-****abcd", "AIza...****wxyz".
_MASKED_ECHO = re.compile(r"[A-Za-z0-9_\-]{2,}(?:\.{3}|…)?\*{3,}[A-Za-z0-9_\-]*")
# Credentials in echoed headers: "Authorization: Bearer xyz", "x-goog-api-key: xyz".
_HEADER_ECHO = re.compile(
    r"(?i)((?:authorization|proxy-authorization)[\"']?\s*[:=]\s*[\"']?(?:bearer|basic|token)?\s*)"
    r"([^\s\"',;}]+)"
    r"|((?:x-goog-api-key|x-api-key|api-key|x-auth-token)[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}]+)"
)


def is_secret_name(name: str) -> bool:
    """True when an environment variable called ``name`` looks like it holds a credential."""
    return bool(_SECRET_NAME.search(name)) and name.upper() not in ("PWD", "OLDPWD")


# Characters a key never contains and a header value cannot carry as they are: controls,
# whitespace, anything outside printable ASCII (split points of a secret's pieces, too).
_NOT_KEY_CHAR = re.compile(r"[^\x21-\x7e]")
_CHAR_NAMES = {"\r": "a carriage return (CR)", "\n": "a line feed (LF)", "\0": "a NUL byte",
               " ": "a space", "\t": "a tab", "\x7f": "a DEL character"}


def secret_forms(value: str, *, pieces: bool = True) -> set[str]:
    """The texts that show ``value`` in a message: itself, the inside of its ``repr`` as a
    ``str`` and as UTF-8 ``bytes`` (where CR becomes ``\\r``), its JSON escape, the value
    stripped of surrounding whitespace, and with ``pieces`` — for a value with control
    characters or spaces in it — each piece between them (what a library that cut the value
    at a newline would show). Forms under :data:`MIN_SECRET_CHARS` are left out."""
    forms = {value, value.strip(), repr(value)[1:-1], json.dumps(value)[1:-1],
             repr(value.encode("utf-8"))[2:-1]}
    if pieces:
        forms.update(_NOT_KEY_CHAR.split(value))
    return {f for f in forms if len(f) >= MIN_SECRET_CHARS}


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret: from now on :func:`redact` masks it everywhere, in
    each of its :func:`secret_forms`.

    ``None``, empty and short values (under :data:`MIN_SECRET_CHARS`) are ignored.
    """
    if value and len(value) >= MIN_SECRET_CHARS:
        forms = secret_forms(value)
        with _lock:
            _registered.update(forms)


def known_secrets() -> list[str]:
    """Every secret :func:`redact` masks now, in every form, longest first (registered +
    environment)."""
    with _lock:
        found = set(_registered)
    for name, value in os.environ.items():
        if value and len(value) >= MIN_SECRET_CHARS and is_secret_name(name):
            # not cut into pieces: such a variable may hold a phrase, not a key
            found.update(secret_forms(value, pieces=False))
    return sorted(found, key=lambda s: (-len(s), s))


def check_key(value: str | None, *, source: str) -> str | None:
    """``value`` unchanged, or ConfigError when an HTTP header cannot carry it as a key.

    A key is printable ASCII without spaces; one with a control character (CR, LF, NUL, a
    tab), a space or any other character is a copy-and-paste or ``echo`` accident, and sent
    as it is the HTTP library refuses it with a message that quotes it. ``source`` says where
    the key came from (``"environment variable OPENAI_API_KEY"``, ``"api_key="``): the error
    names it and the offending character and its position, never the value. ``None`` and
    ``""`` (no key) pass. Call it where the component is configured, before any work.
    """
    if not value:
        return value
    bad = _NOT_KEY_CHAR.search(value)
    if bad is None:
        return value
    ch = bad.group()
    what = _CHAR_NAMES.get(ch, f"the character U+{ord(ch):04X}")
    where = ("at its end" if bad.start() == len(value) - 1
             else "at its start" if bad.start() == 0 else f"at character {bad.start() + 1}")
    raise ConfigError(
        f"{source} holds an API key with {what} {where}; an HTTP header cannot carry it and "
        "no key contains one (a stray newline from `echo` or a copied line?): set the key "
        "again without it (the value is not shown)", fatal=True)


def _header_mask(m: re.Match[str]) -> str:
    if m.group(1) is not None:
        return m.group(1) + MASK
    return m.group(3) + MASK


def redact(text: object, *, limit: int | None = REDACT_LIMIT) -> str:
    """``text`` (any object, as ``str``) with every secret masked, cut to ``limit`` characters.

    Masks: known secrets (see the module docstring), key-shaped tokens (``sk-…``, ``AIza…``,
    ``hf_…``), a server's masked echo of a key (``sk-…****cdef``), credentials after
    ``Authorization:``/``x-goog-api-key:`` and similar echoed headers, ``user:password@`` in
    URLs and the values of key-like query parameters (``key=``, ``api_key=``, ``token=``,
    ``access_token=``, ``sig=``, …). ``limit=None`` keeps the whole text.
    """
    s = str(text)
    for secret in known_secrets():
        if secret in s:
            s = s.replace(secret, MASK)
    s = _USERINFO.sub(lambda m: m.group(1) + MASK + "@", s)
    s = _PARAM_IN_TEXT.sub(lambda m: f"{m.group(1)}{m.group(2)}={MASK}", s)
    s = _HEADER_ECHO.sub(_header_mask, s)
    s = _KEY_SHAPED.sub(MASK, s)
    s = _MASKED_ECHO.sub(MASK, s)
    if limit is not None and len(s) > limit:
        s = s[:limit].rstrip() + f"… [{len(s) - limit} more characters]"
    return s


def _secret_param(name: str) -> bool:
    return name.lower().replace("-", "_") in _SECRET_PARAMS


def safe_url(url: str) -> str:
    """``url`` without credentials: no ``user:password@``, no key-like query parameters.

    The result is stable when only the credentials change, so it can go into an id, a cache
    key or a ``repr``. Anything that is not an absolute URL is returned through
    :func:`redact` (uncut).
    """
    try:
        parts = urlsplit(url)
    except ValueError:
        return redact(url, limit=None)
    if not parts.scheme or not parts.netloc:
        return redact(url, limit=None)
    host = parts.netloc.rpartition("@")[2]
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True)
             if not _secret_param(k)]
    clean = urlunsplit((parts.scheme, host, parts.path, urlencode(query), parts.fragment))
    return redact(clean, limit=None)


def register_url_secrets(url: str) -> None:
    """Register the password and the key-like query values of ``url`` as secrets."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    if parts.password:
        register_secret(parts.password)
        register_secret(unquote(parts.password))
        # what an HTTP client sends for it (Basic auth), should a server echo the header
        pair = f"{unquote(parts.username or '')}:{unquote(parts.password)}"
        register_secret(base64.b64encode(pair.encode()).decode("ascii"))
    if parts.username and parts.password is None:
        register_secret(parts.username)  # a bare token used as the user name
    for k, v in parse_qsl(parts.query, keep_blank_values=True):
        if _secret_param(k):
            register_secret(v)
