package bkiam

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// checkRetry decides from IAM's own codes, not just the HTTP status: ESB reports its rate limit
// (1306429) and upstream errors inside HTTP 200, so the body is read here and put back for the
// final decoding. Grant and revoke are idempotent, so repeating them is safe.
func (c *Client) checkRetry(st *callState) retryablehttp.CheckRetry {
	return func(ctx context.Context, resp *http.Response, err error) (bool, error) {
		if ctxErr := ctx.Err(); ctxErr != nil {
			return false, ctxErr
		}
		if err != nil {
			return retryableNetError(err), nil
		}
		raw, readErr := peekBody(resp)
		st.logAttempt(ctx, c, resp, raw)
		if readErr != nil {
			// The answer broke off midway: as good as no answer, unless it is just too big.
			return !errors.Is(readErr, ErrBodyTooLarge), nil
		}
		// Only the envelope matters here: the data (a list of grants, or a page of a
		// policy list) is decoded once, by the caller.
		e := c.interpretInto(st.op, resp, raw, nil)
		return e != nil && e.isTransient(), nil
	}
}

// retryableNetError is false for failures that another attempt cannot fix.
func retryableNetError(err error) bool {
	var certErr *tls.CertificateVerificationError
	var unknownAuth x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	var invalidCert x509.CertificateInvalidError
	switch {
	case errors.As(err, &certErr), errors.As(err, &unknownAuth), errors.As(err, &hostErr), errors.As(err, &invalidCert):
		return false
	case strings.Contains(err.Error(), "unsupported protocol scheme"):
		return false
	}
	return true
}

// backoff is exponential with full jitter between min and max, but honours Retry-After
// (seconds or an HTTP date) when the server sends it, capped at max so that one answer cannot
// stall a Terraform run for longer than the user allowed.
type backoff struct {
	now   func() time.Time
	int64 func(n int64) int64 // uniform in [0, n)
}

func newBackoff() backoff {
	return backoff{now: time.Now, int64: rand.Int64N}
}

func (b backoff) wait(minWait, maxWait time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if d, ok := b.retryAfter(resp.Header.Get("Retry-After")); ok {
			return min(d, maxWait)
		}
	}
	ceiling := maxWait
	if attempt < 62 {
		if exp := minWait << uint(attempt); exp > 0 && exp < maxWait && exp>>uint(attempt) == minWait {
			ceiling = exp
		}
	}
	if ceiling <= minWait {
		return minWait
	}
	return minWait + time.Duration(b.int64(int64(ceiling-minWait)+1))
}

func (b backoff) retryAfter(h string) (time.Duration, bool) {
	h = strings.TrimSpace(h)
	if h == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(h, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		if secs > int64(24*time.Hour/time.Second) {
			secs = int64(24 * time.Hour / time.Second) // avoid overflow; capped at max anyway
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(h); err == nil {
		return max(t.Sub(b.now()), 0), true
	}
	return 0, false
}
