// Command testreport reads `go test -json` on its standard input and
// prints what plain go test would, as it arrives, then the ten slowest
// top-level tests and each package's time against the -timeout, warning
// about a package that took more than a third of it (make test):
//
//	go test -json -count=1 -timeout 20m ./... 2>&1 | testreport -timeout 20m -title "Terraform 1.16"
//
// It exits 1 if a test, a package or a build failed, if a package started
// and the input ended before its result (go test was killed), or if the
// input had no package at all; 2 for bad flags.
package main

import (
	"os"

	"github.com/bkiam/terraform-provider-bkiam/internal/testreport"
)

func main() {
	os.Exit(testreport.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
