"""Offline plan and policy check: the real program under Pulumi's own mock runtime, with no cloud,
no credentials and no Pulumi CLI. `python -m offline plan|check STACK`."""
