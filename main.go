// Command terraform-provider-bkiam is the Terraform provider for the BlueKing
// IAM permission center.
package main

import (
	"context"
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-framework/providerserver"

	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
)

// version is set at build time by goreleaser and the Makefile
// (-ldflags "-X main.version=…"); "dev" marks a local build.
var version = "dev"

// providerAddress is the registry address users put in required_providers.
const providerAddress = "registry.terraform.io/bkiam/bkiam"

func main() {
	var debug bool
	flag.BoolVar(&debug, "debug", false, "run the provider with support for debuggers like delve (prints TF_REATTACH_PROVIDERS)")
	flag.Parse()
	provider.QuietUnrequestedLogs()

	err := providerserver.Serve(context.Background(), provider.New(version), providerserver.ServeOpts{
		Address:         providerAddress,
		Debug:           debug,
		ProtocolVersion: 6,
	})
	if err != nil {
		log.Fatal(err)
	}
}
