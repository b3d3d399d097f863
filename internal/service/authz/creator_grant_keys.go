package authz

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/bkiam/terraform-provider-bkiam/internal/grantplan"
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/verify"
)

// A creator grant's instances are keyed by the instance's id, or, for an
// instance under ancestors, by its whole path in IAM's notation with the
// instance last: "/bk_sops,project,p1/bk_sops,mini_app,m1/". The planner
// works on instances by id; these convert between the two.

// creatorKey is the one key an instance is written under: its id alone
// when it has no ancestors, else its path.
func creatorKey(t grantplan.CreatorTarget, in grantplan.CreatorInstance) string {
	if len(in.Ancestors) == 0 {
		return in.ID
	}
	return in.Path(t.System, t.Type)
}

// parseCreatorKey reads a key: an id, or a path whose last node is the
// instance. A path that does not parse, or whose last node is not of the
// grant's system and type, is an error (Validate words it for the user).
func parseCreatorKey(t grantplan.CreatorTarget, key string) (grantplan.CreatorInstance, error) {
	if !strings.HasPrefix(key, "/") {
		return grantplan.CreatorInstance{ID: key}, nil
	}
	nodes, err := verify.ParsePath(key)
	if err != nil {
		return grantplan.CreatorInstance{}, err
	}
	last := nodes[len(nodes)-1]
	switch {
	case last.System != t.System || last.Type != t.Type:
		return grantplan.CreatorInstance{}, fmt.Errorf("its last node, %s,%s,%s, is not an instance of %s/%s: a key's path "+
			"ends with the instance itself, under its ancestors", last.System, last.Type, last.ID, t.System, t.Type)
	case len(nodes) < 2:
		return grantplan.CreatorInstance{}, fmt.Errorf("it names the instance alone: write its id, %q, as the key", last.ID)
	}
	for _, n := range nodes {
		for _, part := range []string{n.System, n.Type, n.ID} {
			if problem := verify.IDProblem(part); problem != "" {
				return grantplan.CreatorInstance{}, fmt.Errorf("its node %s,%s,%s holds %q, which %s (IAM would store it trimmed)",
					n.System, n.Type, n.ID, part, problem)
			}
		}
	}
	if last.ID == "*" {
		// A path ending in * is every instance under the ancestors: a
		// destroy would revoke them all.
		return grantplan.CreatorInstance{}, errors.New("it ends with the id *, which IAM reads as every instance under the " +
			"ancestors, not one created instance")
	}
	in := grantplan.CreatorInstance{ID: last.ID}
	for _, n := range nodes[:len(nodes)-1] {
		in.Ancestors = append(in.Ancestors, grantplan.Node{System: n.System, Type: n.Type, ID: n.ID})
	}
	return in, nil
}

// creatorInstancesOf converts a fully known instances attribute into
// instances by id; nil when any part is unknown, the attribute is null
// (an imported resource), or a key does not read (Validate has refused
// it).
func creatorInstancesOf(t grantplan.CreatorTarget, x protocol.StringMapValue) map[string]grantplan.CreatorInstance {
	names, ok := protocol.StringMapOf(x)
	if !ok {
		return nil
	}
	out := make(map[string]grantplan.CreatorInstance, len(names))
	for key, name := range names {
		in, err := parseCreatorKey(t, key)
		if err != nil {
			return nil
		}
		in.Name = name
		out[in.ID] = in
	}
	return out
}

// creatorInstancesValue is the instances attribute of instances by id.
func creatorInstancesValue(t grantplan.CreatorTarget, instances map[string]grantplan.CreatorInstance) protocol.StringMapValue {
	names := make(map[string]string, len(instances))
	for _, in := range instances {
		names[creatorKey(t, in)] = in.Name
	}
	return protocol.KnownStringMap(names)
}

// checkCreatorInstances refuses, at plan, keys that do not read, an
// instance given under two keys, blank names, and ids IAM would change.
func checkCreatorInstances(config CreatorGrantModel, diags *protocol.Diagnostics) {
	at := protocol.Root("instances")
	names, ok := config.Instances.Get()
	if !ok {
		return
	}
	verify.CheckInstanceCount(at, len(names), diags)
	var t grantplan.CreatorTarget
	system, okSystem := config.System.Get()
	typ, okType := config.Type.Get()
	t.System, t.Type = system, typ
	plain := map[string]protocol.StringValue{}
	keyOf := map[string]string{} // instance id → the first key naming it
	verify.CheckNames(at, names, diags)
	for _, key := range slices.Sorted(maps.Keys(names)) {
		if !strings.HasPrefix(key, "/") {
			plain[key] = names[key]
			// Paths sort before ids ("/" before any id), so a path naming this
			// instance has been seen already.
			if first, dup := keyOf[key]; dup {
				diags.AddAttributeError(at.WithElementKeyString(key), "Instance given twice",
					fmt.Sprintf("The keys %q and %q of instances both name the instance %q. An instance has one place: keep the "+
						"key with its ancestors (or its id alone, when it has none).", first, key, key))
			}
			keyOf[key] = key
			continue
		}
		if !okSystem || !okType || strings.TrimSpace(system) == "" || strings.TrimSpace(typ) == "" {
			continue // the last node is checked once system and type are known, and set
		}
		in, err := parseCreatorKey(t, key)
		if err != nil {
			diags.AddAttributeError(at.WithElementKeyString(key), "Invalid path",
				fmt.Sprintf("The key %q of instances begins with \"/\", so it is the instance's path under its ancestors, but %v. "+
					"Write the path as IAM does, outermost ancestor first and the instance last: /SYSTEM,TYPE,ID/…/, e.g. "+
					"/bk_sops,project,project1/bk_sops,mini_app,mini_app1/.", key, err))
			continue
		}
		above := make([][2]string, len(in.Ancestors))
		for i, n := range in.Ancestors {
			above[i] = [2]string{n.Type, n.ID}
		}
		verify.CheckRepeatedNode(at.WithElementKeyString(key), fmt.Sprintf("The path %q of instances", key), above, diags)
		if first, dup := keyOf[in.ID]; dup {
			diags.AddAttributeError(at.WithElementKeyString(key), "Instance given twice",
				fmt.Sprintf("The keys %q and %q of instances both name the instance %q. An instance has one place: keep the "+
					"key with its ancestors (or its id alone, when it has none).", first, key, in.ID))
			continue
		}
		keyOf[in.ID] = key
	}
	verify.CheckInstanceIDs(at, plain, diags)
}

// upgradeCreatorV0 turns a state of schema version 0, whose instances were
// objects of name and ancestors by id, into version 1's names by key.
func upgradeCreatorV0(attributes map[string]any) (map[string]any, error) {
	v0, _ := attributes["instances"].(map[string]any)
	if v0 == nil {
		return attributes, nil // null: an imported resource
	}
	system, _ := attributes["system"].(string)
	typ, _ := attributes["type"].(string)
	t := grantplan.CreatorTarget{System: system, Type: typ}
	v1 := make(map[string]any, len(v0))
	for id, raw := range v0 {
		obj, _ := raw.(map[string]any)
		in := grantplan.CreatorInstance{ID: id}
		in.Name, _ = obj["name"].(string)
		ancestors, _ := obj["ancestors"].([]any)
		for _, a := range ancestors {
			node, _ := a.(map[string]any)
			s, _ := node["system"].(string)
			ty, _ := node["type"].(string)
			i, _ := node["id"].(string)
			in.Ancestors = append(in.Ancestors, grantplan.Node{System: s, Type: ty, ID: i})
		}
		key := creatorKey(t, in)
		if len(in.Ancestors) > 0 {
			// The notation cannot carry an id holding "," or "/".
			if back, err := parseCreatorKey(t, key); err != nil || !slices.Equal(back.Ancestors, in.Ancestors) || back.ID != id {
				return nil, fmt.Errorf("the instance %q under its ancestors cannot be written as a path (an id holds \",\" or "+
					"\"/\"): remove the resource from state (terraform state rm), then import it and list its instances anew", id)
			}
		}
		v1[key] = in.Name
	}
	attributes["instances"] = v1
	return attributes, nil
}

// StateUpgrades: version 0 → 1, instances from objects to names by key.
func (CreatorGrant) StateUpgrades() map[int64]func(map[string]any) (map[string]any, error) {
	return map[int64]func(map[string]any) (map[string]any, error){0: upgradeCreatorV0}
}
