"""Would Kueue v0.19.2 admit this Job or JobSet on an empty cluster, and would it then actually run?

A pure model (no Pulumi) of Kueue's admission decision for one workload, read from Kueue's source at
tag v0.19.2 (paths below are in kubernetes-sigs/kueue), so that a stack's queues, flavors and quotas
can be checked against the workloads users will submit before anything exists. The reasons are in
Kueue's own words, so what this prints is what `kubectl describe workload` would say.

"Empty cluster" means nothing else is admitted: available quota equals potential quota, so a flavor
either fits (maybe borrowing) or does not fit at all; preemption never comes into play.

Kueue checks quota, not hardware. The physical checks Kueue does not do (does a TPU slice of that
shape exist behind the flavor, are there enough slices, can a queued-provisioning node pool grow
to what the ProvisioningRequest asks for) are reported separately as `warnings`, and a workload
with warnings counts as inadmissible: it would reserve quota and then never run.

The parts, in the order Kueue meets them: `pod_sets` (the Workload Kueue builds from a Job, JobSet, Pod,
Deployment or StatefulSet), `queues` (is the object managed, which LocalQueue and ClusterQueue, is it
usable), `flavors` (flavor assignment, with `matching` for selectors, taints and affinity, and `quotas` for
the ClusterQueue and Cohort tree, and `topology` for topology-aware flavors), `physical` (what Kueue does
not check), and `decision`, which runs them over a `cluster.Cluster`; `quantities` keeps Kueue's units and
message formatting, `terms` its names.

Topology Aware Scheduling is modelled as far as `topology` says: which flavors a pod set may take, and whether
a required level fits the nodes that exist. Not modelled: TAS's slice and preferred-level placement, partial
admission (`kueue.x-k8s.io/job-min-parallelism`),
resource transformations, DRA beyond `claims` (which holds a workload whose claims Kueue cannot count),
LimitRanges and RuntimeClass overhead, fair sharing, MultiKueue,
and the 18-podSet limit of the Workload API.
"""

