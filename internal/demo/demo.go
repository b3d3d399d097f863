// Package demo runs the project's demo: examples/demo applied with the real
// Terraform CLI and a fresh build of the provider, against an in-process IAM
// sandbox, showing what each step grants and what it costs in calls.
//
// It leaves nothing behind: the sandbox lives in this process, Terraform
// runs in a scratch directory with its own CLI configuration (never the
// user's ~/.terraformrc), and every Terraform process group is stopped when
// the demo ends, succeeds or not.
package demo

import (
	"context"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/bkiam/terraform-provider-bkiam/internal/sandbox"
)

// Options say where the tools are.
type Options struct {
	// Terraform is the terraform binary.
	Terraform string
	// ProviderDir holds the freshly built terraform-provider-bkiam.
	ProviderDir string
	// Examples is the repository's examples directory.
	Examples string
	// Listen is the sandbox's address; port 0 picks a free one.
	Listen string
	// Color keeps Terraform's colours (for a terminal).
	Color bool
}

// Run runs the demo, writing everything to out. Cancelling ctx stops
// Terraform gracefully and returns.
func Run(ctx context.Context, opts Options, out io.Writer) error {
	for _, f := range []string{opts.Terraform, filepath.Join(opts.ProviderDir, "terraform-provider-bkiam")} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("missing %s: run `make build` (and let make build bin/terraform) first", f)
		}
	}

	srv, err := sandbox.New()
	if err != nil {
		return fmt.Errorf("creating the sandbox: %w", err)
	}
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", opts.Listen)
	if err != nil {
		return fmt.Errorf("cannot start the sandbox on %s: %w", opts.Listen, err)
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = hs.Serve(ln) }()
	defer func() {
		shutdown, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(shutdown)
		fmt.Fprintln(out, "The sandbox is stopped.")
	}()
	url := "http://" + ln.Addr().String()

	work, err := os.MkdirTemp("", "bkiam-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	for _, dir := range []string{"demo", "modules"} {
		if err := copyDir(filepath.Join(opts.Examples, dir), filepath.Join(work, dir)); err != nil {
			return fmt.Errorf("copying the examples: %w", err)
		}
	}
	tf, err := newTerraform(ctx, opts, work, url, out)
	if err != nil {
		return err
	}

	heading(out, "The IAM sandbox serves %s (app bkiam-sandbox). Working in %s.", url, work)
	fmt.Fprintln(out, tf.version, "("+opts.Terraform+") uses the provider built in", opts.ProviderDir, "through a dev_overrides CLI config of its own.")

	heading(out, "1. %s apply: a team module with for_each, a group grant, two creator grants, and the SRE team's grade manager, group, members and permissions", tf.name)
	if err := tf.run(ctx, "get"); err != nil {
		return err
	}
	before := srv.Stats()
	if err := tf.run(ctx, "apply", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	printCalls(out, "The apply", before, srv.Stats())

	heading(out, "2. What the sandbox now holds: who may do what on which instances")
	printHoldings(out, srv)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "And the grade managers and user groups, through the management API:")
	printManagement(out, srv)
	fmt.Fprintln(out)
	fmt.Fprintln(out, "What each member of a group may do through it (its effective access):")
	printEffectiveAccess(out, srv)

	heading(out, "3. A change: host web-3 joins the ops team; dave joins the SRE group and bob leaves it")
	change := `extra_hosts = { ops = { "5" = "web-3" } }` + "\n" + `sre_members = { alice = "permanent", dave = "permanent" }` + "\n"
	if err := os.WriteFile(filepath.Join(tf.dir, "change.auto.tfvars"), []byte(change), 0o600); err != nil {
		return err
	}
	fmt.Fprintf(out, "change.auto.tfvars: %s", change)
	if err := tf.run(ctx, "plan", "-input=false", "-out=change.tfplan"); err != nil {
		return err
	}
	before = srv.Stats()
	if err := tf.run(ctx, "apply", "-input=false", "change.tfplan"); err != nil {
		return err
	}
	printCalls(out, "The change", before, srv.Stats())
	printEffectiveAccess(out, srv)

	heading(out, "4. A second plan: nothing left to do")
	before = srv.Stats()
	code, err := tf.exitCode(ctx, "plan", "-input=false", "-detailed-exitcode")
	if err != nil {
		return err
	}
	if code != 0 {
		return fmt.Errorf("the second plan is not empty (%s plan -detailed-exitcode exited %d)", tf.name, code)
	}
	printCalls(out, "The plan", before, srv.Stats())

	heading(out, "5. %s destroy", tf.name)
	if err := tf.run(ctx, "destroy", "-auto-approve", "-input=false"); err != nil {
		return err
	}
	if left := srv.Policies(sandbox.PolicyFilter{}).Policies; len(left) != 0 {
		printHoldings(out, srv)
		return fmt.Errorf("the sandbox still holds %d policies after the destroy", len(left))
	}
	if m := srv.Management(); len(m.GradeManagers) != 0 || len(m.Groups) != 0 {
		printManagement(out, srv)
		return fmt.Errorf("the sandbox still holds %d grade managers and %d groups after the destroy", len(m.GradeManagers), len(m.Groups))
	}
	fmt.Fprintln(out, "The sandbox is empty: every grant was revoked, and the grade manager, its group, members and permissions are gone.")
	heading(out, "Demo complete.")
	return nil
}

func heading(out io.Writer, format string, args ...any) {
	fmt.Fprintf(out, "\n==> "+format+"\n", args...)
}

// printCalls says what a step cost in IAM calls. The reads of the
// plan-time checks (check_model's model reads, one per system per
// provider process; the expiry check's query of each user a plan grants
// to, its reads of the user's rows by id, and its policy-list pages for
// an action the user holds nothing of; terraform apply runs two
// processes, its plan and its apply) are told apart from the writes.
func printCalls(out io.Writer, what string, before, after sandbox.Stats) {
	checks := map[string][2]string{"model_query": {"model read", "model reads"}, "policy_list": {"policy-list page", "policy-list pages"},
		"policy_query_by_actions": {"user query", "user queries"}, "policy_get": {"policy read by id", "policy reads by id"}}
	var parts, reads []string
	total := 0
	for _, kind := range sortedKeys(after.Requests) {
		n := after.Requests[kind] - before.Requests[kind]
		switch names, check := checks[kind]; {
		case n <= 0:
		case check && n == 1:
			reads = append(reads, "1 "+names[0])
		case check:
			reads = append(reads, fmt.Sprintf("%d %s", n, names[1]))
		default:
			parts = append(parts, fmt.Sprintf("%d %s", n, kind))
			total += n
		}
	}
	checked := ""
	if len(reads) > 0 {
		checked = " (and " + strings.Join(reads, " and ") + " for the plan-time checks)"
	}
	switch total {
	case 0:
		fmt.Fprintf(out, "%s cost no IAM call%s.\n", what, checked)
	case 1:
		fmt.Fprintf(out, "%s cost 1 IAM call: %s%s.\n", what, strings.Join(parts, ", "), checked)
	default:
		fmt.Fprintf(out, "%s cost %d IAM calls: %s%s.\n", what, total, strings.Join(parts, ", "), checked)
	}
}

// printHoldings renders the sandbox's store as a table.
func printHoldings(out io.Writer, srv *sandbox.Server) {
	policies := srv.Policies(sandbox.PolicyFilter{}).Policies
	sort.Slice(policies, func(i, j int) bool {
		a, b := policies[i], policies[j]
		if a.Subject != b.Subject {
			return a.Subject.Type+a.Subject.ID < b.Subject.Type+b.Subject.ID
		}
		if a.System != b.System {
			return a.System < b.System
		}
		return a.Action < b.Action
	})
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "SUBJECT\tSYSTEM\tACTION\tEXPIRES\tINSTANCES")
	for _, p := range policies {
		fmt.Fprintf(w, "%s %s\t%s\t%s\t%s\t%s\n", p.Subject.Type, p.Subject.ID, p.System, p.Action, expiry(p.ExpiredAt), instances(p))
	}
	_ = w.Flush()
}

// printManagement renders the grade managers and user groups the
// sandbox holds, with each group's members.
func printManagement(out io.Writer, srv *sandbox.Server) {
	m := srv.Management()
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GRADE MANAGER\tSYSTEM\tMEMBERS\tSYNC GROUP")
	for _, gm := range m.GradeManagers {
		sync := "no"
		if gm.SyncPerm {
			sync = "yes"
		}
		fmt.Fprintf(w, "%d %s\t%s\t%s\t%s\n", gm.ID, gm.Name, gm.System, strings.Join(gm.Members, ", "), sync)
	}
	_ = w.Flush()
	fmt.Fprintln(out)
	w = tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "GROUP\tGRADE MANAGER\tMEMBER\tEXPIRES")
	for _, g := range m.Groups {
		name := fmt.Sprintf("%d %s", g.ID, g.Name)
		if g.Sync {
			name += " (sync group)"
		}
		if len(g.Members) == 0 {
			fmt.Fprintf(w, "%s\t%d\t-\t\n", name, g.GradeManager)
		}
		members := slices.Clone(g.Members)
		sort.Slice(members, func(i, j int) bool { return members[i].Type+members[i].ID < members[j].Type+members[j].ID })
		for _, mem := range members {
			fmt.Fprintf(w, "%s\t%d\t%s %s\t%s\n", name, g.GradeManager, mem.Type, mem.ID, expiry(mem.ExpiredAt))
		}
	}
	_ = w.Flush()
}

// printEffectiveAccess renders, for every member of a group made through
// the management API, the permissions the group gives them.
func printEffectiveAccess(out io.Writer, srv *sandbox.Server) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(w, "MEMBER\tTHROUGH GROUP\tSYSTEM\tACTION\tINSTANCES")
	for _, g := range srv.Management().Groups {
		policies := srv.Policies(sandbox.PolicyFilter{SubjectType: "group", SubjectID: fmt.Sprint(g.ID)}).Policies
		sort.Slice(policies, func(i, j int) bool { return policies[i].Action < policies[j].Action })
		members := slices.Clone(g.Members)
		sort.Slice(members, func(i, j int) bool { return members[i].Type+members[i].ID < members[j].Type+members[j].ID })
		for _, m := range members {
			for _, p := range policies {
				fmt.Fprintf(w, "%s %s\t%d %s\t%s\t%s\t%s\n", m.Type, m.ID, g.ID, g.Name, p.System, p.Action, instances(p))
			}
		}
	}
	_ = w.Flush()
}

func expiry(unix int64) string {
	if unix >= 4102444800 {
		return "never"
	}
	return time.Unix(unix, 0).UTC().Format("2006-01-02")
}

// instances renders a policy's paths readably: "host 1, host 2" or
// "project1 › mini_app mini_app1".
func instances(p sandbox.PolicyView) string {
	if p.Any {
		return "every instance"
	}
	var out []string
	for _, path := range p.Paths {
		var nodes []string
		for _, node := range strings.Split(strings.Trim(path, "/"), "/") {
			parts := strings.SplitN(node, ",", 3)
			if len(parts) == 3 {
				nodes = append(nodes, parts[1]+" "+parts[2])
			}
		}
		out = append(out, strings.Join(nodes, " › "))
	}
	if len(p.Groups) > 0 {
		out = append(out, fmt.Sprintf("%d combinations", len(p.Groups)))
	}
	return strings.Join(out, ", ")
}

func sortedKeys(m map[string]int) []string { return slices.Sorted(maps.Keys(m)) }

// copyDir copies a directory of configuration files, recursively, leaving
// out what a local Terraform run may have left there (.terraform, state).
// It reads the repository's own examples into a fresh scratch directory,
// so the path-taint checks do not apply.
func copyDir(from, to string) error {
	return filepath.WalkDir(from, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(from, path)
		if err != nil {
			return err
		}
		target := filepath.Join(to, rel)
		if d.IsDir() {
			if d.Name() == ".terraform" {
				return filepath.SkipDir
			}
			return os.MkdirAll(target, 0o750)
		}
		if strings.HasSuffix(d.Name(), ".tfstate") || strings.HasSuffix(d.Name(), ".tfstate.backup") {
			return nil
		}
		data, err := os.ReadFile(path) //nolint:gosec // the repository's examples, see above
		if err != nil {
			return err
		}
		return os.WriteFile(target, data, 0o600) //nolint:gosec // inside the scratch directory
	})
}
