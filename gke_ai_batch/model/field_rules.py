"""The building blocks of the stack config: text rules as a pattern and in words, the validators that
refuse a value in the stack file's words, and the strict base model every config block derives from."""
from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any, Literal, NamedTuple

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    WithJsonSchema,
    model_validator,
)
from pydantic_core import PydanticCustomError

from gke_ai_batch.model.catalog import GPU_TYPES, CatalogError
from gke_ai_batch.model.labels import K8S_VALUE_RULE, k8s_key_ok, k8s_value_ok
from gke_ai_batch.model.quantity import FORMAT_HELP
from gke_ai_batch.model.words import unknown_key
from gke_ai_batch.vocabulary import Capacity


class TextRule(NamedTuple):
    """A text rule as a pattern (for validation and the schema) and in words (for error messages)."""

    pattern: str
    words: str


DNS_LABEL = TextRule(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                 "lowercase letters, digits and '-', starting and ending with a letter or digit")
CLUSTER_NAME = TextRule(r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
                    "lowercase letters, digits and '-', starting with a letter and not ending with '-'")
PROJECT_ID = TextRule(r"^[a-z][-a-z0-9]{4,28}[a-z0-9]$", "a Google Cloud project ID: 6 to 30 lowercase letters, "
                  "digits and '-', starting with a letter and not ending with '-'")
REGION = TextRule(r"^[a-z]+-[a-z]+\d+$", "a Google Cloud region such as us-east5")
LABEL_VALUE = TextRule(r"^[a-z0-9_-]{1,63}$", "a label value: 1 to 63 lowercase letters, digits, '_' and '-'")
SECONDS = TextRule(r"^\d+s$", "whole seconds followed by s, such as 86400s")
DURATION = TextRule(r"^\d+(s|m|h)$", "a whole number followed by s, m or h, such as 10m")
SERVICE_ACCOUNT = TextRule(r"^[a-z0-9][-a-z0-9]*@[-a-z0-9.]+\.gserviceaccount\.com$",
                       "a service account's email, NAME@PROJECT.iam.gserviceaccount.com")
BUCKET_LOCATION = TextRule(r"^([a-z]+-[a-z]+\d+|US|EU|ASIA|[A-Z]{3,4}\d)$",
                       "a region such as us-east5, a multi-region (US, EU, ASIA) or a dual-region such as NAM4")
# Artifact Registry ("Create standard repositories"): a repository name "can only contain lowercase letters,
# numbers, and hyphens", starting with a letter and ending with a letter or number; locations are regions
# and the multi-regions us, europe and asia.
AR_REPOSITORY = TextRule(r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
                     "lowercase letters, digits and '-', starting with a letter and ending with a letter or digit")
AR_LOCATION = TextRule(r"^([a-z]+-[a-z]+\d+|us|europe|asia)$", "a region such as us-east5, or us, europe or asia")
GROUP_EMAIL = TextRule(r"^[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)+$",
                   "a Google group's email address, such as ml-team@example.com")
# Cloud Monitoring's name of a notification channel (projects.notificationChannels, "name"), the form
# AlertPolicy.notificationChannels takes.
NOTIFICATION_CHANNEL = TextRule(r"^projects/[a-z][-a-z0-9]{4,28}[a-z0-9]/notificationChannels/\d+$",
                                "a notification channel's name, projects/PROJECT_ID/notificationChannels/NUMBER "
                                "(as `gcloud beta monitoring channels list` prints it)")
# The detailed billing export's BigQuery table (Cloud Billing, "Example queries for Cloud Billing data export":
# gcp_billing_export_resource_v1_<BILLING_ACCOUNT_ID>), and a BigQuery dataset ID.
BILLING_EXPORT_TABLE = TextRule(
    r"^[a-z][-a-z0-9]{4,28}[a-z0-9]\.[A-Za-z0-9_]{1,1024}\.gcp_billing_export_resource_v1_[A-Za-z0-9_]+$",
    "the detailed export's table, PROJECT_ID.DATASET.gcp_billing_export_resource_v1_ACCOUNT (as BigQuery names it)")
BQ_DATASET = TextRule(r"^[A-Za-z0-9_]{1,1024}$", "a BigQuery dataset ID: letters, digits and underscores")
_UNIT_SECONDS = {"s": 1, "m": 60, "h": 3600}


def duration_seconds(value: str) -> int:
    """Seconds of a DURATION (`10m` -> 600)."""
    return int(value[:-1]) * _UNIT_SECONDS[value[-1]]


RULES_IN_WORDS = {r.pattern: r.words for r in (DNS_LABEL, CLUSTER_NAME, PROJECT_ID, REGION, LABEL_VALUE, SECONDS,
                                                DURATION, SERVICE_ACCOUNT, BUCKET_LOCATION, AR_REPOSITORY, AR_LOCATION,
                                                NOTIFICATION_CHANNEL, BILLING_EXPORT_TABLE, BQ_DATASET)}


def text(rule: TextRule, default: Any = ..., max_length: int | None = None) -> Any:
    """A text field that follows `rule` (its words go into the schema, next to the pattern)."""
    return Field(default, pattern=rule.pattern, max_length=max_length, json_schema_extra={"x-rule": rule.words})


def refused_by(rule: Callable[[str], str | None]) -> Callable[[Any], Any]:
    """A validator that raises the problem `rule` finds in a value (a release's version or chart, a machine
    type); None passes."""
    def check(value: Any) -> Any:
        if value is not None and (problem := rule(value)):
            raise ValueError(problem)
        return value
    return check


def taint_key_problem(key: str) -> str | None:
    return None if k8s_key_ok(key) else f"not a taint key: an optional DNS prefix and '/', then {K8S_VALUE_RULE}"


def taint_value_problem(value: str) -> str | None:
    return None if k8s_value_ok(value) else f"not a taint value: {K8S_VALUE_RULE}"


def unknown_gpu(gpu: str) -> str | None:
    return None if gpu in GPU_TYPES else str(CatalogError("GPU type", gpu, list(GPU_TYPES)))


def _number_as_quantity(v: object) -> object:
    """YAML reads `cpu: 2.5` as a float; Kubernetes quantities allow decimals, so keep it as text."""
    if isinstance(v, float):
        return int(v) if v.is_integer() else repr(v)
    return v


QUANTITY_SCHEMA = {"anyOf": [{"type": "number"}, {"type": "string"}], "x-rule": FORMAT_HELP}
Quantity = Annotated[int | str, BeforeValidator(_number_as_quantity), WithJsonSchema(QUANTITY_SCHEMA)]


def quota_or_quantity(schema: dict[str, Any]) -> None:
    """In the schema, a quota may also be written as a bare quantity (its nominal quota)."""
    per_resource = schema["additionalProperties"]
    per_resource["additionalProperties"] = {"anyOf": [per_resource["additionalProperties"], QUANTITY_SCHEMA]}


class Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, use_attribute_docstrings=True)

    @model_validator(mode="before")
    @classmethod
    def _known_keys(cls, data: Any) -> Any:
        """An unknown key is named, with the closest known one, before any field is checked (else a
        misspelt `nominl` reads as "`nominal`: field required")."""
        if isinstance(data, dict):
            for key in data:
                if key not in cls.model_fields:
                    raise PydanticCustomError("unknown_key", "{words}",
                                              {"key": str(key), "words": unknown_key(str(key), cls.model_fields)})
        return data


CpuCapacity = Literal[Capacity.ON_DEMAND, Capacity.SPOT]  # the capacity the platform offers CPU pools
