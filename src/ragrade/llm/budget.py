"""The budget of an LLM run (calls, tokens, cost), enforced by the one runner (:mod:`ragrade.llm.runner`)
for the judges and the assessor alike."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ragrade.errors import InputError


@dataclass(frozen=True)
class Budget:
    """Limits of one run: judgments asked (``calls``), tokens (prompt + completion, as the server reports
    them) or cost (``usd``, from the judge's prices). ``None`` = no limit.

    A judgment is started only when ``spent + worst case of the judgments in flight + its own worst case``
    stays within every limit. The worst case of one judgment counts every attempt that can spend tokens
    (the first ask and each re-ask after an unreadable reply) at ``prompt bytes + 16 tokens per message +
    max_tokens``: a token of a byte-level tokenizer covers at least one byte of text, and the reply is cut
    at ``max_tokens``. A reply whose server reports no usage is counted at its worst case.
    """

    calls: int | None = None
    tokens: int | None = None
    usd: float | None = None

    def __post_init__(self) -> None:
        for name in ("calls", "tokens"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 0):
                raise InputError(f"budget {name} must be a whole number >= 0", value=v)
        if self.usd is not None and (not isinstance(self.usd, int | float) or not self.usd >= 0):
            raise InputError("budget usd must be a number >= 0", value=self.usd)

    @property
    def active(self) -> bool:
        return self.calls is not None or self.tokens is not None or self.usd is not None

    def to_dict(self) -> dict[str, Any]:
        return {"calls": self.calls, "tokens": self.tokens, "usd": self.usd}


__all__ = ["Budget"]
