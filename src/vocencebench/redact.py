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
every message would hide more than it protects).
"""

from __future__ import annotations

import base64
import os
import re
import threading
from urllib.parse import parse_qsl, unquote, urlencode, urlsplit, urlunsplit

__all__ = [
    "MASK",
    "MIN_SECRET_CHARS",
    "REDACT_LIMIT",
    "is_secret_name",
    "known_secrets",
    "redact",
    "register_secret",
    "register_url_secrets",
    "safe_url",
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


def register_secret(value: str | None) -> None:
    """Remember ``value`` as a secret: from now on :func:`redact` masks it everywhere.

    ``None``, empty and short values (under :data:`MIN_SECRET_CHARS`) are ignored.
    """
    if value and len(value) >= MIN_SECRET_CHARS:
        with _lock:
            _registered.add(value)


def known_secrets() -> list[str]:
    """Every secret :func:`redact` masks now, longest first (registered + environment)."""
    with _lock:
        found = set(_registered)
    for name, value in os.environ.items():
        if value and len(value) >= MIN_SECRET_CHARS and is_secret_name(name):
            found.add(value)
    return sorted(found, key=lambda s: (-len(s), s))


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
