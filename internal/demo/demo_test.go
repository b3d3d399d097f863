package demo

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccDemo runs the whole demo, as make demo does, and checks that it
// shows every step a newcomer is promised.
func TestAccDemo(t *testing.T) {
	opts := Options{
		Terraform:   testutil.Terraform(t),
		ProviderDir: testutil.BuildProvider(t),
		Examples:    filepath.Join(testutil.RepoRoot(t), "examples"),
		Listen:      "127.0.0.1:0",
	}
	var out bytes.Buffer
	if err := Run(context.Background(), opts, &out); err != nil {
		t.Fatalf("the demo failed: %v\n%s", err, out.String())
	}
	c := testutil.CLI(t)
	cli := c.Name // terraform or tofu
	for _, want := range []string{
		c.String() + " (" + opts.Terraform + ") uses the provider built in",
		"==> 1. " + cli + " apply",
		"$ " + cli + " apply -no-color -auto-approve",
		"Apply complete! Resources: 10 added, 0 changed, 0 destroyed.",
		// The apply's second process asks IAM about a user's actions unless
		// a write of that process came first (a creator grant writes every
		// action of its creator): how many depends on Terraform's order, and
		// is checked below.
		"The apply cost 13 IAM calls: 4 batch_instance:grant, 2 batch_resource_creator_action, 1 grade_manager:create, " +
			"1 group:create, 1 group_policy:grant, 2 member:add, 2 member:list (and 6 model reads and 16 policy-list pages and ",
		"SUBJECT", "group 1", "mini_app_view", "project project1 › mini_app mini_app1",
		"GRADE MANAGER", "1 sre", "4 sre-oncall", "user bob    2030-06-30",
		// A member's effective access, through the group's permissions.
		"MEMBER      THROUGH GROUP  SYSTEM   ACTION     INSTANCES",
		"user bob    4 sre-oncall   bk_cmdb  view_host  host 1, host 2, host 3, host 4",
		"Plan: 0 to add, 3 to change, 0 to destroy.",
		"The change cost 5 IAM calls: 2 batch_instance:grant, 1 member:add, 1 member:delete, 1 member:list (and 1 model read and 2 user queries for the plan-time checks).",
		"user dave   4 sre-oncall   bk_cmdb  edit_host  host 1, host 2, host 3, host 4",
		"No changes.",
		// The management resources are exactly readable: their refresh reads them.
		"The plan cost 4 IAM calls: 1 grade_manager:get, 1 group:list, 1 group_policy:list, 1 member:list.",
		"Destroy complete! Resources: 10 destroyed.",
		"The sandbox is empty: every grant was revoked, and the grade manager, its group, members and permissions are gone.",
		"==> Demo complete.",
		"The sandbox is stopped.",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q", want)
		}
	}
	// Five users in the plan's process; in the apply's, those not written
	// first (the two creators' grants write every action of theirs).
	queries := -1
	if m := regexp.MustCompile(`and 16 policy-list pages and (\d+) user queries for the plan-time checks`).FindStringSubmatch(out.String()); m != nil {
		queries, _ = strconv.Atoi(m[1])
	}
	if queries < 8 || queries > 10 {
		t.Errorf("the apply asked IAM about users %d times, want 8 to 10", queries)
	}
	if t.Failed() {
		t.Log(out.String())
	}
}

// TestAccDemoPortInUse: a sandbox port that cannot be had is a clear error
// before anything runs.
func TestAccDemoPortInUse(t *testing.T) {
	testutil.SameOnEveryCLI(t, "the demo refuses the port before it runs any CLI")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	opts := Options{
		Terraform:   testutil.Terraform(t),
		ProviderDir: testutil.BuildProvider(t),
		Examples:    filepath.Join(testutil.RepoRoot(t), "examples"),
		Listen:      ln.Addr().String(),
	}
	var out bytes.Buffer
	err = Run(context.Background(), opts, &out)
	if err == nil || !strings.Contains(err.Error(), "cannot start the sandbox on "+ln.Addr().String()) {
		t.Fatalf("Run = %v, want a clear error about the port", err)
	}
	if strings.Contains(out.String(), "$ ") {
		t.Fatalf("Terraform ran although the sandbox could not start:\n%s", out.String())
	}
}
