"""One registry of the command-line spec kinds: systems, judges, transcribers, executors.

A spec is ``NAME`` or ``NAME:ARGUMENT`` (``espeak-follow``, ``cmd:TEMPLATE``,
``local:URL#MODEL``, ``dask:tcp://host:8786``). Each kind maps names to a :class:`SpecForm`
(its syntax for help texts and error messages, and a builder that imports its heavy
dependency only when called). :func:`build` is what the CLI calls; an unknown spec is a
:class:`~vocencebench.errors.ConfigError` listing every form of that kind.

Adding a form is one :func:`register` call::

    from vocencebench import specs
    specs.register("system", "mytts", "mytts:CHECKPOINT", lambda arg, **kw: MyTTS(arg))

Per-system concurrency is not part of a spec (a ``?`` or ``,`` would collide with command
lines and URLs): pass ``benchmark(concurrency=(a, b))`` from Python, or ``--concurrency-a`` /
``--concurrency-b`` on the command line.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final, Literal

from .errors import ConfigError, MissingDependencyError
from .executor import (
    DaskExecutor,
    Executor,
    LocalExecutor,
    SerialExecutor,
    capped_workers,
    check_dask_address,
    check_workers,
)
from .redact import redact

__all__ = ["KINDS", "SpecForm", "build", "build_system", "forms", "lookup", "make_executor",
           "register", "syntaxes", "validate_executor_spec"]

Kind = Literal["system", "judge", "transcriber", "executor"]
KINDS: Final[tuple[Kind, ...]] = ("system", "judge", "transcriber", "executor")

#: A builder gets the text after ``NAME:`` ("" for a bare name) and the caller's options.
Builder = Callable[..., Any]


@dataclass(frozen=True)
class SpecForm:
    """One form of a spec kind.

    ``name`` is the word before ``:``; ``syntax`` how it is written (``cmd:TEMPLATE``);
    ``bare``: ``NAME`` alone is accepted; ``needs_arg``: ``NAME:`` must be followed by an
    argument; ``takes_arg``: ``NAME:ARGUMENT`` is accepted at all (False for a form that is a
    name only, so an argument is refused, never ignored); ``options``: the keyword options
    the builder accepts from :func:`build`.
    """

    kind: Kind
    name: str
    syntax: str
    builder: Builder
    bare: bool = False
    needs_arg: bool = True
    options: tuple[str, ...] = ()
    takes_arg: bool = True


_REGISTRY: dict[Kind, dict[str, SpecForm]] = {k: {} for k in KINDS}


def register(kind: Kind, name: str, syntax: str, builder: Builder, *, bare: bool = False,
             needs_arg: bool = True, options: tuple[str, ...] = (),
             takes_arg: bool = True) -> SpecForm:
    """Add a form; a duplicate name within a kind is an error."""
    if kind not in _REGISTRY:
        raise ConfigError(f"unknown spec kind {kind!r}; kinds: {', '.join(KINDS)}")
    if name in _REGISTRY[kind]:
        raise ConfigError(f"{kind} spec {name!r} is already registered")
    form = SpecForm(kind, name, syntax, builder, bare=bare, needs_arg=needs_arg,
                    options=options, takes_arg=takes_arg)
    _REGISTRY[kind][name] = form
    return form


def forms(kind: Kind) -> tuple[SpecForm, ...]:
    """Every form of ``kind``, in registration order."""
    return tuple(_REGISTRY[kind].values())


def syntaxes(kind: Kind) -> tuple[str, ...]:
    """How each form of ``kind`` is written (for help texts)."""
    return tuple(dict.fromkeys(f.syntax for f in forms(kind)))


def lookup(kind: Kind, spec: str | None, *, shown: str | None = None
           ) -> tuple[SpecForm, str]:
    """The registered form ``spec`` is written in, and its argument (the text after
    ``NAME:``, "" for a bare name). A ConfigError when it is none: "expected SYNTAX" for a
    known name written wrongly, else "unknown KIND" listing every registered form of
    ``kind``. ``shown``: the spec as the error prints it (e.g. with a credential redacted).
    Checks the syntax only; nothing is built or imported."""
    if kind not in _REGISTRY:
        raise ConfigError(f"unknown spec kind {kind!r}; kinds: {', '.join(KINDS)}")
    text = "" if spec is None else str(spec)
    name, sep, arg = text.partition(":")
    form = _REGISTRY[kind].get(name)
    # A spec can carry a URL with a password or a key in it: an error shows it redacted.
    shown = redact(text, limit=None) if shown is None else shown
    if form is None:
        raise ConfigError(f"unknown {kind} {shown!r}; use {' | '.join(syntaxes(kind))}")
    if (not sep and not form.bare) or (sep and form.needs_arg and not arg) \
            or (sep and not form.takes_arg):
        raise ConfigError(f"expected {form.syntax}, got {shown!r}")
    return form, arg


def build(kind: Kind, spec: str | None, **options: Any) -> Any:
    """The object ``spec`` names (a system, a judge or None, a transcriber or None, an
    executor). ``options`` go to builders that declare them (e.g. ``workers`` for executors,
    ``requests_per_minute`` for judges); an option a form does not take is ignored only when
    it is None."""
    form, arg = lookup(kind, spec)
    extra = [k for k, v in options.items() if k not in form.options and v is not None]
    if extra:
        raise ConfigError(f"{kind} spec {form.syntax} takes no option {', '.join(extra)}")
    return form.builder(arg, **{k: v for k, v in options.items() if k in form.options})


# ------------------------------------------------------------------------------ systems


def build_system(spec: str) -> Callable[[str, str], bytes]:
    """A system from a CLI spec: a built-in name (``espeak-follow``, ``espeak-flat``,
    ``hibari``, ``hibari-follow``), ``cmd:TEMPLATE``, ``dir:PATH``,
    ``openai-speech:URL#MODEL#VOICE``, ``qwen3:CHECKPOINT`` or ``parler:CHECKPOINT`` (or a
    form added with :func:`register`); an unknown spec is a ConfigError listing them."""
    system: Callable[[str, str], bytes] = build("system", spec)
    return system


def _espeak(name: str) -> Builder:
    def make(arg: str) -> Any:
        from .adapters import EspeakSystem

        return EspeakSystem(name)

    return make


def _cmd(arg: str) -> Any:
    from .adapters import CommandAdapter

    return CommandAdapter(arg)


def _dir(arg: str) -> Any:
    from .adapters import DirectoryAdapter

    return DirectoryAdapter(arg)


def _openai_speech(arg: str) -> Any:
    from .adapters import OpenAISpeechAdapter

    parts = arg.split("#")
    if len(parts) != 3 or not all(parts):
        raise ConfigError("expected openai-speech:URL#MODEL#VOICE, got "
                          f"'openai-speech:{redact(arg, limit=None)}'")
    return OpenAISpeechAdapter(parts[0], parts[1], parts[2])


def _qwen3(arg: str) -> Any:
    from .adapters import Qwen3TTSAdapter

    return Qwen3TTSAdapter(arg)


def _parler(arg: str) -> Any:
    from .adapters import ParlerTTSAdapter

    return ParlerTTSAdapter(arg)


def _hibari(name: str) -> Builder:
    def make(arg: str) -> Any:
        from .systems.hibari import HibariSystem  # needs the neural extra (hibari-tts)

        return HibariSystem(name)

    return make


# Names only: tts is not imported until a system is built.
for _name in ("espeak-follow", "espeak-flat"):
    register("system", _name, _name, _espeak(_name), bare=True, needs_arg=False,
             takes_arg=False)
for _name in ("hibari-follow", "hibari"):
    register("system", _name, _name, _hibari(_name), bare=True, needs_arg=False,
             takes_arg=False)
register("system", "cmd", "cmd:TEMPLATE", _cmd)
register("system", "dir", "dir:PATH", _dir)
register("system", "openai-speech", "openai-speech:URL#MODEL#VOICE", _openai_speech)
register("system", "qwen3", "qwen3:CHECKPOINT", _qwen3)
register("system", "parler", "parler:CHECKPOINT", _parler)


# ------------------------------------------------------------------------------- judges


def _none(arg: str, **_: Any) -> None:
    return None


def _judge(kind: str) -> Builder:
    def make(arg: str, **options: Any) -> Any:
        from .judge import Judge  # Judge.from_form: the one parser of a judge form's argument

        return Judge.from_form(kind, arg, **{k: v for k, v in options.items() if v is not None})

    return make


_JUDGE_OPTIONS = ("requests_per_minute", "api_key_env")
register("judge", "none", "none", _none, bare=True, needs_arg=False, options=_JUDGE_OPTIONS,
         takes_arg=False)
register("judge", "", "none", _none, bare=True, needs_arg=False, options=_JUDGE_OPTIONS,
         takes_arg=False)
register("judge", "gemini", "gemini[:MODEL]", _judge("gemini"), bare=True, needs_arg=False,
         options=_JUDGE_OPTIONS)
register("judge", "local", "local:URL#MODEL", _judge("local"), needs_arg=False,
         options=_JUDGE_OPTIONS)


# -------------------------------------------------------------------------- transcribers


def _whisper(arg: str) -> Any:
    from .transcribe import whisper_transcriber

    return whisper_transcriber(arg or "large-v3")


def _openai_asr(arg: str) -> Any:
    from .transcribe import openai_transcriber

    url, sep, model = arg.rpartition("#")
    if not sep or not url or not model:
        raise ConfigError("expected --asr openai:URL#MODEL, got "
                          f"'openai:{redact(arg, limit=None)}'")
    return openai_transcriber(url, model)


def _pocketsphinx(arg: str) -> Any:
    from .transcribe import pocketsphinx_transcriber

    return pocketsphinx_transcriber()


register("transcriber", "none", "none", _none, bare=True, needs_arg=False, takes_arg=False)
register("transcriber", "", "none", _none, bare=True, needs_arg=False, takes_arg=False)
register("transcriber", "whisper", "whisper[:MODEL]", _whisper, bare=True, needs_arg=False)
register("transcriber", "openai", "openai:URL#MODEL", _openai_asr, needs_arg=False)
register("transcriber", "pocketsphinx", "pocketsphinx", _pocketsphinx, bare=True,
         needs_arg=False, takes_arg=False)


# ----------------------------------------------------------------------------- executors


def _local(arg: str, *, workers: int | None = None, units: int | None = None) -> Any:
    # Capped at the CPUs available and the units of work; the note says why.
    n, note = capped_workers(workers, units)
    exe: Any = SerialExecutor() if n == 1 else LocalExecutor(n)
    exe.note = note
    return exe


def _serial(arg: str, *, workers: int | None = None, units: int | None = None) -> Any:
    return SerialExecutor()


def _dask(arg: str, *, workers: int | None = None, units: int | None = None) -> Any:
    return DaskExecutor(arg or None, workers=workers)


_EXECUTOR_OPTIONS = ("workers", "units")
register("executor", "local", "local", _local, bare=True, needs_arg=False,
         options=_EXECUTOR_OPTIONS, takes_arg=False)
register("executor", "", "local", _local, bare=True, needs_arg=False, options=_EXECUTOR_OPTIONS,
         takes_arg=False)
register("executor", "serial", "serial", _serial, bare=True, needs_arg=False,
         options=_EXECUTOR_OPTIONS, takes_arg=False)
register("executor", "dask", "dask[:ADDRESS]", _dask, bare=True, needs_arg=False,
         options=_EXECUTOR_OPTIONS)


def validate_executor_spec(spec: str | None) -> None:
    """Check an ``--executor`` spec without starting anything (cheap: call it before any
    work). ConfigError for a spec that is none of the registered forms (the message lists
    them); MissingDependencyError when ``dask`` lacks its package."""
    if spec is not None and not isinstance(spec, str):
        raise ConfigError(f"executor spec must be a string, got {type(spec).__name__}")
    form, arg = lookup("executor", spec)
    if form.name == "dask":
        if spec is not None and spec.startswith("dask:") and not arg.strip():
            raise ConfigError("expected dask:ADDRESS (e.g. dask:tcp://host:8786), got "
                              f"{spec!r}")
        if arg.strip():
            check_dask_address(arg)  # before anything is claimed or started
        if importlib.util.find_spec("distributed") is None:
            raise MissingDependencyError("the Dask executor", "dask", package="dask[distributed]")


def make_executor(spec: str | None = None, *, workers: int | None = None,
                  units: int | None = None) -> Executor:
    """``None``/``local`` → local process pool (serial when it would have one worker);
    ``serial``; ``dask`` → a local Dask cluster; ``dask:tcp://host:8786`` → an existing
    scheduler (the forms registered above). Local workers are capped at the CPUs available
    and at ``units`` (the number of units of work, when known); the executor's ``note`` says
    so. Specs and worker counts are checked before anything starts
    (:func:`validate_executor_spec`, :func:`~vocencebench.executor.check_workers`)."""
    validate_executor_spec(spec)
    check_workers(workers)
    exe: Executor = build("executor", spec, workers=workers, units=units)
    return exe
