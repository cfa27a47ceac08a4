"""The APIs a project enables and the IAM roles the identity that runs `pulumi up` holds, each with the
Pulumi resource types it lets that identity create and the Google page that says so. The one place
docs/getting-started.md (sections 3 and 4) is held to: `tests/test_deploy_roles.py` plans every stack of
`stacks/` and fails on a declared type no role covers, and on a table or `gcloud services enable` line
that lists other roles or APIs than these."""
from __future__ import annotations

from dataclasses import dataclass

KUBERNETES = "kubernetes:"  # every Kubernetes object goes through the cluster's API, which container.admin covers
NOT_CLOUD = ("pulumi:", "gke-ai-batch:")  # the stack, providers, references and our components: no API call


@dataclass(frozen=True)
class DeployRole:
    role: str
    api: str  # the service its resources need enabled
    types: tuple[str, ...]  # Pulumi type tokens (or the `kubernetes:` prefix) it creates, updates and deletes
    source: str  # the Google page that names the role for it


ROLES: tuple[DeployRole, ...] = (
    # "Provides access to full management of clusters and their Kubernetes API objects"
    DeployRole("roles/container.admin", "container.googleapis.com",
               ("gcp:container/cluster:Cluster", "gcp:container/nodePool:NodePool", KUBERNETES),
               "https://cloud.google.com/iam/docs/roles-permissions/container"),
    # Create service accounts: "Enable the IAM API"; roles/iam.serviceAccountCreator creates, Admin also
    # updates and deletes, as Pulumi does.
    DeployRole("roles/iam.serviceAccountAdmin", "iam.googleapis.com", ("gcp:serviceaccount/account:Account",),
               "https://cloud.google.com/iam/docs/service-accounts-create"),
    # GKE roles page: "To set a service account on nodes, you must also have the Service Account User role".
    DeployRole("roles/iam.serviceAccountUser", "iam.googleapis.com", (),
               "https://cloud.google.com/iam/docs/roles-permissions/container"),
    # Create service accounts: granting the node account a project role needs "the Project IAM admin role".
    DeployRole("roles/resourcemanager.projectIamAdmin", "cloudresourcemanager.googleapis.com",
               ("gcp:projects/iAMMember:IAMMember",),
               "https://cloud.google.com/iam/docs/service-accounts-create"),
    # Network Admin and Security Admin, listed together for a VPC and its firewall rules.
    DeployRole("roles/compute.networkAdmin", "compute.googleapis.com",
               ("gcp:compute/network:Network", "gcp:compute/subnetwork:Subnetwork", "gcp:compute/router:Router",
                "gcp:compute/routerNat:RouterNat"),
               "https://cloud.google.com/network-security-integration/docs/in-band/configure-firewall-rules"),
    DeployRole("roles/compute.securityAdmin", "compute.googleapis.com", ("gcp:compute/firewall:Firewall",),
               "https://cloud.google.com/network-security-integration/docs/in-band/configure-firewall-rules"),
    # "Full control of all Compute Engine resources": the TPU7x workload policy, a Compute resource policy
    # no narrower role was found for.
    DeployRole("roles/compute.admin", "compute.googleapis.com", ("gcp:compute/resourcePolicy:ResourcePolicy",),
               "https://cloud.google.com/iam/docs/roles-permissions/compute"),
    # "Grants full control of objects and buckets"
    DeployRole("roles/storage.admin", "storage.googleapis.com",
               ("gcp:storage/bucket:Bucket", "gcp:storage/bucketIAMMember:BucketIAMMember"),
               "https://cloud.google.com/iam/docs/roles-permissions/storage"),
    DeployRole("roles/artifactregistry.admin", "artifactregistry.googleapis.com",
               ("gcp:artifactregistry/repositoryIamMember:RepositoryIamMember",),
               "https://cloud.google.com/iam/docs/roles-permissions/artifactregistry"),
    # Monitoring Editor "Grants read-write access to the Cloud Monitoring API" (dashboards and alert policies);
    # Enable the Monitoring API: `gcloud services enable monitoring.googleapis.com`.
    DeployRole("roles/monitoring.editor", "monitoring.googleapis.com",
               ("gcp:monitoring/dashboard:Dashboard", "gcp:monitoring/alertPolicy:AlertPolicy"),
               "https://cloud.google.com/monitoring/access-control"),
    # Create views: "roles/bigquery.dataEditor ... includes the permissions that you need to create a view",
    # and with bigquery.datasets.create "you can create views in the datasets that you create". Granted on
    # the project, since the stack creates the view's dataset.
    DeployRole("roles/bigquery.dataEditor", "bigquery.googleapis.com",
               ("gcp:bigquery/dataset:Dataset", "gcp:bigquery/table:Table"),
               "https://cloud.google.com/bigquery/docs/views"),
    # Create a key ring: "Enable the Cloud KMS API" and "Cloud KMS Admin (roles/cloudkms.admin) IAM role on
    # the project"; the stack's secrets key (getting-started section 5), created before `stack init`.
    DeployRole("roles/cloudkms.admin", "cloudkms.googleapis.com", (),
               "https://cloud.google.com/kms/docs/create-key-ring"),
)


def roles_for(type_token: str) -> list[str]:
    """The roles that let the deployer manage a resource of this Pulumi type; [] when none does."""
    return [r.role for r in ROLES
            if type_token in r.types or (KUBERNETES in r.types and type_token.startswith(KUBERNETES))]


def uncovered(type_tokens: set[str]) -> list[str]:
    """The cloud resource types among these that no deploy role covers."""
    return sorted(t for t in type_tokens if not t.startswith(NOT_CLOUD) and not roles_for(t))


def apis() -> list[str]:
    """Every API the stacks need, once each, in the order of the roles."""
    return list(dict.fromkeys(r.api for r in ROLES))
