"""Team data access: buckets created private, access granted to each team namespace's Kubernetes
service account through Workload Identity Federation for GKE, bad bucket input refused at its path."""
import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.plan.platform import build_platform

from .conftest import by_type, platform_of

PRINCIPAL = ("principal://iam.googleapis.com/projects/123456789012/locations/global/workloadIdentityPools/"
             "acme-ml-prod.svc.id.goog/subject/ns/{ns}/sa/{sa}")


def grants(regs):
    return {(r.inputs["bucket"], r.inputs["member"]): r.inputs["role"] for r in by_type(regs, "BucketIAMMember")}


def test_each_namespace_of_a_team_reads_datasets_and_writes_checkpoints(plan):
    found = grants(plan("prod"))
    training = PRINCIPAL.format(ns="training", sa="training-workload")
    assert found[("acme-ml-datasets", training)] == "roles/storage.objectViewer"
    assert found[("acme-ml-prod-training-checkpoints", training)] == "roles/storage.objectUser"
    sandbox = PRINCIPAL.format(ns="research-sandbox", sa="research-workload")
    assert found[("acme-ml-prod-research-checkpoints", sandbox)] == "roles/storage.objectUser"
    assert ("acme-ml-prod-training-checkpoints", sandbox) not in found  # no team reaches another's checkpoints
    accounts = {(r.inputs["metadata"]["namespace"], r.inputs["metadata"]["name"])
                for r in by_type(plan("prod"), "core/v1:ServiceAccount")}
    assert {("training", "training-workload"), ("research-sandbox", "research-workload")} <= accounts


def test_created_buckets_are_private_and_keep_deleted_checkpoints(plan):
    buckets = {r.inputs["name"]: r.inputs for r in by_type(plan("prod"), "storage/bucket:Bucket")}
    assert set(buckets) == {"acme-ml-prod-training-checkpoints", "acme-ml-prod-research-checkpoints"}  # not datasets
    training = buckets["acme-ml-prod-training-checkpoints"]
    assert training["uniformBucketLevelAccess"] is True and training["publicAccessPrevention"] == "enforced"
    assert training["softDeletePolicy"] == {"retentionDurationSeconds": 14 * 86400}
    assert training["location"] == "US-EAST5" and training["labels"]["team"] == "training"
    assert buckets["acme-ml-prod-research-checkpoints"]["versioning"] == {"enabled": True}


def cluster_addons(regs):
    return next(r.inputs for r in by_type(regs, "container/cluster:Cluster")).get("addonsConfig")


def test_the_fuse_driver_is_on_where_a_team_mounts_buckets(plan):
    assert cluster_addons(plan("prod")) == {"gcsFuseCsiDriverConfig": {"enabled": True}}
    assert cluster_addons(plan("dev")) == {"gcsFuseCsiDriverConfig": {"enabled": False}}  # stated, so it turns off


def refusal(change):
    cfg = platform_of("prod")
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    return e.value.path, e.value.message


def bucket(team, i, **kw):
    return lambda c: c["teams"][team]["buckets"][i].update(kw)


BAD = [
    ("uppercase name", bucket(0, 1, name="Acme-Checkpoints"), "platform.teams[0].buckets[1].name",
     "'Acme-Checkpoints' is not a Cloud Storage bucket name: use lowercase letters"),
    ("google in the name", bucket(0, 1, name="acme-google-ckpt"), "platform.teams[0].buckets[1].name",
     "may not begin with 'goog' or contain 'google'"),
    ("created by two teams", bucket(1, 1, name="acme-ml-prod-training-checkpoints"),
     "platform.teams[1].buckets[1].name", "also created at platform.teams[0].buckets[1]"),
    ("access mode", bucket(0, 0, access="write"), "platform.teams[0].buckets[0].access", "'read' or 'read-write'"),
    ("service account name", lambda c: c["teams"][0].update(service_account="Training_SA"),
     "platform.teams[0].service_account", "not a Kubernetes service account name: a DNS subdomain"),
    ("settings of an existing bucket", bucket(0, 0, versioning=True), "platform.teams[0].buckets[0].versioning",
     "an existing bucket keeps its own settings"),
    ("soft delete too short", bucket(0, 1, soft_delete_days=3), "platform.teams[0].buckets[1].soft_delete_days",
     "7 to 90 days, or 0 for none"),
    ("unprotected checkpoints", bucket(0, 1, soft_delete_days=0), "platform.teams[0].buckets[1].soft_delete_days",
     "keep soft delete (7 to 90 days) or turn versioning on"),
]


@pytest.mark.parametrize("change,path,words", [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_bad_bucket_input_is_refused_at_its_path(change, path, words):
    at, message = refusal(change)
    assert at == path and words in message, message


def test_a_kueue_layer_refuses_team_storage():
    from gke_ai_batch.plan import component_plans
    with pytest.raises(ConfigError) as e:
        component_plans.scheduling("layer", {"region": "us-east5", "teams": [{"name": "a", "buckets": [{"name": "abc",
                                                                                     "access": "read"}]}]})
    assert e.value.path == "teams[0].buckets" and "declare team storage with the Platform component" in e.value.message


def test_the_sample_workload_mounts_only_what_its_service_account_is_granted(plan):
    import yaml

    from .conftest import ROOT
    found = grants(plan("prod"))
    job = next(yaml.safe_load_all((ROOT / "examples" / "workloads" / "prod.yaml").read_text()))
    pod = job["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]
    assert pod["metadata"]["annotations"]["gke-gcsfuse/volumes"] == "true"  # else the driver adds no sidecar
    member = PRINCIPAL.format(ns=job["metadata"]["namespace"], sa=pod["spec"]["serviceAccountName"])
    for volume in pod["spec"]["volumes"]:
        role = found[(volume["csi"]["volumeAttributes"]["bucketName"], member)]
        assert role == ("roles/storage.objectViewer" if volume["csi"].get("readOnly") else "roles/storage.objectUser")


@pytest.mark.parametrize("change,path,words", [
    (lambda c: c["teams"][0].update(service_account="default"), "platform.teams[0].service_account",
     "'default' exists in every namespace"),
    (bucket(0, 1, name="acme..ckpt"), "platform.teams[0].buckets[1].name", "a domain you have verified"),
    (bucket(0, 1, location="mars-1x"), "platform.teams[0].buckets[1].location", "a multi-region (US, EU, ASIA)"),
    (lambda c: c["cluster"].update(mode="autopilot", gcs_fuse_csi_driver=False), "platform.cluster.gcs_fuse_csi_driver",
     "Autopilot always runs"),
], ids=["default service account", "empty dot part", "location", "FUSE off on Autopilot"])
def test_more_bad_storage_input(change, path, words):
    cfg = platform_of("prod")
    change(cfg)
    if cfg["cluster"].get("mode") == "autopilot":
        for key in ("tpu_pools", "gpu_pools", "system_pool"):
            cfg.pop(key, None)
        for key in ("private_nodes", "master_ipv4_cidr"):
            cfg["cluster"].pop(key, None)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    assert e.value.path == path and words in e.value.message, e.value.message


def test_a_grant_on_another_teams_bucket_waits_for_the_bucket():
    from .conftest import run_config
    cfg = platform_of("prod")
    cfg["teams"][1]["buckets"].append({"name": "acme-ml-prod-training-checkpoints", "access": "read", "existing": True})
    regs = run_config(cfg)
    bucket = next(r for r in by_type(regs, "storage/bucket:Bucket")
                  if r.inputs["name"] == "acme-ml-prod-training-checkpoints")
    grant = next(r for r in by_type(regs, "BucketIAMMember") if r.inputs["bucket"] == bucket.inputs["name"]
                 and "/ns/research/" in r.inputs["member"])
    assert grant.inputs["role"] == "roles/storage.objectViewer" and bucket.urn in grant.dependencies
