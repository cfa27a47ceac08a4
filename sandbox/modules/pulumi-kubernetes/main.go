// The kubernetes provider's command as cmd/pulumi-resource-kubernetes/main.go writes it. That package embeds a schema
// its go:generate step writes, which a module download lacks, so sandbox/build.py copies the module's schema.json and
// terraform-mapping.json beside this file before it builds (they are not committed).
package main

import (
	_ "embed"

	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/provider"
	"github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version"
)

//go:embed schema.json
var pulumiSchema []byte

//go:embed terraform-mapping.json
var terraformMapping []byte

func main() {
	provider.Serve("kubernetes", version.Version, pulumiSchema, terraformMapping)
}
