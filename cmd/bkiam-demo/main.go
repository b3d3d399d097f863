// Command bkiam-demo runs the project's demo (make demo): examples/demo
// applied, changed, planned and destroyed with the real Terraform CLI
// against an in-process IAM sandbox.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/bkiam/terraform-provider-bkiam/internal/demo"
)

func main() {
	opts := demo.Options{}
	flag.StringVar(&opts.Terraform, "terraform", "bin/terraform", "the terraform binary")
	flag.StringVar(&opts.ProviderDir, "provider-dir", "bin", "directory of the freshly built terraform-provider-bkiam")
	flag.StringVar(&opts.Examples, "examples", "examples", "the repository's examples directory")
	flag.StringVar(&opts.Listen, "listen", "127.0.0.1:0", "address of the sandbox; port 0 picks a free one")
	flag.BoolVar(&opts.Color, "color", isTerminal(os.Stdout), "keep Terraform's colours")
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := demo.Run(ctx, opts, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "bkiam-demo:", err)
		os.Exit(1)
	}
}

func isTerminal(f *os.File) bool {
	info, err := f.Stat()
	return err == nil && info.Mode()&os.ModeCharDevice != 0
}
