package bkiam

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
)

// TestGradeManagersSandbox drives the grade-manager calls against the sandbox as the real server
// behaves (package doc, "The management API"): ownership by the creating system, a name taken
// (409), the full-replace update, the 403 of a gone grade manager, a delete carried out later.
func TestGradeManagersSandbox(t *testing.T) {
	m := sandbox.DefaultModel()
	m.Limits.GradeManagerDeleteDelayMS = 300
	sb := sandboxtest.Start(t, sandbox.WithModel(m))
	c := sandboxClient(t, sb.URL)
	ctx := context.Background()
	spec := GradeManagerSpec{Name: "ops", Members: []string{"alice"},
		AuthorizationScopes: []AuthorizationScope{{System: "bk_cmdb", Actions: []Action{{ID: "view_host"}}, Resources: []PathResource{}}},
		SubjectScopes:       []SubjectScope{{Type: "*", ID: "*"}}, SyncPerm: true}

	id, err := c.CreateGradeManager(ctx, "bk_cmdb", spec)
	if err != nil || id <= 0 {
		t.Fatalf("create: %d %v", id, err)
	}
	gm, err := c.GradeManager(ctx, "bk_cmdb", id)
	if err != nil || gm.Name != "ops" || !gm.SyncPerm || len(gm.Members) != 1 {
		t.Fatalf("get: %+v %v", gm, err)
	}
	if _, err := c.CreateGradeManager(ctx, "bk_job", GradeManagerSpec{Name: "OPS", Members: []string{}, Description: "",
		AuthorizationScopes: spec.AuthorizationScopes, SubjectScopes: spec.SubjectScopes}); !errors.Is(err, ErrConflict) {
		t.Fatalf("a name taken, in any case and any system: %v", err)
	}
	if _, err := c.GradeManager(ctx, "bk_job", id); !errors.Is(err, ErrNotOwned) {
		t.Fatalf("another system's grade manager: %v", err)
	}
	spec.Description, spec.SyncPerm = "the ops team", false
	if err := c.UpdateGradeManager(ctx, "bk_cmdb", id, spec); err != nil {
		t.Fatal(err)
	}
	if gm, _ := c.GradeManager(ctx, "bk_cmdb", id); gm.Description != "the ops team" || gm.SyncPerm {
		t.Fatalf("after the update: %+v", gm)
	}
	bad := spec
	bad.SubjectScopes = nil
	if err := c.UpdateGradeManager(ctx, "bk_cmdb", id, bad); !errors.Is(err, ErrValidation) || !strings.Contains(err.Error(), "subject_scopes") {
		t.Fatalf("an update without subject_scopes: %v", err)
	}

	if err := c.DeleteGradeManager(ctx, "bk_cmdb", id); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GradeManager(ctx, "bk_cmdb", id); err != nil {
		t.Fatalf("IAM deletes later: right after the delete the grade manager is still there: %v", err)
	}
	if err := c.DeleteGradeManager(ctx, "bk_cmdb", id); err != nil {
		t.Fatalf("a repeat delete before it is carried out: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := c.GradeManager(ctx, "bk_cmdb", id)
		if errors.Is(err, ErrNotOwned) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the grade manager was never deleted: %v", err)
		}
		time.Sleep(50 * time.Millisecond)
	}

	outsider := mustClient(t, Config{APIGatewayURL: sb.URL, AppCode: "outsider", AppSecret: "outsider-secret", MaxRetries: 0})
	if _, err := outsider.CreateGradeManager(ctx, "bk_cmdb", spec); !errors.Is(err, ErrForbidden) || errors.Is(err, ErrNotOwned) {
		t.Fatalf("an app that is not a client: %v", err)
	}
}
