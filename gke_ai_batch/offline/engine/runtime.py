"""Run the real `__main__.py` under `pulumi.runtime.set_mocks` and record every registration as the
engine would receive it: type, name, parent, camelCase inputs, dependencies and provider."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import os
import runpy
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import pulumi
from google.protobuf import json_format  # type: ignore[import-untyped]  # protobuf ships no type hints
from pulumi.runtime import mocks, settings
from pulumi.runtime.proto import resource_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _ensure_event_loop, _sync_await

from gke_ai_batch.model.fleet_config import stack_parts
from gke_ai_batch.vocabulary import SECRET, SERVICE_ACCOUNT_TOKEN

from ..changes.inputs import DIGEST_KEY, READ, join
from .answering import answering_as_declared
from .heap import long_lived_heap
from .stackfile import StackFile, project, resolve
from .unknowns import unknowns_without_cycles

SECRET_SIG = "4dabf18193072939515e22adb298388d"
RESOURCE_SIG = "5cf8f73096256a8f31e491e813e4eb8e"
UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
SIG_KEY = SECRET_SIG  # the key that marks a special value; its value says which
SECRET_VALUE_SIG = "1b47061264138c4ac30d75fd1eb44270"
OUTPUT_VALUE_SIG = "d0e6a833031e9bbcd3f4e8bde6ca49a4"
MOCK_ENDPOINT = "203.0.113.10"  # TEST-NET-3: never a real address
MOCK_DNS_ENDPOINT = "gke-0123456789abcdef0123456789abcdef0123.us-east5.gke.goog"
MOCK_PROJECT_NUMBER = "123456789012"
MOCK_TOKEN = "offline-plan-token"  # a token Secret's mock token: this, its namespace and name, in base64
STACK_REFERENCE = "pulumi:pulumi:StackReference"
ORGANIZATION = "organization"  # what a DIY backend calls every stack's organization
MOCK_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCm9mZmxpbmUtcGxhbgotLS0tLUVORCBDRVJUSUZJQ0FURS0tLS0tCg=="


def redacted(value: Any) -> Any:
    """A secret's shape with every value shown as [secret] (a Secret's stringData keeps its keys)."""
    if isinstance(value, dict):
        return {k: redacted(v) for k, v in value.items()}
    return "[secret]"


def plain(value: Any) -> Any:
    """JSON from the wire form: secrets shown as [secret], references as their URN, integral
    numbers as integers (protobuf carries every number as a double). A dict or list that needs no change is
    returned itself, not copied: a registration's inputs then share what is the same in its wire form."""
    if isinstance(value, dict):
        sig = value.get(SECRET_SIG)
        if sig is not None:
            return redacted(value.get("value")) if sig != RESOURCE_SIG else value.get("urn")
        return _same_or(value, {k: plain(v) for k, v in value.items()})
    if isinstance(value, list):
        return _same_or(value, [plain(v) for v in value])
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if value == UNKNOWN:
        return "[unknown]"
    return value


def _same_or(value: Any, converted: Any) -> Any:
    """`value` where converting it changed none of its members (the very same objects), else the conversion."""
    if len(value) != len(converted):  # a key dropped
        return converted
    old, new = (value.values(), converted.values()) if isinstance(value, dict) else (value, converted)
    return value if all(a is b for a, b in zip(old, new, strict=True)) else converted


def secret_digests(value: Any, path: str = "") -> dict[str, str]:
    """Each secret leaf of a wire-form value, by the input path `make diff` prints, as a keyed digest: the diff
    compares secrets without showing them. Only when `make diff` sets its run's key (DIGEST_KEY): a plain
    `make plan` writes none, and a digest from one run tells nothing in another."""
    key = os.environ.get(DIGEST_KEY)
    return dict(_digests(value, path, key.encode())) if key else {}


def _digests(value: Any, path: str, key: bytes, secret: bool = False) -> Iterator[tuple[str, str]]:
    """The leaves as `plain` shows them: a secret dict keeps its keys, any other secret value is one leaf."""
    if isinstance(value, dict) and (sig := value.get(SECRET_SIG)) is not None:
        if sig != RESOURCE_SIG:
            yield from _digests(value.get("value"), path, key, True)
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _digests(v, join(path, k), key, secret)
    elif secret:
        yield path, hmac.new(key, json.dumps(value, sort_keys=True).encode(), hashlib.sha256).hexdigest()[:16]
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _digests(v, f"{path}[{i}]", key)


def analyzer_form(value: Any) -> Any:
    """A property value from the program's wire form (json_format.MessageToDict of the request) as the
    engine passes it on to policy packs (MarshalOptions{KeepUnknowns, KeepSecrets, SkipInternalKeys}):
    numbers stay floats, secrets stay wrapped, output values become their element (secret-wrapped or
    unknown as they are), resource references become their ID, or their URN if they have none, and keys
    starting with "__" go. What needs no change is kept, not copied (plain)."""
    if isinstance(value, dict):
        sig = value.get(SIG_KEY)
        if sig == RESOURCE_SIG:
            return analyzer_form(value["id"]) if value.get("id") else value["urn"]
        if sig == OUTPUT_VALUE_SIG:
            inner = analyzer_form(value["value"]) if "value" in value else UNKNOWN
            return {SIG_KEY: SECRET_VALUE_SIG, "value": inner} if value.get("secret") else inner
        return _same_or(value, {k: analyzer_form(v) for k, v in value.items() if not k.startswith("__")})
    if isinstance(value, list):
        return _same_or(value, [analyzer_form(v) for v in value])
    return value


@dataclass
class Registration:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    inputs: dict[str, Any]
    dependencies: list[str] = field(default_factory=list)
    provider: str | None = None
    provider_urn: str | None = None  # the provider resource's URN: `make diff` cascades its replacement
    wire: dict[str, Any] = field(default_factory=dict)  # the inputs as policy packs get them (analyzer_form)
    options: dict[str, Any] = field(default_factory=dict)  # the day-two resource options the program set
    secrets: dict[str, str] = field(default_factory=dict)  # secret input path -> digest (secret_digests)

    def as_json(self) -> dict[str, Any]:
        return {"urn": self.urn, "type": self.type, "name": self.name, "parent": self.parent,
                "custom": self.custom, "inputs": self.inputs, "dependencies": self.dependencies,
                "options": self.options, **({"provider": self.provider_urn} if self.provider_urn else {}),
                **({"secretDigests": self.secrets} if self.secrets else {})}


def day_two_options(request: Any) -> dict[str, Any]:
    """The options of a RegisterResourceRequest that decide what an update, a replacement or a delete does,
    only those set: protect, retainOnDelete, deleteBeforeReplace, replaceOnChanges, ignoreChanges, aliases
    (the URNs or names they point at; the type-only aliases the provider SDKs add for old API versions
    are theirs, not the program's, and left out), and import (the ID of an existing resource to adopt)."""
    aliases = [a.urn or a.spec.name for a in request.aliases if a.urn or a.spec.name] + list(request.aliasURNs)
    options = {"protect": request.protect, "retainOnDelete": request.retainOnDelete,
               "deleteBeforeReplace": request.deleteBeforeReplace, "replaceOnChanges": sorted(request.replaceOnChanges),
               "ignoreChanges": sorted(request.ignoreChanges), "aliases": aliases, "import": request.importId}
    return {k: v for k, v in options.items() if v}


class PlanMocks(mocks.Mocks):
    """What the program reads and looks up (RecordingMonitor answers its registrations)."""

    def __init__(self, references: Mapping[str, dict[str, Any]] | None = None) -> None:
        self.references = references or {}  # stack name -> its outputs (wire form), planned before

    def new_resource(self, args: mocks.MockResourceArgs) -> tuple[str | None, dict[str, Any]]:
        """An existing resource the program reads (`Resource.get`) is as it was asked for; a StackReference
        has the outputs of the stack's own offline plan, or fails as the engine does for a stack it lacks."""
        if args.typ == STACK_REFERENCE:
            return self._stack_reference(str(args.inputs["name"]))
        return f"{args.name}-id", dict(args.inputs)

    def _stack_reference(self, name: str) -> tuple[str, dict[str, Any]]:
        outputs = self.references.get(reference_key(name) or "")
        if outputs is None:
            stacks = ", ".join(project().stacks()) or "none"
            raise ValueError(f"no stack {name!r} in this project ({project().stack_dir}: {stacks})")
        secret = sorted(k for k, v in outputs.items() if isinstance(v, dict) and v.get(SIG_KEY) == SECRET_VALUE_SIG)
        plain_outputs = {k: v["value"] if k in secret else v for k, v in outputs.items()}
        return name, {"name": name, "outputs": plain_outputs, "secretOutputNames": secret}

    def call(self, args: mocks.MockCallArgs) -> tuple[dict[str, Any], list[tuple[str, str]]]:
        """The project's number (it names the workload identity pool)."""
        if args.token == "gcp:organizations/getProject:getProject":
            return {"projectId": args.args.get("projectId"), "number": MOCK_PROJECT_NUMBER}, []
        return {}, []


def reference_key(name: str) -> str | None:
    """The stack of this project a StackReference names (`stack` or `organization/project/stack`); another
    project's stacks are not in this repository's stack folder."""
    _, of_project, stack = stack_parts(name)
    return stack if of_project in (None, project().name) else None


def computed_outputs(typ: str, inputs: Any) -> Any:
    """A resource's outputs: its inputs, plus what GKE computes that the program reads back (a cluster's
    endpoints and CA certificate) and the token Kubernetes writes into a ServiceAccount token Secret."""
    if typ == SECRET and inputs.fields["type"].string_value == SERVICE_ACCOUNT_TOKEN:
        state = json_format.MessageToDict(inputs)
        meta = state.get("metadata", {})
        token = f"{MOCK_TOKEN}:{meta.get('namespace')}/{meta.get('name')}"  # a new Secret, a new token
        state["data"] = {"token": base64.b64encode(token.encode()).decode()}
        return json_format.ParseDict(state, type(inputs)())
    if typ != "gcp:container/cluster:Cluster":
        return inputs
    state = json_format.MessageToDict(inputs)
    state.update(endpoint=MOCK_ENDPOINT, masterAuth={**state.get("masterAuth", {}), "clusterCaCertificate": MOCK_CA})
    dns = (state.get("controlPlaneEndpointsConfig") or {}).get("dnsEndpointConfig")
    if dns is not None:
        dns["endpoint"] = MOCK_DNS_ENDPOINT
    return json_format.ParseDict(state, type(inputs)())


class RecordingMonitor(mocks.MockMonitor):
    """Records each registration and answers it with its inputs as outputs. It answers in the wire form
    it was given, where the SDK's MockMonitor decodes every request into Python, calls the mocks and
    encodes the answer again (an event loop turn per resource), and keeps every resource's state."""

    def __init__(self, mocks_: mocks.Mocks) -> None:
        super().__init__(mocks_)
        self.registrations: list[Registration] = []

    def RegisterResource(self, request: Any) -> Any:  # a RegisterResourceRequest, its response (protobuf)
        urn = self.make_urn(request.parent, request.type, request.name)
        self._record(request, urn, request.object, request.custom, sorted(set(request.dependencies)),
                     day_two_options(request))
        if request.type == "pulumi:pulumi:Stack":
            return resource_pb2.RegisterResourceResponse(urn=urn)
        return resource_pb2.RegisterResourceResponse(urn=urn, id=f"{request.name}-id",
                                                     object=computed_outputs(request.type, request.object))

    def ReadResource(self, request: Any) -> Any:
        """An existing resource the program reads (`Resource.get`): in the stack, as policies see it, with the ID
        it reads."""
        response = super().ReadResource(request)  # type: ignore[no-untyped-call]  # pulumi leaves it unannotated
        self._record(request, response.urn, request.properties, True, sorted(set(request.dependencies)),
                     {READ: request.id})
        return response

    def _record(self, request: Any, urn: str, props: Any, custom: bool, dependencies: list[str],
                options: dict[str, Any]) -> None:
        """One registration, made whole before it is appended: the SDK registers from several threads, so a
        registration completed after the append (`registrations[-1]`) could be another resource's (CI once
        planned prod's JobSetInstall without its protection)."""
        _THREAD_LOOPS.add(_ensure_event_loop())  # type: ignore[no-untyped-call]  # likewise
        wire = json_format.MessageToDict(props)
        self.registrations.append(Registration(
            urn=urn, type=request.type, name=request.name, parent=request.parent or None, custom=custom,
            inputs=dict(plain(wire)), dependencies=dependencies,
            provider=request.provider.split("::")[-2] if request.provider else None,
            provider_urn=request.provider.rsplit("::", 1)[0] if request.provider else None, wire=analyzer_form(wire),
            secrets=secret_digests(wire), options=options))


class PlanError(Exception):
    """The program refused the stack (bad config): message only, no traceback."""


class Planned(list[Registration]):
    """A stack's registrations, with its outputs and the plans of the stacks it references (a fleet
    manager's workers, planned first)."""

    def __init__(self, registrations: list[Registration], outputs: dict[str, Any],
                 references: dict[str, Planned] | None = None) -> None:
        super().__init__(registrations)
        self.outputs = outputs
        self.references = references or {}


def record(program: Callable[[], Any], stack: str, config: dict[str, str] | None = None,
           references: dict[str, Planned] | None = None) -> Planned:
    """Run any Pulumi program callable under the mock runtime and return its registrations."""
    settings.ROOT.set(None)
    monitor = RecordingMonitor(PlanMocks({name: p.outputs for name, p in (references or {}).items()}))
    mocks.set_mocks(monitor.mocks, project=project().name, stack=stack, preview=False, monitor=monitor,
                    organization=ORGANIZATION)
    pulumi.runtime.set_all_config(config or {})
    with long_lived_heap(), unknowns_without_cycles(), answering_as_declared(program) as body:
        _sync_await(run_pulumi_func(body))
    return Planned(monitor.registrations, _exports(), references)


def _exports() -> dict[str, Any]:
    """The program's `pulumi.export`s, resolved, secrets wrapped as the engine keeps them. The mock runtime's
    root stack registered its outputs when it was made (pulumi/runtime/mocks.py `set_mocks`), before the
    program exported anything, so they are read from it."""
    root = settings.get_root_resource()
    out: dict[str, Any] = {}
    for name, value in (getattr(root, "outputs", None) or {}).items():
        resolved, secret = _resolved(value)
        out[name] = {SIG_KEY: SECRET_VALUE_SIG, "value": resolved} if secret else resolved
    return out


def _resolved(value: Any) -> tuple[Any, bool]:
    """A value with its Outputs awaited, and whether any was secret. Plain values are walked, not wrapped:
    Output.from_input of a 1,000-team export made an Output per value and cost a second of each plan."""
    if isinstance(value, pulumi.Output):
        inner, secret = _resolved(_sync_await(value.future()))
        return inner, secret or bool(_sync_await(value.is_secret()))
    if isinstance(value, dict):
        pairs = {k: _resolved(v) for k, v in value.items()}
        return {k: v for k, (v, _) in pairs.items()}, any(s for _, s in pairs.values())
    if isinstance(value, list | tuple):
        items = [_resolved(v) for v in value]
        return [v for v, _ in items], any(s for _, s in items)
    return value, False


def run_program(stack: StackFile, planning: frozenset[str] = frozenset()) -> Planned:
    """Register every resource of the stack's `__main__.py` under mocks, after planning the stacks its fleet
    block references; PlanError for bad config (a referenced stack's own error names that stack)."""
    references = {}
    for path, reference in referenced_stacks(stack):
        name = reference_key(reference)
        if name is None:
            raise PlanError(f"invalid stack config at {path}: {reference!r} is another project's stack; the offline "
                            f"plan reads the stacks of this project ({project().name}) only")
        if name not in project().stacks():
            raise PlanError(f"invalid stack config at {path}: no stack {name!r} in this project "
                            f"({project().stack_dir}: {', '.join(project().stacks())})")
        if name in planning:
            raise PlanError(f"invalid stack config at {path}: stacks {stack.name} and {name} reference each "
                            "other; a fleet's workers reference no stack")
        try:
            references[name] = run_program(resolve(name), planning | {stack.name})
        except PlanError as e:
            raise PlanError(f"worker stack {name}: {e}") from None
    try:
        return record(lambda: runpy.run_path(str(project().root / "__main__.py"), run_name="__main__"), stack.name,
                      stack.pulumi_config(), references)
    except pulumi.RunError as e:
        raise PlanError(str(e)) from None


def referenced_stacks(stack: StackFile) -> list[tuple[str, str]]:
    """(config path, stack reference) of each worker stack a fleet manager's config names, as the program will
    reference them: the engine refuses a reference to a stack it lacks, and so does the offline plan, at its
    path. The program judges the rest of the config."""
    platform = stack.config.get(f"{project().name}:platform")
    fleet = platform.get("fleet") if isinstance(platform, dict) else None
    if not isinstance(fleet, dict) or fleet.get("role") != "manager" or not isinstance(fleet.get("workers"), list):
        return []
    out: list[tuple[str, str]] = []
    for i, w in enumerate(fleet["workers"]):
        reference = str(w.get("stack")) if isinstance(w, dict) and w.get("stack") else None
        if reference and reference not in (r for _, r in out):
            out.append((f"platform.fleet.workers[{i}].stack", reference))
    return out


# The SDK gives each executor thread an event loop and never closes it; left to the garbage
# collector at interpreter exit they fail noisily. A process that is done planning closes them.
_THREAD_LOOPS: set[asyncio.AbstractEventLoop] = set()


def close_thread_loops() -> None:
    main_loop = asyncio.get_event_loop()
    for loop in _THREAD_LOOPS - {main_loop}:
        if not loop.is_running() and not loop.is_closed():
            loop.close()
