package bkiam

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
)

// Endpoint names; both transports append them to their prefix with the trailing slash IAM
// requires (without it the server may answer with a redirect).
const (
	endpointBatchInstance = "batch_instance"
	endpointBatchPath     = "batch_path"
	endpointCreatorAction = "batch_resource_creator_action"
)

const (
	gatewayPrefix = "/api/v1/open/authorization/"
	esbPrefix     = "/api/c/compapi/v2/iam/authorization/"
)

const (
	headerRequestID         = "X-Request-Id"
	headerBkapiAuth         = "X-Bkapi-Authorization"
	headerTenantID          = "X-Bk-Tenant-Id"
	headerBkapiRequestID    = "X-Bkapi-Request-Id"
	headerBkapiErrorCode    = "X-Bkapi-Error-Code"
	headerBkapiErrorMessage = "X-Bkapi-Error-Message"
)

// redacted replaces secrets in everything this package logs.
const redacted = "***"

func (c *Client) endpointURL(endpoint string) string {
	if c.cfg.transport == TransportESB {
		return c.cfg.base + esbPrefix + endpoint + "/"
	}
	return c.cfg.base + gatewayPrefix + endpoint + "/"
}

// esbAuth is the credential part of an ESB body. ESB reads it from the body next to the API
// arguments; the gateway takes the same fields in the X-Bkapi-Authorization header instead.
type esbAuth struct {
	AppCode   string `json:"bk_app_code"`
	AppSecret string `json:"bk_app_secret"`
	Username  string `json:"bk_username,omitempty"`
	BKToken   string `json:"bk_token,omitempty"`
}

// encodeBody returns the body to send and a copy safe to log (credentials replaced).
func (c *Client) encodeBody(payload any) (wire, loggable []byte, err error) {
	p, err := json.Marshal(payload)
	if err != nil {
		return nil, nil, fmt.Errorf("bkiam: encoding the request: %w", err)
	}
	if c.cfg.transport != TransportESB {
		return p, p, nil
	}
	auth := esbAuth{AppCode: c.cfg.AppCode, AppSecret: c.cfg.AppSecret, Username: c.cfg.Username, BKToken: c.cfg.BKToken}
	safe := auth
	safe.AppSecret = redacted
	if safe.BKToken != "" {
		safe.BKToken = redacted
	}
	if wire, err = spliceObjects(auth, p); err != nil {
		return nil, nil, err
	}
	if loggable, err = spliceObjects(safe, p); err != nil {
		return nil, nil, err
	}
	return wire, loggable, nil
}

// spliceObjects merges the JSON object of a into the JSON object p (keys of a first). The
// payload types have no bk_* keys, so the result has no duplicate keys.
func spliceObjects(a any, p []byte) ([]byte, error) {
	ab, err := json.Marshal(a)
	if err != nil {
		return nil, fmt.Errorf("bkiam: encoding the credentials: %w", err)
	}
	p = bytes.TrimSpace(p)
	if len(p) < 2 || p[0] != '{' || len(ab) < 2 {
		return nil, fmt.Errorf("bkiam: request payload is not a JSON object")
	}
	out := make([]byte, 0, len(ab)+len(p))
	out = append(out, ab[:len(ab)-1]...)
	if inner := bytes.TrimSpace(p[1 : len(p)-1]); len(inner) > 0 {
		out = append(out, ',')
		out = append(out, inner...)
	}
	return append(out, '}'), nil
}

// setHeaders sets the per-call headers; X-Request-Id is set per attempt (see newRequestID).
func (c *Client) setHeaders(h http.Header) {
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	h.Set("User-Agent", c.cfg.UserAgent)
	if c.cfg.TenantID != "" {
		h.Set(headerTenantID, c.cfg.TenantID)
	}
	if c.cfg.transport == TransportGateway {
		h.Set(headerBkapiAuth, c.gatewayAuth)
	}
	h.Set(headerRequestID, newRequestID())
}

// gatewayAuthHeader is the X-Bkapi-Authorization value: a JSON object as a string.
func gatewayAuthHeader(appCode, appSecret string) string {
	b, _ := json.Marshal(map[string]string{"bk_app_code": appCode, "bk_app_secret": appSecret})
	return string(b)
}

// newRequestID returns 32 hex characters: the IAM backend ignores X-Request-Id values of any
// other length. Each attempt gets a fresh id so that server logs tell attempts apart; errors
// name the id of the attempt that failed.
func newRequestID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on supported platforms
	return hex.EncodeToString(b[:])
}
