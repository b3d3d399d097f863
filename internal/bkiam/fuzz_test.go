package bkiam

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fuzzAnswer is what the fuzz server answers to the next request.
type fuzzAnswer struct {
	status int
	header http.Header
	body   []byte
	// truncate declares a longer Content-Length than the body and hangs up:
	// an answer that breaks off midway.
	truncate bool
}

// fuzzHeaderChoices are the header sets a fuzzed answer carries: the
// content types real servers and proxies send, and the gateway's error
// headers and the id and redirect headers, some echoing the secrets, as a
// misbehaving proxy might.
var fuzzHeaderChoices = []struct {
	name     string
	header   map[string]string
	truncate bool
}{
	{"json", map[string]string{"Content-Type": "application/json"}, false},
	{"html", map[string]string{"Content-Type": "text/html; charset=utf-8"}, false},
	{"no content type", nil, false},
	{"gateway error echoing the secret", map[string]string{"X-Bkapi-Error-Code": "1640001",
		"X-Bkapi-Error-Message": "Parameters error [reason=\"bk_app_secret " + testAppSecret + " is incorrect\"]"}, false},
	{"gateway error, percent-encoded", map[string]string{"X-Bkapi-Error-Code": "1650401",
		"X-Bkapi-Error-Message": url.QueryEscape("upstream timeout for bk_token=" + testBKToken)}, false},
	{"gateway error code 0", map[string]string{"X-Bkapi-Error-Code": "0"}, false},
	{"gateway error code not a number", map[string]string{"X-Bkapi-Error-Code": "oops"}, false},
	{"ids and location echoing the secrets", map[string]string{"X-Bkapi-Request-Id": testAppSecret,
		"X-Request-Id": testBKToken, "Location": "https://paas.example.com/login/?bk_token=" + testBKToken}, false},
	{"body breaks off", map[string]string{"Content-Type": "application/json"}, true},
}

// fuzzServer answers every request with the current fuzzAnswer. Fuzz
// iterations run one at a time in a process, so one server serves them all.
type fuzzServer struct {
	*httptest.Server
	mu  sync.Mutex
	cur fuzzAnswer
}

func newFuzzServer(tb testing.TB) *fuzzServer {
	fs := &fuzzServer{}
	fs.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		fs.mu.Lock()
		a := fs.cur
		fs.mu.Unlock()
		for k, vs := range a.header {
			w.Header()[k] = vs
		}
		if a.truncate {
			w.Header().Set("Content-Length", strconv.Itoa(len(a.body)+64))
		}
		w.WriteHeader(a.status)
		_, _ = w.Write(a.body)
		if a.truncate {
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler) // hang up without the rest of the body
		}
	}))
	tb.Cleanup(fs.Close)
	return fs
}

func (fs *fuzzServer) answer(a fuzzAnswer) {
	fs.mu.Lock()
	fs.cur = a
	fs.mu.Unlock()
}

// FuzzResponseDecoding sends a grant through a real Client, over both
// transports, to a server answering a fuzzed status, header set and body,
// and checks what a caller relies on: no panic; a result or a typed error,
// never both or neither; a success only when the answer says success the
// way the package doc ("Answers and errors") defines it, with exactly the policies the answer
// lists; no secret in any error text, even when the answer echoes one; and
// an error short enough to read.
func FuzzResponseDecoding(f *testing.F) {
	docInstance := `{"code": 0, "message": "ok", "data": [{"action": {"id": "edit_host"}, "policy_id": 1}]}`
	docCreator := `{"data": [{"action": {"id": "edit"}, "policy_id": 1}, {"action": {"id": "list"}, "policy_id": 2},
		{"action": {"id": "delete"}, "policy_id": 3}, {"action": {"id": "view"}, "policy_id": 4}], "result": true, "code": 0, "message": "OK"}`
	unrelated := `{"result":true,"code":0,"message":"OK","data":[{"action":{"id":"edit_host"},"policy_id":12,"statistics":{"instance_count":2}},` +
		`{"action":{"id":"view_biz"},"policy_id":7,"statistics":{"instance_count":40}}]}`
	nginx := "<html>\n<head><title>502 Bad Gateway</title></head>\n<body>\n<center><h1>502 Bad Gateway</h1></center>\n<hr><center>nginx</center>\n</body>\n</html>\n"
	echo := `{"bk_app_code":"my-app","bk_app_secret":"` + testAppSecret + `","bk_token":"` + testBKToken + `"}`
	seeds := []struct {
		esb    bool
		status uint16
		choice uint8
		body   string
	}{
		// Successes as the docs and the real server write them.
		{false, 200, 0, docInstance},
		{true, 200, 0, docCreator},
		{false, 200, 0, okBody},
		{true, 200, 0, unrelated},
		{false, 200, 0, `{"result":true,"code":0,"message":"OK","data":null}`},
		{true, 200, 0, `{"result":true,"code":0,"message":"OK","data":[]}`},
		{false, 200, 5, `{"code":0,"message":"ok"}`},
		{true, 200, 0, `{"result":true,"code":0,"message":"OK","data":[{"action":{"id":"edit_host"},"policy_id":0}],"request_id":"0123456789abcdef0123456789abcdef"}`},
		// Refusals of each layer, some echoing the secrets.
		{false, 200, 0, `{"result":false,"code":1902412,"message":"{\"non_field_errors\": [\"maximum number of instance grant 200\"]}","data":null}`},
		{false, 403, 0, `{"result":false,"code":1902403,"message":"app_code my-app can not access system bk_cmdb (FORBIDDEN)","data":null}`},
		{true, 200, 0, `{"result":false,"code":1306000,"message":"APP Secret verification failed: ` + strings.ReplaceAll(echo, `"`, `'`) + `","data":null,"request_id":"` + testBKToken + `"}`},
		{false, 400, 3, `{"result":false,"code":1640001,"code_name":"INVALID_ARGS","message":"Parameters error","data":null}`},
		{false, 504, 4, `{"result":false,"code":1650401,"code_name":"UPSTREAM_TIMEOUT","message":"` + testBKToken + `","data":null}`},
		{false, 429, 0, `{"result":false,"code":1642902,"code_name":"RATE_LIMITED","message":"Request rate exceeds the limit","data":null}`},
		{true, 200, 0, `{"result":false,"code":1306429,"message":"rate limited","data":null,"request_id":"r"}`},
		{false, 500, 0, `{"result":false,"code":1902500,"message":"system error (SYSTEM_ERROR)","data":null}`},
		{false, 400, 0, `bad request: ` + echo},
		// Proxies, redirects and broken answers.
		{false, 502, 1, nginx},
		{true, 200, 1, "<html><body>login required</body></html>"},
		{false, 301, 7, ""},
		{false, 200, 7, `{"result":false,"code":1902401,"message":"unauthorized"}`},
		{true, 200, 8, okBody},
		{false, 200, 0, `{"result":true,"code":0,"data":[{"action":`},
		{true, 200, 0, ""},
		{false, 200, 2, "null"},
		{false, 200, 0, "[]"},
		{false, 200, 0, `"OK"`},
		{false, 200, 0, `{"result":true,"code":0,"data":[]} trailing`},
		// A success body under an error status or the gateway's error header is no success.
		{false, 500, 0, okBody}, {true, 401, 0, `{"code":0,"message":"ok","data":[]}`}, {false, 200, 3, okBody}, {false, 200, 4, okBody},
		{false, 200, 0, "\ufeff" + okBody},
		{false, 200, 0, strings.Repeat("[", 10000)},
		// Wrong types and huge numbers.
		{false, 200, 0, `{"result":true,"code":"0","message":"OK","data":[]}`},
		{true, 200, 0, `{"result":true,"code":"1902412","message":"quoted code"}`},
		{false, 200, 0, `{"result":"true","code":0,"data":[]}`},
		{false, 200, 0, `{"result":false,"code":0,"message":"OK","data":[]}`},
		{false, 200, 0, `{"result":true,"message":"OK","data":[]}`},
		{false, 200, 0, `{"result":true,"code":null,"data":[]}`},
		{false, 200, 0, `{"result":true,"code":0.0,"data":[]}`},
		{false, 200, 0, `{"result":true,"code":1e400,"data":[]}`},
		{false, 200, 0, `{"result":true,"code":18446744073709551616,"data":[]}`},
		{false, 200, 0, `{"result":true,"code":0,"data":{"policy_id":1}}`},
		{false, 200, 0, `{"result":true,"code":0,"data":[1,2]}`},
		{false, 200, 0, `{"result":true,"code":0,"data":"ok"}`},
		{false, 200, 0, `{"result":true,"code":0,"data":[null]}`},
		{false, 200, 0, `{"result":true,"code":0,"data":[{"action":"edit_host","policy_id":1}]}`},
		{false, 200, 0, `{"result":true,"code":0,"data":[{"action":{"id":"edit_host"},"policy_id":99999999999999999999}]}`},
		{false, 200, 0, `{"result":true,"code":0,"data":[{"action":{"id":"edit_host"},"policy_id":1e999}]}`},
		{false, 200, 0, `{"result":true,"code":0,"data":[{"action":{"id":"edit_host"},"policy_id":"12"}]}`},
		{false, 200, 0, `{"code":0,"message":"ok","data":{"metadata":{"system":"bk_cmdb"},"count":0,"results":null}}`},
		// Keys that differ from the documented ones only in case (testdata/fuzz has more).
		{false, 200, 0, `{"result":true,"code":0,"data":[{"action":{"id":"edit_host"},"policy_id":1,"Policy_ID":2}]}`},
	}
	for _, s := range seeds {
		f.Add(s.esb, s.status, s.choice, []byte(s.body))
	}

	fs := newFuzzServer(f)
	clients := map[bool]*Client{}
	for esb, cfg := range map[bool]Config{false: gatewayConfig(fs.URL), true: esbConfig(fs.URL)} {
		cfg.MaxRetries = 0 // one attempt: the answer under test is the final one
		// The gateway sends no bk_token, but one set in the configuration
		// must stay out of its errors too.
		cfg.BKToken = testBKToken
		c, err := New(cfg)
		if err != nil {
			f.Fatal(err)
		}
		clients[esb] = c
	}

	f.Fuzz(func(t *testing.T, esb bool, status uint16, choice uint8, body []byte) {
		a := fuzzAnswer{status: int(status), header: http.Header{}, body: body}
		if a.status < 200 || a.status > 599 {
			a.status = 200 + a.status%400 // informational answers are not final answers
		}
		hc := fuzzHeaderChoices[int(choice)%len(fuzzHeaderChoices)]
		for k, v := range hc.header {
			a.header.Set(k, v)
		}
		a.truncate = hc.truncate
		fs.answer(a)

		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		results, err := clients[esb].BatchInstance(ctx, grantReq())
		checkDecoded(t, a, results, err)
	})
}

// checkDecoded is the oracle of FuzzResponseDecoding. It reads the answer
// with its own token-level decoder and the rules of the package doc,
// "Answers and errors": the
// gateway's error header first, then the HTTP status, then the body, where
// success is code 0 with result true where present.
func checkDecoded(t *testing.T, a fuzzAnswer, results []PolicyResult, err error) {
	t.Helper()
	if err != nil {
		if results != nil {
			t.Fatalf("both a result %+v and an error %v", results, err)
		}
		checkError(t, a, err)
		return
	}
	if results == nil {
		t.Fatal("neither a result nor an error")
	}
	if why := notSuccess(a); why != "" {
		t.Fatalf("success with %d policies, but %s (HTTP %d, headers %v, body %q)", len(results), why, a.status, a.header, a.body)
	}
	// The body decodes (notSuccess checked it); the policies must be
	// exactly the reply's entries, in order.
	top, _ := decodeTree(a.body)
	data, _ := top.(object).get("data")
	if data == nil {
		if len(results) != 0 {
			t.Fatalf("%d policies from an answer without data: %q", len(results), a.body)
		}
		return
	}
	list, ok := data.([]any)
	if !ok {
		t.Fatalf("success although data is not a list: %q", a.body)
	}
	if len(list) != len(results) {
		t.Fatalf("%d policies from a reply that lists %d: %q", len(results), len(list), a.body)
	}
	for i, entry := range list {
		got := results[i]
		m, isObject := entry.(object)
		if entry != nil && !isObject {
			t.Fatalf("success although data[%d] is not an object: %q", i, a.body)
		}
		if !m.anyValue("policy_id", func(v any) bool { return isInt(v, got.PolicyID) }, got.PolicyID == 0) {
			t.Fatalf("policy %d has policy_id %d, which data[%d] does not list: %q", i, got.PolicyID, i, a.body)
		}
		actionOK := m.anyValue("action", func(v any) bool {
			am, _ := v.(object)
			return am.anyValue("id", func(id any) bool { return id == got.Action.ID }, got.Action.ID == "")
		}, got.Action.ID == "")
		if !actionOK {
			t.Fatalf("policy %d has action %q, which data[%d] does not list: %q", i, got.Action.ID, i, a.body)
		}
	}
	if want, ok := documentedSuccess(a); ok {
		for i := range want {
			if results[i].PolicyID != want[i].PolicyID || results[i].Action.ID != want[i].Action.ID ||
				results[i].Statistics.InstanceCount != want[i].Statistics.InstanceCount {
				t.Fatalf("policy %d is %+v, the reply says %+v", i, results[i], want[i])
			}
		}
	}
}

// checkError checks an error against the answer.
func checkError(t *testing.T, a fuzzAnswer, err error) {
	t.Helper()
	for e := err; e != nil; e = errors.Unwrap(e) {
		assertNoSecrets(t, e.Error())
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("an answer gave an untyped error %T: %v", err, err)
	}
	for _, field := range []string{e.Message, e.CodeName, e.Location, e.RequestID, e.GatewayRequestID} {
		assertNoSecrets(t, field)
	}
	msg := err.Error()
	if !strings.Contains(msg, "grant") {
		t.Errorf("the error does not name the operation: %q", msg)
	}
	if n := len([]rune(msg)); n > 4000 {
		t.Errorf("an error of %d characters: %.300q", n, msg)
	}
	// Every classification runs on every error; none may panic.
	for _, s := range []error{ErrValidation, ErrForbidden, ErrUnauthorized, ErrRateLimited, ErrTransient, ErrNotFound, ErrUnexpectedResponse} {
		_ = errors.Is(err, s)
	}
	_ = OutcomeUnknown(err)

	if documented, ok := documentedSuccess(a); ok {
		t.Fatalf("the documented success %q (%d policies) gave an error: %v", a.body, len(documented), err)
	}
	if a.truncate {
		return
	}
	if hc := strings.TrimSpace(a.header.Get("X-Bkapi-Error-Code")); hc != "" && hc != "0" {
		if e.Layer != LayerGateway {
			t.Errorf("the gateway's error header is blamed on %q: %v", e.Layer, err)
		}
		return
	}
	top, _ := decodeTree(a.body)
	if _, isObject := top.(object); a.status >= 300 && a.status < 400 || a.status < 300 && !isObject {
		if !errors.Is(err, ErrUnexpectedResponse) {
			t.Errorf("a redirect or a 2xx body that is not a JSON object is not ErrUnexpectedResponse: %v", err)
		}
	}
}

// notSuccess says why the answer is not a success ("" when it may be one):
// the gateway's error header, a status that is not 2xx, a broken or
// non-object body, a code other than 0 under the exact key "code", or a
// result that is not true. Of duplicate keys the last counts.
func notSuccess(a fuzzAnswer) string {
	if a.truncate {
		return "the body broke off"
	}
	if hc := strings.TrimSpace(a.header.Get("X-Bkapi-Error-Code")); hc != "" && hc != "0" {
		return "the gateway's error header says " + hc
	}
	if a.status < 200 || a.status > 299 {
		return "the status is " + strconv.Itoa(a.status)
	}
	tree, err := decodeTree(a.body)
	top, isObject := tree.(object)
	if err != nil || !isObject {
		return "the body is not one JSON object"
	}
	code, present := top.get("code")
	if !present {
		return "the body has no code"
	}
	switch c := code.(type) {
	case json.Number:
		if f, err := c.Float64(); err != nil || f != 0 {
			return "the code is " + c.String()
		}
	case string:
		// Some ESB components quote the code.
		if n, err := strconv.Atoi(c); err != nil || n != 0 {
			return "the code is " + strconv.Quote(c)
		}
	default:
		return "the code is not a number"
	}
	if r, _ := top.get("result"); r != nil && r != true {
		return "the result is not true"
	}
	return ""
}

// documentedSuccess reports whether the answer is a success in exactly
// the documented form (each key once, with the documented type, no other
// keys), and the policies it lists. Such an answer must decode.
func documentedSuccess(a fuzzAnswer) ([]PolicyResult, bool) {
	if hc := a.header.Get("X-Bkapi-Error-Code"); a.truncate || a.status != http.StatusOK || hc != "" && hc != "0" {
		return nil, false
	}
	tree, err := decodeTree(a.body)
	top, ok := tree.(object)
	if err != nil || !ok || !top.only("result", "code", "message", "data", "request_id") {
		return nil, false
	}
	if code, _ := top.get("code"); code != json.Number("0") {
		return nil, false
	}
	if r, present := top.get("result"); present && r != true {
		return nil, false
	}
	for _, k := range []string{"message", "request_id"} {
		if v, present := top.get(k); present {
			if _, isString := v.(string); !isString {
				return nil, false
			}
		}
	}
	out := []PolicyResult{}
	data, _ := top.get("data")
	if data == nil {
		return out, true
	}
	list, ok := data.([]any)
	if !ok {
		return nil, false
	}
	for _, entry := range list {
		p, ok := documentedPolicy(entry)
		if !ok {
			return nil, false
		}
		out = append(out, p)
	}
	return out, true
}

// documentedPolicy reads {"action":{"id":S},"policy_id":N[,"statistics":{"instance_count":N}]}.
func documentedPolicy(entry any) (PolicyResult, bool) {
	var p PolicyResult
	m, ok := entry.(object)
	if !ok || !m.only("action", "policy_id", "statistics") {
		return p, false
	}
	av, _ := m.get("action")
	action, ok := av.(object)
	if !ok || !action.only("id") {
		return p, false
	}
	id, _ := action.get("id")
	if p.Action.ID, ok = id.(string); !ok {
		return p, false
	}
	pv, _ := m.get("policy_id")
	n, ok := pv.(json.Number)
	if !ok {
		return p, false
	}
	var err error
	if p.PolicyID, err = strconv.ParseInt(n.String(), 10, 64); err != nil {
		return p, false
	}
	if sv, present := m.get("statistics"); present {
		st, ok := sv.(object)
		if !ok || !st.only("instance_count") {
			return p, false
		}
		cv, _ := st.get("instance_count")
		cn, ok := cv.(json.Number)
		if !ok {
			return p, false
		}
		c, err := strconv.ParseInt(cn.String(), 10, 32)
		if err != nil {
			return p, false
		}
		p.Statistics.InstanceCount = int(c)
	}
	return p, true
}

// object is a decoded JSON object that keeps every key in order,
// duplicates included, so the oracle can tell what each one said.
type object []member

type member struct {
	key   string
	value any
}

// get returns the value of the last member named exactly key.
func (o object) get(key string) (any, bool) {
	for i := len(o) - 1; i >= 0; i-- {
		if o[i].key == key {
			return o[i].value, true
		}
	}
	return nil, false
}

// only reports whether every member is one of keys, each at most once.
func (o object) only(keys ...string) bool {
	seen := map[string]bool{}
	for _, m := range o {
		if seen[m.key] || !slices.Contains(keys, m.key) {
			return false
		}
		seen[m.key] = true
	}
	return true
}

// anyValue reports whether a member whose name matches key in any case
// (encoding/json matches keys that way, so an entry may say "Policy_ID")
// has a value that satisfies ok. null leaves a Go field as it was, so
// with no non-null value the zero value counts, as zeroOK.
func (o object) anyValue(key string, ok func(any) bool, zeroOK bool) bool {
	matched := false
	for _, m := range o {
		if !strings.EqualFold(m.key, key) || m.value == nil {
			continue
		}
		matched = true
		if ok(m.value) {
			return true
		}
	}
	return !matched && zeroOK
}

// decodeTree decodes a body that is exactly one JSON value: objects as
// object, arrays as []any, numbers as json.Number.
func decodeTree(body []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	switch d := tok.(type) {
	case json.Delim:
		if d == '[' {
			list := []any{}
			for dec.More() {
				v, err := decodeValue(dec)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			}
			_, err := dec.Token()
			return list, err
		}
		obj := object{}
		for dec.More() {
			k, err := dec.Token()
			if err != nil {
				return nil, err
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			obj = append(obj, member{key: k.(string), value: v})
		}
		_, err := dec.Token()
		return obj, err
	}
	return tok, nil
}

func isInt(v any, want int64) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	got, err := strconv.ParseInt(n.String(), 10, 64)
	return err == nil && got == want
}

// TestOversizedAnswer: an answer past maxResponseBytes is cut off there
// and reported as unexpected, naming the limit, over both transports.
func TestOversizedAnswer(t *testing.T) {
	for name, cfg := range map[string]func(string) Config{"gateway": gatewayConfig, "esb": esbConfig} {
		t.Run(name, func(t *testing.T) {
			fs := newFakeServer(t, func(w http.ResponseWriter, _ *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				chunk := bytes.Repeat([]byte(" "), 1<<20)
				for written := 0; written <= maxResponseBytes; written += len(chunk) {
					if _, err := w.Write(chunk); err != nil {
						return // the client stopped reading
					}
				}
			})
			c := cfg(fs.URL)
			c.MaxRetries = 0
			// 32 MiB under -race on a loaded machine can take longer than the helpers' 5 s
			// attempt (seen in make test): the limit is what this test is about, not the time.
			c.Timeout = time.Minute
			results, err := mustClient(t, c).BatchInstance(context.Background(), grantReq())
			if err == nil || results != nil {
				t.Fatalf("an oversized answer gave %v, %v", results, err)
			}
			if !errors.Is(err, ErrUnexpectedResponse) || !strings.Contains(err.Error(), "exceeds 32 MiB") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}
