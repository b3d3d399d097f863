package sandbox_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

func TestStatePersistsAcrossRestarts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, sandbox.WithStateFile(path)) // the file does not exist yet: empty store, file created
	if b, err := os.ReadFile(path); err != nil || !strings.Contains(string(b), `"policies":[]`) {
		t.Fatalf("missing state file not created empty: %v %s", err, b)
	}
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1", "2")))
	wantOK(t, send(t, s, gw, "batch_instance", combinedBody("grant", "bob", []string{"1"}, []string{"2"})))
	wantOK(t, send(t, s, gw, "batch_resource_creator_action", strings.ReplaceAll(docCreatorAncestors, `"admin"`, `"alice"`)))
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("carol", "1")))
	wantOK(t, send(t, s, gw, "batch_instance", hostRevoke("carol", "1"))) // policy 5 deleted
	before := policies(t, s, all)

	s2 := newServer(t, sandbox.WithStateFile(path))
	if got := policies(t, s2, all); got != before {
		t.Fatalf("after restart:\n got %s\nwant %s", got, before)
	}
	// The sequences continue: the next policy gets a fresh id.
	r := send(t, s2, gw, "batch_instance", hostGrant("dave", "1"))
	wantOK(t, r)
	if e, _ := findEntry(r.entries(t), "edit_host"); e.PolicyID != 6 {
		t.Fatalf("id after restart: %s", r.raw)
	}
	// No temp files are left behind.
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Fatalf("state dir holds %d entries", len(entries))
	}
	// Reset empties the file too.
	if err := s2.Reset(); err != nil {
		t.Fatal(err)
	}
	if got := policies(t, newServer(t, sandbox.WithStateFile(path)), all); got != noPolicies {
		t.Fatalf("after reset and restart: %s", got)
	}
}

// Every kind of row survives a restart: a user's template row (as an older IAM granted templates
// to users) once made the state file unloadable.
func TestStateKeepsEveryKindOfRow(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, sandbox.WithStateFile(path))
	for _, tp := range []sandbox.TemplatePolicy{
		{TemplateID: 7, Group: "1", Action: "edit_host", Paths: []string{"/bk_cmdb,host,9/"}},
		{TemplateID: 8, User: "alice", Action: "edit_host"},
	} {
		if err := s.AddTemplatePolicy("bk_cmdb", tp); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.AddExpressionPolicy("bk_cmdb", sandbox.ExpressionPolicy{Subject: sandbox.Subject{Type: "user", ID: "bob"},
		Action: "view_host", Expression: []byte(`{"field":"host.os","op":"eq","value":"linux"}`)}); err != nil {
		t.Fatal(err)
	}
	before := policies(t, s, all)
	s2, err := sandbox.New(sandbox.WithNow(func() time.Time { return fixedNow }), sandbox.WithStateFile(path))
	if err != nil {
		t.Fatal(err)
	}
	if got := policies(t, s2, all); got != before {
		t.Fatalf("after a restart:\n got %s\nwant %s", got, before)
	}
}

func TestCorruptStateIsAnError(t *testing.T) {
	dir := t.TempDir()
	cases := map[string]string{
		"torn":      `{"version":1,"next_policy_id":2,"policies":[{"policy_id":1`,
		"empty":     ``,
		"version":   `{"version":9,"next_policy_id":1,"next_backend_id":1001,"policies":[]}`,
		"sequences": `{"version":1,"next_policy_id":1,"next_backend_id":1001,"policies":[{"policy_id":1,"backend_id":1001,"system":"bk_cmdb","subject":{"type":"user","id":"alice"},"action":"edit_host","expired_at":1,"any":true}]}`,
	}
	for name, content := range cases {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(dir, name+".json")
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			_, err := sandbox.New(sandbox.WithStateFile(path))
			if err == nil || !strings.Contains(err.Error(), "corrupt") || !strings.Contains(err.Error(), path) {
				t.Fatalf("want a corrupt-state error naming the file, got %v", err)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("the corrupt file was modified")
			}
		})
	}
	// An unreadable path (a directory) is an error too, not an empty store; so is a missing file in a
	// directory that does not exist (it cannot be created).
	if _, err := sandbox.New(sandbox.WithStateFile(dir)); err == nil {
		t.Fatal("a directory as state file was accepted")
	}
	if _, err := sandbox.New(sandbox.WithStateFile(filepath.Join(dir, "nope", "state.json"))); err == nil || !strings.Contains(err.Error(), "create state") {
		t.Fatalf("an uncreatable state file was accepted: %v", err)
	}
}

func TestFailedSaveChangesNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "state.json")
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o700); err != nil {
		t.Fatal(err)
	}
	s := newServer(t, sandbox.WithStateFile(path))
	wantOK(t, send(t, s, gw, "batch_instance", hostGrant("alice", "1")))
	before := policies(t, s, all)
	// Make the directory unusable: the save fails, the grant answers 1902500 and is rolled back.
	if err := os.RemoveAll(filepath.Join(dir, "sub")); err != nil {
		t.Fatal(err)
	}
	r := send(t, s, gw, "batch_instance", hostGrant("alice", "2"))
	if r.status != 500 || r.code() != 1902500 {
		t.Fatalf("want 500/1902500, got %s", r.raw)
	}
	if got := policies(t, s, all); got != before {
		t.Fatalf("store changed by a failed save:\n%s\n%s", got, before)
	}
}

func TestConcurrentGrants(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.json")
	s := newServer(t, sandbox.WithStateFile(path))
	var wg sync.WaitGroup
	users := []string{"alice", "bob", "carol", "dave"}
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			u := users[i%len(users)]
			tr := gw
			if i%2 == 1 {
				tr = esb
			}
			r := send(t, s, tr, "batch_instance", hostGrant(u, ids("h", i+1)...))
			if r.code() != 0 {
				t.Errorf("grant: %s", r.raw)
			}
			_ = s.Policies(sandbox.PolicyFilter{SubjectID: u})
			_ = s.Stats()
			if i%5 == 0 {
				_ = s.SetFaults(sandbox.Faults{})
			}
		}(i)
	}
	wg.Wait()
	got := s.Policies(all)
	if len(got.Policies) != 4 {
		t.Fatalf("policies: %+v", got)
	}
	for _, p := range got.Policies {
		// user k took calls k, k+4, …: the largest carried 37+k instances, a superset of the others.
		if len(p.Paths) != 37+indexOf(users, p.Subject.ID) {
			t.Fatalf("%s holds %d paths", p.Subject.ID, len(p.Paths))
		}
	}
	if s.Stats().Total != 40 {
		t.Fatalf("stats %+v", s.Stats())
	}
	if restarted := policies(t, newServer(t, sandbox.WithStateFile(path)), all); restarted != policies(t, s, all) {
		t.Fatal("state file does not match memory after concurrent writes")
	}
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
