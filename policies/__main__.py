"""Entry point for `pulumi preview --policy-pack policies`: serves the pack from the installed
gke-ai-batch package (the pack's requirements.txt installs it), so the folder works on its own, as
`pulumi policy publish` uploads it."""
from pulumi_policy import PolicyPack

from gke_ai_batch.policies.pack import PACK_NAME, policies

PolicyPack(name=PACK_NAME, policies=policies())
