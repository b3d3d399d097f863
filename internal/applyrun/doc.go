// Package applyrun is the one apply path of every protocol-served
// resource that sends IAM calls: Run claims the planned paths, sends the
// planned calls one by one within the apply's timeout (RunCalls), hands
// over, releases and records. A resource writes only its hooks, a Change.
package applyrun
