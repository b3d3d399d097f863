package sandbox_test

import (
	"encoding/json"
	"testing"
)

// FuzzAuthorization checks that no body crashes the server or escapes the envelopes. The seeds run
// with every `go test`; `go test -fuzz FuzzAuthorization` explores further.
func FuzzAuthorization(f *testing.F) {
	for _, seed := range []string{docBatchInstance, docCreatorAncestors, docCreatorNoAncestors, `{}`, `[]`, `null`, `{"resources":[{"paths":[[1]]}]}`,
		pathCall("grant", "alice", []string{"1"}), combinedBody("revoke", "alice", []string{"1"}, nil)} {
		f.Add(seed, uint8(0))
	}
	s := newServer(f)
	eps := []string{"batch_instance", "batch_path", "batch_resource_creator_action"}
	f.Fuzz(func(t *testing.T, body string, which uint8) {
		tr := gw
		if which&1 == 1 {
			tr = esb
		}
		r := send(t, s, tr, eps[int(which>>1)%3], body, "X-Bkapi-Authorization", `{"bk_app_code":"bkiam-sandbox","bk_app_secret":"sandbox-secret","bk_username":"admin"}`)
		if _, ok := r.body["code"]; !ok {
			t.Fatalf("no code: %s", r.raw)
		}
		if r.code() == 1902412 {
			var v any
			if err := json.Unmarshal([]byte(r.message()), &v); err != nil && r.message()[0] == '{' {
				t.Fatalf("validation message is not JSON: %s", r.message())
			}
		}
	})
}
