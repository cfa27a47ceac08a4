"""Pod Security Standards at v1.33, as the PodSecurity admission plugin checks them.

The expected reasons and details are the ones k8s.io/pod-security-admission's own policy/check_*_test.go
pin at v0.33.13 (Kubernetes v1.33), with the Go pods written as the YAML a tenant would submit."""
from __future__ import annotations

import pytest

from gke_ai_batch.apiserver.pod_security import (
    LEVELS,
    Violation,
    check_pod,
    forbidden_detail,
    namespace_policy,
    pod_specs_of,
    refusal,
)


def c(name, **security_context):
    """A container; securityContext=None gives a nil one, no keywords gives none at all."""
    out = {"name": name, "image": "busybox"}
    if security_context:
        out["securityContext"] = security_context.get("sc", security_context)
    return out


def only(violations, check):
    """The (reason, detail) of the one violation of `check`."""
    found = [(v.reason, v.detail) for v in violations if v.check == check]
    assert len(found) == 1, violations
    return found[0]


RESTRICTED_OK = {
    "securityContext": {"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
    "containers": [{"name": "main", "image": "busybox", "securityContext": {
        "allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"], "add": ["NET_BIND_SERVICE"]}}}],
    "volumes": [{"name": "scratch", "emptyDir": {}}, {"name": "data", "persistentVolumeClaim": {"claimName": "d"}},
                {"name": "defaulted"}],
}


# --- levels and the registry ----------------------------------------------------------------

def test_levels_and_privileged_allows_everything():
    assert LEVELS == ("privileged", "baseline", "restricted")
    spec = {"hostNetwork": True, "containers": [c("x", privileged=True)]}
    assert check_pod(spec, None, "privileged") == []
    assert check_pod(RESTRICTED_OK, {}, "restricted") == []


def test_unknown_level_and_old_versions_are_refused():
    with pytest.raises(ValueError, match="unknown Pod Security level 'strict'"):
        check_pod({}, None, "strict")
    with pytest.raises(ValueError, match="only v1.33 and later"):
        check_pod({}, None, "baseline", "v1.30")
    assert check_pod({"hostPID": True}, None, "baseline", "v1.35")[0].check == "hostNamespaces"


def test_checks_run_in_registry_order_and_restricted_overrides_baseline():
    spec = {"hostIPC": True, "securityContext": {"sysctls": [{"name": "kernel.msgmax"}]},
            "volumes": [{"name": "h", "hostPath": {"path": "/"}}],
            "containers": [c("x", privileged=True, capabilities={"add": ["NET_ADMIN"]})]}
    assert [v.check for v in check_pod(spec, None, "baseline")] == [
        "capabilities_baseline", "hostNamespaces", "hostPathVolumes", "privileged", "sysctls"]
    assert [v.check for v in check_pod(spec, None, "restricted")] == [
        "hostNamespaces", "privileged", "sysctls", "allowPrivilegeEscalation", "capabilities_restricted",
        "restrictedVolumes", "runAsNonRoot", "seccompProfile_restricted"]


# --- baseline checks ------------------------------------------------------------------------

def test_privileged():
    spec = {"containers": [c("a"), c("b", sc=None), c("c", privileged=False), c("d", privileged=True),
                           c("e", privileged=True)]}
    assert only(check_pod(spec, None, "baseline"), "privileged") == (
        "privileged", 'containers "d", "e" must not set securityContext.privileged=true')


def test_host_namespaces_and_host_path_volumes():
    spec = {"hostNetwork": True, "hostPID": True, "hostIPC": True,
            "volumes": [{"name": "a", "hostPath": {"path": "/a"}}, {"name": "b", "hostPath": {"path": "/b"}}]}
    result = check_pod(spec, None, "baseline")
    assert only(result, "hostNamespaces") == ("host namespaces", "hostNetwork=true, hostPID=true, hostIPC=true")
    assert only(result, "hostPathVolumes") == ("hostPath volumes", 'volumes "a", "b"')


def test_host_ports_across_init_and_ephemeral_containers():
    one = {"containers": [{"name": "a", "ports": [{"hostPort": 0}]},
                          {"name": "b", "ports": [{"containerPort": 80}, {"hostPort": 20}]}]}
    assert only(check_pod(one, None, "baseline"), "hostPorts") == ("hostPort", 'container "b" uses hostPort 20')
    many = {"initContainers": [{"name": "b", "ports": [{"hostPort": 10}, {"hostPort": 20}]}],
            "ephemeralContainers": [{"name": "c", "ports": [{"hostPort": 10}, {"hostPort": 30}]}]}
    assert only(check_pod(many, None, "baseline"), "hostPorts") == (
        "hostPort", 'containers "b", "c" use hostPorts 10, 20, 30')


def test_capabilities_baseline():
    spec = {"containers": [c("a", capabilities={"add": ["FOO", "BAR"]}), c("b", capabilities={"add": ["BAR", "BAZ"]}),
                           c("ok", capabilities={"add": ["CHOWN", "NET_BIND_SERVICE"], "drop": ["ALL"]})]}
    assert only(check_pod(spec, None, "baseline"), "capabilities_baseline") == (
        "non-default capabilities", 'containers "a", "b" must not include "BAR", "BAZ", "FOO" in '
                                    "securityContext.capabilities.add")


def test_app_armor_fields_and_annotations():
    unconfined = {"appArmorProfile": {"type": "Unconfined"}}
    pod = {"securityContext": unconfined, "containers": [c("foo", sc=unconfined),
                                                         c("ok", appArmorProfile={"type": "Localhost"})]}
    assert only(check_pod(pod, None, "baseline"), "appArmorProfile") == (
        "forbidden AppArmor profile", 'pod and container "foo" must not set AppArmor profile type to "Unconfined"')
    prefix = "container.apparmor.security.beta.kubernetes.io/"
    annotations = {prefix + "a": "runtime/default", prefix + "b": "localhost/foo", prefix + "c": "",
                   prefix + "e": "unconfined", prefix + "f": "unknown", prefix: "bogus", "other": "unconfined"}
    result = check_pod({"containers": [c("e")]}, {"annotations": annotations}, "baseline")
    assert only(result, "appArmorProfile") == (
        "forbidden AppArmor profiles",
        'annotations must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/="bogus"", '
        '"container.apparmor.security.beta.kubernetes.io/e="unconfined"", '
        '"container.apparmor.security.beta.kubernetes.io/f="unknown""')


def test_se_linux_options():
    spec = {"securityContext": {"seLinuxOptions": {"type": "foo", "user": "bar", "role": "baz"}},
            "containers": [c("a", seLinuxOptions={"type": "container_t"}), c("d", seLinuxOptions={"type":
                           "container_engine_t"}), c("e", seLinuxOptions={"type": "bar"}),
                           c("f", seLinuxOptions={"user": "bar"}), c("g", seLinuxOptions={"role": "baz"})]}
    assert only(check_pod(spec, None, "baseline"), "seLinuxOptions") == (
        "seLinuxOptions", 'pod and containers "e", "f", "g" set forbidden securityContext.seLinuxOptions: '
                          'types "bar", "foo"; user may not be set; role may not be set')
    role_only = {"securityContext": {"seLinuxOptions": {"role": "bad"}}}
    assert only(check_pod(role_only, None, "baseline"), "seLinuxOptions") == (
        "seLinuxOptions", "pod set forbidden securityContext.seLinuxOptions: role may not be set")


def test_proc_mount():
    spec = {"containers": [c("a", sc=None), c("b", sc={}), c("c", procMount="Default"), c("d", procMount="Unmasked"),
                           c("e", procMount="other")]}
    assert only(check_pod(spec, None, "baseline"), "procMount") == (
        "procMount", 'containers "d", "e" must not set securityContext.procMount to "Unmasked", "other"')


def test_seccomp_baseline_forbids_unconfined_but_not_unset():
    spec = {"securityContext": {"seccompProfile": {"type": "Unconfined"}},
            "containers": [c("a"), c("c", seccompProfile={"type": "Unconfined"}),
                           c("d", seccompProfile={"type": "Unconfined"}), c("e", seccompProfile={"type": "Localhost"})]}
    assert only(check_pod(spec, None, "baseline"), "seccompProfile_baseline") == (
        "seccompProfile", 'pod and containers "c", "d" must not set securityContext.seccompProfile.type to '
                          '"Unconfined"')
    assert check_pod({"containers": [c("a")]}, None, "baseline") == []


def test_sysctls_safe_list_at_1_33():
    safe = [{"name": n} for n in ("net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.ip_local_reserved_ports",
                                  "net.ipv4.tcp_keepalive_time", "kernel.shm_rmid_forced")]
    assert check_pod({"securityContext": {"sysctls": safe}}, None, "baseline") == []
    bad = {"securityContext": {"sysctls": [{"name": "a"}, *safe, {"name": "b"}]}}
    assert only(check_pod(bad, None, "baseline"), "sysctls") == ("forbidden sysctls", "a, b")


def test_windows_host_process():
    spec = {"securityContext": {"windowsOptions": {"hostProcess": True}},
            "containers": [c("a", sc=None), c("c", windowsOptions={}), c("d", windowsOptions={"hostProcess": False}),
                           c("e", windowsOptions={"hostProcess": True}), c("f", windowsOptions={"hostProcess": True})]}
    assert only(check_pod(spec, None, "baseline"), "windowsHostProcess") == (
        "hostProcess", 'pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true')


# --- restricted checks ----------------------------------------------------------------------

def test_allow_privilege_escalation_and_windows_exemption():
    spec = {"containers": [c("a"), c("b", allowPrivilegeEscalation=None), c("c", allowPrivilegeEscalation=True),
                           c("d", allowPrivilegeEscalation=False)]}
    assert only(check_pod(spec, None, "restricted"), "allowPrivilegeEscalation") == (
        "allowPrivilegeEscalation != false",
        'containers "a", "b", "c" must set securityContext.allowPrivilegeEscalation=false')
    windows = {"os": {"name": "windows"}, "containers": [c("a")], "securityContext": {"runAsNonRoot": True}}
    assert check_pod(windows, None, "restricted") == []


def test_capabilities_restricted():
    spec = {"containers": [c("a", capabilities={"add": ["FOO", "BAR"]}), c("b", capabilities={"add": ["BAR", "BAZ"]}),
                           c("c", capabilities={"add": ["NET_BIND_SERVICE", "CHOWN"], "drop": ["ALL", "FOO"]})]}
    assert only(check_pod(spec, None, "restricted"), "capabilities_restricted") == (
        "unrestricted capabilities", 'containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
                                     'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in '
                                     "securityContext.capabilities.add")
    assert only(check_pod({"containers": [c("a")]}, None, "restricted"), "capabilities_restricted") == (
        "unrestricted capabilities", 'container "a" must set securityContext.capabilities.drop=["ALL"]')


def test_restricted_volumes():
    allowed = [{"name": f"a{i}", source: {}} for i, source in enumerate(
        ["emptyDir", "secret", "persistentVolumeClaim", "downwardAPI", "configMap", "projected", "csi", "ephemeral",
         "image"])]
    bad = [{"name": "b1", "hostPath": {}}, {"name": "b2", "gcePersistentDisk": {}}, {"name": "b5", "nfs": {}},
           {"name": "b21", "storageos": {}}, {"name": "defaulted"}]
    assert only(check_pod({"volumes": allowed + bad}, None, "restricted"), "restrictedVolumes") == (
        "restricted volume types", 'volumes "b1", "b2", "b5", "b21" use restricted volume types '
                                   '"gcePersistentDisk", "hostPath", "nfs", "storageos"')
    assert only(check_pod({"volumes": bad[:1]}, None, "restricted"), "restrictedVolumes") == (
        "restricted volume types", 'volume "b1" uses restricted volume type "hostPath"')


def test_run_as_non_root():
    def detail(spec):
        return only(check_pod(spec, None, "restricted"), "runAsNonRoot")[1]

    assert detail({"containers": [c("a")]}) == 'pod or container "a" must set securityContext.runAsNonRoot=true'
    assert detail({"securityContext": {"runAsNonRoot": False}, "containers": [c("a", sc=None)]}) == (
        "pod must not set securityContext.runAsNonRoot=false")
    explicit = {"securityContext": {"runAsNonRoot": True}, "containers": [
        c("a", sc=None), c("b", sc={}), c("c", runAsNonRoot=False), c("d", runAsNonRoot=False),
        c("e", runAsNonRoot=True)]}
    assert detail(explicit) == 'containers "c", "d" must not set securityContext.runAsNonRoot=false'
    fallthrough = {"containers": [c("a", sc=None), c("b", sc={}), c("d", runAsNonRoot=True)]}
    assert detail(fallthrough) == 'pod or containers "a", "b" must set securityContext.runAsNonRoot=true'


def test_run_as_user():
    spec = {"securityContext": {"runAsUser": 0}, "containers": [c("a", sc=None), c("c", runAsUser=0),
                                                                c("d", runAsUser=0), c("e", runAsUser=1)]}
    assert only(check_pod(spec, None, "restricted"), "runAsUser") == (
        "runAsUser=0", 'pod and containers "c", "d" must not set runAsUser=0')
    fine = {"securityContext": {"runAsUser": 1000}, "containers": [c("a", runAsUser=1)]}
    assert not [v for v in check_pod(fine, None, "restricted") if v.check == "runAsUser"]


def test_seccomp_restricted():
    def detail(spec):
        return only(check_pod(spec, None, "restricted"), "seccompProfile_restricted")[1]

    assert detail({"containers": [c("a")]}) == (
        'pod or container "a" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')
    assert detail({"securityContext": {"seccompProfile": {"type": "Unconfined"}}, "containers": [c("a")]}) == (
        'pod must not set securityContext.seccompProfile.type to "Unconfined"')
    fallthrough = {"containers": [c("a", sc=None), c("b", sc={}), c("d", seccompProfile={"type": "RuntimeDefault"})]}
    assert detail(fallthrough) == (
        'pod or containers "a", "b" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"')
    windows = {"os": {"name": "windows"}, "containers": [c("a")]}
    assert not [v for v in check_pod(windows, None, "restricted") if v.check == "seccompProfile_restricted"]


# --- messages, namespace labels and workloads -------------------------------------------------

def test_refusal_reads_like_psa():
    spec = {"hostNetwork": True, "containers": [c("x", privileged=True)]}
    violations = check_pod(spec, None, "baseline")
    assert refusal(violations, "baseline", "v1.33") == (
        'violates PodSecurity "baseline:v1.33": host namespaces (hostNetwork=true), '
        'privileged (container "x" must not set securityContext.privileged=true)')
    assert forbidden_detail([Violation("x", "no detail", "")]) == "no detail"
    assert refusal(violations[:1], "baseline").startswith('violates PodSecurity "baseline:latest": ')


def test_namespace_policy_from_labels():
    assert namespace_policy(None) == ("privileged", "latest")
    assert namespace_policy({"pod-security.kubernetes.io/enforce": "baseline",
                             "pod-security.kubernetes.io/enforce-version": "v1.33"}) == ("baseline", "v1.33")
    assert namespace_policy({"pod-security.kubernetes.io/enforce": "strict",
                             "pod-security.kubernetes.io/enforce-version": "1.33"}) == ("restricted", "latest")


def test_pod_specs_of_every_workload_kind():
    template = {"metadata": {"annotations": {"a": "b"}}, "spec": {"containers": [c("x")]}}
    pod = {"kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [c("y")]}}
    job = {"kind": "Job", "metadata": {"name": "j"}, "spec": {"template": template}}
    jobset = {"kind": "JobSet", "metadata": {"name": "js"}, "spec": {"replicatedJobs": [
        {"name": "workers", "template": {"spec": {"template": template}}}, {"name": "empty", "template": {}}]}}
    cron = {"kind": "CronJob", "metadata": {"name": "cj"}, "spec": {"jobTemplate": {"spec": {"template": template}}}}
    assert pod_specs_of(pod) == [("p", {"name": "p"}, pod["spec"])]
    assert pod_specs_of(job) == [("j", template["metadata"], template["spec"])]
    assert pod_specs_of(jobset) == [("js/workers", template["metadata"], template["spec"])]
    assert pod_specs_of(cron) == [("cj", template["metadata"], template["spec"])]
    for kind in ("Deployment", "StatefulSet"):
        assert pod_specs_of({"kind": kind, "metadata": {"name": "d"}, "spec": {"template": template}})[0][0] == "d"
    assert pod_specs_of({"kind": "ConfigMap", "metadata": {"name": "c"}}) == []
    generated = {"kind": "Job", "metadata": {"generateName": "eval-"}, "spec": {"template": template}}
    assert pod_specs_of(generated)[0][0] == "eval-"
