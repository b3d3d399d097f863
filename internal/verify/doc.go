// Package verify holds the checks the resources share: of IAM ids and
// instance lists at plan time, of a configuration against a system's model
// (SystemModel, RelatedTypeProblems), and the framework validators of ids.
package verify
