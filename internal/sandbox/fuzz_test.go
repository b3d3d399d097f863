package sandbox_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// fuzzMaxBody is the body limit of the fuzzed server: small, so that
// fuzzed bodies cross it.
const fuzzMaxBody = 2048

const adminAuth = `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"}`

// fuzzAuths are the credentials a fuzzed request carries. Only the first
// two get past the gateway or ESB checks.
var fuzzAuths = []struct {
	name string
	// header is X-Bkapi-Authorization ("" for none).
	header string
	// inBody splices the ESB credentials into the body (ESB only).
	inBody bool
}{
	{"header", adminAuth, false},
	{"ESB body", "", true},
	{"wrong secret", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"nope","bk_username":"admin"}`, false},
	{"garbage header", `{"bk_app_code":`, false},
}

// fuzzCodes are the codes a request to the authorization routes may get
// without faults: success, the SaaS's validation, JSON, argument,
// mismatch and permission errors, and the gateway's and ESB's credential
// checks. A 1902500 (or anything else) would be a sandbox bug.
var fuzzCodes = map[int]bool{0: true, 1902412: true, 1902414: true, 1902416: true, 1902417: true, 1902403: true,
	1640001: true, 1306000: true}

var hex32 = regexp.MustCompile(`^[0-9a-f]{32}$`)

// fuzzSetup are the grants every fuzzed request starts from, so that
// revokes have something to take away.
var fuzzSetup = []struct{ ep, body string }{
	{"batch_instance", instBody("grant", "user", "alice", []string{"edit_host", "view_host"}, "host", []string{"1", "2"}, "")},
	{"batch_instance", instBody("grant", "group", "1", []string{"view_host"}, "host", []string{"3"}, "")},
	{"batch_instance", combinedBody("grant", "bob", []string{"1"}, []string{"7"})},
	{"batch_path", pathCall("grant", "carol", []string{"h1"})},
	{"batch_resource_creator_action", strings.ReplaceAll(docCreatorAncestors, `"admin"`, `"alice"`)},
}

// FuzzAuthorization sends a fuzzed body through either transport to each
// authorization route, with good or bad credentials, and checks that the
// server never crashes and answers every body in its envelope: a known
// code, result true exactly on success, a message that says what is wrong
// (a JSON error for a body that is not JSON, "exceeds N bytes" for a body
// over the limit); that the stats count the request and its failure; and
// that a request that failed changed nothing in the store.
//
// The seeds run with every `go test`; `go test -fuzz FuzzAuthorization`
// explores further; testdata/fuzz/FuzzAuthorization holds inputs found so.
func FuzzAuthorization(f *testing.F) {
	instances := make([]string, 100)
	for i := range instances {
		instances[i] = strconv.Itoa(i)
	}
	oversized := instBody("grant", "user", "alice", []string{"edit_host"}, "host", instances, "")
	seeds := []struct {
		body  string
		which uint8 // bit 0: ESB; bits 1-2: endpoint; bits 3-4: credentials; bit 5: small limits
	}{
		// The documented requests and the setup's own calls, as revokes too.
		{docBatchInstance, 0}, {docCreatorAncestors, 4}, {docCreatorNoAncestors, 5},
		{pathCall("grant", "alice", []string{"1"}), 2}, {combinedBody("revoke", "bob", []string{"1"}, []string{"7"}), 1},
		{hostRevoke("alice", "1"), 0}, {pathCall("revoke", "carol", []string{"h1"}), 3},
		{instBody("grant", "group", "1", []string{"view_host"}, "host", []string{"3"}, `,"expired_at":4102444800`), 8 | 1},
		// Malformed JSON.
		{``, 0}, {`{`, 1}, {`{"system":`, 2}, {`{"a":1}{"b":2}`, 1}, {`{"a":1} x`, 4}, {"\x00\xff", 0},
		{`nul`, 0}, {`{"system":"bk_cmdb",}`, 1}, {strings.Repeat("[", 1000) + strings.Repeat("]", 1000), 0},
		// Wrong types.
		{`{}`, 0}, {`[]`, 1}, {`null`, 2}, {`"grant"`, 4}, {`42`, 5},
		{`{"system":1,"operate":true,"subject":"alice","actions":{"id":"edit_host"},"resources":"host"}`, 0},
		{`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":["alice"]},"actions":[{"id":1}],"resources":[{"system":"bk_cmdb","type":"host","instances":{"id":"1"}}]}`, 1},
		{`{"system":"bk_cmdb","operate":"grant","subject":{"type":"group","id":"x"},"actions":[{"id":"edit_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":{},"name":true}]}],"expired_at":"soon"}`, 0},
		{`{"system":"bk_sops","type":"mini_app","creator":"alice","instances":[{"id":"m1","name":"m","ancestors":{"id":"project1"}}]}`, 4},
		{`{"resources":[{"paths":[[1]]}]}`, 2}, {`{"resources":[{"paths":[[]]}]}`, 3},
		// Huge numbers and a body over the limit.
		{`{"system":"bk_cmdb","operate":"grant","subject":{"type":"user","id":"alice"},"actions":[{"id":"edit_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":1e999,"name":"n"}]}],"expired_at":1e999}`, 0},
		{`{"system":"bk_cmdb","operate":"revoke","subject":{"type":"group","id":"99999999999999999999999"},"actions":[{"id":"view_host"}],"resources":[{"system":"bk_cmdb","type":"host","instances":[{"id":"3","name":"n"}]}]}`, 1},
		{oversized, 0}, {oversized, 1}, {oversized, 8 | 1},
		// The limits of the small model: per call, per id, per policy.
		{hostGrant("alice", "3", "4", "5", "6"), 32}, {hostRevoke("alice", "1", "2", "3", "4", "5"), 32 | 1},
		{hostGrant("alice", "12345678901"), 32}, {hostGrant("alice", "3", "4", "5"), 32 | 1}, {hostGrant("alice", "3", "4"), 32},
		// Bad credentials with a good body.
		{hostGrant("alice", "9"), 16}, {hostGrant("alice", "9"), 16 | 1}, {hostGrant("alice", "9"), 24}, {hostGrant("alice", "9"), 24 | 1},
	}
	if len(oversized) <= fuzzMaxBody {
		f.Fatalf("the oversized seed has only %d bytes", len(oversized))
	}
	for _, seed := range seeds {
		f.Add(seed.body, seed.which)
	}
	models := []*sandbox.Model{sandbox.DefaultModel(), smallLimits(f)}
	eps := []string{"batch_instance", "batch_path", "batch_resource_creator_action"}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		// A fresh server each time, so that an input found failing fails again on its own.
		s := newServer(t, sandbox.WithModel(models[which>>5&1]), sandbox.WithMaxBodyBytes(fuzzMaxBody))
		for _, setup := range fuzzSetup {
			wantOK(t, send(t, s, gw, setup.ep, setup.body))
		}
		tr := gw
		if which&1 == 1 {
			tr = esb
		}
		ep := eps[int(which>>1&3)%3]
		auth := fuzzAuths[int(which>>3&3)]
		if auth.inBody && tr == esb {
			body = withESBBodyCredentials(body)
		}
		req := httptest.NewRequest(http.MethodPost, route(tr, ep), strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		header := auth.header
		if auth.inBody && tr == gw {
			header = goodAuth // the gateway reads only the header
		}
		if header != "" {
			req.Header.Set("X-Bkapi-Authorization", header)
		}

		before, stats := policies(t, s, all), s.Stats()
		r := serve(t, s, req)
		after, statsAfter := policies(t, s, all), s.Stats()
		checkEnvelope(t, tr, r)
		code := r.code()
		if code != 0 && after != before {
			t.Fatalf("a failed request (code %d: %s) changed the store:\nbefore %s\nafter  %s", code, r.message(), before, after)
		}
		failed := 0
		if code != 0 {
			failed = 1
		}
		if statsAfter.Total != stats.Total+1 || statsAfter.Errors != stats.Errors+failed {
			t.Fatalf("stats went from %+v to %+v for code %d", stats, statsAfter, code)
		}
		if code == 1640001 || code == 1306000 {
			// Refused before the SaaS reads the body. ESB credentials in a body
			// over the limit end here too: ESB cannot read them.
			return
		}

		exceeds := "JSON parse error - request body exceeds " + strconv.Itoa(fuzzMaxBody) + " bytes (JSON_FORMAT_ERROR)"
		switch {
		case len(body) > fuzzMaxBody:
			if code != 1902414 || r.message() != exceeds {
				t.Fatalf("a body of %d bytes, over the limit %d: code %d %q", len(body), fuzzMaxBody, code, r.message())
			}
		case !json.Valid([]byte(body)):
			if code != 1902414 || !strings.HasPrefix(r.message(), "JSON parse error - ") || r.message() == exceeds {
				t.Fatalf("a body that is not JSON: code %d %q", code, r.message())
			}
		case code == 1902414:
			t.Fatalf("valid JSON of %d bytes answered as a JSON error: %q", len(body), r.message())
		case code == 1902412 && strings.HasPrefix(r.message(), "{"):
			// Field errors are the JSON object of the serializer's errors, as the real server sends.
			var v map[string]any
			if err := json.Unmarshal([]byte(r.message()), &v); err != nil || len(v) == 0 {
				t.Fatalf("validation message is not a JSON object of field errors: %q", r.message())
			}
		}
	})
}

// smallLimits is the default model with limits that a fuzzed body of at
// most fuzzMaxBody bytes can cross: 3 instances per grant, 4 per revoke,
// ids of 10 characters, 4 instances per policy.
func smallLimits(tb testing.TB) *sandbox.Model {
	b, err := json.Marshal(sandbox.DefaultModel())
	if err != nil {
		tb.Fatal(err)
	}
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		tb.Fatal(err)
	}
	raw["limits"] = map[string]int{"grant_instances": 3, "revoke_instances": 4, "instance_id_length": 10, "policy_instances": 4}
	if b, err = json.Marshal(raw); err != nil {
		tb.Fatal(err)
	}
	return loadModel(tb, string(b))
}

// checkEnvelope checks the answer's envelope, whatever the request: a
// known code; success exactly when the code is 0, with data a list and
// message "OK"; a failure with data null and a message; and the marks of
// the transport: on ESB HTTP 200 and a request_id, on the gateway its
// request id header, and its error header on its own failures.
func checkEnvelope(t *testing.T, tr string, r response) {
	t.Helper()
	n, isNumber := r.body["code"].(float64)
	code := int(n)
	// 1902500 is the real server's answer to a grant to an unknown group (the package doc of
	// internal/bkiam, "Writing"), and only that.
	unknownGroup := code == 1902500 && strings.Contains(fmt.Sprint(r.body["message"]), "granting to group[")
	if !isNumber || !fuzzCodes[code] && !unknownGroup {
		t.Fatalf("code %v is not one this request can get: %s", r.body["code"], r.raw)
	}
	msg, _ := r.body["message"].(string)
	if code == 0 {
		if _, isList := r.body["data"].([]any); r.body["result"] != true || msg != "OK" || !isList || r.status != http.StatusOK {
			t.Fatalf("a success in the wrong form: HTTP %d %s", r.status, r.raw)
		}
	} else if r.body["result"] != false || strings.TrimSpace(msg) == "" || r.body["data"] != nil {
		t.Fatalf("a failure without result false, a message and data null: %s", r.raw)
	}
	if tr == esb {
		if id, _ := r.body["request_id"].(string); r.status != http.StatusOK || !hex32.MatchString(id) {
			t.Fatalf("an ESB answer without HTTP 200 and a request_id: HTTP %d %s", r.status, r.raw)
		}
		return
	}
	if r.header.Get("X-Bkapi-Request-Id") == "" {
		t.Fatalf("a gateway answer without X-Bkapi-Request-Id: %s", r.raw)
	}
	if gwErr := r.header.Get("X-Bkapi-Error-Code"); (code >= 1600000 && code < 1700000) != (gwErr == strconv.Itoa(code)) {
		t.Fatalf("X-Bkapi-Error-Code %q on code %d", gwErr, code)
	}
}

// withESBBodyCredentials puts the ESB credentials first in a body that
// starts as a JSON object, leaving the rest exactly as fuzzed.
func withESBBodyCredentials(body string) string {
	const creds = `"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"`
	trimmed := strings.TrimLeft(body, " \t\r\n")
	if !strings.HasPrefix(trimmed, "{") {
		return body
	}
	rest := trimmed[1:]
	if strings.HasPrefix(strings.TrimLeft(rest, " \t\r\n"), "}") {
		return "{" + creds + rest
	}
	return "{" + creds + "," + rest
}

// endless is a request body that never ends: the server must stop reading
// it at its limit and answer.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	e.read += int64(len(p))
	return len(p), nil
}

// TestOversizedBodies: a body over the limit, even one that never ends,
// gets a JSON error that names the limit, through both transports and all
// routes, and changes nothing; the server reads little past the limit.
func TestOversizedBodies(t *testing.T) {
	const limit = 10 << 20 // the default
	eps := []string{"batch_instance", "batch_path", "batch_resource_creator_action"}
	for _, tr := range []string{gw, esb} {
		for _, ep := range eps {
			t.Run(tr+" "+ep, func(t *testing.T) {
				s := newServer(t)
				wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))
				before := policies(t, s, all)
				body := &endless{}
				req := httptest.NewRequest(http.MethodPost, route(tr, ep), body)
				req.Header.Set("X-Bkapi-Authorization", adminAuth)
				r := serve(t, s, req)
				wantSaaSError(t, tr, r, 200, 1902414, "JSON parse error - request body exceeds 10485760 bytes (JSON_FORMAT_ERROR)")
				if body.read > limit+1<<20 {
					t.Errorf("the server read %d bytes of an endless body, limit %d", body.read, limit)
				}
				if after := policies(t, s, all); after != before {
					t.Errorf("an oversized request changed the store")
				}
			})
		}
	}

	// Over a real connection the client gets the answer while still sending.
	s := newServer(t, withMaxBody(64<<10))
	srv := httptest.NewServer(s)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pr, pw := io.Pipe()
	go func() {
		_, _ = io.Copy(pw, &endless{}) // ends when the client closes the request body
	}()
	defer pw.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+route(gw, "batch_instance"), pr)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Bkapi-Authorization", goodAuth)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("no answer to an endless body: %v", err)
	}
	defer resp.Body.Close()
	var got map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&got); err != nil {
		t.Fatal(err)
	}
	if got["code"] != float64(1902414) || got["message"] != "JSON parse error - request body exceeds 65536 bytes (JSON_FORMAT_ERROR)" {
		t.Fatalf("answer to an endless body: %v", got)
	}
}
