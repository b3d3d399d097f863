// Package renewal is the one engine of rolling expiries (expires_in and
// renew_before), used by bkiam_instance_grant, bkiam_group_members and
// bkiam_user_groups through internal/rolling: durations as users write
// them ("90d", "12h1d"), what is wrong with them, and what a plan and its
// apply do to a rolling expiry.
//
// A rolling expiry is set once, at the apply that creates it (or changes
// expires_in), to the apply's time plus expires_in. From then on it moves
// on a fixed cadence: a plan made when less than renew_before is left, or
// will be within the margin (Rolling.Margin: a day, or less for short
// periods), renews it, and its apply sets the recorded expiry plus
// expires_in (plus as many more as it takes to leave the window, when the
// apply comes late). Anchored on the recorded expiry rather than on the
// clock, the cadence holds whatever day the plan runs.
//
// Terraform plans a changed resource again at apply and requires a value
// the first plan knew to stay. So a plan goes by asOf, the time the state
// was last read from IAM or written by an apply (the protocol seam keeps
// it), which a saved plan and its apply's plan share, however late the
// apply runs; a plan that renews leaves expires_at unknown, and the apply
// decides the date by its own time (AtApply). A plan saved within the
// margin before the window renews at its apply; one saved earlier applies
// as planned, and the next plan renews. Outside the window the recorded
// expiry stays, so that a plan between renewals is empty.
//
// The package is pure: the caller passes the time.
package renewal
