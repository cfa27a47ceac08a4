"""Entry point for `pulumi preview --policy-pack policies`: builds the pack and serves it."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # the project's pure modules

from pulumi_policy import PolicyPack  # noqa: E402

from policies.pack import PACK_NAME, policies  # noqa: E402

PolicyPack(name=PACK_NAME, policies=policies())
