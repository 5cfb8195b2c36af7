"""The TTS systems, one module per engine, behind the façade :mod:`vocencebench.adapters`.

* :mod:`.base` — the system protocol, its optional hooks and the checks every system shares;
* :mod:`.espeak` — the built-in eSpeak NG systems as adapters (the engine is
  :mod:`vocencebench.tts`);
* :mod:`.command` — a command line per item, in a process group of its own (with the guard
  script ``_cmdguard.py``);
* :mod:`.directory` — pre-synthesised clips in a folder;
* :mod:`.openai_speech` — an ``/v1/audio/speech`` HTTP server;
* :mod:`.models` — local torch models (Qwen3-TTS, Parler-TTS);
* :mod:`.hibari` — the neural built-ins ``hibari`` and ``hibari-follow``.
"""
