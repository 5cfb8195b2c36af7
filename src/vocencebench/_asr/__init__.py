"""What the gate knows about a speech recogniser's files (private; used by
:mod:`vocencebench.transcribe`).

``model_dir`` checks a CTranslate2 Whisper directory before anything runs (every file it
needs present, ``model.bin`` complete, record by record) and reads the model's architecture
from it (width, layers, vocabulary, parameters: its Whisper size); ``digest`` hashes a model
file once and remembers the digest per file identity, so a run does not re-read 75 MB (tiny)
or 3 GB (large-v3) to name its recogniser.
"""
