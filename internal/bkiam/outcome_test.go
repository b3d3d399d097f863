package bkiam

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"
)

func TestOutcomeUnknown(t *testing.T) {
	dial := &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}
	read := &net.OpError{Op: "read", Net: "tcp", Err: syscall.ECONNRESET}
	cases := []struct {
		name string
		err  error
		want bool
	}{
		{"not an IAM error", errors.New("boom"), false},
		{"checked before sending", fmt.Errorf("wrapped: %w", ErrEmptyInstances), false},
		{"connection refused", &Error{kind: kindNetwork, Err: dial}, false},
		{"connection reset after sending", &Error{kind: kindNetwork, Err: read}, true},
		{"certificate not trusted", &Error{kind: kindNetwork, Err: fmt.Errorf("tls: %w", &tls.CertificateVerificationError{Err: x509.UnknownAuthorityError{}})}, false},
		{"plain HTTP answering TLS", &Error{kind: kindNetwork, Err: fmt.Errorf("tls: %w", tls.RecordHeaderError{Msg: "first record does not look like a TLS handshake"})}, false},
		{"timed out waiting", &Error{kind: kindNetwork, Err: context.DeadlineExceeded}, true},
		{"IAM validation", &Error{kind: kindCode, Code: 1902412, HTTPStatus: 200}, false},
		{"IAM system error", &Error{kind: kindCode, Code: 1902500, HTTPStatus: 500}, false},
		{"IAM upstream failure", &Error{kind: kindCode, Code: 1902000, HTTPStatus: 200}, true},
		{"IAM backend refusal", &Error{kind: kindCode, Code: 1902000, HTTPStatus: 200,
			Message: "request iam error! Request=[http_post /api/v1/web/groups/members request_id=a] Response[code=1901400, message=bad request:x]"}, false},
		{"gateway credentials", &Error{kind: kindCode, Code: 1640001, HTTPStatus: 400}, false},
		{"gateway rate limit", &Error{kind: kindCode, Code: 1642902, HTTPStatus: 429}, false},
		{"gateway upstream timeout", &Error{kind: kindCode, Code: 1650401, HTTPStatus: 504}, true},
		{"ESB upstream error", &Error{kind: kindCode, Code: 1306201, HTTPStatus: 200}, true},
		{"ESB rate limit", &Error{kind: kindCode, Code: 1306429, HTTPStatus: 200}, false},
		{"proxy HTML 502", &Error{kind: kindNonJSON, HTTPStatus: 502}, true},
		{"proxy HTML 403", &Error{kind: kindNonJSON, HTTPStatus: 403}, false},
		{"garbled success", &Error{kind: kindMalformed, HTTPStatus: 200}, true},
		{"redirect", &Error{kind: kindRedirect, HTTPStatus: 301}, false},
	}
	for _, tc := range cases {
		if got := OutcomeUnknown(tc.err); got != tc.want {
			t.Errorf("%s: OutcomeUnknown = %v, want %v", tc.name, got, tc.want)
		}
	}
}
