"""`gke-ai-batch why` and `queue`: a researcher's answer to "why is my job pending, and for how long?", read from
the live cluster with the team member's own rights (kubectl as the client, so GKE's exec auth plugin works as the
user has it). Kueue v0.19.2's Workload (apis/kueue/v1beta2/workload_types.go) is the one source of the state."""
