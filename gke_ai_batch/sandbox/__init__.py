"""The sandbox: a real Kubernetes control plane (etcd, kube-apiserver, kube-controller-manager), Kueue and JobSet,
built from their Go modules and run on 127.0.0.1, with the stack's Kubernetes layer deployed by a real `pulumi up`.
It is where the offline verdicts (`make admit`, `make access`, `make diff`) are held to the real components."""
