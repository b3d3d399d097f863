package bkiam

import (
	"context"
	"net/http"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-log/tflog"
)

// logSubsystem is the tflog subsystem of this package ("provider.bkiam" in Terraform's logs).
const logSubsystem = "bkiam"

// maxLoggedBody caps bodies written to trace logs; a grant answer can list thousands of policies.
const maxLoggedBody = 64 << 10

// logContext adds the subsystem and its masks to ctx. Masking is the second line of defence:
// everything this package logs is already redacted by hand (see redact and encodeBody).
func (c *Client) logContext(ctx context.Context) context.Context {
	ctx = tflog.NewSubsystem(ctx, logSubsystem)
	ctx = tflog.SubsystemMaskFieldValuesWithFieldKeys(ctx, logSubsystem,
		"bk_app_secret", "app_secret", "bk_token", "authorization", headerBkapiAuth)
	if secrets := c.secrets(); len(secrets) > 0 {
		ctx = tflog.SubsystemMaskAllFieldValuesStrings(ctx, logSubsystem, secrets...)
		ctx = tflog.SubsystemMaskMessageStrings(ctx, logSubsystem, secrets...)
	}
	return ctx
}

// secrets lists the non-empty secret values. Empty strings must never reach a mask or a
// strings.ReplaceAll: an empty pattern matches between every character.
func (c *Client) secrets() []string {
	var out []string
	for _, s := range []string{c.cfg.AppSecret, c.cfg.BKToken} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// redact removes secret values from text that came from outside (bodies, messages, headers).
func (c *Client) redact(s string) string {
	for _, secret := range c.secrets() {
		s = strings.ReplaceAll(s, secret, redacted)
	}
	return s
}

// callState follows one call through retryablehttp's hooks. The hooks run on the calling
// goroutine inside Do, so no locking is needed.
type callState struct {
	op        string
	url       string
	start     time.Time
	attempts  int
	requestID string // X-Request-Id of the current attempt
	gatewayID string // X-Bkapi-Request-Id of the latest answer
	loggable  []byte // request body with credentials redacted
}

// onAttempt runs before every attempt (retryablehttp's RequestLogHook).
func (st *callState) onAttempt(ctx context.Context, req *http.Request, i int) {
	st.attempts = i + 1
	st.requestID = req.Header.Get(headerRequestID)
	tflog.SubsystemTrace(ctx, logSubsystem, "sending IAM request", map[string]any{
		"operation":  st.op,
		"url":        st.url,
		"attempt":    st.attempts,
		"request_id": st.requestID,
		"body":       string(st.loggable),
	})
}

// logAttempt traces one answer; called from CheckRetry, which sees every attempt's response.
func (st *callState) logAttempt(ctx context.Context, c *Client, resp *http.Response, raw []byte) {
	st.gatewayID = resp.Header.Get(headerBkapiRequestID)
	if !tflog.SubsystemIsTrace(ctx, logSubsystem) {
		return
	}
	body := raw
	if len(body) > maxLoggedBody {
		body = body[:maxLoggedBody]
	}
	tflog.SubsystemTrace(ctx, logSubsystem, "received IAM response", map[string]any{
		"operation":          st.op,
		"attempt":            st.attempts,
		"http_status":        resp.StatusCode,
		"request_id":         attemptRequestID(resp),
		"gateway_request_id": resp.Header.Get(headerBkapiRequestID),
		"gateway_error_code": resp.Header.Get(headerBkapiErrorCode),
		"body":               c.redact(string(body)),
	})
}

// logResult writes the one debug line per call.
func (st *callState) logResult(ctx context.Context, c *Client, results int, err *Error) {
	fields := map[string]any{
		"operation":   st.op,
		"url":         st.url,
		"transport":   string(c.cfg.transport),
		"attempts":    st.attempts,
		"duration_ms": time.Since(st.start).Milliseconds(),
		"request_id":  st.requestID,
	}
	if st.gatewayID != "" {
		fields["gateway_request_id"] = st.gatewayID
	}
	if err == nil {
		fields["policies"] = results
		tflog.SubsystemDebug(ctx, logSubsystem, "IAM call succeeded", fields)
		return
	}
	fields["layer"] = string(err.Layer)
	fields["http_status"] = err.HTTPStatus
	fields["code"] = err.Code
	fields["request_id"] = err.RequestID
	fields["gateway_request_id"] = err.GatewayRequestID
	fields["error"] = c.redact(err.Error())
	tflog.SubsystemDebug(ctx, logSubsystem, "IAM call failed", fields)
}
