package authz_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// TestAccCreatorGrantStateUpgrade: a state written by the provider at
// schema version 0 of bkiam_creator_grant (instances as objects of name
// and ancestors; testdata/creator_grant_v0_state.json, written by that
// version's apply), over an IAM that holds what it records, filled through
// IAM's creator API. With the configuration rewritten in version 1's
// form, the CLI's first plan upgrades the state and is empty; the apply
// sends IAM nothing and writes the state at version 1, under the keys the
// configuration uses; the next plan is empty; destroy revokes every path
// the old state recorded, the mini apps' under their projects included.
func TestAccCreatorGrantStateUpgrade(t *testing.T) {
	acctest.Parallel(t)
	acctest.NeedsSandbox(t)
	sb := sandboxtest.Start(t)
	c := acctest.OutsideClient(t, sb)
	ctx := context.Background()
	for _, req := range []bkiam.CreatorActionRequest{
		{System: "bk_job", Type: "job", Creator: "alice", Instances: []bkiam.CreatorInstance{{ID: "job1", Name: "first job"}, {ID: "job2", Name: "second job"}}},
		{System: "bk_sops", Type: "mini_app", Creator: "alice", Instances: []bkiam.CreatorInstance{
			{ID: "mini_app1", Name: "first mini app", Ancestors: []bkiam.Ancestor{{System: "bk_sops", Type: "project", ID: "project1"}}},
			{ID: "mini_app2", Name: "second mini app", Ancestors: []bkiam.Ancestor{{System: "bk_sops", Type: "project", ID: "project2"}}},
		}},
	} {
		if _, err := c.BatchResourceCreatorAction(ctx, req); err != nil {
			t.Fatal(err)
		}
	}
	before := sb.Policies(sandbox.PolicyFilter{SubjectType: "user", SubjectID: "alice"}).Policies
	if len(before) == 0 {
		t.Fatal("the creator grants gave alice no policy")
	}

	w := acctest.NewCLIWorkspace(t, testutil.BuildProvider(t))
	old, err := os.ReadFile(filepath.Join("testdata", "creator_grant_v0_state.json"))
	if err != nil {
		t.Fatal(err)
	}
	host := "registry.terraform.io"
	if testutil.CLI(t).IsTofu() {
		host = "registry.opentofu.org"
	}
	w.Write("terraform.tfstate", strings.ReplaceAll(string(old), "PROVIDER_HOST", host))
	w.Configure(acctest.Transports[acctest.GatewayTransport].Block(sb.URL), `
resource "bkiam_creator_grant" "jobs" {
  system  = "bk_job"
  type    = "job"
  creator = "alice"
  instances = {
    "job1" = "first job"
    "job2" = "second job"
  }
}

resource "bkiam_creator_grant" "mini_apps" {
  system  = "bk_sops"
  type    = "mini_app"
  creator = "alice"
  instances = {
    "/bk_sops,project,project1/bk_sops,mini_app,mini_app1/" = "first mini app"
    "/bk_sops,project,project2/bk_sops,mini_app,mini_app2/" = "second mini app"
  }
  actions = ["mini_app_view", "mini_app_edit"]
}
`)
	if out, code := w.Run("plan", "-detailed-exitcode"); code != 0 {
		t.Fatalf("the plan over the version 0 state is not empty (exit %d):\n%s", code, out)
	}
	writes := acctest.IAMWrites(sb)
	w.MustRun("apply", "-auto-approve")
	if n := acctest.IAMWrites(sb) - writes; n != 0 {
		t.Errorf("the apply that upgraded the state sent IAM %d calls that change it: %v", n, sb.Stats().Requests)
	}
	var state struct {
		Resources []struct {
			Name      string
			Instances []struct {
				SchemaVersion int `json:"schema_version"`
				Attributes    struct {
					Instances map[string]string
				}
			}
		}
	}
	if err := json.Unmarshal([]byte(w.MustRun("state", "pull")), &state); err != nil {
		t.Fatal(err)
	}
	wantKeys := map[string][]string{
		"jobs":      {"job1", "job2"},
		"mini_apps": {"/bk_sops,project,project1/bk_sops,mini_app,mini_app1/", "/bk_sops,project,project2/bk_sops,mini_app,mini_app2/"},
	}
	for _, r := range state.Resources {
		in := r.Instances[0]
		var keys []string
		for k := range in.Attributes.Instances {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if in.SchemaVersion != 1 || !slices.Equal(keys, wantKeys[r.Name]) {
			t.Errorf("%s: schema version %d, instances %v; want version 1 and %v", r.Name, in.SchemaVersion, keys, wantKeys[r.Name])
		}
	}
	if !w.PlanIsEmpty() {
		t.Error("the plan after the upgrade's apply is not empty")
	}
	w.MustRun("destroy", "-auto-approve")
	if left := sb.Policies(sandbox.PolicyFilter{SubjectType: "user", SubjectID: "alice"}).Policies; len(left) != 0 {
		t.Errorf("destroy left alice %d policies of the upgraded grants: %+v", len(left), left)
	}
}
