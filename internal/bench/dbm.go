package bench

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Issue 61's system of DBM's size: BlueKing DBM (TencentBlueKing/blueking-dbm, MIT) registers
// hundreds of actions, most of them scoped to a business of CMDB (a resource type of another
// system, bk_cmdb's biz) or to a cluster of its own that lives under one. The backend's batch
// query cannot answer an action related to another system's type without resources, so the
// provider asks each such action alone (bkiam.AskAlone): what a plan of such a system costs is
// hundreds of calls where bk_cmdb's own actions take a few batches.
//
// The system here is generated, not DBM's: DBM's own resource type ids (dbtype, and one cluster
// type per database, each under bk_cmdb's biz, read off dbm-ui/backend/iam_app/dataclass/
// resources.py), and dbmActionCount actions of generated ids in the shapes of dbmShapes. Its
// mix leans further to bk_cmdb's biz than DBM's own: in DBM's actions.py (commit 8d96e3c9c7,
// 2024-10) about 150 ticket actions relate to a cluster type of DBM's, and of its 151 other
// actions 101 relate to types of its own, 34 to bk_cmdb's biz, 8 to biz and dbtype, 8 to none;
// here 360 of the 500 are asked alone, the harder case for the provider.

// dbmSystem is the generated system's id, DBM's own.
const dbmSystem = "bk_dbm"

// dbmClusterTypes are DBM's cluster resource types, one per database, each under bk_cmdb's biz.
var dbmClusterTypes = []string{"mysql", "tendbcluster", "redis", "es", "kafka", "hdfs", "pulsar", "riak", "mongodb", "sqlserver"}

// dbmShape is a kind of the generated system's actions: how many of them, their id prefix and
// their related types (in the sandbox model's form: "type" of bk_dbm, "system:type" of another).
// A cluster shape (cluster set) has count actions per cluster type, on that type.
type dbmShape struct {
	key     string
	count   int
	cluster bool
	related []string
}

// dbmShapes are the generated system's actions: 300 on a business of CMDB (DBM's ticket and
// business actions), 13 on each cluster type (130), 30 on a business and a database type (as
// DBM's dbconfig_edit), 30 on a MySQL cluster and a CMDB host (a combined resource with another
// system's type), 10 on nothing (DBM's global settings).
var dbmShapes = []dbmShape{
	{key: "biz", count: 300, related: []string{"bk_cmdb:biz"}},
	{key: "cluster", count: 13, cluster: true},
	{key: "biz_dbtype", count: 30, related: []string{"bk_cmdb:biz", "dbtype"}},
	{key: "mysql_host", count: 30, related: []string{"mysql", "bk_cmdb:host"}},
	{key: "global", count: 10, related: []string{}},
}

// dbmActionCount is how many actions the generated system has.
const dbmActionCount = 500

// dbmAction is one generated action of a shape: its id and related types.
type dbmAction struct {
	id      string
	related []string
}

// dbmActions are the generated system's actions by shape key (a cluster shape's by
// "cluster/TYPE"), in order.
func dbmActions() map[string][]dbmAction {
	out := map[string][]dbmAction{}
	for _, s := range dbmShapes {
		if s.cluster {
			for _, typ := range dbmClusterTypes {
				k := s.key + "/" + typ
				for i := range s.count {
					out[k] = append(out[k], dbmAction{id: fmt.Sprintf("%s_%s_%02d", typ, s.key, i), related: []string{typ}})
				}
			}
			continue
		}
		for i := range s.count {
			out[s.key] = append(out[s.key], dbmAction{id: fmt.Sprintf("%s_%03d", s.key, i), related: s.related})
		}
	}
	return out
}

// dbmModel is the embedded BlueKing model (real subsets of bk_cmdb, bk_job and bk_sops) with the
// generated system beside them, the sandbox's app a client of it.
func dbmModel() (*sandbox.Model, error) {
	m, err := sandbox.BlueKingModel()
	if err != nil {
		return nil, err
	}
	sys := sandbox.System{ID: dbmSystem,
		ResourceTypes: []sandbox.ResourceType{{ID: "dbtype", Name: "DB类型", NameEn: "DB Type",
			Instances: map[string]string{"mysql": "MySQL"}}},
		AllowList: sandbox.AllowList{InstanceActions: []string{"*"}, CreatorTypes: []string{"*"}}}
	for _, typ := range dbmClusterTypes {
		sys.ResourceTypes = append(sys.ResourceTypes, sandbox.ResourceType{ID: typ, Name: typ + "集群", NameEn: typ + " cluster",
			Parents: []string{"bk_cmdb:biz"}})
	}
	byShape := dbmActions()
	for _, k := range slices.Sorted(maps.Keys(byShape)) {
		for _, a := range byShape[k] {
			sys.Actions = append(sys.Actions, sandbox.Action{ID: a.id, Name: a.id, NameEn: a.id, RelatedTypes: a.related})
		}
	}
	if len(sys.Actions) != dbmActionCount {
		return nil, fmt.Errorf("the generated system has %d actions, want %d", len(sys.Actions), dbmActionCount)
	}
	m.Systems = append(m.Systems, sys)
	for i := range m.Apps {
		if m.Apps[i].Code == "bkiam-sandbox" {
			m.Apps[i].ClientOf = append(m.Apps[i].ClientOf, dbmSystem)
		}
	}
	raw, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	return sandbox.LoadModel(raw)
}

// dbmGrant is one grant resource of a DBM user's configuration: the actions of one shape and
// the resource entries their related types take, in order. An entry of an action's own type
// holds var.instances; the second type of a combined resource one fixed instance.
type dbmGrant struct {
	name    string
	actions []string
	entries []dbmEntry
}

// dbmEntry is one resource entry of a dbmGrant; instances "" is var.instances, else an HCL map.
type dbmEntry struct{ system, typ, instances string }

// dbmGrants are a user's grants of every action of the generated system, one resource per shape
// (a cluster shape: one per cluster type): what a module granting a DBM role to a user declares.
func dbmGrants() []dbmGrant {
	byShape := dbmActions()
	var out []dbmGrant
	for _, k := range slices.Sorted(maps.Keys(byShape)) {
		g := dbmGrant{name: strings.ReplaceAll(k, "/", "_")}
		for _, a := range byShape[k] {
			g.actions = append(g.actions, a.id)
		}
		for i, ref := range byShape[k][0].related {
			system, typ, other := strings.Cut(ref, ":")
			if !other {
				system, typ = dbmSystem, ref
			}
			e := dbmEntry{system: system, typ: typ}
			if i > 0 {
				e.instances = fmt.Sprintf("{ %q = %q }", dbmFixed[typ], typ+" "+dbmFixed[typ])
			}
			g.entries = append(g.entries, e)
		}
		out = append(out, g)
	}
	return out
}

// dbmFixed is the instance a combined resource's second type is granted on.
var dbmFixed = map[string]string{"dbtype": "mysql", "host": "1"}

// hclList is strings as an HCL list, one per line.
func hclList(ss []string, indent string) string {
	var b strings.Builder
	b.WriteString("[\n")
	for _, s := range ss {
		fmt.Fprintf(&b, "%s  %q,\n", indent, s)
	}
	b.WriteString(indent + "]")
	return b.String()
}

// dbmGrantConfig is the configuration of a user's grants (dbmGrants), as bkiam_instance_grant
// resources, or with baseline as terraform_data resources carrying the same input.
func dbmGrantConfig(user string, baseline bool) string {
	var b strings.Builder
	for _, g := range dbmGrants() {
		var entries []string
		for _, e := range g.entries {
			instances := cmp.Or(e.instances, "var.instances")
			entries = append(entries, fmt.Sprintf("{ system = %q, type = %q, instances = %s }", e.system, e.typ, instances))
		}
		body := fmt.Sprintf("system    = %q\nsubject   = { type = \"user\", id = %q }\nactions   = %s\nresources = [%s]\n",
			dbmSystem, user, hclList(g.actions, ""), strings.Join(entries, ", "))
		if baseline {
			fmt.Fprintf(&b, "resource \"terraform_data\" %q {\n  input = {\n%s  }\n}\n\n", g.name, indent(body, "    "))
			continue
		}
		fmt.Fprintf(&b, "resource \"bkiam_instance_grant\" %q {\n%s}\n\n", g.name, indent(body, "  "))
	}
	return b.String()
}

// indent prefixes every line of s with prefix.
func indent(s, prefix string) string {
	lines := strings.SplitAfter(s, "\n")
	for i, l := range lines {
		if l != "" {
			lines[i] = prefix + l
		}
	}
	return strings.Join(lines, "")
}

// grantDBM grants, through the authorization API at url, user every action of the generated
// system related to a type on instances other than the configurations' (business, cluster
// "held"), and with typeless those related to none too: one call per grant of dbmGrants,
// permanently. A grant of an action related to no type is the whole policy, which a destroy of
// the configuration's grant of it revokes.
func grantDBM(ctx context.Context, url, user string, typeless bool) error {
	c, err := bkiam.New(bkiam.Config{APIGatewayURL: url, AppCode: "bkiam-sandbox", AppSecret: "sandbox-secret"})
	if err != nil {
		return err
	}
	for _, g := range dbmGrants() {
		if len(g.entries) == 0 && !typeless {
			continue
		}
		req := bkiam.BatchInstanceRequest{System: dbmSystem, Operate: bkiam.OperationGrant, ExpiredAt: bkiam.PermanentExpiry,
			Subject: bkiam.Subject{Type: bkiam.SubjectUser, ID: user}, Resources: []bkiam.InstanceResource{}}
		for _, a := range g.actions {
			req.Actions = append(req.Actions, bkiam.Action{ID: a})
		}
		for i, e := range g.entries {
			id := "held"
			if i > 0 {
				id = dbmFixed[e.typ]
			}
			req.Resources = append(req.Resources, bkiam.InstanceResource{System: e.system, Type: e.typ,
				Instances: []bkiam.Instance{{ID: id, Name: e.typ + " " + id}}})
		}
		if _, err := c.BatchInstance(ctx, req); err != nil {
			return fmt.Errorf("granting %s the actions of %s: %w", user, g.name, err)
		}
	}
	return nil
}

// dbmAllActions are the generated system's action ids, sorted.
func dbmAllActions() []string {
	var out []string
	for _, g := range dbmGrants() {
		out = append(out, g.actions...)
	}
	slices.Sort(out)
	return out
}

// DBMGrants is issue 61's first scenario: a user granted every action of a system of DBM's size
// (dbmModel), one bkiam_instance_grant per shape of its actions (15 resources), each of its own
// types on size instances (businesses or clusters): a first grant, the user holding nothing
// before, so that the expiry check reads, besides the queries about the user, the policy list
// of each action.
func DBMGrants(size int) Scenario {
	return Scenario{
		Name:     fmt.Sprintf("a system of %d actions (DBM's size): all of them granted to one user, %d instances each", dbmActionCount, size),
		Size:     size,
		Config:   dbmGrantConfig("alice", false),
		Baseline: dbmGrantConfig("alice", true),
		Model:    dbmModel,
	}
}

// DBMReads is issue 61's second scenario: the reads of a system of DBM's size in a plan, for a
// user who holds every action of it (on one business or cluster each): the system's model
// (bkiam_system), and what the user may do and holds of every action (bkiam_effective_permissions,
// bkiam_user_access).
func DBMReads() Scenario {
	actions := hclList(dbmAllActions(), "  ")
	return Scenario{
		Name:     fmt.Sprintf("a system of %d actions (DBM's size): its model, and a user's effective permissions and own policies of every action", dbmActionCount),
		Size:     1,
		PlanOnly: true,
		Config: fmt.Sprintf(`data "bkiam_system" "dbm" {
  system = %[1]q
}

data "bkiam_effective_permissions" "alice" {
  system  = %[1]q
  user    = "alice"
  actions = %[2]s
}

data "bkiam_user_access" "alice" {
  system  = %[1]q
  user    = "alice"
  actions = %[2]s
}

output "actions" {
  value = length(data.bkiam_system.dbm.actions)
}

output "permissions" {
  value = length(data.bkiam_effective_permissions.alice.permissions)
}

output "policies" {
  value = length(data.bkiam_user_access.alice.policies)
}
`, dbmSystem, actions),
		Baseline: fmt.Sprintf(`resource "terraform_data" "reads" {
  input = {
    system  = %q
    user    = "alice"
    actions = %s
  }
}
`, dbmSystem, actions),
		Model: dbmModel,
		Prepare: func(ctx context.Context, url string) (map[string]any, error) {
			return nil, grantDBM(ctx, url, "alice", true)
		},
	}
}

// DBMComparison is issue 61's check on a system of DBM's size: the grants of DBMGrants, of one
// instance each, planned and applied with the provider's expiry check and without (Comparison).
// With held, for alice, who holds every action already, on another business or cluster: the
// check asks IAM about her (a query per action related to another system's type, a batch of ten
// for the others) and reads nothing else; else for bob, who holds none of them: the check also
// reads each action's policy list, for a policy of bob's that expired within the day. Both have
// the goal of issue 51's site: the check may cost at most 1.5× the plan and 1.3× the apply
// without it.
func DBMComparison(held bool, rounds int) Comparison {
	user, what := "bob", "a first grant of all of them to bob, who holds none"
	if held {
		user, what = "alice", "all of them granted to alice, who holds each already on another instance"
	}
	name := fmt.Sprintf("a system of %d actions (DBM's size): %s", dbmActionCount, what)
	sc := Scenario{Name: name, Size: 1, Config: dbmGrantConfig(user, false), Model: dbmModel}
	if held {
		sc.Prepare = func(ctx context.Context, url string) (map[string]any, error) {
			return nil, grantDBM(ctx, url, "alice", false)
		}
	}
	return Comparison{Name: name, Rounds: rounds, Goals: map[string]float64{StepPlan: 1.5, StepApply: 1.3}, Scenario: sc}
}

// DBMModelCheck is issue 61's model check on a system of DBM's size: DBMComparison's first grant,
// without the expiry check on either side, with the plan-time model check (check_model, on by
// default: the system's model read once per provider process, every grant's actions and
// resources checked against it) and with check_model = false.
func DBMModelCheck(rounds int) Comparison {
	c := DBMComparison(false, rounds)
	c.Name = fmt.Sprintf("a system of %d actions (DBM's size): the model check of a first grant of all of them", dbmActionCount)
	c.Scenario.Name = c.Name
	c.Scenario.ProviderSettings = `expiry_conflicts = "off"`
	c.Without = "check_model = false"
	c.Goals = map[string]float64{StepPlan: 1.2, StepApply: 1.2}
	return c
}
