// Command terraform-provider-bkiam is the Terraform provider for the BlueKing
// IAM permission center.
package main

import (
	"flag"
	"log"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

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

	// The server is the framework's, with the resources' hot calls served
	// directly on protocol values (see provider.NewServer).
	server, err := provider.NewServer(version)()
	if err != nil {
		log.Fatal(err)
	}
	var opts []tf6server.ServeOpt
	if debug {
		opts = append(opts, tf6server.WithManagedDebug())
	}
	if err := tf6server.Serve(providerAddress, func() tfprotov6.ProviderServer { return server }, opts...); err != nil {
		log.Fatal(err)
	}
}
