package conns_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/conns"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestUserGroupCache: each user's groups are read once, however many
// read them at once; the caller's slice is its own; a failed read (an
// unknown user, a refused call) is not kept, and the next read asks again.
func TestUserGroupCache(t *testing.T) {
	sb := sandboxtest.Start(t)
	client, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret, MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cache := conns.NewUserGroupCache(client)
	calls := func() int { return sb.Stats().Requests["user_groups"] }

	var wg sync.WaitGroup
	for range 8 {
		for _, user := range []string{"alice", "bob"} {
			wg.Go(func() {
				groups, err := cache.Get(ctx, user)
				if err != nil || groups == nil {
					t.Errorf("%s: %v, %v; want no groups, no error", user, groups, err)
				}
			})
		}
	}
	wg.Wait()
	if n := calls(); n != 2 {
		t.Errorf("16 concurrent reads of two users made %d calls, want 2", n)
	}

	for range 2 {
		if _, err := cache.Get(ctx, "zed"); !errors.Is(err, bkiam.ErrUnknownSubject) {
			t.Errorf("an unknown user: %v, want ErrUnknownSubject", err)
		}
	}
	if n := calls(); n != 4 {
		t.Errorf("two reads of an unknown user made %d calls, want 2 (not kept)", n-2)
	}

	if err := sb.SetFaults(sandbox.Faults{Fail: &sandbox.FailFault{Count: 1, Status: 403, Code: 1640301}}); err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Get(ctx, "carol"); err == nil {
		t.Fatal("a refused read of carol's groups: no error")
	}
	if _, err := cache.Get(ctx, "carol"); err != nil {
		t.Errorf("carol's groups after a refused read: %v, want them read again", err)
	}
	if _, err := cache.Get(ctx, "carol"); err != nil || calls() != 6 {
		t.Errorf("carol's groups, a third time: %v, after %d calls in all, want 6", err, calls())
	}
}

// TestGroupCheck: whether IAM knows a group, from the backend's policy
// query (its debug output names the subject's key, or nothing for a
// subject IAM does not know), asked once per group and process.
func TestGroupCheck(t *testing.T) {
	sb := sandboxtest.Start(t)
	client, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	check := conns.NewGroupCheck(client, nil)
	for _, tc := range []struct {
		group string
		known bool
	}{{"1", true}, {"987654", false}, {"1", true}, {"987654", false}} {
		known, err := check.Known(ctx, "bk_cmdb", tc.group, "view_host")
		if err != nil || known != tc.known {
			t.Errorf("group %s: known %v, %v; want %v", tc.group, known, err, tc.known)
		}
	}
	if n := sb.Stats().Requests["policy_query_by_actions"]; n != 2 {
		t.Errorf("four checks of two groups asked IAM %d times, want 2", n)
	}
}
