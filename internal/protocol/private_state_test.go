package protocol

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestPrivateStateVersion(t *testing.T) {
	var diags Diagnostics
	p := PrivateState{}
	p.Set("holdings", map[string]int{"a": 1}, &diags)
	raw := p.Bytes(&diags)
	var stored map[string][]byte
	if err := json.Unmarshal(raw, &stored); err != nil {
		t.Fatal(err)
	}
	if string(stored[PrivateVersionKey]) != "1" {
		t.Fatalf("written private state %s has version %q, want 1", raw, stored[PrivateVersionKey])
	}
	back := ReadPrivateState(raw, &diags)
	if _, ok := back[PrivateVersionKey]; ok || len(back) != 1 || diags.HasError() {
		t.Fatalf("read back %v (%v), want the holdings alone", back, diags)
	}
	// Written before the version was recorded: format 1.
	old, _ := json.Marshal(map[string][]byte{"holdings": []byte(`{"a":1}`)})
	if back := ReadPrivateState(old, &diags); len(back) != 1 || diags.HasError() {
		t.Fatalf("unversioned private state read as %v (%v)", back, diags)
	}
	// Written by a newer provider: refused.
	stored[PrivateVersionKey] = []byte("2")
	newer, _ := json.Marshal(stored)
	ReadPrivateState(newer, &diags)
	if !diags.HasError() || !strings.Contains(diags[0].Detail, "format 2 by a newer version of the provider") {
		t.Fatalf("newer private state: %v", diags)
	}
	// The steps run in order.
	var ran []int64
	step := func(v int64) func(PrivateState) error {
		return func(PrivateState) error { ran = append(ran, v); return nil }
	}
	if err := UpgradePrivate(PrivateState{}, 1, map[int64]func(PrivateState) error{1: step(1)}); err != nil || len(ran) != 0 {
		t.Fatalf("current format: %v, ran %v", err, ran)
	}
}

// TestPrivateUpgradesCoverEveryVersion: a new private format comes with a
// step from each older one.
func TestPrivateUpgradesCoverEveryVersion(t *testing.T) {
	for v := int64(1); v < PrivateVersion; v++ {
		if PrivateUpgrades[v] == nil {
			t.Errorf("private format %d has no upgrade step to %d", v, v+1)
		}
	}
	for v := range PrivateUpgrades {
		if v < 1 || v >= PrivateVersion {
			t.Errorf("an upgrade step from private format %d, which format %d never runs", v, PrivateVersion)
		}
	}
}
