"""gke-ai-batch: a multi-team AI batch platform on GKE, as Pulumi components.

Layers, imported in one direction only:
- `model`: the stack config, the accelerator catalog, machine sizes and GKE's rules (with sources);
- `plan`: pure derivations from a validated config (node pools, GKE inputs, Kueue objects, Helm values);
- `components`: ComponentResources that only declare what a plan says;
- `policies`: the CrossGuard pack, reusing the model's rules on any program's resources;
- `admission`: Kueue v0.19.2's admission decision for one workload, as a pure model;
- `offline`: the offline plan, policy check and admission check, under Pulumi's mock runtime.
`vocabulary` holds the names they share (labels, API versions, capacity modes, type tokens)."""
