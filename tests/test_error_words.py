"""Errors people can fix: stack-file problems with file, line and column; unknown keys named with the
closest known one; rules in words; every valid Kubernetes quantity; no class names, `None`, regexes
or 500-character echoes; long name lists summarized; bad policy config refused clearly."""
import json

import pytest

from gke_ai_batch.model.errors import ConfigError
from gke_ai_batch.offline.engine.stackfile import read_stack_file
from gke_ai_batch.offline.views.check import load_levels
from gke_ai_batch.plan.platform import build_platform

from .conftest import ROOT, platform_of
from .forked_cli import run_module

DEV = (ROOT / "stacks" / "Pulumi.dev.yaml").read_text()


def refused(change) -> ConfigError:
    cfg = platform_of("dev")
    change(cfg)
    with pytest.raises(ConfigError) as e:
        build_platform(cfg)
    return e.value


def stack_file_error(tmp_path, text: str | bytes) -> str:
    f = tmp_path / "Pulumi.x.yaml"
    f.write_bytes(text if isinstance(text, bytes) else text.encode())
    with pytest.raises(SystemExit) as e:
        read_stack_file(f)
    return str(e.value)


def test_yaml_syntax_error_names_file_line_and_column(tmp_path):
    msg = stack_file_error(tmp_path, "config:\n  gke-ai-batch:platform:\n    zones: [us-east5-b\n")
    assert msg.startswith(f"{tmp_path}/Pulumi.x.yaml:4:1: ")


def test_duplicate_key_is_refused_where_it_is(tmp_path):
    """A second `teams:` silently dropped every team before."""
    msg = stack_file_error(tmp_path, DEV + "    teams: []\n")
    line = len(DEV.splitlines()) + 1
    assert f"Pulumi.x.yaml:{line}:5: duplicate key 'teams'" in msg


@pytest.mark.parametrize("text,fragment", [
    ("- a\n- b\n", "not a list"),
    ("hello\n", "not 'hello'"),
    (b"\x89PNG\r\n\x1a\n\x00\xff\xfe", "not a text file"),
    ("config: [1, 2]\n", "`config:` should be a mapping"),
    ("confg:\n  gke-ai-batch:platform: {}\n", "unknown top-level key `confg`; did you mean `config`?"),
], ids=["list", "string", "binary", "config-list", "misspelt-config"])
def test_a_file_that_is_not_a_stack_file_says_so(tmp_path, text, fragment):
    assert fragment in stack_file_error(tmp_path, text)


def test_misspelt_platform_key_names_the_key_found():
    with pytest.raises(ConfigError, match=r"it has `gke-ai-batch:platfrom`: did you mean `gke-ai-batch:platform`"):
        build_platform(None, "gke-ai-batch", ["gke-ai-batch:platfrom", "gcp:project"])


def test_misspelt_key_is_named_with_the_closest_known_key():
    e = refused(lambda c: c["teams"][0]["queue"]["quotas"]["v6e-flex"].update(
        {"google.com/tpu": {"nominl": 8}}))
    assert e.path == "platform.teams[0].queue.quotas.v6e-flex.google.com/tpu.nominl"
    assert "unknown key `nominl`; did you mean `nominal`?" in e.message
    assert "Field required" not in e.message


def test_unknown_key_suggests_borrowing_limit():
    e = refused(lambda c: c["teams"][0]["queue"]["quotas"]["v6e-flex"].update(
        {"google.com/tpu": {"nominal": 8, "borowing_limit": 8}}))
    assert "did you mean `borrowing_limit`?" in e.message


def test_a_long_value_is_not_echoed_whole():
    e = refused(lambda c: c["cluster"].update(name="x" * 500))
    assert len(str(e)) < 250 and "500 characters" in str(e)


def test_name_rule_is_in_words_not_a_regex():
    e = refused(lambda c: c["teams"][0].update(name="Research_Team"))
    assert "lowercase letters, digits and '-'" in e.message and "^" not in e.message
    assert e.message.endswith("at most 40 characters")  # a team name's own limit
    e = refused(lambda c: c["teams"][0].update(local_queue="Research"))  # an optional name
    assert e.message.endswith("at most 63 characters")


@pytest.mark.parametrize("quantity,written", [(2.5, "2.5"), ("2.5", "2.5"), ("500m", "500m"), (4, 4)])
def test_valid_kubernetes_quantities_are_accepted(quantity, written):
    """`cpu: 2.5` was refused ("a valid integer"); Kubernetes quantities allow decimals."""
    cfg = platform_of("dev")
    cfg["teams"][0]["queue"]["quotas"] = {"v6e-flex": {"google.com/tpu": 16, "cpu": quantity}}
    queue = next(q for q in build_platform(cfg).scheduling.cluster_queues if q.name == "research")
    resources = queue.manifest["spec"]["resourceGroups"][0]["flavors"][0]["resources"]
    assert {"name": "cpu", "nominalQuota": written} in resources


def test_wrong_shape_names_no_internal_class():
    e = refused(lambda c: c["teams"].insert(0, "research"))
    assert e.path == "platform.teams[0]"
    assert "TeamConfig" not in e.message and "should be a mapping" in e.message


def test_a_team_without_any_queue_is_not_told_about_none():
    e = refused(lambda c: c["teams"][0].pop("queue"))
    assert "None" not in e.message and "has no queue" in e.message


def test_a_topology_says_its_chip_count_and_the_nearest_shapes():
    e = refused(lambda c: c["tpu_pools"][1].update(topology="5x5"))
    assert "5x5 is 25 chips, nearest shapes: 4x8 (32 chips), 4x4 (16 chips)" in e.message


def test_a_violation_over_many_teams_is_summarized():
    """The quota advisories name the queues promised a flavor; with 40 teams they list a dozen (40 teams'
    quotas are above h100-dws's full size: quota-over-capacity)."""
    from gke_ai_batch.offline.views.check import violations

    from .conftest import run_config
    cfg = platform_of("dev")
    base = cfg["teams"][0]
    cfg["teams"] = [{**base, "name": f"team-{i:02d}", "namespaces": [f"team-{i:02d}"]} for i in range(40)]
    found = [v for v in violations(run_config(cfg)) if v["policy"] in ("quota-not-guaranteed", "quota-over-capacity")]
    assert found and all(len(v["message"]) < 400 for v in found)
    (h100,) = [v["message"] for v in found if v["message"].startswith("flavor h100-dws:")]
    assert "team-00, team-01" in h100 and "and 28 more" in h100


@pytest.mark.parametrize("config,fragment", [
    ({"one-global-default-priority": "warn"}, "enforcement level 'warn' is not one of advisory, mandatory"),
    ({"one-global-default-priorty": "mandatory"}, "did you mean `one-global-default-priority`?"),
    ([1], "should be a JSON object"),
], ids=["bad-level", "unknown-policy", "not-an-object"])
def test_bad_policy_config_is_a_clear_error(tmp_path, config, fragment):
    f = tmp_path / "policy.json"
    f.write_text(json.dumps(config))
    with pytest.raises(SystemExit, match=fragment):
        load_levels(str(f))


def test_policy_config_all_sets_every_policy(tmp_path):
    f = tmp_path / "policy.json"
    f.write_text(json.dumps({"all": "disabled", "one-global-default-priority": "mandatory"}))
    levels = {k: v.value for k, v in load_levels(str(f)).items()}
    assert levels["one-global-default-priority"] == "mandatory"
    assert levels["quota-not-guaranteed"] == "disabled"


def test_cli_prints_stack_file_errors_without_traceback_and_clears_the_last_plan(tmp_path):
    out = tmp_path / "o"
    assert run_module("gke_ai_batch.offline", "plan", "dev", "--out", str(out)).returncode == 0
    bad = tmp_path / "Pulumi.dev.yaml"
    bad.write_text(DEV + "    teams: []\n")
    r = run_module("gke_ai_batch.offline", "plan", str(bad), "--out", str(out))
    assert r.returncode == 2 and "duplicate key 'teams'" in r.stderr and "Traceback" not in r.stderr
    assert not (out / "manifests").exists() and not (out / "resources.json").exists()


def test_a_renamed_project_is_told_to_rename_its_config_key():
    """After Pulumi.yaml's name changes, the stack file's key is the old project's: say which rename to make."""
    with pytest.raises(ConfigError, match=r"it has `gke-ai-batch:platform`: Pulumi names config keys after the project "
                                          r"\(Pulumi.yaml's name\), so rename that key to `acme-ml:platform`"):
        build_platform(None, "acme-ml", ["gke-ai-batch:platform"])
