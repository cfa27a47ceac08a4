"""The simulated Kubernetes API server: what it does with a team member's request before Kueue sees it
(RBAC, Pod Security admission, the stack's ValidatingAdmissionPolicies with their CEL), and the whole path
of an object through it and then Kueue (tenant_path). No Pulumi: it judges planned manifests."""
