package grantplan

import (
	"strconv"
	"testing"
)

// benchGrant is a grant of two actions over n hosts; shift moves the
// first 1% of ids out and new ones in.
func benchGrant(n int, shift bool) *Grant {
	instances := make(map[string]string, n)
	for i := 0; i < n; i++ {
		id := strconv.Itoa(i)
		if shift && i < n/100 {
			id = "new-" + id
		}
		instances[id] = "host " + id
	}
	return &Grant{Actions: []string{"edit_host", "view_host"}, ExpiresAt: 4102444800,
		Resources: []Resource{{System: "bk_cmdb", Type: "host", Instances: instances}}}
}

func benchmarkPlan(b *testing.B, n int) {
	old, next := benchGrant(n, false), benchGrant(n, true)
	held := Held(old)
	limits := Limits{Grant: 200, Revoke: 1000}
	b.Run("create", func(b *testing.B) {
		for b.Loop() {
			if _, err := Plan(nil, next, limits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("1% change", func(b *testing.B) {
		for b.Loop() {
			if _, err := Plan(held, next, limits); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("no-op", func(b *testing.B) {
		for b.Loop() {
			if _, err := Plan(held, old, limits); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkPlan10k(b *testing.B) { benchmarkPlan(b, 10_000) }
func BenchmarkPlan1M(b *testing.B)  { benchmarkPlan(b, 1_000_000) }

func BenchmarkPlanCreator10k(b *testing.B) {
	instances := map[string]CreatorInstance{}
	for i := 0; i < 10_000; i++ {
		id := "job" + strconv.Itoa(i)
		instances[id] = CreatorInstance{ID: id, Name: id}
	}
	target := CreatorTarget{System: "bk_job", Type: "job"}
	held := CreatorHeld(target, instances)
	for b.Loop() {
		if _, err := PlanCreator(target, held, instances, Limits{Grant: 200, Revoke: 1000}); err != nil {
			b.Fatal(err)
		}
	}
}
