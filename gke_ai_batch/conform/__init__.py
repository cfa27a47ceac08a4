"""Conformance of Kubernetes manifests to the upstream API schemas, with the project's own code: custom
resources against the vendored CRDs of the releases the platform installs (structural schema, strictly, and
their CEL rules), built-in kinds against the Kubernetes OpenAPI schemas kubernetes-validate ships. What a
`kubectl apply` would refuse, found before any cluster exists: `make conform`, or
`python -m gke_ai_batch.conform PATH...`."""
