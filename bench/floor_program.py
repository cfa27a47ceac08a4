"""The floor's program: the plan's resource graph registered with no logic. Every resource gets the
plan's type, name and inputs, and the same parent, provider and explicit dependencies, so the floor
pays what the SDK charges for this graph and the plan/floor ratio is the program's own cost. It runs
through runpy like the platform's __main__.py, so both pay the SDK's per-frame stack-trace cost of
the same entry path."""
import pulumi

TODO: list = globals().get("TODO", [])  # the plan's Registrations, in registration order
PROVIDER_TYPE = "pulumi:providers:"


class Bare(pulumi.CustomResource):
    def __init__(self, t: str, name: str, props: dict, opts: pulumi.ResourceOptions) -> None:
        super().__init__(t, name, props, opts)


class BareProvider(pulumi.ProviderResource):
    def __init__(self, package: str, name: str, props: dict, opts: pulumi.ResourceOptions) -> None:
        super().__init__(package, name, props, opts)


class BareComponent(pulumi.ComponentResource):
    def __init__(self, t: str, name: str, opts: pulumi.ResourceOptions) -> None:
        super().__init__(t, name, None, opts)


declared: dict[str, pulumi.Resource] = {}
providers: dict[str, pulumi.ProviderResource] = {}
for r in TODO:
    opts = pulumi.ResourceOptions(parent=declared.get(r.parent), depends_on=[declared[d] for d in r.dependencies],
                                  provider=providers.get(r.provider))
    if r.type.startswith(PROVIDER_TYPE):
        providers[r.name] = declared[r.urn] = BareProvider(r.type.removeprefix(PROVIDER_TYPE), r.name,
                                                           dict(r.inputs), opts)
    elif r.custom:
        declared[r.urn] = Bare(r.type, r.name, dict(r.inputs), opts)
    else:
        declared[r.urn] = BareComponent(r.type, r.name, opts)
