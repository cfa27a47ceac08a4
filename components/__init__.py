"""Pulumi ComponentResources of the platform, one per module. They only declare resources: every
decision is made beforehand by gkebatch (pure functions) from the validated stack config."""
PKG = "gke-ai-batch"
