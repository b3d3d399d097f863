package bkiam

import (
	"crypto/tls"
	"errors"
	"net"
	"net/http"
)

// OutcomeUnknown reports whether a failed call may nevertheless have been
// carried out by IAM: the request may have reached it, but no answer that
// says what happened came back (a timeout or a connection reset after
// sending, a gateway or ESB that lost the upstream, a garbled success).
// Callers that track what IAM holds must then assume the worst both ways:
// a grant may hold (a destroy must revoke it) and may not (the next run
// must send it again).
//
// An answer in IAM's own envelope is definite: the SaaS applies a batch in
// one transaction, so an IAM error code means nothing was stored. So are
// the gateway's and ESB's refusals (credentials, permissions, rate limits),
// which stop a request before it reaches IAM, a connection that was never
// made or whose TLS handshake failed, and checks made before sending.
func OutcomeUnknown(err error) bool {
	var e *Error
	if !errors.As(err, &e) {
		return false
	}
	switch e.kind {
	case kindNetwork:
		var opErr *net.OpError
		if errors.As(e.Err, &opErr) && opErr.Op == "dial" {
			return false // never connected: nothing was sent
		}
		var certErr *tls.CertificateVerificationError
		var recordErr tls.RecordHeaderError
		if errors.As(e.Err, &certErr) || errors.As(e.Err, &recordErr) {
			return false // the TLS handshake failed, before the request was written
		}
		return !errors.Is(e.Err, ErrBodyTooLarge) || e.HTTPStatus < 300
	case kindRedirect:
		return false
	case kindMalformed:
		return true
	case kindNonJSON, kindHTTPStatus:
		return e.HTTPStatus >= http.StatusInternalServerError
	}
	switch {
	case e.Code >= 1650000 && e.Code <= 1659999: // gateway: upstream unreachable or timed out
		return true
	case e.Code == 1306201: // ESB: upstream error
		return true
	case e.Code == 1902000: // SaaS: its backend call failed, maybe after writing, unless refused
		return !e.backendRefused()
	}
	return false
}
