"""A program of its own that reuses the platform's components with plain arguments: a GKE cluster,
the CPU pool the controllers run on, two v6e 4x4 spot slices, and Kueue with one team's queue.
Every argument is checked by the same catalog and GKE rules as a stack file, before any resource."""
import pulumi

from gke_ai_batch.components.gke_cluster import GkeCluster
from gke_ai_batch.components.kueue_layer import KueueLayer
from gke_ai_batch.components.system_pool import SystemNodePool
from gke_ai_batch.components.tpu_slice_pool import TpuSlicePool

PROJECT, REGION, ZONE = "acme-ml-research", "us-east5", "us-east5-b"
LABELS = {"environment": "research", "owner": "vision-team"}

gke = GkeCluster("gke", {"project": PROJECT, "region": REGION, "zones": [ZONE], "environment": "research",
                         "owner": "vision-team", "cluster": {"name": "vision"}})
# The nodes run as the cluster's dedicated service account (without it GKE uses the Compute Engine
# default one, which the policy pack refuses).
target = {"project": PROJECT, "region": REGION, "cluster": gke.name, "location": gke.location, "labels": LABELS,
          "service_account": gke.node_service_account}
system = SystemNodePool("system", {**target, "zones": [ZONE]})
pool = TpuSlicePool("v6e-spot", {**target, "zones": [ZONE], "generation": "v6e", "topology": "4x4", "slices": 2,
                                  "capacity": "spot"})
kueue = KueueLayer("batch", {
    "region": REGION, "zones": [ZONE], "tpu_pools": [pool.spec],  # the pool's shape, stated once, in the pool
    "teams": [{"name": "vision", "queue": {"quotas": {"v6e-spot": {"google.com/tpu": {"nominal": "32"}}}}}],
}, pulumi.ResourceOptions(providers=[gke.provider], depends_on=[system]))

pulumi.export("cluster", gke.name)
pulumi.export("slices", pool.pool_names)
pulumi.export("localQueues", kueue.local_queues)
