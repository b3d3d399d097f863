// Command terraform-provider-bkiam is the Terraform provider for the BlueKing
// IAM permission center.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tfprotov6/tf6server"

	"github.com/bkiam/terraform-provider-bkiam/internal/parentwatch"
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
	if !debug {
		// The CLI that started us asks us to stop when it is done; a CLI
		// that is killed (a go test -timeout, kill -9) asks nothing, and we
		// would serve on, orphaned, for good. tf6server.Serve has no way to
		// stop outside -debug, so end the process: whoever would read what
		// we serve is gone. A -debug provider is started by a person, and
		// outlives the shell that started it on purpose.
		parentwatch.Start(parentwatch.DefaultInterval, func(parent int) {
			// If stderr is a pipe to the dead CLI the write raises
			// SIGPIPE, which ends the process just the same.
			log.Printf("[ERROR] the process that started this provider (pid %d) has exited; exiting", parent)
			os.Exit(1)
		})
	}
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
