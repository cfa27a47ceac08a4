"""The platform's policy pack: GKE accelerator constraints, the security baseline and cross-team
quota sanity, as Pulumi CrossGuard policies (see pack.py)."""
