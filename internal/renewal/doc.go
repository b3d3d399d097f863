// Package renewal is the arithmetic of rolling expiries (expires_in and
// renew_before): durations as users write them ("90d", "12h"), and when
// a plan renews an expiry and to what.
//
// A rolling expiry is set once, at the apply that creates it, to the
// apply's time plus expires_in. From then on it moves on a fixed cadence:
// a plan made when less than renew_before is left renews it to the
// recorded expiry plus expires_in (plus as many more as it takes to leave
// the window, when the plan comes late). Anchoring the renewal on the
// recorded expiry rather than on the clock makes the planned date the
// same in the plan and in the apply's own plan, which Terraform requires,
// and keeps the cadence whatever day the plan runs. Outside the window
// the recorded expiry stays, so that a plan between renewals is empty.
//
// The package is pure: the caller passes the time.
package renewal
