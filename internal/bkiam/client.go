package bkiam

import (
	"context"
	"errors"
	"net/http"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Client calls the IAM open authorization API. It is safe for concurrent use.
type Client struct {
	cfg         normalized
	http        *http.Client
	gatewayAuth string
	backoff     backoff
}

// New validates cfg and builds a Client. It makes no network call.
func New(cfg Config) (*Client, error) {
	n, err := cfg.normalize()
	if err != nil {
		return nil, err
	}
	return &Client{
		cfg:         n,
		http:        n.httpClient(),
		gatewayAuth: gatewayAuthHeader(n.AppCode, n.AppSecret),
		backoff:     newBackoff(),
	}, nil
}

// Transport reports which channel the client uses.
func (c *Client) Transport() Transport { return c.cfg.transport }

// BatchInstance grants or revokes actions on resource instances (batch_instance). It returns
// every policy IAM lists, including unrelated ones of the same subject (server bug).
func (c *Client) BatchInstance(ctx context.Context, req BatchInstanceRequest) ([]PolicyResult, error) {
	op, body, err := req.body()
	if err != nil {
		return nil, err
	}
	return c.call(ctx, op, endpointBatchInstance, body)
}

// BatchPath grants or revokes actions on topology paths (batch_path).
func (c *Client) BatchPath(ctx context.Context, req BatchPathRequest) ([]PolicyResult, error) {
	op, body, err := req.body()
	if err != nil {
		return nil, err
	}
	return c.call(ctx, op, endpointBatchPath, body)
}

// BatchResourceCreatorAction grants a creator the actions the system registered for the type
// (batch_resource_creator_action). Creator policies are permanent; there is no creator revoke.
func (c *Client) BatchResourceCreatorAction(ctx context.Context, req CreatorActionRequest) ([]PolicyResult, error) {
	if err := req.check(); err != nil {
		return nil, err
	}
	return c.call(ctx, opCreatorGrant, endpointCreatorAction, req)
}

// call sends one request with retries and decodes the answer into policies or an *Error.
func (c *Client) call(ctx context.Context, op, endpoint string, payload any) ([]PolicyResult, error) {
	wire, loggable, err := c.encodeBody(payload)
	if err != nil {
		return nil, err
	}
	ctx = c.logContext(ctx)
	st := &callState{op: op, url: c.endpointURL(endpoint), start: time.Now(), loggable: loggable}
	resp, raw, e := c.roundTrip(ctx, st, http.MethodPost, wire)
	if e != nil {
		return nil, e
	}
	defer resp.Body.Close() // the replayable copy left by peekBody; closing it is a no-op
	results, e := c.interpret(op, resp, raw)
	if e != nil {
		e.Attempts = st.attempts
		st.logResult(ctx, c, 0, e)
		return nil, e
	}
	st.logResult(ctx, c, len(results), nil)
	return results, nil
}

// roundTrip sends one request (body nil for a GET) to st.url with retries and returns the last
// answer with its body read, or a network *Error (already logged). ctx must carry logContext.
func (c *Client) roundTrip(ctx context.Context, st *callState, method string, wire []byte) (*http.Response, []byte, *Error) {
	// One retryablehttp.Client per call: it is a cheap struct and lets the hooks close over this
	// call's state; the connection pool lives in the shared http.Client.
	rc := &retryablehttp.Client{
		HTTPClient:   c.http,
		Logger:       nil, // retryablehttp's own logger is off; we log through tflog
		RetryWaitMin: c.cfg.RetryWaitMin,
		RetryWaitMax: c.cfg.RetryWaitMax,
		RetryMax:     c.cfg.MaxRetries,
		CheckRetry:   c.checkRetry(st),
		Backoff:      c.backoff.wait,
		RequestLogHook: func(_ retryablehttp.Logger, r *http.Request, i int) {
			st.onAttempt(ctx, r, i)
		},
		// Keep the last answer after the retries run out, to build a typed error from it.
		ErrorHandler: func(resp *http.Response, err error, tries int) (*http.Response, error) {
			st.attempts = tries
			return resp, err
		},
		// A fresh X-Request-Id per attempt. The header map is cloned because retryablehttp's
		// shallow request copy shares it with the previous attempt, which the transport may
		// still be reading.
		PrepareRetry: func(r *http.Request) error {
			r.Header = r.Header.Clone()
			r.Header.Set(headerRequestID, newRequestID())
			return nil
		},
	}

	var body any // an untyped nil: a GET carries no body at all
	if wire != nil {
		body = wire
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, method, st.url, body)
	if err != nil {
		e := c.networkError(st.op, st, err)
		st.logResult(ctx, c, 0, e)
		return nil, nil, e
	}
	c.setHeaders(req.Header)

	resp, err := rc.Do(req)
	if err != nil {
		if resp != nil && resp.Body != nil {
			_ = resp.Body.Close()
		}
		e := c.networkError(st.op, st, err)
		st.logResult(ctx, c, 0, e)
		return nil, nil, e
	}
	// peekBody closes the network body and leaves a replayable copy in its place.
	raw, readErr := peekBody(resp)
	if readErr != nil {
		e := c.networkError(st.op, st, readErr)
		e.HTTPStatus = resp.StatusCode
		e.RequestID = attemptRequestID(resp)
		if errors.Is(readErr, ErrBodyTooLarge) {
			e.Layer, e.kind = c.cfg.transport.layer(), kindMalformed
			e.Message = readErr.Error()
		}
		st.logResult(ctx, c, 0, e)
		return nil, nil, e
	}
	return resp, raw, nil
}
