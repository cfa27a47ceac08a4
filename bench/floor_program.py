"""The floor's program: bare resources of the given types and inputs, no logic. It runs through
runpy like the platform's __main__.py, so both pay the SDK's per-frame stack-trace cost of the same
entry path; only the program's own logic differs."""
import pulumi

TODO: list[tuple[str, str, bool, dict]] = globals().get("TODO", [])


class Bare(pulumi.CustomResource):
    def __init__(self, t: str, name: str, props: dict) -> None:
        super().__init__(t, name, props)


class BareComponent(pulumi.ComponentResource):
    def __init__(self, t: str, name: str) -> None:
        super().__init__(t, name, None)


for i, (t, name, custom, inputs) in enumerate(TODO):
    if custom:
        Bare(t, f"{name}-{i}", dict(inputs))
    else:
        BareComponent(t, f"{name}-{i}")
