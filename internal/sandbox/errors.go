package sandbox

import (
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
)

// SaaS error codes (bk-iam-saas); see the package doc of internal/bkiam, "Answers and errors". The
// names in saasCodeNames are the server's own ErrorCode names, sent as the " (<NAME>)" suffix.
const (
	codeOK             = 0
	codeUpstream       = 1902000
	codeUnauthorized   = 1902401
	codeForbidden      = 1902403
	codeNotFound       = 1902404
	codeValidation     = 1902412
	codeBadJSON        = 1902414
	codeInvalidArgs    = 1902416
	codeActionValidate = 1902417
	codeSystemError    = 1902500
)

// ESB's own codes.
const (
	codeESBAppUser     = 1306000
	codeESBUpstream    = 1306201
	codeESBNoPerm      = 1306403
	codeESBRateLimited = 1306429
)

// API gateway codes.
const (
	codeGWBadArgs     = 1640001
	codeGWNoPerm      = 1640301
	codeGWNotFound    = 1640401
	codeGWRateLimited = 1642902
)

// Backend (bk-iam) codes used by the read routes.
const (
	codeBackendUnauthorized = 1901401
	codeBackendNotFound     = 1901404
	codeBackendForbidden    = 1901403
	codeBackendBadRequest   = 1901400
)

var saasCodeNames = map[int]string{
	codeUpstream:       "REMOTE_REQUEST_ERROR",
	codeUnauthorized:   "UNAUTHORIZED",
	codeForbidden:      "FORBIDDEN",
	codeNotFound:       "NOT_FOUND_ERROR",
	codeValidation:     "VALIDATE_ERROR",
	codeBadJSON:        "JSON_FORMAT_ERROR",
	codeInvalidArgs:    "INVALID_ARGS",
	codeActionValidate: "ACTION_VALIDATE_ERROR",
	codeSystemError:    "SYSTEM_ERROR",
}

var gatewayCodeNames = map[int]string{
	codeGWBadArgs:     "INVALID_ARGS",
	codeGWNoPerm:      "APP_NO_PERMISSION",
	codeGWNotFound:    "API_NOT_FOUND",
	codeGWRateLimited: "RATE_LIMITED",
	1642903:           "RATE_LIMITED",
	1650200:           "BAD_GATEWAY",
	1650201:           "BAD_GATEWAY",
	1650401:           "UPSTREAM_TIMEOUT",
}

// saasError is an error answered by the IAM SaaS layer.
type saasError struct {
	code    int
	message string // final message text, as sent
}

func (e *saasError) Error() string { return e.message }

// saasStatus is the HTTP status the SaaS answers for a code: 200 except for 401/403/404/500.
func saasStatus(code int) int {
	switch code {
	case codeUnauthorized:
		return http.StatusUnauthorized
	case codeForbidden:
		return http.StatusForbidden
	case codeNotFound:
		return http.StatusNotFound
	case codeSystemError:
		return http.StatusInternalServerError
	}
	return http.StatusOK
}

// newSaaSError builds a SaaS error whose message is "<text> (<NAME>)", the SaaS envelope form.
// validateError is the SaaS's VALIDATE_ERROR.format(text): 1902412 with its message, which the
// gateway's English locale renders "Parameter verification failed: text (VALIDATE_ERROR)". A
// serializer's field errors (fieldErrors) come without the prefix.
func validateError(text string) *saasError {
	return newSaaSError(codeValidation, "Parameter verification failed: "+text)
}

func newSaaSError(code int, text string) *saasError {
	if name, ok := saasCodeNames[code]; ok {
		text += " (" + name + ")"
	}
	return &saasError{code: code, message: text}
}

// fieldErrors collects serializer-style field errors. Keys are paths like ["resources", 0,
// "instances"]; the message rendered is the nested DRF-style JSON (lists of per-item objects, {} for
// items without errors), which is what the real server sends as the 1902412 message.
type fieldErrors struct {
	errs []fieldErr
}

type fieldErr struct {
	path []any // string keys and int indexes
	msg  string
}

func (f *fieldErrors) add(msg string, path ...any) {
	f.errs = append(f.errs, fieldErr{path: path, msg: msg})
}

func (f *fieldErrors) empty() bool { return len(f.errs) == 0 }

// err renders the collected errors as a 1902412 error. The message is exactly the JSON text (no name
// suffix), rendered as Python's json.dumps does (", " and ": " separators, field order kept, non-ASCII
// escaped), so clients can parse it like the real server's.
func (f *fieldErrors) err() *saasError {
	var root any = &errObject{}
	for _, e := range f.errs {
		path := e.path
		if len(path) == 0 {
			path = []any{"non_field_errors"}
		}
		root = insertErr(root, path, e.msg)
	}
	var b strings.Builder
	writeErr(&b, root)
	return &saasError{code: codeValidation, message: b.String()}
}

// nonFieldError is the form of the server's limit errors: {"non_field_errors": ["…"]}.
func nonFieldError(msg string) *saasError {
	var f fieldErrors
	f.add(msg, "non_field_errors")
	return f.err()
}

// The error tree: *errObject (ordered keys), *errList (per-item errors, nil rendered as {}) and
// []string (messages).
type errObject struct {
	keys []string
	vals map[string]any
}

type errList struct {
	items []any
}

func insertErr(v any, path []any, msg string) any {
	if len(path) == 0 {
		msgs, _ := v.([]string)
		return append(msgs, msg)
	}
	switch k := path[0].(type) {
	case int:
		l, _ := v.(*errList)
		if l == nil {
			l = &errList{}
		}
		for len(l.items) <= k {
			l.items = append(l.items, nil)
		}
		l.items[k] = insertErr(l.items[k], path[1:], msg)
		return l
	default:
		key, _ := k.(string)
		o, _ := v.(*errObject)
		if o == nil {
			o = &errObject{}
		}
		if o.vals == nil {
			o.vals = map[string]any{}
		}
		if _, ok := o.vals[key]; !ok {
			o.keys = append(o.keys, key)
		}
		o.vals[key] = insertErr(o.vals[key], path[1:], msg)
		return o
	}
}

func writeErr(b *strings.Builder, v any) {
	switch x := v.(type) {
	case nil:
		b.WriteString("{}")
	case []string:
		b.WriteString("[")
		for i, s := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, s)
		}
		b.WriteString("]")
	case *errList:
		b.WriteString("[")
		for i, it := range x.items {
			if i > 0 {
				b.WriteString(", ")
			}
			writeErr(b, it)
		}
		b.WriteString("]")
	case *errObject:
		b.WriteString("{")
		for i, k := range x.keys {
			if i > 0 {
				b.WriteString(", ")
			}
			writePyString(b, k)
			b.WriteString(": ")
			writeErr(b, x.vals[k])
		}
		b.WriteString("}")
	}
}

// writePyString writes a JSON string the way Python's json.dumps does (ensure_ascii).
func writePyString(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				r -= 0x10000
				fmt.Fprintf(b, `\u%04x\u%04x`, 0xd800+(r>>10), 0xdc00+(r&0x3ff))
			} else {
				fmt.Fprintf(b, `\u%04x`, r)
			}
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
}

// sortedKeys is a small helper for deterministic output.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func itoa(n int) string { return strconv.Itoa(n) }
