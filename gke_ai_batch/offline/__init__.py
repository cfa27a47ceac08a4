"""Offline plan and policy check: the real program under Pulumi's own mock runtime, with no cloud,
no credentials and no Pulumi CLI. `python -m gke_ai_batch.offline plan|check STACK`."""
