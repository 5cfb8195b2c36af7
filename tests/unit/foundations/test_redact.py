"""redact() and safe_url(): secrets never reach a message, an id or a cache key."""

from __future__ import annotations

import pytest

from vocencebench.redact import (
    MASK,
    is_secret_name,
    known_secrets,
    redact,
    register_secret,
    register_url_secrets,
    safe_url,
)

SECRET = "reg-SECRET-5566778899"


@pytest.mark.parametrize(
    ("text", "gone", "kept"),
    [
        ("Incorrect API key provided: sk-proj-****abcd.", "****abcd", "Incorrect API key"),
        ("key sk-…****cdef was refused", "****cdef", "was refused"),
        ("key sk-abc...****wxyz was refused", "****wxyz", "was refused"),
        ("bad key sk-proj-AbCdEfGhIjKlMnOpQrStUvWx0123", "AbCdEfGhIjKlMnOp", "bad key"),
        ("google key AIzaSyA-1234567890abcdefghijklmnopqrstu", "AIzaSy", "google key"),
        ("GET https://alice:hunter2@host.example/v1", "hunter2", "host.example/v1"),
        ("see https://h/x?key=abc123&model=m&access_token=t0k3n", "abc123", "model=m"),
        ("see https://h/x?key=abc123&model=m&access_token=t0k3n", "t0k3n", "model=m"),
        ("signed https://b/o?X-Amz-Signature=deadbeef&x=1", "deadbeef", "x=1"),
        ("echo: Authorization: Bearer tok-abcdefgh123", "tok-abcdefgh123", "echo"),
        ('{"x-goog-api-key": "not-a-real-key-999"}', "not-a-real-key-999", "x-goog-api-key"),
        (f"the registered one: {SECRET}", SECRET, "the registered one"),
    ],
)
def test_redact_masks(text: str, gone: str, kept: str) -> None:
    register_secret(SECRET)
    out = redact(text)
    assert gone not in out and kept in out and MASK in out


def test_environment_secrets_are_masked_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", "env-value-for-a-key-42")
    monkeypatch.setenv("HF_TOKEN", "hf-token-value-12345")
    monkeypatch.setenv("SOME_SETTING", "plain-value-12345")
    monkeypatch.setenv("DB_PASSWORD", "short")  # under 8 characters: not a secret
    out = redact("a env-value-for-a-key-42 b hf-token-value-12345 c plain-value-12345 d short")
    assert "env-value-for-a-key-42" not in out and "hf-token-value-12345" not in out
    assert "plain-value-12345" in out and "short" in out
    assert "env-value-for-a-key-42" in known_secrets()


@pytest.mark.parametrize(("name", "secret"), [
    ("GEMINI_API_KEY", True), ("OPENAI_API_KEY", True), ("HF_TOKEN", True),
    ("AWS_SECRET_ACCESS_KEY", True), ("PGPASSWORD", True), ("DB_PASSWORD", True),
    ("KEYBOARD", False), ("TOKENIZERS_PARALLELISM", False), ("PWD", False), ("PATH", False),
    ("GOOGLE_APPLICATION_CREDENTIALS", True),
])
def test_secret_names(name: str, secret: bool) -> None:
    assert is_secret_name(name) is secret


def test_short_values_are_never_secrets() -> None:
    register_secret("abc")
    register_secret(None)
    register_secret("")
    assert redact("abc abc") == "abc abc"


def test_long_text_is_cut() -> None:
    out = redact("x" * 1000)
    assert len(out) < 340 and out.endswith("[700 more characters]")
    assert redact("y" * 1000, limit=None) == "y" * 1000


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://alice:pw@host:8443/v1?key=abc&model=m#frag", "https://host:8443/v1?model=m#frag"),
        ("http://127.0.0.1:8003/v1", "http://127.0.0.1:8003/v1"),
        ("https://h/x?api_key=1&token=2&sig=3&Signature=4", "https://h/x"),
        ("https://token-only@h/x", "https://h/x"),
    ],
)
def test_safe_url(url: str, expected: str) -> None:
    assert safe_url(url) == expected


def test_safe_url_does_not_change_with_the_credentials() -> None:
    a = safe_url("https://u:one@h/v1?key=first&m=x")
    b = safe_url("https://u:two@h/v1?key=second&m=x")
    assert a == b == "https://h/v1?m=x"


def test_url_secrets_are_registered() -> None:
    register_url_secrets("https://bob:pw-URL-SECRET-1234@h/x?key=Q-URL-SECRET-5678")
    out = redact("leaked pw-URL-SECRET-1234 and Q-URL-SECRET-5678 and "
                 "Ym9iOnB3LVVSTC1TRUNSRVQtMTIzNA==")
    assert "SECRET" not in out and "Ym9iOnB3" not in out
