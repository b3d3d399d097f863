package protocol

import (
	"encoding/json"
	"fmt"
	"maps"
	"strconv"
	"time"
)

// PrivateState is a resource's private state: JSON documents by key, in
// the framework's encoding, so that state written by either reads back.
type PrivateState map[string][]byte

func ReadPrivateState(raw []byte, diags *Diagnostics) PrivateState {
	p := PrivateState{}
	if len(raw) == 0 {
		return p
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		diags.AddError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
		return p
	}
	version := int64(1) // written before the version was recorded: the first format
	if v, ok := p[PrivateVersionKey]; ok {
		delete(p, PrivateVersionKey)
		if err := json.Unmarshal(v, &version); err != nil {
			diags.AddError("Cannot read the resource's private state",
				fmt.Sprintf("The version of the record of what this resource holds in IAM is corrupt (%v). Remove the "+
					"resource from state (terraform state rm) and import it again.", err))
			return p
		}
	}
	if err := UpgradePrivate(p, version, PrivateUpgrades); err != nil {
		diags.AddError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM cannot be read: %v.", err))
	}
	return p
}

// PrivateVersionKey records the format of a private state, so that a
// later version of the provider can read, or refuse, what this one
// wrote. bytes adds it and readPrivateState removes it: the map a
// resource works on never holds it.
const PrivateVersionKey = "private_version"

// PrivateVersion is the format this provider writes. A private state
// without a version is in format 1, the one written before versions were
// recorded. A new format adds a step from the previous one to
// privateUpgrades (TestPrivateUpgradesCoverEveryVersion).
const PrivateVersion = 1

// PrivateUpgrades[v] turns a private state of format v into format v+1,
// in place.
var PrivateUpgrades = map[int64]func(PrivateState) error{}

// UpgradePrivate brings p from format version to privateVersion.
func UpgradePrivate(p PrivateState, version int64, steps map[int64]func(PrivateState) error) error {
	if version > PrivateVersion {
		return fmt.Errorf("it was written in format %d by a newer version of the provider, and this one reads formats up "+
			"to %d: use that newer version (or a later one) with this state, since an older one could lose track of what "+
			"the resource granted", version, PrivateVersion)
	}
	for v := version; v < PrivateVersion; v++ {
		step := steps[v]
		if step == nil {
			return fmt.Errorf("it is in format %d, which this provider cannot upgrade (a bug in the provider)", v)
		}
		if err := step(p); err != nil {
			return fmt.Errorf("upgrading it from format %d: %w", v, err)
		}
	}
	return nil
}

func (p PrivateState) Bytes(diags *Diagnostics) []byte {
	if len(p) == 0 {
		return nil
	}
	out := maps.Clone(map[string][]byte(p))
	out[PrivateVersionKey] = []byte(strconv.Itoa(PrivateVersion))
	raw, err := json.Marshal(out)
	if err != nil {
		diags.AddError("Cannot record what the resource holds", err.Error())
	}
	return raw
}

// Get decodes the JSON kept under key, reporting whether there was any.
func (p PrivateState) Get(key string, into any, diags *Diagnostics) bool {
	raw := p[key]
	if len(raw) == 0 {
		return false
	}
	if err := json.Unmarshal(raw, into); err != nil {
		diags.AddError("Cannot read the resource's private state",
			fmt.Sprintf("The record of what this resource holds in IAM is corrupt (%v). Remove the resource from state "+
				"(terraform state rm) and import it again.", err))
		return false
	}
	return true
}

// Set keeps v as JSON under key, or removes the key when v is nil.
func (p PrivateState) Set(key string, v any, diags *Diagnostics) {
	if v == nil {
		delete(p, key)
		return
	}
	raw, err := json.Marshal(v)
	if err != nil {
		diags.AddError("Cannot record what the resource holds", err.Error())
		return
	}
	p[key] = raw
}

// renewAfterKey is where a Renewer keeps, in unix seconds, the time after
// which its next renewal falls due.
const renewAfterKey = "renew_after"

// RenewDueAfter reports whether private records a renewal that falls due
// before asOf (WithRenewAfter): what a Renewer's RenewDue usually answers.
func RenewDueAfter(private PrivateState, asOf time.Time) bool {
	after, err := strconv.ParseInt(string(private[renewAfterKey]), 10, 64)
	return err == nil && asOf.Unix() > after
}

// readAtKey is where the seam keeps, for a Renewer with a renewal
// recorded (renew_after), when its state was last read from IAM or
// written by an apply, in unix seconds: the time its plans go by
// (PlanRequest.AsOf).
const readAtKey = "read_at"

// asOf is the time a plan over private goes by: its read_at, else now.
func asOf(private PrivateState, now time.Time) time.Time {
	if at, err := strconv.ParseInt(string(private[readAtKey]), 10, 64); err == nil && at > 0 {
		return time.Unix(at, 0)
	}
	return now
}

// WithReadAt records in private (a copy) that the state was read or
// written at now, when private records a renewal; else private as it is.
// The seam calls it on every read and apply of a Renewer.
func WithReadAt(private PrivateState, now time.Time) PrivateState {
	if _, renews := private[renewAfterKey]; !renews {
		return private
	}
	private = maps.Clone(private)
	private[readAtKey] = []byte(strconv.FormatInt(now.Unix(), 10))
	return private
}

// WithRenewAfter records in private (a copy, when it changes) the time
// after which the next renewal falls due, in unix seconds; 0 forgets it.
func WithRenewAfter(private PrivateState, after int64) PrivateState {
	value := ""
	if after != 0 {
		value = strconv.FormatInt(after, 10)
	}
	if value == string(private[renewAfterKey]) {
		return private
	}
	private = maps.Clone(private)
	if private == nil {
		private = PrivateState{}
	}
	if value == "" {
		delete(private, renewAfterKey)
	} else {
		private[renewAfterKey] = []byte(value)
	}
	return private
}
