package bkiam

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// quotedPart is a quoted value in a URL parser's error.
var quotedPart = regexp.MustCompile(`"[^"]*"`)

// Transport names the channel through which the IAM open API is reached.
type Transport string

const (
	// TransportGateway is the BlueKing API gateway (gateway "bk-iam", a stage such as "prod").
	TransportGateway Transport = "api_gateway"
	// TransportESB is the legacy PaaS ESB ("compapi") channel.
	TransportESB Transport = "esb"
)

// Defaults applied by New when the matching Config field is zero.
const (
	DefaultTimeout      = 30 * time.Second
	DefaultRetryWaitMin = 1 * time.Second
	DefaultRetryWaitMax = 30 * time.Second
	DefaultUserAgent    = "terraform-provider-bkiam"
)

// Config configures a Client. Exactly one of APIGatewayURL and ESBURL must be set.
type Config struct {
	// APIGatewayURL is the IAM gateway base including the stage,
	// e.g. https://bkapi.example.com/api/bk-iam/prod.
	APIGatewayURL string
	// ESBURL is the ESB base, e.g. https://paas.example.com.
	ESBURL string

	AppCode   string
	AppSecret string

	// Username and BKToken identify the ESB user (bk_username / bk_token). ESB demands one of
	// them; the gateway ignores both.
	Username string
	BKToken  string

	// TenantID is sent as X-Bk-Tenant-Id when set (multi-tenant sites).
	TenantID string
	// UserAgent, e.g. "terraform-provider-bkiam/1.2.3". Empty means DefaultUserAgent.
	UserAgent string

	// Timeout bounds each attempt (not the whole call: the context does that). 0 = 30s.
	Timeout time.Duration
	// MaxRetries is the number of retries after the first attempt; negative = 0.
	MaxRetries int
	// HTTPClient is an optional base client; its Transport (TLS settings, proxy) is reused.
	// The client is copied: its Timeout and CheckRedirect are replaced, the caller's value is
	// left untouched.
	HTTPClient *http.Client

	// RetryWaitMin and RetryWaitMax bound the backoff between attempts. 0 = 1s / 30s.
	RetryWaitMin time.Duration
	RetryWaitMax time.Duration
}

// normalized is a validated Config with defaults applied.
type normalized struct {
	Config
	transport Transport
	base      string // base URL without trailing slash
}

func (cfg Config) normalize() (normalized, error) {
	n := normalized{Config: cfg}
	gw, esb := strings.TrimSpace(cfg.APIGatewayURL), strings.TrimSpace(cfg.ESBURL)
	var raw string
	switch {
	case gw != "" && esb != "":
		return n, errors.New("bkiam: set exactly one of the API gateway URL and the ESB URL, not both")
	case gw != "":
		n.transport, raw = TransportGateway, gw
	case esb != "":
		n.transport, raw = TransportESB, esb
	default:
		return n, errors.New("bkiam: set the API gateway URL or the ESB URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		// Not err itself: url.Error repeats the raw URL, which may carry credentials.
		cause := err
		var ue *url.Error
		if errors.As(err, &ue) {
			cause = ue.Err
		}
		// The parser quotes the offending part, which can be a piece of a password.
		return n, fmt.Errorf("bkiam: the %s URL is not a valid URL: %s", n.transport.label(), quotedPart.ReplaceAllString(cause.Error(), "…"))
	}
	// Credentials in a URL would end up in logs and error messages (url.Error prints the URL).
	if u.User != nil {
		return n, fmt.Errorf("bkiam: the %s URL must not contain user information; pass credentials as app code and secret", n.transport.label())
	}
	// A query can carry a secret too: it is never shown.
	shown := url.URL{Scheme: u.Scheme, Host: u.Host, Path: u.Path}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return n, fmt.Errorf("bkiam: the %s URL %q must be an absolute http:// or https:// URL", n.transport.label(), shown.String())
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return n, fmt.Errorf("bkiam: the %s URL %q must not have a query or fragment", n.transport.label(), shown.String())
	}
	n.base = strings.TrimRight(u.String(), "/")

	if strings.TrimSpace(cfg.AppCode) == "" {
		return n, errors.New("bkiam: the app code must not be empty")
	}
	if strings.TrimSpace(cfg.AppSecret) == "" {
		return n, errors.New("bkiam: the app secret must not be empty")
	}
	if n.transport == TransportESB && strings.TrimSpace(cfg.Username) == "" && strings.TrimSpace(cfg.BKToken) == "" {
		return n, errors.New("bkiam: ESB needs a user: set the username (app on the ESB skip-login whitelist) or a bk_token")
	}
	if cfg.Timeout < 0 {
		return n, errors.New("bkiam: the timeout must not be negative")
	}
	if cfg.Timeout == 0 {
		n.Timeout = DefaultTimeout
	}
	if cfg.MaxRetries < 0 {
		n.MaxRetries = 0
	}
	if cfg.RetryWaitMin < 0 || cfg.RetryWaitMax < 0 {
		return n, errors.New("bkiam: retry wait bounds must not be negative")
	}
	if cfg.RetryWaitMin == 0 {
		n.RetryWaitMin = DefaultRetryWaitMin
	}
	if cfg.RetryWaitMax == 0 {
		n.RetryWaitMax = DefaultRetryWaitMax
	}
	if n.RetryWaitMin > n.RetryWaitMax {
		return n, fmt.Errorf("bkiam: the minimum retry wait (%s) exceeds the maximum (%s)", n.RetryWaitMin, n.RetryWaitMax)
	}
	if cfg.UserAgent == "" {
		n.UserAgent = DefaultUserAgent
	}
	return n, nil
}

// label is the human name of the layer a transport talks to.
func (t Transport) label() string {
	if t == TransportESB {
		return string(LayerESB)
	}
	return string(LayerGateway)
}

// layer is the error layer of the component that answers first on this transport.
func (t Transport) layer() Layer {
	if t == TransportESB {
		return LayerESB
	}
	return LayerGateway
}

// httpClient derives the per-attempt client: a copy of the caller's (so its Transport, TLS
// and proxy settings are reused) with our timeout and with redirects turned into answers.
// Redirects are never followed: a POST turned into a GET by a 301/302 would "succeed" against
// a different URL, and a 301 usually means a wrong base URL or a missing trailing slash.
func (n normalized) httpClient() *http.Client {
	var hc http.Client
	if n.HTTPClient != nil {
		hc = *n.HTTPClient
	}
	if hc.Transport == nil {
		// A private transport rather than http.DefaultTransport: CloseIdleConnections calls
		// made by the retry loop must not disturb other users of the default one.
		hc.Transport = http.DefaultTransport.(*http.Transport).Clone()
	}
	hc.Timeout = n.Timeout
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &hc
}
