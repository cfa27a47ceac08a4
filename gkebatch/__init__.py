"""Pure, cloud-free core of the GKE AI batch platform: stack config, accelerator catalog and the
derivations (node pools, Kueue objects) that the components declare and the policies re-check."""
