package sharedgrants

import (
	"fmt"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/ledger"
)

// TestKeptClaims: a replacement's destroy leaves what the new object
// grants again, per action, but not where the new object lowers the
// expiry (IAM would keep the old, later one).
func TestKeptClaims(t *testing.T) {
	alice := ledger.Scope{System: "bk_cmdb", SubjectType: "user", SubjectID: "alice"}
	bob := ledger.Scope{System: "bk_cmdb", SubjectType: "user", SubjectID: "bob"}
	claims := func(s ledger.Scope, actions map[string]ledger.Action) ledger.Claims {
		return ledger.Claims{Scope: s, Actions: actions}
	}
	for _, tc := range []struct {
		name         string
		before, next ledger.Claims
		want         string
	}{
		{"paths both name", claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/", "/2/"}, ExpiresAt: 5}}),
			claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/2/", "/3/"}, ExpiresAt: 5}}), "map[view:[/2/]]"},
		{"a raised expiry", claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/"}, ExpiresAt: 5}}),
			claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/"}, ExpiresAt: 9}}), "map[view:[/1/]]"},
		{"a lowered expiry", claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/"}, ExpiresAt: 9}, "edit": {Paths: []string{"/1/"}, ExpiresAt: 9}}),
			claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/"}, ExpiresAt: 5}, "edit": {Paths: []string{"/1/"}, ExpiresAt: 9}}), "map[edit:[/1/]]"},
		{"another action", claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/"}}}),
			claims(alice, map[string]ledger.Action{"edit": {Paths: []string{"/1/"}}}), "map[]"},
		{"another subject", claims(alice, map[string]ledger.Action{"view": {Paths: []string{"/1/"}}}),
			claims(bob, map[string]ledger.Action{"view": {Paths: []string{"/1/"}}}), "map[]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string][]string{}
			for action, a := range keptClaims(tc.before, tc.next).Actions {
				got[action] = a.Paths
			}
			if fmt.Sprint(got) != tc.want {
				t.Errorf("kept %v, want %s", got, tc.want)
			}
		})
	}
}
