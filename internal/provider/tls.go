package provider

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"strings"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
)

// newHTTPClient builds the HTTP client the IAM client sends through:
// certificate verification on (unlike BlueKing's own Python SDK), the
// system's roots plus ca_cert_file, and warnings for every setting that
// exposes the app secret on the network.
func newHTTPClient(s providerSettings) (*http.Client, diag.Diagnostics) {
	var diags diag.Diagnostics

	tlsConfig := &tls.Config{MinVersion: tls.VersionTLS12}
	if s.caCertFile != "" {
		pool, err := certPool(s.caCertFile)
		if err != nil {
			diags.AddAttributeError(path.Root("ca_cert_file"), "Cannot use ca_cert_file", err.Error())
			return nil, diags
		}
		tlsConfig.RootCAs = pool
	}
	if s.insecureSkipVerify {
		// The user asked for it in so many words; the warning says the cost.
		tlsConfig.InsecureSkipVerify = true //nolint:gosec // opt-in, warned about below
		diags.AddAttributeWarning(path.Root("insecure_skip_verify"), "TLS certificate verification is off",
			"insecure_skip_verify = true lets anyone on the network path impersonate IAM and read the app secret. "+
				"Trust the site's CA with ca_cert_file instead.")
	}

	if base := s.baseURL(); strings.HasPrefix(base, "http://") && !isLoopback(base) {
		attr := "apigw_url"
		if s.client.ESBURL != "" {
			attr = "esb_url"
		}
		diags.AddAttributeWarning(path.Root(attr), "Plain HTTP to a remote host",
			fmt.Sprintf("%s uses http:// to a host other than this machine: the app secret and every grant cross the "+
				"network unencrypted. Use https://.", attr))
	}

	transport, ok := http.DefaultTransport.(*http.Transport)
	if !ok {
		diags.AddError("Cannot create the HTTP client", "http.DefaultTransport is not an *http.Transport")
		return nil, diags
	}
	transport = transport.Clone()
	transport.TLSClientConfig = tlsConfig
	return &http.Client{Transport: transport}, diags
}

// certPool returns the system roots plus the certificates in file.
func certPool(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("reading ca_cert_file: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		// No system roots (e.g. a minimal container): the file alone.
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("ca_cert_file %s holds no PEM-encoded certificate", file)
	}
	return pool, nil
}
