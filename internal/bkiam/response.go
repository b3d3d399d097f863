package bkiam

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// maxResponseBytes caps how much of an answer is read. A grant answer lists every policy of the
// subject in the system (server bug), so it can be large, but never this large.
const maxResponseBytes = 32 << 20

// snippetRunes is how much of an unexpected body goes into an error message.
const snippetRunes = 200

// ErrBodyTooLarge: an answer longer than the client reads (maxResponseBytes).
var ErrBodyTooLarge = fmt.Errorf("response body exceeds %d MiB", maxResponseBytes>>20)

// flexCode accepts a code as a JSON number or a numeric string (some ESB components quote it).
type flexCode struct {
	set bool
	v   int
}

func (f *flexCode) UnmarshalJSON(b []byte) error {
	s := strings.Trim(string(b), `"`)
	if s == "null" || s == "" {
		return nil
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		// Not the value itself: a body may echo anything, secrets included,
		// and this text reaches the error (the body's snippet, redacted, follows it).
		return errors.New("the code is not a number")
	}
	f.set, f.v = true, n
	return nil
}

// envelope is the union of the SaaS, ESB and gateway bodies.
type envelope struct {
	Result    *bool
	Code      flexCode
	CodeName  string
	Message   string
	Data      json.RawMessage
	RequestID string
}

// decodeEnvelope reads the envelope's keys by their exact names. Decoding
// into a struct would match keys regardless of case, and then
// {"code":1902412,"Code":0} would read as a success.
func decodeEnvelope(raw []byte) (envelope, error) {
	var env envelope
	var members map[string]json.RawMessage
	if err := json.Unmarshal(raw, &members); err != nil {
		return env, err
	}
	for _, f := range []struct {
		key string
		dst any
	}{{"result", &env.Result}, {"code", &env.Code}, {"code_name", &env.CodeName}, {"message", &env.Message}, {"request_id", &env.RequestID}} {
		if v, ok := members[f.key]; ok {
			if err := json.Unmarshal(v, f.dst); err != nil {
				return env, fmt.Errorf("%s: %w", f.key, err)
			}
		}
	}
	env.Data = members["data"]
	return env, nil
}

// peekedBody replaces a response body once CheckRetry has read it, so the final decoding sees the
// same bytes (and the same read error) without a second read.
type peekedBody struct {
	*bytes.Reader
	data []byte
	err  error
}

func (p *peekedBody) Close() error { return nil }

// peekBody reads (at most maxResponseBytes of) resp.Body once and puts a replayable copy back.
func peekBody(resp *http.Response) ([]byte, error) {
	if pb, ok := resp.Body.(*peekedBody); ok {
		return pb.data, pb.err
	}
	var data []byte
	var err error
	if resp.Body != nil {
		data, err = readBody(resp)
		_ = resp.Body.Close()
		if err == nil && len(data) > maxResponseBytes {
			data, err = data[:maxResponseBytes], ErrBodyTooLarge
		}
	}
	resp.Body = &peekedBody{Reader: bytes.NewReader(data), data: data, err: err}
	return data, err
}

// readBody reads at most maxResponseBytes+1 bytes of the body: into one
// buffer of the length the server announced, when it did (io.ReadAll
// would grow its buffer several times over a page of a policy list), else
// as io.ReadAll reads.
func readBody(resp *http.Response) ([]byte, error) {
	limited := io.LimitReader(resp.Body, maxResponseBytes+1)
	n := resp.ContentLength
	if n <= 0 || n > maxResponseBytes {
		return io.ReadAll(limited)
	}
	buf := make([]byte, n)
	if read, err := io.ReadFull(limited, buf); err != nil {
		return buf[:read], err
	}
	// A body longer than announced: read on, as io.ReadAll would.
	var probe [1]byte
	if m, _ := limited.Read(probe[:]); m == 0 {
		return buf, nil
	}
	rest, err := io.ReadAll(limited)
	return append(append(buf, probe[0]), rest...), err
}

// codeLayer attributes a body code to the layer that emits that code range.
func codeLayer(code int, t Transport) Layer {
	switch {
	case code >= 1300000 && code <= 1309999:
		return LayerESB
	case code >= 1600000 && code <= 1699999:
		return LayerGateway
	case code >= 1900000 && code <= 1999999:
		return LayerIAM
	}
	if t == TransportESB {
		return LayerESB
	}
	return LayerIAM
}

// interpret decodes one grant or revoke answer. It returns all listed policies: IAM includes
// unrelated ones (server bug).
func (c *Client) interpret(op string, resp *http.Response, raw []byte) ([]PolicyResult, *Error) {
	results := []PolicyResult{}
	e := c.interpretInto(op, resp, raw, func(d []byte) error {
		if err := json.Unmarshal(d, &results); err != nil {
			return fmt.Errorf("data is not a list of policies (%w)", err)
		}
		return nil
	})
	if e != nil {
		return nil, e
	}
	return results, nil
}

// interpretInto decodes one answer. The order follows the layers from the outside in: the gateway's
// X-Bkapi-Error-Code header, then the HTTP status, then the body code (success is code 0 with
// result not false). On success, decode (if not nil) gets data unless it is absent or null; its
// error makes the answer malformed.
func (c *Client) interpretInto(op string, resp *http.Response, raw []byte, decode func(data []byte) error) *Error {
	t := c.cfg.transport
	e := &Error{
		Operation:        op,
		Transport:        t,
		Layer:            t.layer(),
		HTTPStatus:       resp.StatusCode,
		RequestID:        attemptRequestID(resp),
		GatewayRequestID: c.cleanField(resp.Header.Get(headerBkapiRequestID)),
	}
	var env envelope
	var jsonErr error
	if looksLikeJSONObject(raw) {
		env, jsonErr = decodeEnvelope(raw)
	}
	isJSON := looksLikeJSONObject(raw) && jsonErr == nil
	if isJSON && e.GatewayRequestID == "" {
		e.GatewayRequestID = c.cleanField(env.RequestID)
	}

	if hc := strings.TrimSpace(resp.Header.Get(headerBkapiErrorCode)); hc != "" && hc != "0" {
		e.Layer, e.kind = LayerGateway, kindCode
		e.Code, _ = strconv.Atoi(hc)
		e.CodeName = c.cleanField(env.CodeName)
		e.Message = env.Message
		if e.Message == "" {
			e.Message = headerMessage(resp.Header.Get(headerBkapiErrorMessage))
		}
		e.Message = c.cleanMessage(e.Message)
		return e
	}

	if resp.StatusCode >= 300 && resp.StatusCode < 400 {
		e.kind = kindRedirect
		e.Location = c.redact(resp.Header.Get("Location"))
		return e
	}

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		switch {
		case isJSON && env.Code.set && env.Code.v != 0:
			e.fillCode(c, env)
		case isJSON:
			e.kind = kindHTTPStatus
			e.Message = c.snippet(raw)
		default:
			e.kind = kindNonJSON
			e.Message = c.snippet(raw)
		}
		return e
	}

	if !isJSON {
		e.kind = kindMalformed
		switch {
		case len(bytes.TrimSpace(raw)) == 0:
			e.Message = "empty body"
		case jsonErr != nil:
			e.Err = jsonErr
			e.Message = "invalid JSON (" + jsonErr.Error() + "): " + c.snippet(raw)
		default:
			e.Message = "not a JSON object: " + c.snippet(raw)
		}
		return e
	}
	if (env.Code.set && env.Code.v != 0) || (env.Result != nil && !*env.Result) {
		e.fillCode(c, env)
		return e
	}
	if !env.Code.set {
		e.kind = kindMalformed
		e.Message = "no code in the answer: " + c.snippet(raw)
		return e
	}
	if d := bytes.TrimSpace(env.Data); decode != nil && len(d) > 0 && !bytes.Equal(d, []byte("null")) {
		if err := decode(d); err != nil {
			e.kind = kindMalformed
			e.Err = err
			e.Message = err.Error() + ": " + c.snippet(d)
			return e
		}
	}
	return nil
}

func (e *Error) fillCode(c *Client, env envelope) {
	e.kind = kindCode
	e.Code = env.Code.v
	e.CodeName = c.cleanField(env.CodeName)
	e.Layer = codeLayer(e.Code, e.Transport)
	msg := env.Message
	if e.Code == 1902412 {
		msg = renderFieldErrors(msg)
	}
	e.Message = c.cleanMessage(msg)
}

func looksLikeJSONObject(raw []byte) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && t[0] == '{'
}

// headerMessage decodes X-Bkapi-Error-Message, which some gateway versions percent-encode.
func headerMessage(h string) string {
	if u, err := url.QueryUnescape(h); err == nil {
		return u
	}
	return h
}

// attemptRequestID is the X-Request-Id we sent on the attempt that produced resp.
func attemptRequestID(resp *http.Response) string {
	if resp.Request != nil {
		if id := resp.Request.Header.Get(headerRequestID); id != "" {
			return id
		}
	}
	return resp.Header.Get(headerRequestID)
}

// cleanMessage makes a server message safe and readable for one error line.
func (c *Client) cleanMessage(s string) string {
	return truncate(foldSpace(c.redact(s)), 2000)
}

// cleanField makes a short server value (a code name, a request id) safe for one error line:
// the body or a header may echo a secret, or carry a page of text where a word belongs.
func (c *Client) cleanField(s string) string {
	return truncate(foldSpace(c.redact(s)), 100)
}

// snippet is the start of an unexpected body, whitespace folded, secrets removed.
func (c *Client) snippet(raw []byte) string {
	s := string(raw)
	if len(s) > 64<<10 {
		s = s[:64<<10]
	}
	s = truncate(foldSpace(c.redact(s)), snippetRunes)
	if s == "" {
		return "(empty body)"
	}
	return s
}

// networkError wraps a failure without a (complete) answer.
func (c *Client) networkError(op string, st *callState, err error) *Error {
	e := &Error{Operation: op, Transport: c.cfg.transport, Layer: LayerNetwork, kind: kindNetwork,
		RequestID: st.requestID, Attempts: st.attempts, Err: err}
	return e
}
