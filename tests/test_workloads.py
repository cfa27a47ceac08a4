"""Sample workloads cannot drift from their stacks: Kueue's admission model (gke_ai_batch.admission)
refuses a sample whose queue, flavor, topology, chips or slices its stack does not provide."""
import copy
from pathlib import Path

import yaml

from gke_ai_batch.admission.decision import admit_in
from gke_ai_batch.offline.admit import cluster_of

WORKLOADS = Path(__file__).resolve().parent.parent / "examples" / "workloads"


def multislice():
    return yaml.safe_load((WORKLOADS / "multislice.yaml").read_text())


def pod(doc):
    return doc["spec"]["replicatedJobs"][0]["template"]["spec"]["template"]["spec"]


def test_drift_is_caught(plan):
    cluster = cluster_of(plan("multislice"))
    assert admit_in(cluster, multislice()).admitted
    doc = multislice()
    pod(doc)["nodeSelector"]["cloud.google.com/gke-tpu-topology"] = "4x4"
    assert admit_in(cluster, doc).reason == "couldn't assign flavors to pod set slice: flavor vlp-24 doesn't match " \
                                        "node affinity"
    doc = multislice()
    doc["spec"]["replicatedJobs"][0]["replicas"] = 4
    assert "current podset request (32) > maximum capacity (24)" in admit_in(cluster, doc).reason
    doc = copy.deepcopy(multislice())
    doc["spec"]["replicatedJobs"][0]["template"]["spec"].update(parallelism=1, completions=1)
    pod(doc)["containers"][0]["resources"]["limits"]["google.com/tpu"] = 8  # 8 chips on 4-chip VMs
    result = admit_in(cluster, doc)
    assert result.quota_reserved and not result.admitted and any("slice" in w for w in result.warnings)
    doc["metadata"]["labels"]["kueue.x-k8s.io/queue-name"] = "missing"
    assert admit_in(cluster, doc).reason == "LocalQueue missing doesn't exist"
