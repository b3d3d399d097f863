package verify

import (
	"github.com/bkiam/terraform-provider-bkiam/internal/protocol"
	"github.com/bkiam/terraform-provider-bkiam/internal/renewal"
)

// RollingSettings are a rolling resource's expires_in and renew_before as
// the configuration writes them, for renewal.Check.
func RollingSettings(expiresIn, renewBefore protocol.StringValue) (renewal.Setting, renewal.Setting) {
	setting := func(v protocol.StringValue) renewal.Setting {
		s, known := v.Get()
		return renewal.Setting{Value: s, Set: !v.IsNull(), Known: known}
	}
	return setting(expiresIn), setting(renewBefore)
}

// Rolling is a rolling resource's rolling expiry; ok is false when
// expires_in is null, or either duration is unknown or does not parse
// (the resource's Validate says why).
func Rolling(expiresIn, renewBefore protocol.StringValue) (renewal.Rolling, bool) {
	if expiresIn.IsNull() {
		return renewal.Rolling{}, false
	}
	r, ok, _ := renewal.Check(RollingSettings(expiresIn, renewBefore))
	return r, ok
}
