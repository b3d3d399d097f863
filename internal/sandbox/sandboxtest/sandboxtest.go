// Package sandboxtest starts the IAM sandbox in-process for Go tests elsewhere in the project.
//
//	sb := sandboxtest.Start(t)
//	// point a client at sb.URL (as apigw_url or esb_url) with app "bkiam-sandbox" / "sandbox-secret"
//	got := sb.Policies(sandbox.PolicyFilter{SubjectID: "alice"})
//
// The embedded *sandbox.Server gives direct, no-HTTP access to Policies, Stats, SetFaults and Reset.
package sandboxtest

import (
	"net/http/httptest"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// The credentials of the default model's allow-listed app.
const (
	AppCode   = "bkiam-sandbox"
	AppSecret = "sandbox-secret"
)

// Sandbox is a running in-process sandbox.
type Sandbox struct {
	// URL is the base URL, usable as both apigw_url and esb_url.
	URL string
	*sandbox.Server
	HTTP *httptest.Server
}

// Start builds a sandbox with opts (default model unless sandbox.WithModel is given) and serves it on
// a loopback port until the test ends. It fails the test if the sandbox cannot be built.
func Start(t testing.TB, opts ...sandbox.Option) *Sandbox {
	t.Helper()
	srv, err := sandbox.New(opts...)
	if err != nil {
		t.Fatalf("sandboxtest: %v", err)
	}
	hs := httptest.NewServer(srv)
	t.Cleanup(hs.Close)
	return &Sandbox{URL: hs.URL, Server: srv, HTTP: hs}
}

// AuthHeader is the X-Bkapi-Authorization value for the default model's app.
func AuthHeader() string {
	return `{"bk_app_code":"` + AppCode + `","bk_app_secret":"` + AppSecret + `"}`
}
