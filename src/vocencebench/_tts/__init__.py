"""The eSpeak NG engine behind :mod:`vocencebench.tts` (private).

``settings`` holds the eSpeak parameters of one clip and the engine's identity; ``render``
drives the library through ctypes in short-lived clip processes and worker lanes. Only
:mod:`vocencebench.tts` imports them; every public name is served from there.
"""
