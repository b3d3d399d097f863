package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"sort"
	"strconv"
	"strings"
)

// Layer names the component that produced an error.
type Layer string

const (
	LayerGateway Layer = "API gateway"
	LayerESB     Layer = "ESB"
	LayerIAM     Layer = "IAM"
	// LayerNetwork is a transport failure: no answer (or no complete answer) was received.
	LayerNetwork Layer = "network"
)

// Sentinels for errors.Is. An *Error matches them through its Is method; local request checks
// wrap ErrValidation directly.
var (
	ErrValidation = errors.New("bkiam: request rejected as invalid")
	// ErrResourceMismatch is IAM's 1902417: the resources of a request do not match the resource
	// types the action relates to (count, order, system or type), or an action related to no type
	// is mixed with related ones. batch_path says the same of a resource type the action does not
	// relate to in a 1902412 of its own ("action(x) not support to grant instance"), which matches
	// too. It is also an ErrValidation.
	ErrResourceMismatch = errors.New("bkiam: resources do not match the action's resource types")
	ErrForbidden        = errors.New("bkiam: forbidden")
	ErrUnauthorized     = errors.New("bkiam: unauthorized")
	ErrRateLimited      = errors.New("bkiam: rate limited")
	// ErrTransient marks errors that may go away on their own (network, 5xx gateway, rate limit).
	ErrTransient = errors.New("bkiam: transient failure")
	ErrNotFound  = errors.New("bkiam: not found")
	// ErrUnexpectedResponse marks answers that are not the documented envelope: non-JSON or
	// malformed bodies, redirects, oversized bodies.
	ErrUnexpectedResponse = errors.New("bkiam: unexpected response")
	// ErrSubjectFrozen is the backend's refusal of a frozen subject on its policy routes (the
	// queries and access checks): 1901403 "no permission:subject(type=user,id=x) has been frozen", as IAM's
	// admin API freezes a leaver. The policy lists and the by-id read still answer; IAM denies
	// the subject everything while frozen. It is also an ErrForbidden.
	ErrSubjectFrozen = errors.New("bkiam: IAM has frozen the subject")
)

// errorKind says which sentence Error renders; it is derived at construction time.
type errorKind int

const (
	kindCode       errorKind = iota // an envelope (or gateway header) with a non-zero code
	kindNetwork                     // no response
	kindNonJSON                     // a non-2xx answer whose body is not the JSON envelope
	kindMalformed                   // a 2xx answer whose body cannot be decoded
	kindRedirect                    // a 3xx answer
	kindHTTPStatus                  // a non-2xx JSON answer without a code
)

// Error is every failure of a call that reached the point of sending a request.
type Error struct {
	Layer Layer
	// Operation is the human name: "grant", "revoke", "creator grant", "path grant", "path revoke".
	Operation string
	// Transport is the channel used; it says whether GatewayRequestID came from the gateway or ESB.
	Transport  Transport
	HTTPStatus int
	Code       int
	CodeName   string
	Message    string
	// RequestID is our X-Request-Id of the failing attempt.
	RequestID string
	// GatewayRequestID is X-Bkapi-Request-Id (gateway) or the ESB body's request_id.
	GatewayRequestID string
	// Location is the redirect target of a 3xx answer.
	Location string
	// Attempts is the number of HTTP attempts made, retries included.
	Attempts int
	// Err is the underlying cause (network error, context error, JSON error), if any.
	Err error

	kind errorKind
	// object is the grade manager or group a management call's path names (object_allow_list.go).
	object managedObject
}

func (e *Error) Unwrap() error { return e.Err }

// Is maps IAM, ESB and gateway codes and HTTP statuses onto the package sentinels.
func (e *Error) Is(target error) bool {
	switch target {
	case ErrValidation:
		return e.isValidation()
	case ErrResourceMismatch:
		return e.Code == 1902417 || e.Code == 1902412 && strings.Contains(e.Message, "not support to grant instance")
	case ErrForbidden:
		// 1901401: the IAM backend's "app is not a client of the system" (read routes); 1901403:
		// a policy of another system asked for by id.
		return e.Code == 1902403 || e.Code == 1306403 || e.Code == 1640301 || e.Code == 1901401 || e.Code == 1901403 || e.HTTPStatus == http.StatusForbidden
	case ErrUnauthorized:
		return e.isUnauthorized()
	case ErrRateLimited:
		return e.isRateLimited()
	case ErrTransient:
		return e.isTransient()
	case ErrConflict:
		return e.Code == 1902409 || e.HTTPStatus == http.StatusConflict
	case ErrNotOwned:
		// The management API's ownership refusal: "role[N] can not be operated by app_code[…],
		// since role is not created by system[…]" and "group[N] can not operated by …".
		return e.Code == 1902403 && (strings.Contains(e.Message, "can not be operated by app_code") ||
			strings.Contains(e.Message, "can not operated by app_code"))
	case ErrNotFound:
		return e.Code == 1640401 || e.Code == 1902404 || e.Code == 1901404 || e.HTTPStatus == http.StatusNotFound
	case ErrUnexpectedResponse:
		return e.kind == kindNonJSON || e.kind == kindMalformed || e.kind == kindRedirect
	case ErrSubjectFrozen:
		return e.kind == kindCode && e.Code == 1901403 && strings.Contains(e.Message, "has been frozen")
	}
	return false
}

func (e *Error) isValidation() bool {
	switch e.Code {
	case 1902412, 1902414, 1902416, 1902417, 1901400:
		return true
	case 1640001:
		return !isCredentialMessage(e.Message)
	}
	return false
}

func (e *Error) isUnauthorized() bool {
	switch e.Code {
	case 1902401, 1306000:
		return true
	case 1640001:
		return isCredentialMessage(e.Message)
	}
	return e.HTTPStatus == http.StatusUnauthorized
}

func (e *Error) isRateLimited() bool {
	switch e.Code {
	case 1306429, 1642902, 1642903:
		return true
	}
	return e.HTTPStatus == http.StatusTooManyRequests
}

func (e *Error) isTransient() bool {
	if e.kind == kindNetwork {
		// Our own cancellation or deadline is final, and so is a certificate failure; a
		// per-attempt timeout or a refused connection is not.
		return e.Err != nil && !errors.Is(e.Err, context.Canceled) && !errors.Is(e.Err, context.DeadlineExceeded) &&
			!errors.Is(e.Err, ErrBodyTooLarge) && retryableNetError(e.Err)
	}
	if e.isRateLimited() {
		return true
	}
	switch e.HTTPStatus {
	case http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return true
	}
	switch {
	case e.Code >= 1650000 && e.Code <= 1659999: // gateway: upstream unreachable / timed out
		return true
	case e.Code == 1306201: // ESB: upstream failed
		return true
	case e.Code == 1902000: // SaaS: its call to the backend failed, unless the backend refused
		return !e.backendRefused()
	}
	return false
}

// BackendRefused reports a 1902000 that carries IAM's backend's definite refusal (backendRefused).
// A management call refused there may still have committed what the SaaS wrote before its call to
// the backend: a grade manager whose sync group the backend refused is created all the same.
func BackendRefused(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.backendRefused()
}

// backendResponseCode finds the backend's code in a 1902000 message: the SaaS passes a failed
// backend call on as "request iam error! Request=[…] Response[code=N, message=…]" ("request iam
// fail! …" when no answer came).
var backendResponseCode = regexp.MustCompile(`Response\[code=(\d+),`)

// backendRefused reports a 1902000 that carries the IAM backend's definite refusal: a 19014xx
// code (bad request, not found, conflict: the per-member group quota, the 1000-member limit), or
// its system error for a lookup that found nothing ("sql: no rows in result set": a member, an
// action or a system it does not know). The backend checks these before it writes, so the call
// changed nothing and a retry would be refused the same way. Its rate limit (1901429) and other
// system errors are not refusals.
func (e *Error) backendRefused() bool {
	if e.Code != 1902000 {
		return false
	}
	m := backendResponseCode.FindStringSubmatch(e.Message)
	if m == nil {
		return false
	}
	code, err := strconv.Atoi(m[1])
	if err != nil {
		return false
	}
	switch {
	case code == 1901429:
		return false
	case code >= 1901400 && code <= 1901499:
		return true
	}
	return strings.Contains(e.Message, "sql: no rows in result set")
}

// isCredentialMessage tells a gateway 1640001 about app or user credentials (unauthorized) from
// one about request arguments (validation); the gateway uses the same code for both.
func isCredentialMessage(msg string) bool {
	m := strings.ToLower(msg)
	for _, k := range []string{"bk_app_code", "bk_app_secret", "app_code", "app_secret", "app code", "app secret",
		"appcode", "app authentication", "user authentication", "access_token", "bk_token", "bk_username", "credential"} {
		if strings.Contains(m, k) {
			return true
		}
	}
	return false
}

// Error renders one sentence with the layer, operation, codes and both request ids.
func (e *Error) Error() string {
	op := e.Operation
	if op == "" {
		op = "request"
	}
	who := string(e.Layer)
	if e.Layer == LayerNetwork || who == "" {
		who = e.Transport.label()
	}
	switch e.kind {
	case kindNetwork:
		cause := "unknown error"
		if e.Err != nil {
			cause = e.Err.Error()
		}
		switch {
		case errors.Is(e.Err, context.Canceled):
			return fmt.Sprintf("the %s was cancelled before the %s answered%s: %s", op, who, e.details(false), cause)
		case errors.Is(e.Err, context.DeadlineExceeded):
			return fmt.Sprintf("the %s ran out of time before the %s answered%s: %s", op, who, e.details(false), cause)
		case errors.Is(e.Err, ErrBodyTooLarge):
			return fmt.Sprintf("the %s answered the %s with an oversized body%s: %s", who, op, e.details(false), cause)
		}
		return fmt.Sprintf("could not reach the %s for the %s%s: %s", who, op, e.details(false), cause)
	case kindNonJSON:
		return fmt.Sprintf("%s answered the %s with HTTP %d and a non-JSON body%s: %s", who, op, e.HTTPStatus, e.details(false), e.Message)
	case kindMalformed:
		return fmt.Sprintf("%s answered the %s with HTTP %d and a malformed body%s: %s", who, op, e.HTTPStatus, e.details(false), e.Message)
	case kindRedirect:
		loc := e.Location
		if loc == "" {
			loc = "(no Location)"
		}
		// Message, when set, is advice specific to the route (see the policy-list reads).
		advice := "check the configured URL"
		if e.Message != "" {
			advice = e.Message
		}
		return fmt.Sprintf("%s answered the %s with a redirect (HTTP %d) to %s, which is not followed%s: %s", who, op, e.HTTPStatus, loc, e.details(false), advice)
	case kindHTTPStatus:
		return fmt.Sprintf("%s answered the %s with HTTP %d%s: %s", who, op, e.HTTPStatus, e.details(false), e.Message)
	}
	msg := e.Message
	if msg == "" {
		msg = "no message"
	}
	return fmt.Sprintf("%s rejected the %s%s: %s", who, op, e.details(true), msg)
}

// details renders " (HTTP 403, code N NAME, request …, gateway request …, after N attempts)".
func (e *Error) details(withCode bool) string {
	var parts []string
	if withCode {
		if e.HTTPStatus != 0 && e.HTTPStatus != http.StatusOK {
			parts = append(parts, "HTTP "+strconv.Itoa(e.HTTPStatus))
		}
		code := "code " + strconv.Itoa(e.Code)
		if e.CodeName != "" {
			code += " " + e.CodeName
		}
		parts = append(parts, code)
	}
	if e.RequestID != "" {
		parts = append(parts, "request "+e.RequestID)
	}
	if e.GatewayRequestID != "" {
		if e.Transport == TransportESB {
			parts = append(parts, "ESB request "+e.GatewayRequestID)
		} else {
			parts = append(parts, "gateway request "+e.GatewayRequestID)
		}
	}
	if e.Attempts > 1 {
		parts = append(parts, "after "+strconv.Itoa(e.Attempts)+" attempts")
	}
	if len(parts) == 0 {
		return ""
	}
	return " (" + strings.Join(parts, ", ") + ")"
}

// foldSpace collapses runs of whitespace (an HTML page or pretty JSON) into single spaces.
func foldSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// truncate cuts s to at most n runes, marking the cut.
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// renderFieldErrors turns IAM's 1902412 message, the JSON of DRF field errors (optionally
// followed by " (CODE_NAME)"), into "resources[0].instances: too many; name: required".
// Anything that is not such JSON is returned unchanged.
func renderFieldErrors(msg string) string {
	trimmed := strings.TrimSpace(msg)
	candidates := []string{trimmed}
	if i := strings.LastIndex(trimmed, " ("); i > 0 && strings.HasSuffix(trimmed, ")") {
		candidates = append(candidates, strings.TrimSpace(trimmed[:i]))
	}
	for _, c := range candidates {
		if !strings.HasPrefix(c, "{") && !strings.HasPrefix(c, "[") {
			continue
		}
		var v any
		if err := json.Unmarshal([]byte(c), &v); err != nil {
			continue
		}
		var out []string
		flattenFieldErrors("", v, &out)
		if len(out) > 0 {
			return strings.Join(out, "; ")
		}
	}
	return msg
}

func flattenFieldErrors(path string, v any, out *[]string) {
	switch t := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(t))
		for k := range t {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			p := k
			if k == "non_field_errors" {
				p = path // a whole-object error belongs to the object itself
			} else if path != "" {
				p = path + "." + k
			}
			flattenFieldErrors(p, t[k], out)
		}
	case []any:
		allScalars := true
		for _, x := range t {
			switch x.(type) {
			case map[string]any, []any:
				allScalars = false
			}
		}
		if allScalars {
			var msgs []string
			for _, x := range t {
				msgs = append(msgs, fmt.Sprint(x))
			}
			if len(msgs) > 0 {
				addFieldError(path, strings.Join(msgs, ", "), out)
			}
			return
		}
		// A list of nested objects: DRF reports {} for valid items, so only failing indexes appear.
		for i, x := range t {
			flattenFieldErrors(fmt.Sprintf("%s[%d]", path, i), x, out)
		}
	case nil:
	default:
		addFieldError(path, fmt.Sprint(t), out)
	}
}

func addFieldError(path, msg string, out *[]string) {
	if path == "" {
		*out = append(*out, msg)
		return
	}
	*out = append(*out, path+": "+msg)
}
