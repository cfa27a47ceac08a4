"""The roles and APIs of docs/getting-started.md (sections 3 and 4) cover what the stacks declare: every
stack of `stacks/` is planned under the mock runtime, and each cloud resource type it declares needs a
role of `gke_ai_batch/model/deploy_roles.py`, which the page's table and commands list."""
import re

from gke_ai_batch.model import deploy_roles

from .conftest import ROOT, STACKS, planned

PAGE = (ROOT / "docs" / "getting-started.md").read_text()


def section(title: str) -> str:
    return PAGE.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_every_type_the_stacks_declare_has_a_role():
    declared = {r.type for stack in STACKS for r in planned(stack)}
    assert deploy_roles.uncovered(declared) == []
    # The three: dashboards and alert policies (every stack), prod's BigQuery dataset and view.
    assert {"gcp:monitoring/dashboard:Dashboard", "gcp:monitoring/alertPolicy:AlertPolicy",
            "gcp:bigquery/dataset:Dataset", "gcp:bigquery/table:Table"} <= declared


def test_a_type_no_role_covers_is_named():
    assert deploy_roles.uncovered({"gcp:sql/databaseInstance:DatabaseInstance", "pulumi:pulumi:Stack",
                                   "kubernetes:core/v1:Namespace"}) == ["gcp:sql/databaseInstance:DatabaseInstance"]


def test_the_page_lists_every_role_with_its_source():
    rows = re.findall(r"^\| (.+?) \| .+? \| (.+) \|$", section("4. The roles of the deploying identity"), re.M)
    listed = {role: source for cell, source in rows[2:] for role in re.findall(r"`(roles/[\w.]+)`", cell)}
    assert set(listed) == {r.role for r in deploy_roles.ROLES}
    assert [role for role, source in listed.items() if "](https://" not in source and "same page" not in source] == []


def test_the_services_step_enables_every_api():
    enable = re.search(r"gcloud services enable (.*?)--project", section("3. APIs to enable"), re.S).group(1)
    assert sorted(enable.replace("\\", " ").split()) == sorted(deploy_roles.apis())


def test_the_grant_loop_comes_before_the_first_deploy_and_is_on_the_project():
    """On an empty project every grant of the loop is on the project: none names a dataset or account the
    stack creates itself."""
    roles = section("4. The roles of the deploying identity")
    loop = re.search(r"for role in (.*?); do", roles, re.S).group(1).replace("\\", " ").split()
    assert "bigquery.dataEditor" in loop and "monitoring.editor" in loop and "cloudkms.admin" in loop
    assert {f"roles/{r}" for r in loop} <= {r.role for r in deploy_roles.ROLES}
    assert "on the view's dataset" not in PAGE + (ROOT / "docs" / "observability.md").read_text()
