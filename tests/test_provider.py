"""The components served to other Pulumi languages: the package schema the SDK's analyzer builds is
the one checked in, the entry point serves it over the provider protocol, and a component built
through the provider (camelCase names, numbers as doubles, as the engine sends them) plans like
the Python one."""
import json
import os
import shutil
import subprocess
import sys
from concurrent import futures
from pathlib import Path

import grpc
import pulumi
import pytest
from google.protobuf import empty_pb2, struct_pb2
from pulumi.runtime.proto import (
    engine_pb2,
    engine_pb2_grpc,
    errors_pb2,
    provider_pb2,
    provider_pb2_grpc,
    resource_pb2,
    resource_pb2_grpc,
    status_pb2,
)

from gke_ai_batch import provider
from gke_ai_batch.offline.engine.runtime import record

from .conftest import ROOT

SCHEMA = ROOT / "gke_ai_batch" / "schema.json"


def test_checked_in_schema_is_current():
    if os.environ.get("UPDATE_SCHEMA"):
        SCHEMA.write_text(provider.schema_text())
    assert SCHEMA.read_text() == provider.schema_text(), "run `make package-schema` and review gke_ai_batch/schema.json"


def test_entry_point_serves_the_schema(tmp_path: Path):
    """As the language host runs it: `python <plugin dir> <engine address>`, from elsewhere."""
    proc = subprocess.Popen([sys.executable, str(ROOT / "provider"), "127.0.0.1:1"], cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().decode().strip())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            stub = provider_pb2_grpc.ResourceProviderStub(channel)
            info = stub.GetPluginInfo(empty_pb2.Empty())
            served = json.loads(stub.GetSchema(provider_pb2.GetSchemaRequest(version=0)).schema)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert info.version == provider.package_version()
    assert served == json.loads(SCHEMA.read_text())


def construct(type_name: str, inputs: dict) -> list:
    host = provider.host()
    return record(lambda: host.construct("layer", f"gke-ai-batch:index:{type_name}", inputs, None), "provider")


def test_kueue_layer_through_the_provider():
    regs = construct("KueueLayer", {
        "region": "us-east5", "zones": ["us-east5-b"], "cohorts": [{"name": "ml"}],
        "tpuPools": [{"name": "train", "generation": "v6e", "topology": "4x4", "slices": 2.0, "capacity": "spot"}],
        "teams": [{"name": "research", "localQueue": "jobs", "queue": {
            "cohort": "ml", "quotas": {"train": {"google.com/tpu": {"nominal": "32", "borrowingLimit": "16"}}}}}]})
    manifests = {(r.inputs.get("kind"), r.inputs.get("metadata", {}).get("name")): r.inputs for r in regs}
    (group,) = manifests[("ClusterQueue", "research")]["spec"]["resourceGroups"]
    # cpu and memory come with the chips (two v6e 4x4 slices: ct6e-standard-4t VMs, 4 chips each)
    assert group["flavors"] == [{"name": "train", "resources": [
        {"name": "cpu", "nominalQuota": "1435840m", "borrowingLimit": "717920m"},
        {"name": "memory", "nominalQuota": "5724097Mi", "borrowingLimit": "2862048Mi"},
        {"name": "google.com/tpu", "nominalQuota": "32", "borrowingLimit": "16"}]}]
    assert ("LocalQueue", "jobs") in manifests


def test_tpu_pool_through_the_provider():
    regs = construct("TpuSlicePool", {
        "project": "acme-ml-dev", "region": "us-east5", "cluster": "ml", "location": "us-east5",
        "zones": ["us-east5-b"], "labels": {"environment": "dev", "owner": "ml"},
        "generation": "v5p", "topology": "2x2x4", "slices": 2.0})
    pools = [r for r in regs if r.type == "gcp:container/nodePool:NodePool"]
    assert [p.inputs["nodeCount"] for p in pools] == [4, 4]


def test_yaml_example_uses_the_schema():
    """Every property the YAML example sets on a component is an input of that component."""
    import yaml
    schema = json.loads(SCHEMA.read_text())
    program = yaml.safe_load((ROOT / "examples" / "yaml" / "Pulumi.yaml").read_text())
    for name, resource in program["resources"].items():
        if resource["type"].startswith("gke-ai-batch:"):
            token = resource["type"].replace("gke-ai-batch:", "gke-ai-batch:index:")
            spec = schema["resources"][token]
            assert set(resource["properties"]) <= set(spec["inputProperties"]), name
            assert set(spec.get("requiredInputs", [])) <= set(resource["properties"]), name


TPU_POOL = {"project": "acme-ml-dev", "region": "us-east5", "cluster": "ml", "location": "us-east5",
            "zones": ["us-east5-b"], "generation": "v5e", "topology": "2x4"}


@pytest.mark.parametrize("inputs, path, words", [
    ({**TPU_POOL, "capacty": "spot"}, "capacty", "unknown key `capacty`; did you mean `capacity`?"),
    ({**TPU_POOL, "autoscaling": {"max_nodez": 2}}, "autoscaling.max_nodez", "did you mean `maxNodes`?"),
    ({**TPU_POOL, "topology": "4x4x4"}, "topology", "unknown topology for TPU v5e '4x4x4'; allowed: 2x2"),
])
def test_bad_arguments_over_the_provider_are_one_error_per_property(inputs, path, words):
    """The SDK's provider dropped unknown properties and wrapped a component's refusal in a traceback
    (`UNKNOWN Unexpected <class 'Exception'>`); the engine now gets an InputPropertiesError."""
    with pytest.raises(pulumi.InputPropertiesError) as e:
        construct("TpuSlicePool", inputs)
    assert not isinstance(e.value, pulumi.RunError)  # the SDK's Construct passes a RunError on unexplained
    (error,) = e.value.errors
    assert error["property_path"] == path and words in error["reason"] and "\n" not in e.value.message


def test_every_input_and_output_in_the_schema_has_a_description():
    """Generated SDKs carry these as docs; the pools' inherited arguments once had none (125 of 298)."""
    spec = json.loads(SCHEMA.read_text())
    blocks = [r.get(k, {}) for r in spec["resources"].values() for k in ("inputProperties", "properties")]
    blocks += [t.get("properties", {}) for t in spec["types"].values()]
    undescribed = [name for block in blocks for name, prop in block.items() if not prop.get("description")]
    assert sum(len(b) for b in blocks) > 250 and undescribed == []


class Monitor(resource_pb2_grpc.ResourceMonitorServicer):
    """The engine's side of Construct, as little as a component needs: it records what registers."""

    def __init__(self) -> None:
        self.types: list[str] = []

    def SupportsFeature(self, request, context):  # noqa: N802  # gRPC's method names
        return resource_pb2.SupportsFeatureResponse(hasSupport=request.id in ("secrets", "resourceReferences"))

    def RegisterResource(self, request, context):  # noqa: N802
        self.types.append(request.type)
        return resource_pb2.RegisterResourceResponse(urn=f"urn:pulumi:t::t::{request.type}::{request.name}",
                                                     id=request.name if request.custom else "", object=request.object)

    def RegisterResourceOutputs(self, request, context):  # noqa: N802
        return empty_pb2.Empty()


class Engine(engine_pb2_grpc.EngineServicer):
    def Log(self, request, context):  # noqa: N802
        return empty_pb2.Empty()

    def GetRootResource(self, request, context):  # noqa: N802
        return engine_pb2.GetRootResourceResponse(urn="")


@pytest.fixture(scope="module")
def served():
    """The provider as the engine runs it, `python <plugin dir> <engine address>`, with an engine and a
    resource monitor of Pulumi's own protobuf services."""
    monitor, server = Monitor(), grpc.server(futures.ThreadPoolExecutor(4))
    resource_pb2_grpc.add_ResourceMonitorServicer_to_server(monitor, server)
    engine_pb2_grpc.add_EngineServicer_to_server(Engine(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    proc = subprocess.Popen([sys.executable, str(ROOT / "provider"), f"127.0.0.1:{port}"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    assert proc.stdout is not None
    provider_port = int(proc.stdout.readline().decode().strip())

    def construct(inputs: dict) -> provider_pb2.ConstructResponse:
        args = struct_pb2.Struct()
        args.update(inputs)
        request = provider_pb2.ConstructRequest(project="t", stack="t", dryRun=True, name="v5e", inputs=args,
                                                monitorEndpoint=f"127.0.0.1:{port}",
                                                type="gke-ai-batch:index:TpuSlicePool")
        with grpc.insecure_channel(f"127.0.0.1:{provider_port}") as channel:
            return provider_pb2_grpc.ResourceProviderStub(channel).Construct(request, timeout=60)
    yield construct, monitor
    proc.terminate()
    proc.wait(timeout=10)
    server.stop(0)


def property_errors(e: grpc.RpcError) -> list[tuple[str, str]]:
    """The InputPropertiesError details the engine shows per property."""
    status = status_pb2.Status.FromString(dict(e.trailing_metadata())["grpc-status-details-bin"])
    details = errors_pb2.InputPropertiesError()
    status.details[0].Unpack(details)
    return [(error.property_path, error.reason) for error in details.errors]


def test_construct_over_grpc_declares_the_slices(served):
    construct, monitor = served
    response = construct(TPU_POOL | {"slices": 2})
    assert response.urn.endswith("gke-ai-batch:index:TpuSlicePool::v5e")
    assert monitor.types.count("gcp:container/nodePool:NodePool") == 2


@pytest.mark.parametrize("inputs, path, words", [
    ({**TPU_POOL, "capacty": "spot"}, "capacty", "did you mean `capacity`?"),
    ({**TPU_POOL, "topology": "2x3"}, "topology", "unknown topology for TPU v5e '2x3'"),
])
def test_construct_over_grpc_refuses_bad_inputs_per_property(served, inputs, path, words):
    """The engine got `UNKNOWN Unexpected <class 'Exception'>` and a traceback for a refusal."""
    construct, _ = served
    with pytest.raises(grpc.RpcError) as e:
        construct(inputs)
    assert e.value.code() == grpc.StatusCode.INVALID_ARGUMENT and "Traceback" not in e.value.details()
    ((where, reason),) = property_errors(e.value)
    assert where == path and words in reason


def test_the_provider_folder_works_outside_a_checkout(tmp_path: Path):
    """provider/requirements.txt was `..`: the folder installed the repository it sat in, and nothing elsewhere.
    `make provider` now builds the wheel beside PulumiPlugin.yaml and the folder's requirements install it: here
    the folder alone is copied away, built into, installed from in a fresh virtualenv, and serves the schema.
    (Fast path: the third-party dependencies come from this checkout's virtualenv through a .pth line.)"""
    import tomllib
    folder = tmp_path / "provider"
    shutil.copytree(ROOT / "provider", folder, ignore=shutil.ignore_patterns("venv", "*.whl", "__pycache__"))
    version = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["version"]
    wheel = f"gke_ai_batch-{version}-py3-none-any.whl"
    assert (folder / "requirements.txt").read_text().splitlines()[-1] == f"./{wheel}"
    made = subprocess.run(["make", "-s", "-C", str(ROOT), "provider", f"PROVIDER={folder}"], check=True,
                          capture_output=True, text=True)
    assert (folder / wheel).is_file()
    assert "would be ignored" not in made.stderr  # setuptools' warning wall, once per data folder
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    (Path(site) / "dependencies.pth").write_text(str(Path(grpc.__file__).parent.parent) + "\n")
    r = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q", "-r",
                        "requirements.txt"], cwd=folder, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-2000:]
    proc = subprocess.Popen([str(python), str(folder), "127.0.0.1:1"], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        assert proc.stdout is not None
        port = int(proc.stdout.readline().decode().strip())
        with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
            served = json.loads(provider_pb2_grpc.ResourceProviderStub(channel).GetSchema(
                provider_pb2.GetSchemaRequest(version=0)).schema)
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert served == json.loads(SCHEMA.read_text())
    where = subprocess.run([str(python), "-c", "import gke_ai_batch; print(gke_ai_batch.__file__)"], cwd=tmp_path,
                           capture_output=True, text=True, check=True).stdout
    assert where.startswith(str(venv))  # the wheel's package, not this checkout's


def test_the_components_page_names_the_outputs_the_schema_has():
    """docs/components.md said GkeCluster declares a Kubernetes provider, which the schema does not output."""
    import re
    schema = json.loads(SCHEMA.read_text())["resources"]
    rows = re.findall(r"^\| `(\w+)` \|.*\| ([^|]+) \|$", (ROOT / "docs" / "components.md").read_text(), re.M)
    documented = {name: set(re.findall(r"`(\w+)`", outputs)) for name, outputs in rows}
    served = {token.rsplit(":", 1)[1]: set(r.get("properties", {})) for token, r in schema.items()}
    assert documented == {**served, "Platform": set()}
