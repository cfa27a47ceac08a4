"""Pure derivations from a validated stack config: node pools, the exact GKE inputs, Kueue objects
and Helm values. Nothing here touches Pulumi; the components declare what these plans say."""
