package provider_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/hashicorp/terraform-plugin-go/tfprotov6"
	"github.com/hashicorp/terraform-plugin-go/tftypes"

	"github.com/bkiam/terraform-provider-bkiam/internal/acctest"
	"github.com/bkiam/terraform-provider-bkiam/internal/bkiam"
	"github.com/bkiam/terraform-provider-bkiam/internal/provider"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox/sandboxtest"
	"github.com/bkiam/terraform-provider-bkiam/internal/testutil"
)

// The list resources' benchmarks (`terraform query`, Terraform 1.14+):
// a listing of n objects through the protocol server, as Terraform asks
// for it with -generate-config-out (every result with its resource),
// drained to the end. They pin what the list resources promise: IAM is
// read in pages of 500 and nothing is read per object, so ten times the
// objects cost ten times the calls, and, as one page is held at a time,
// about ten times the time and the bytes allocated, never more. The
// lists that read something per object by design (bkiam_grade_manager
// and bkiam_group_members with include_resource: a call per grade
// manager or group) and the one IAM does not page
// (bkiam_group_permission) are not measured.

// listBenchSizes are the object counts of the listing benchmarks: ten
// times apart, so that a cost growing faster than the objects shows.
var listBenchSizes = []int{1000, 10000}

// BenchmarkListGroups lists the groups of one grade manager (bkiam_group).
func BenchmarkListGroups(b *testing.B) {
	for _, n := range listBenchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			sb := sandboxtest.Start(b)
			gm := fillGroups(b, sb, n)
			benchListing(b, sb, "bkiam_group", map[string]any{"system": "bk_cmdb", "grade_manager_id": gm}, n, 1, "group:list", "grade_manager:get")
		})
	}
}

// BenchmarkListGrants lists the custom grants of one action, one per
// user (bkiam_instance_grant).
func BenchmarkListGrants(b *testing.B) {
	for _, n := range listBenchSizes {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			sb := sandboxtest.Start(b, sandbox.WithModel(acctest.ModelWithUsers(b, n, 0)))
			fillGrants(b, sb, n)
			benchListing(b, sb, "bkiam_instance_grant", map[string]any{"system": "bk_cmdb", "action": "view_host"}, n, 2, "policy_list", "")
		})
	}
}

// benchListing measures the listing of typeName with config (its
// attributes, the others null), which must stream exactly n objects in
// passes × ceil(n/500) calls of kind (the sandbox's name of the list's
// route; the grant list reads it twice, the first pass counting each
// user's policies: the sandbox sees each page once, the front answering
// the second pass),
// one of once (unless empty: the group list reads its grade manager once,
// for its sync group) and no other call.
//
// The sandbox runs in the benchmark's process, and each page it answers
// costs it time and memory in proportion to every object it holds (it
// scans its whole store where IAM has an index): counted in the figures,
// its share would grow with the square of the objects and hide the
// provider's. So the provider reaches it through a replayFront: a first
// listing, counted by the sandbox, reads every page from the sandbox,
// and the measured listings read the same pages from memory.
func benchListing(b *testing.B, sb *sandboxtest.Sandbox, typeName string, config map[string]any, n, passes int, kind, once string) {
	provider.QuietUnrequestedLogs()
	ctx := context.Background()
	front := newReplayFront(b, sb)
	server := listServer(b, front.URL)
	schema, err := server.GetProviderSchema(ctx, &tfprotov6.GetProviderSchemaRequest{})
	if err != nil || testutil.HasError(schema.Diagnostics) {
		b.Fatal(err, schema.Diagnostics)
	}
	listSchema, ok := schema.ListResourceSchemas[typeName]
	if !ok {
		b.Fatalf("no list resource %s", typeName)
	}
	configType, _ := listSchema.ValueType().(tftypes.Object)
	configValue, err := tfprotov6.NewDynamicValue(configType, objectWith(configType, config))
	if err != nil {
		b.Fatal(err)
	}
	lists, ok := server.(tfprotov6.ListResourceServer)
	if !ok {
		b.Fatal("the server does not serve list resources")
	}
	// Limit 0 is no limit: everything is listed, and a listing that
	// streamed an object twice would show in the count.
	req := &tfprotov6.ListResourceRequest{TypeName: typeName, Config: &configValue, IncludeResource: true}
	pages := (n + 499) / 500

	// The first listing, from the sandbox: its counters say which calls
	// a listing makes. The model a grant listing reads (model_query) is
	// read once per provider process, so once here, and not measured.
	before := sb.Stats().Requests
	drainListing(b, lists, req, n)
	for k, v := range sb.Stats().Requests {
		want := 0
		switch k {
		case kind:
			want = pages
		case once:
			want = 1
		}
		if got := v - before[k]; got != want && k != "model_query" {
			b.Fatalf("the listing of %d objects sent %d %s calls, want %d", n, got, k, want)
		}
	}

	reached := sb.Stats().Total
	front.served.Store(0)
	for b.Loop() {
		drainListing(b, lists, req, n)
	}
	if sb.Stats().Total != reached {
		b.Fatal("a measured listing asked for a page the first listing did not: it reached the sandbox")
	}
	calls := float64(front.served.Load()) / float64(b.N)
	if once != "" {
		calls-- // the read made once per listing, whatever n
	}
	if calls != float64(passes*pages) {
		b.Fatalf("%.1f calls per listing of %d objects, want %d and the one read", calls, n, passes*pages)
	}
	b.ReportMetric(calls, "calls/op")
}

// drainListing lists req to the end, as Terraform reads the stream, and
// fails unless it streamed n objects, each with its resource, and no
// diagnostic.
func drainListing(b *testing.B, lists tfprotov6.ListResourceServer, req *tfprotov6.ListResourceRequest, n int) {
	stream, err := lists.ListResource(context.Background(), req)
	if err != nil {
		b.Fatal(err)
	}
	got := 0
	for r := range stream.Results {
		if len(r.Diagnostics) > 0 {
			b.Fatalf("result %d: %s", got, testutil.RenderDiags(r.Diagnostics))
		}
		if r.Identity == nil || r.Resource == nil {
			b.Fatalf("result %d (%s) without its identity or resource", got, r.DisplayName)
		}
		got++
	}
	if got != n {
		b.Fatalf("listed %d objects, want %d", got, n)
	}
}

// listServer is the provider's protocol server configured for the IAM
// gateway at url, without retries (a failed call fails the benchmark
// rather than adding calls).
func listServer(b *testing.B, url string) tfprotov6.ProviderServer {
	b.Helper()
	server := provider.ProtoServerB(b)
	typ, _ := provider.ProviderSchema().Type().TerraformType(context.Background()).(tftypes.Object)
	config, err := tfprotov6.NewDynamicValue(typ, objectWith(typ, map[string]any{
		"apigw_url": url, "app_code": sandboxtest.AppCode, "app_secret": sandboxtest.AppSecret, "max_retries": int64(0),
	}))
	if err != nil {
		b.Fatal(err)
	}
	resp, err := server.ConfigureProvider(context.Background(), &tfprotov6.ConfigureProviderRequest{Config: &config})
	if err != nil || testutil.HasError(resp.Diagnostics) {
		b.Fatalf("ConfigureProvider: %v %s", err, testutil.RenderDiags(resp.Diagnostics))
	}
	return server
}

// objectWith is an object of typ with the attributes given, the others
// null, as Terraform sends a configuration.
func objectWith(typ tftypes.Object, attrs map[string]any) tftypes.Value {
	values := map[string]tftypes.Value{}
	for name, t := range typ.AttributeTypes {
		values[name] = tftypes.NewValue(t, attrs[name])
	}
	return tftypes.NewValue(typ, values)
}

// fillWorkers is how many calls fill the sandbox at once: the sandbox
// serves calls for different subjects side by side.
//
// Filling is most of the benchmarks' time: the sandbox's group create
// sorts every group of the grade manager for each name it checks, and
// its grant scans every policy for the subject's, so 10 000 groups take
// about 20 s to create and 10 000 grants about 5 s (1 000 of either,
// well under a second).
const fillWorkers = 8

// fillGroups creates a grade manager of bk_cmdb with n groups, ten per
// call (IAM's most), and returns its id.
func fillGroups(b *testing.B, sb *sandboxtest.Sandbox, n int) string {
	b.Helper()
	ctx := context.Background()
	c := fillClient(b, sb)
	gm, err := c.CreateGradeManager(ctx, "bk_cmdb", bkiam.GradeManagerSpec{
		Name: "listed", Members: []string{"alice"},
		AuthorizationScopes: []bkiam.AuthorizationScope{{System: "bk_cmdb", Actions: []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.PathResource{{System: "bk_cmdb", Type: "host", Paths: [][]bkiam.PathNode{{{System: "bk_cmdb", Type: "host", ID: "*"}}}}}}},
		SubjectScopes: []bkiam.SubjectScope{{Type: "*", ID: "*"}},
	})
	if err != nil {
		b.Fatal(err)
	}
	id := fmt.Sprint(gm)
	fillInParallel(b, (n+bkiam.MaxGroupsPerCreate-1)/bkiam.MaxGroupsPerCreate, func(call int) error {
		var groups []bkiam.GroupSpec
		for i := call * bkiam.MaxGroupsPerCreate; i < min(n, (call+1)*bkiam.MaxGroupsPerCreate); i++ {
			groups = append(groups, bkiam.GroupSpec{Name: fmt.Sprintf("team %05d", i), Description: "a listed group"})
		}
		_, err := c.CreateGroups(ctx, "bk_cmdb", id, groups)
		return err
	})
	if got := len(sb.Groups(gm)); got != n {
		b.Fatalf("the grade manager holds %d groups, want %d", got, n)
	}
	return id
}

// fillGrants grants view_host on a host to each of the users u00000…
// of the model (modelWithUsers): n subjects, n policies of the action.
// A call grants one subject, so n calls.
func fillGrants(b *testing.B, sb *sandboxtest.Sandbox, n int) {
	b.Helper()
	ctx := context.Background()
	c := fillClient(b, sb)
	fillInParallel(b, n, func(i int) error {
		_, err := c.BatchInstance(ctx, bkiam.BatchInstanceRequest{
			System: "bk_cmdb", Operate: bkiam.OperationGrant,
			Subject: bkiam.Subject{Type: "user", ID: fmt.Sprintf("u%05d", i)},
			Actions: []bkiam.Action{{ID: "view_host"}},
			Resources: []bkiam.InstanceResource{{System: "bk_cmdb", Type: "host",
				Instances: []bkiam.Instance{{ID: fmt.Sprint(i % 100), Name: fmt.Sprintf("host %d", i%100)}}}},
		})
		return err
	})
	if got := len(sb.Policies(sandbox.PolicyFilter{System: "bk_cmdb", Action: "view_host"}).Policies); got != n {
		b.Fatalf("the sandbox holds %d view_host policies, want %d", got, n)
	}
}

func fillClient(b *testing.B, sb *sandboxtest.Sandbox) *bkiam.Client {
	b.Helper()
	c, err := bkiam.New(bkiam.Config{APIGatewayURL: sb.URL, AppCode: sandboxtest.AppCode, AppSecret: sandboxtest.AppSecret})
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// fillInParallel runs call(0) … call(calls-1), fillWorkers at a time,
// and fails on the first error.
func fillInParallel(b *testing.B, calls int, call func(i int) error) {
	b.Helper()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range fillWorkers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= calls {
					return
				}
				if err := call(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("call %d: %w", i, err)
					}
					mu.Unlock()
					return
				}
			}
		})
	}
	wg.Wait()
	if firstErr != nil {
		b.Fatal(firstErr)
	}
}

// replayFront is the IAM gateway as the measured listings see it: a GET
// it has not answered before goes to the sandbox and its answer is kept;
// the same GET again (the same route and query, the policy list's
// timestamp aside, which moves with the clock) is answered from memory.
// served counts the requests answered, as IAM would count its calls.
type replayFront struct {
	*httptest.Server
	sb      *sandboxtest.Sandbox
	mu      sync.Mutex
	answers map[string]*keptAnswer
	served  atomic.Int64
}

type keptAnswer struct {
	status int
	header http.Header
	body   []byte
}

func newReplayFront(b *testing.B, sb *sandboxtest.Sandbox) *replayFront {
	f := &replayFront{sb: sb, answers: map[string]*keptAnswer{}}
	f.Server = httptest.NewServer(http.HandlerFunc(f.serve))
	b.Cleanup(f.Close)
	return f
}

func (f *replayFront) serve(w http.ResponseWriter, r *http.Request) {
	f.served.Add(1)
	q := r.URL.Query()
	q.Del("timestamp")
	key := r.Method + " " + r.URL.Path + "?" + q.Encode()
	f.mu.Lock()
	a := f.answers[key]
	f.mu.Unlock()
	if a == nil || r.Method != http.MethodGet {
		rec := httptest.NewRecorder()
		f.sb.ServeHTTP(rec, r)
		a = &keptAnswer{status: rec.Code, header: rec.Header(), body: bytes.Clone(rec.Body.Bytes())}
		if r.Method == http.MethodGet && a.status == http.StatusOK {
			f.mu.Lock()
			f.answers[key] = a
			f.mu.Unlock()
		}
	}
	for k, v := range a.header {
		w.Header()[k] = v
	}
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}
