"""Would Pod Security Admission let these pods in? The Pod Security Standards at level version v1.33.

A pure model (no Pulumi) of the PodSecurity admission plugin's checks, read from
k8s.io/pod-security-admission at the Kubernetes v1.33 tag (kubernetes/pod-security-admission v0.33.13,
the staging copy of kubernetes/kubernetes' staging/src/k8s.io/pod-security-admission). Each check names
the policy/check_*.go file it follows, and its reason and detail are that file's `ForbiddenReason` and
`ForbiddenDetail`, word for word, so a refusal reads as `kubectl apply` would print it.

Pods are YAML or JSON dicts as a tenant submits them, after the API server's defaulting: a volume with
no recognised source is the emptyDir that `SetDefaults_Volume` makes it (so restrictedVolumes never
reports "unknown"). Not modelled: the AdmissionConfiguration's exemptions (usernames, runtime classes,
namespaces; GKE sets none), the audit and warn modes, and the user-namespace relaxation of runAsNonRoot,
runAsUser and procMount (`RelaxPolicyForUserNamespacePods`, off unless the cluster opts in).
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from gke_ai_batch.vocabulary import Obj

LEVELS = ("privileged", "baseline", "restricted")
VERSION = "v1.33"
ENFORCE_LABEL = "pod-security.kubernetes.io/enforce"
ENFORCE_VERSION_LABEL = "pod-security.kubernetes.io/enforce-version"
_VERSION = re.compile(r"v1\.(0|[1-9][0-9]*)")  # api/helpers.go `versionRegexp`


@dataclass(frozen=True)
class Violation:
    """One failed check: PSA's `CheckResult.ForbiddenReason` and `ForbiddenDetail` (policy/checks.go)."""

    check: str
    reason: str
    detail: str


# ---------------------------------------------------------------------------------------------
# Wording helpers (policy/helpers.go) and field access with Go's nil-pointer semantics
# ---------------------------------------------------------------------------------------------

def _join_quote(items: Sequence[str]) -> str:
    """helpers.go `joinQuote`: `"a", "b"`."""
    return ", ".join(f'"{item}"' for item in items)


def _plural(singular: str, plural: str, count: int) -> str:
    """helpers.go `pluralize`."""
    return singular if count == 1 else plural


def _go_quote(value: str) -> str:
    """Go's %q, close enough: JSON quoting (the two differ only in rare escapes)."""
    return json.dumps(value, ensure_ascii=False)


def _containers(spec: Obj) -> Iterator[Obj]:
    """visitor.go `visitContainers`: init containers, then containers, then ephemeral containers."""
    for field in ("initContainers", "containers", "ephemeralContainers"):
        yield from spec.get(field) or []


def _sc(holder: Obj) -> Obj:
    """A container's or the pod's securityContext; {} for a nil one, so nested lookups stay simple."""
    return holder.get("securityContext") or {}


def _setters(pod: bool, containers: Sequence[str]) -> list[str]:
    """The `badSetters` list several checks build: "pod", then `container(s) "a", "b"`."""
    out = ["pod"] if pod else []
    if containers:
        out.append(f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)}")
    return out


def _windows(spec: Obj) -> bool:
    """The 1.25+ exemption of restricted checks for pods with spec.os.name=windows."""
    return (spec.get("os") or {}).get("name") == "windows"


Result = tuple[str, str] | None  # (reason, detail) of a failed check, None when it passes
CheckFn = Callable[[Obj, Obj], Result]


# ---------------------------------------------------------------------------------------------
# Baseline checks
# ---------------------------------------------------------------------------------------------

def _app_armor_bad_type(holder: Obj) -> str | None:
    """A disallowed appArmorProfile.type of a pod or container securityContext, or None."""
    profile = _sc(holder).get("appArmorProfile")
    if profile is None:
        return None
    kind = profile.get("type") or ""
    return None if kind in ("RuntimeDefault", "Localhost") else kind


def app_armor_profile(metadata: Obj, spec: Obj) -> Result:
    """policy/check_appArmorProfile.go (appArmorProfile_1_0): profile types RuntimeDefault or Localhost only,
    and the deprecated container.apparmor.security.beta.kubernetes.io/* annotations runtime/default or
    localhost/* only."""
    bad_values: set[str] = set()
    pod_bad = _app_armor_bad_type(spec)
    if pod_bad is not None:
        bad_values.add(pod_bad)
    containers = []
    for c in _containers(spec):
        if (bad := _app_armor_bad_type(c)) is not None:
            containers.append(c.get("name", ""))
            bad_values.add(bad)
    setters = _setters(pod_bad is not None, containers)
    prefix = "container.apparmor.security.beta.kubernetes.io/"
    annotations = sorted(f"{k}={_go_quote(v)}" for k, v in (metadata.get("annotations") or {}).items()
                         if k.startswith(prefix) and v and v != "runtime/default" and not v.startswith("localhost/"))
    values = sorted(bad_values) + annotations
    if annotations:
        setters.append(_plural("annotation", "annotations", len(annotations)))
    if not setters:
        return None
    return (_plural("forbidden AppArmor profile", "forbidden AppArmor profiles", len(values)),
            f"{' and '.join(setters)} must not set AppArmor profile type to {_join_quote(values)}")


BASELINE_CAPABILITIES = frozenset({"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL", "MKNOD",
                                   "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID", "SYS_CHROOT"})


def capabilities_baseline(metadata: Obj, spec: Obj) -> Result:
    """policy/check_capabilities_baseline.go (capabilitiesBaseline_1_0): capabilities.add only from the
    container runtime's default set."""
    containers, extra = [], set()
    for c in _containers(spec):
        added = set((_sc(c).get("capabilities") or {}).get("add") or [])
        if added - BASELINE_CAPABILITIES:
            containers.append(c.get("name", ""))
            extra |= added - BASELINE_CAPABILITIES
    if not containers:
        return None
    return ("non-default capabilities",
            f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)} must not include "
            f"{_join_quote(sorted(extra))} in securityContext.capabilities.add")


def host_namespaces(metadata: Obj, spec: Obj) -> Result:
    """policy/check_hostNamespaces.go (hostNamespaces_1_0): no hostNetwork, hostPID or hostIPC."""
    shared = [f"{field}=true" for field in ("hostNetwork", "hostPID", "hostIPC") if spec.get(field) is True]
    return ("host namespaces", ", ".join(shared)) if shared else None


def host_path_volumes(metadata: Obj, spec: Obj) -> Result:
    """policy/check_hostPathVolumes.go (hostPathVolumes_1_0): no hostPath volumes."""
    names = [v.get("name", "") for v in spec.get("volumes") or [] if v.get("hostPath") is not None]
    if not names:
        return None
    return "hostPath volumes", f"{_plural('volume', 'volumes', len(names))} {_join_quote(names)}"


def host_ports(metadata: Obj, spec: Obj) -> Result:
    """policy/check_hostPorts.go (hostPorts_1_0): no container port with a hostPort. The ports are
    listed in string order, as Go's sets.String sorts them."""
    containers, ports = [], set()
    for c in _containers(spec):
        used = {str(p["hostPort"]) for p in c.get("ports") or [] if p.get("hostPort")}
        if used:
            containers.append(c.get("name", ""))
            ports |= used
    if not containers:
        return None
    return ("hostPort",
            f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)} "
            f"{_plural('uses', 'use', len(containers))} {_plural('hostPort', 'hostPorts', len(ports))} "
            f"{', '.join(sorted(ports))}")


def _containers_that(spec: Obj, breaks: Callable[[Obj], bool], reason: str, rule: str) -> Result:
    """The check result PSA gives when some containers break a per-container rule: their names, then the rule."""
    names = [c.get("name", "") for c in _containers(spec) if breaks(c)]
    if not names:
        return None
    return reason, f"{_plural('container', 'containers', len(names))} {_join_quote(names)} {rule}"


def privileged(metadata: Obj, spec: Obj) -> Result:
    """policy/check_privileged.go (privileged_1_0): no securityContext.privileged=true."""
    return _containers_that(spec, lambda c: _sc(c).get("privileged") is True, "privileged",
                            "must not set securityContext.privileged=true")


def proc_mount(metadata: Obj, spec: Obj) -> Result:
    """policy/check_procMount.go (procMount_1_0): securityContext.procMount unset or Default."""
    containers, types = [], set()
    for c in _containers(spec):
        mount = _sc(c).get("procMount")
        if mount is not None and mount != "Default":
            containers.append(c.get("name", ""))
            types.add(mount)
    if not containers:
        return None
    return ("procMount",
            f"{_plural('container', 'containers', len(containers))} {_join_quote(containers)} "
            f"must not set securityContext.procMount to {_join_quote(sorted(types))}")


SELINUX_TYPES = frozenset({"", "container_t", "container_init_t", "container_kvm_t", "container_engine_t"})


def _selinux_faults(holder: Obj, types: set[str], fields: set[str]) -> bool:
    """True if this securityContext's seLinuxOptions are forbidden; collects bad types and set user/role."""
    options = _sc(holder).get("seLinuxOptions")
    if options is None:
        return False
    kind = options.get("type") or ""
    if kind not in SELINUX_TYPES:
        types.add(kind)
    fields.update(f for f in ("user", "role") if options.get(f))
    return kind not in SELINUX_TYPES or bool(options.get("user")) or bool(options.get("role"))


def se_linux_options(metadata: Obj, spec: Obj) -> Result:
    """policy/check_seLinuxOptions.go (seLinuxOptions1_31): type unset or one of the container types
    (container_engine_t allowed since 1.31), user and role unset."""
    types: set[str] = set()
    fields: set[str] = set()
    pod_bad = _selinux_faults(spec, types, fields)
    containers = [c.get("name", "") for c in _containers(spec) if _selinux_faults(c, types, fields)]
    setters = _setters(pod_bad, containers)
    if not setters:
        return None
    data = [f"{_plural('type', 'types', len(types))} {_join_quote(sorted(types))}"] if types else []
    data += [f"{field} may not be set" for field in ("user", "role") if field in fields]
    return ("seLinuxOptions",
            f"{' and '.join(setters)} set forbidden securityContext.seLinuxOptions: {'; '.join(data)}")


def _seccomp_type(holder: Obj) -> str | None:
    """securityContext.seccompProfile.type, "" for a profile without one, None for no profile."""
    profile = _sc(holder).get("seccompProfile")
    return None if profile is None else profile.get("type") or ""


def _seccomp_faults(spec: Obj) -> tuple[bool, list[str], set[str]]:
    """Explicitly bad seccomp settings: does the pod set one, which containers do, which values."""
    values: set[str] = set()
    pod_type = _seccomp_type(spec)
    pod_bad = pod_type is not None and pod_type not in ("RuntimeDefault", "Localhost")
    if pod_bad:
        values.add(str(pod_type))
    containers = []
    for c in _containers(spec):
        kind = _seccomp_type(c)
        if kind is not None and kind not in ("RuntimeDefault", "Localhost"):
            containers.append(c.get("name", ""))
            values.add(kind)
    return pod_bad, containers, values


def _seccomp_explicit(spec: Obj) -> Result:
    """The explicitly-bad half shared by the baseline and restricted seccomp checks."""
    pod_bad, containers, values = _seccomp_faults(spec)
    setters = _setters(pod_bad, containers)
    if not setters:
        return None
    return ("seccompProfile", f"{' and '.join(setters)} must not set securityContext.seccompProfile.type to "
                              f"{_join_quote(sorted(values))}")


def seccomp_profile_baseline(metadata: Obj, spec: Obj) -> Result:
    """policy/check_seccompProfile_baseline.go (seccompProfileBaseline_1_19): if set, the seccomp
    profile type is RuntimeDefault or Localhost (Unconfined is forbidden); unset is allowed."""
    return _seccomp_explicit(spec)


SAFE_SYSCTLS = frozenset({
    "kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range", "net.ipv4.tcp_syncookies", "net.ipv4.ping_group_range",
    "net.ipv4.ip_unprivileged_port_start", "net.ipv4.ip_local_reserved_ports", "net.ipv4.tcp_keepalive_time",
    "net.ipv4.tcp_fin_timeout", "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes", "net.ipv4.tcp_rmem",
    "net.ipv4.tcp_wmem"})


def sysctls(metadata: Obj, spec: Obj) -> Result:
    """policy/check_sysctls.go (sysctlsV1Dot32, the newest list at v1.33): only the safe sysctls."""
    names = [s.get("name", "") for s in _sc(spec).get("sysctls") or [] if s.get("name") not in SAFE_SYSCTLS]
    return ("forbidden sysctls", ", ".join(names)) if names else None


def windows_host_process(metadata: Obj, spec: Obj) -> Result:
    """policy/check_windowsHostProcess.go (windowsHostProcess_1_0): no windowsOptions.hostProcess=true
    on the pod or any container."""
    def host_process(holder: Obj) -> bool:
        """securityContext.windowsOptions.hostProcess=true on the pod or a container."""
        return (_sc(holder).get("windowsOptions") or {}).get("hostProcess") is True

    setters = _setters(host_process(spec), [c.get("name", "") for c in _containers(spec) if host_process(c)])
    if not setters:
        return None
    return "hostProcess", f"{' and '.join(setters)} must not set securityContext.windowsOptions.hostProcess=true"


# ---------------------------------------------------------------------------------------------
# Restricted checks
# ---------------------------------------------------------------------------------------------

def allow_privilege_escalation(metadata: Obj, spec: Obj) -> Result:
    """policy/check_allowPrivilegeEscalation.go (allowPrivilegeEscalation_1_25): every container sets
    allowPrivilegeEscalation=false (Windows pods exempt)."""
    if _windows(spec):
        return None
    return _containers_that(spec, lambda c: _sc(c).get("allowPrivilegeEscalation") is not False,
                            "allowPrivilegeEscalation != false",
                            "must set securityContext.allowPrivilegeEscalation=false")


def capabilities_restricted(metadata: Obj, spec: Obj) -> Result:
    """policy/check_capabilities_restricted.go (capabilitiesRestricted_1_25): every container drops ALL
    and adds nothing but NET_BIND_SERVICE (Windows pods exempt). Replaces capabilities_baseline."""
    if _windows(spec):
        return None
    missing_drop, adding, forbidden = [], [], set()
    for c in _containers(spec):
        caps = _sc(c).get("capabilities")
        if caps is None or "ALL" not in (caps.get("drop") or []):
            missing_drop.append(c.get("name", ""))
        added = {a for a in (caps or {}).get("add") or [] if a != "NET_BIND_SERVICE"}
        if added:
            adding.append(c.get("name", ""))
            forbidden |= added
    details = []
    if missing_drop:
        details.append(f"{_plural('container', 'containers', len(missing_drop))} {_join_quote(missing_drop)} "
                       'must set securityContext.capabilities.drop=["ALL"]')
    if adding:
        details.append(f"{_plural('container', 'containers', len(adding))} {_join_quote(adding)} "
                       f"must not include {_join_quote(sorted(forbidden))} in securityContext.capabilities.add")
    return ("unrestricted capabilities", "; ".join(details)) if details else None


ALLOWED_VOLUME_SOURCES = ("configMap", "csi", "downwardAPI", "emptyDir", "ephemeral", "image",
                          "persistentVolumeClaim", "projected", "secret")
# In the order check_restrictedVolumes.go tests them, which decides the type named for a volume.
RESTRICTED_VOLUME_SOURCES = ("hostPath", "gcePersistentDisk", "awsElasticBlockStore", "gitRepo", "nfs", "iscsi",
                             "glusterfs", "rbd", "flexVolume", "cinder", "cephfs", "flocker", "fc", "azureFile",
                             "vsphereVolume", "quobyte", "azureDisk", "photonPersistentDisk", "portworxVolume",
                             "scaleIO", "storageos")


def restricted_volumes(metadata: Obj, spec: Obj) -> Result:
    """policy/check_restrictedVolumes.go (restrictedVolumes_1_0): only the allowed volume sources (the
    ephemeral, projected and claim-backed ones). Replaces hostPathVolumes."""
    names, types = [], set()
    for volume in spec.get("volumes") or []:
        if any(volume.get(source) is not None for source in ALLOWED_VOLUME_SOURCES):
            continue
        source = next((s for s in RESTRICTED_VOLUME_SOURCES if volume.get(s) is not None), None)
        if source is not None:
            names.append(volume.get("name", ""))
            types.add(source)
    if not names:
        return None
    return ("restricted volume types",
            f"{_plural('volume', 'volumes', len(names))} {_join_quote(names)} {_plural('uses', 'use', len(names))} "
            f"{_plural('restricted volume type', 'restricted volume types', len(types))} {_join_quote(sorted(types))}")


def _pod_or_containers_must(spec: Obj, field: str, good: Callable[[Any], bool], wording: tuple[str, str]) -> Result:
    """The shape runAsNonRoot and restricted seccomp share: explicit bad values on the pod or a container
    are reported first; else containers that set nothing while the pod sets no good value.
    wording: (reason, what the implicit detail says they must set)."""
    containers = [c.get("name", "") for c in _containers(spec) if _sc(c).get(field) is None]
    if containers and not good(_sc(spec).get(field)):
        return (wording[0],
                f"pod or {_plural('container', 'containers', len(containers))} {_join_quote(containers)} "
                f"must set securityContext.{wording[1]}")
    return None


def run_as_non_root(metadata: Obj, spec: Obj) -> Result:
    """policy/check_runAsNonRoot.go (runAsNonRoot_1_0): runAsNonRoot=true on the pod or on every
    container, and false nowhere."""
    pod_bad = _sc(spec).get("runAsNonRoot") is False
    containers = [c.get("name", "") for c in _containers(spec) if _sc(c).get("runAsNonRoot") is False]
    setters = _setters(pod_bad, containers)
    if setters:
        return "runAsNonRoot != true", f"{' and '.join(setters)} must not set securityContext.runAsNonRoot=false"
    return _pod_or_containers_must(spec, "runAsNonRoot", lambda v: v is True,
                                   ("runAsNonRoot != true", "runAsNonRoot=true"))


def run_as_user(metadata: Obj, spec: Obj) -> Result:
    """policy/check_runAsUser.go (runAsUser_1_23): no runAsUser=0 on the pod or any container."""
    def root(holder: Obj) -> bool:
        """An explicit runAsUser of 0 (a bool is not a uid, though Python counts False as 0)."""
        uid = _sc(holder).get("runAsUser")
        return type(uid) is int and uid == 0

    setters = _setters(root(spec), [c.get("name", "") for c in _containers(spec) if root(c)])
    return ("runAsUser=0", f"{' and '.join(setters)} must not set runAsUser=0") if setters else None


def seccomp_profile_restricted(metadata: Obj, spec: Obj) -> Result:
    """policy/check_seccompProfile_restricted.go (seccompProfileRestricted_1_25): RuntimeDefault or
    Localhost on the pod or on every container, and nothing else anywhere (Windows pods exempt).
    Replaces seccompProfile_baseline."""
    if _windows(spec):
        return None
    return _seccomp_explicit(spec) or _pod_or_containers_must(
        spec, "seccompProfile", lambda v: v is not None and v.get("type") in ("RuntimeDefault", "Localhost"),
        ("seccompProfile", 'seccompProfile.type to "RuntimeDefault" or "Localhost"'))


# ---------------------------------------------------------------------------------------------
# Registry (policy/registry.go) and the refusal message (policy/checks.go, admission/admission.go)
# ---------------------------------------------------------------------------------------------

# Check IDs in registry.go's order: baseline IDs sorted, then restricted IDs sorted (Go byte order).
BASELINE_CHECKS: tuple[tuple[str, CheckFn], ...] = (
    ("appArmorProfile", app_armor_profile), ("capabilities_baseline", capabilities_baseline),
    ("hostNamespaces", host_namespaces), ("hostPathVolumes", host_path_volumes), ("hostPorts", host_ports),
    ("privileged", privileged), ("procMount", proc_mount), ("seLinuxOptions", se_linux_options),
    ("seccompProfile_baseline", seccomp_profile_baseline), ("sysctls", sysctls),
    ("windowsHostProcess", windows_host_process))
RESTRICTED_CHECKS: tuple[tuple[str, CheckFn], ...] = (
    ("allowPrivilegeEscalation", allow_privilege_escalation), ("capabilities_restricted", capabilities_restricted),
    ("restrictedVolumes", restricted_volumes), ("runAsNonRoot", run_as_non_root), ("runAsUser", run_as_user),
    ("seccompProfile_restricted", seccomp_profile_restricted))
# Baseline checks a restricted check replaces (its `OverrideCheckIDs`).
OVERRIDDEN = frozenset({"capabilities_baseline", "hostPathVolumes", "seccompProfile_baseline"})


def _checks_for(level: str, version: str) -> tuple[tuple[str, CheckFn], ...]:
    """registry.go `EvaluatePod`: the checks of a level; versions newer than v1.33 get v1.33's checks, as a
    v1.33 API server clamps them to its newest; older ones are not modelled."""
    if level not in LEVELS:
        raise ValueError(f"unknown Pod Security level {level!r}: must be one of {', '.join(LEVELS)}")
    match = _VERSION.fullmatch(version)
    if version != "latest" and (match is None or int(match.group(1)) < 33):
        raise ValueError(f"Pod Security level version {version!r}: only v1.33 and later (or latest) are modelled")
    if level == "privileged":
        return ()
    if level == "baseline":
        return BASELINE_CHECKS
    return tuple(c for c in BASELINE_CHECKS if c[0] not in OVERRIDDEN) + RESTRICTED_CHECKS


def check_pod(pod_spec: Obj, metadata: Obj | None, level: str, version: str = "latest") -> list[Violation]:
    """Every check of `level` that this pod fails, in PSA's order; [] if it is allowed.

    version is the namespace's enforce-version ("latest", or "v1.N" with N >= 33)."""
    return [Violation(check_id, *result) for check_id, fn in _checks_for(level, version)
            if (result := fn(metadata or {}, pod_spec)) is not None]


def forbidden_detail(violations: Sequence[Violation]) -> str:
    """checks.go `AggregateCheckResult.ForbiddenDetail`: `reason (detail), reason (detail)`."""
    return ", ".join(f"{v.reason} ({v.detail})" if v.detail else v.reason for v in violations)


def refusal(violations: Sequence[Violation], level: str, version: str = "latest") -> str:
    """admission.go `EvaluatePod`'s error for an enforced refusal:
    `violates PodSecurity "baseline:latest": privileged (container "x" must not set ...)`.

    version is printed as the namespace labels it (PSA prints "latest" when it is unset). The API server
    prefixes this with `pods "<name>" is forbidden: `, which is the caller's to add."""
    return f'violates PodSecurity "{level}:{version}": {forbidden_detail(violations)}'


def namespace_policy(labels: Obj | None) -> tuple[str, str]:
    """api/helpers.go `PolicyToEvaluate` for enforcement: the namespace's (level, version). Unset means
    privileged and latest (the plugin's default configuration, which GKE keeps); an invalid level means
    restricted and an invalid version latest, as PSA fails closed."""
    labels = labels or {}
    level = labels.get(ENFORCE_LABEL, "privileged")
    version = labels.get(ENFORCE_VERSION_LABEL, "latest")
    if level not in LEVELS:
        level = "restricted"
    if version != "latest" and _VERSION.fullmatch(version) is None:
        version = "latest"
    return level, version


# ---------------------------------------------------------------------------------------------
# The pods a workload would create
# ---------------------------------------------------------------------------------------------

# Where each kind keeps its pod template (admission.go `DefaultPodSpecExtractor`, plus JobSet's Jobs).
_TEMPLATE_PATHS: dict[str, tuple[str, ...]] = {
    "PodTemplate": ("template",), "ReplicationController": ("spec", "template"),
    "ReplicaSet": ("spec", "template"), "Deployment": ("spec", "template"), "DaemonSet": ("spec", "template"),
    "StatefulSet": ("spec", "template"), "Job": ("spec", "template"),
    "CronJob": ("spec", "jobTemplate", "spec", "template"),
}


def _dig(obj: Obj, path: Sequence[str]) -> Obj | None:
    """The mapping at path, or None where any step is missing."""
    for key in path:
        if not isinstance(obj, Mapping) or obj.get(key) is None:
            return None
        obj = obj[key]
    return obj if isinstance(obj, Mapping) else None


def pod_specs_of(obj: Obj) -> list[tuple[str, Obj, Obj]]:
    """(name, pod metadata, pod spec) for every pod template of a workload: the Pod itself, a controller's
    template, or each replicated Job's template of a JobSet (named `<jobset>/<replicatedJob>`; an object with
    only generateName is named by it).

    PSA enforces only on Pods; on controllers it merely warns, and JobSets it does not look at. But the
    pods their controllers create are enforced, so a refused template means a workload that is admitted
    and then never gets its pods: judging the templates is how to see that before submitting."""
    meta = obj.get("metadata") or {}
    kind, name = obj.get("kind"), meta.get("name") or meta.get("generateName") or ""
    if kind == "Pod":
        return [(name, obj.get("metadata") or {}, obj.get("spec") or {})]
    if kind == "JobSet":
        jobs = (obj.get("spec") or {}).get("replicatedJobs") or []
        templates = [(f"{name}/{rj.get('name', '')}", _dig(rj, ("template", "spec", "template"))) for rj in jobs]
    elif kind in _TEMPLATE_PATHS:
        templates = [(name, _dig(obj, _TEMPLATE_PATHS[kind]))]
    else:
        return []
    return [(n, t.get("metadata") or {}, t.get("spec") or {}) for n, t in templates if t is not None]
