"""A valid synthetic environment of N teams: one 2-slice v5e multislice pool per four teams (one
flavor, as same-shaped pools share one), two flex-start v6e pools and two DWS GPU pools, two priorities,
every team in one cohort."""
from __future__ import annotations


def platform(teams: int) -> dict:
    groups = (teams + 3) // 4
    tpu = [{"name": f"ms-{g}", "generation": "v5e", "topology": "2x4", "slices": 2,
            "flavor": "v5e-ms"} for g in range(groups)]
    tpu += [{"name": f"flex-{i}", "generation": "v6e", "topology": "4x4", "capacity": "flex-start",
            "flavor": "v6e-flex"} for i in range(2)]
    gpu = [{"name": f"dws-{i}", "gpu": "nvidia-h100-80gb", "capacity": "queued-provisioning", "max_nodes": 8,
            "flavor": "h100-dws"} for i in range(2)]
    team_blocks = [{
        "name": f"team-{t:03d}",
        "queue": {"cohort": "org", "quotas": {
            "v5e-ms": {"google.com/tpu": 4},
            "v6e-flex": {"google.com/tpu": {"nominal": 4, "borrowing_limit": 12}},
            "h100-dws": {"nvidia.com/gpu": {"nominal": 8, "borrowing_limit": 8}},
        }},
    } for t in range(teams)]
    return {
        "project": "acme-bench-001", "region": "us-east5", "zones": ["us-east5-b"], "environment": "bench",
        "owner": "ml-platform", "cluster": {"name": "bench", "regional": False, "deletion_protection": False},
        "tpu_pools": tpu, "gpu_pools": gpu, "cohorts": [{"name": "org"}],
        "priorities": [{"name": "high", "value": 2000000}, {"name": "low", "value": 1000000}],
        "teams": team_blocks,
    }
