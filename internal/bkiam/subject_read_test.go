package bkiam

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// What a real IAM answered (testdata/realiam), read by GetPolicy.

func realAnswer(t testing.TB, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "realiam", name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestGetPolicyRecorded(t *testing.T) {
	hostEdit := `{"content":[{"field":"host.id","op":"in","value":["h6","h7"]},{"field":"host._bk_iam_path_","op":"starts_with","value":"/biz,1/"}],"op":"OR"}`
	for _, tc := range []struct {
		name, file string
		id         int64
		want       Policy
		is         []error // the error's sentinels; none for success
	}{
		{"a row", "policy_get_12.json", 12, Policy{ID: 12, Subject: Subject{Type: "user", ID: "carol"}, SubjectName: "Carol",
			Action: "host_edit", Expression: json.RawMessage(hostEdit), ExpiredAt: 4102444800}, nil},
		{"an expired row", "policy_get_expired.json", 16, Policy{ID: 16, Subject: Subject{Type: "user", ID: "carol"}, SubjectName: "Carol",
			Action: "biz_view", Expression: json.RawMessage(`{"field":"biz.id","op":"eq","value":"5"}`), ExpiredAt: 1795904098}, nil},
		{"an id that does not exist", "policy_get_missing.json", 99, Policy{}, []error{ErrPolicyNotFound, ErrNotFound}},
		{"a system the app is not a client of", "policy_get_other_system.json", 12, Policy{}, []error{ErrForbidden}},
		{"an answer for another id", "policy_get_12.json", 13, Policy{}, []error{ErrUnexpectedResponse}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := newFakeServer(t, reply(http.StatusOK, realAnswer(t, tc.file)))
			c := mustClient(t, gatewayConfig(fs.URL))
			got, err := c.GetPolicy(context.Background(), "bk_tfdemo", tc.id)
			for _, target := range tc.is {
				if !errors.Is(err, target) {
					t.Errorf("error %v, want it to be %v", err, target)
				}
			}
			if len(tc.is) > 0 {
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got.Expression = compactJSON(t, got.Expression)
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("policy\n %+v\nwant\n %+v", got, tc.want)
			}
			if r := fs.requests()[0]; r.Method != http.MethodGet || r.Path != fmt.Sprintf("/api/bk-iam/prod/api/v1/systems/bk_tfdemo/policies/%d", tc.id) {
				t.Errorf("sent %s %s", r.Method, r.Path)
			}
		})
	}
	esb := mustClient(t, esbConfig("http://127.0.0.1:1"))
	if _, err := esb.GetPolicy(context.Background(), "bk_tfdemo", 12); !errors.Is(err, ErrReadNeedsGateway) {
		t.Errorf("through ESB: %v", err)
	}
	gw := mustClient(t, gatewayConfig("http://127.0.0.1:1"))
	if _, err := gw.GetPolicy(context.Background(), "bk_tfdemo", 0); !errors.Is(err, ErrValidation) {
		t.Errorf("id 0: %v", err)
	}
}

func compactJSON(t *testing.T, raw json.RawMessage) json.RawMessage {
	t.Helper()
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	return b
}
