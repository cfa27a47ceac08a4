"""What the ValidatingAdmissionPolicy model answers (a Verdict of Denials), and the limits and names it shares."""
from __future__ import annotations

from dataclasses import dataclass

NAME_LABEL = "kubernetes.io/metadata.name"
MAX_MESSAGE_BYTES = 5 * 1024  # apis/cel/config.go MaxEvaluatedMessageExpressionSizeBytes


class UnsupportedPolicy(ValueError):
    """A policy or binding this model cannot judge (params, the authorizer): better no answer than a wrong one."""


@dataclass(frozen=True)
class Denial:
    """One refusal: the policy, the binding, the message and reason the API server would give.

    error: the message is an evaluation, compilation or configuration error that failurePolicy Fail turned
    into a denial, rather than a validation that evaluated to false."""

    policy: str
    binding: str
    message: str
    reason: str = "Invalid"
    error: bool = False

    @property
    def text(self) -> str:
        """dispatcher.go's error message, plus a note of ours when it comes from an error."""
        who = f"ValidatingAdmissionPolicy '{self.policy}'"
        who += f" with binding '{self.binding}'" if self.binding else ""
        note = " (an evaluation error: failurePolicy Fail denies)" if self.error else ""
        return f"{who} denied request: {self.message}{note}"


@dataclass(frozen=True)
class Verdict:
    """Everything the policies say about a request: denials refuse it; warnings and audits do not."""

    denials: tuple[Denial, ...] = ()
    warnings: tuple[str, ...] = ()
    audits: tuple[Denial, ...] = ()
