"""The parts of the brief reader behind :mod:`vocencebench.instruction` (private; import from
:mod:`vocencebench.instruction`): ``words`` (the word tables) and ``lexicon`` (text
normalisation and the compiled rules)."""
