"""audEERING's age/gender heads on wav2vec 2.0
(``audeering/wav2vec2-large-robust-24-ft-age-gender``).

The checkpoint is a ``Wav2Vec2Model`` plus two small heads that the model card defines in
Python (no class for it ships with transformers): ``age`` (one output, ≈ 0…1 = 0…100 years)
and ``gender`` (three outputs, softmax). This module rebuilds the same modules, with the same
parameter names, so ``from_pretrained`` reads the published weights unchanged.

Differences from the model card's code, on purpose:

* ``post_init()`` instead of ``init_weights()`` (the latter fails on transformers 5 with
  ``no attribute 'all_tied_weights_keys'``);
* mean pooling over the *valid* frames when an ``attention_mask`` is given, so a padded batch
  gives the same numbers as one clip at a time (the card only handles single clips, where the
  two are the same).

torch and transformers are imported when :func:`age_gender_model_class` is first called.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .._util.deps import require

__all__ = ["GENDER_CLASSES", "age_gender_model_class"]

#: Order of the gender head's outputs. audEERING's own ONNX export of this model labels the
#: outputs ``female, male, child``; the model card's sample-output comment lists
#: "child female male", which contradicts both the export and the text of the card's usage
#: section. We follow the export (labels shipped with the weights by their authors).
GENDER_CLASSES: tuple[str, str, str] = ("female", "male", "child")


@cache
def age_gender_model_class() -> Any:
    """The ``AgeGenderModel`` class (a ``Wav2Vec2PreTrainedModel``), built once."""
    need = ("the age/gender classifier", "classifiers")
    torch = require("torch", *need, package="torch, transformers")
    nn: Any = require("torch.nn", *need, package="torch, transformers")
    transformers = require("transformers", *need, package="torch, transformers")
    Wav2Vec2Model = transformers.Wav2Vec2Model
    Wav2Vec2PreTrainedModel: Any = transformers.Wav2Vec2PreTrainedModel

    class ModelHead(nn.Module):  # type: ignore[misc]
        """dropout → dense → tanh → dropout → out_proj (names as in the checkpoint)."""

        def __init__(self, config: Any, num_labels: int) -> None:
            super().__init__()
            self.dense = nn.Linear(config.hidden_size, config.hidden_size)
            self.dropout = nn.Dropout(config.final_dropout)
            self.out_proj = nn.Linear(config.hidden_size, num_labels)

        def forward(self, features: Any) -> Any:
            x = self.dropout(features)
            x = torch.tanh(self.dense(x))
            x = self.dropout(x)
            return self.out_proj(x)

    class AgeGenderModel(Wav2Vec2PreTrainedModel):  # type: ignore[misc,no-untyped-call]
        """Returns ``(pooled hidden states, age (batch, 1) on ≈0–1, gender probs (batch, 3))``."""

        def __init__(self, config: Any) -> None:
            super().__init__(config)
            self.config = config
            self.wav2vec2 = Wav2Vec2Model(config)
            self.age = ModelHead(config, 1)
            self.gender = ModelHead(config, len(GENDER_CLASSES))
            self.post_init()  # type: ignore[no-untyped-call]

        def forward(self, input_values: Any, attention_mask: Any = None) -> Any:
            hidden = self.wav2vec2(input_values, attention_mask=attention_mask)[0]
            if attention_mask is None:
                pooled = hidden.mean(dim=1)
            else:
                frames = self.wav2vec2._get_feature_vector_attention_mask(
                    hidden.shape[1], attention_mask
                )
                m = frames.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * m).sum(dim=1) / m.sum(dim=1).clamp(min=1.0)
            age = self.age(pooled)
            gender = torch.softmax(self.gender(pooled), dim=1)
            return pooled, age, gender

    return AgeGenderModel
