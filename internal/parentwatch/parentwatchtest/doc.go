// Package parentwatchtest orphans a process on purpose, for the tests of
// parentwatch and of main: Start runs a command as the background child of a
// shell, which the test then ends, so that the child outlives its parent as
// a provider outlives a killed Terraform CLI. The test reads the child's
// stdout, whose end tells it that the child has exited: it is no child of the
// test's, which cannot wait for it.
//
// It runs on unix only, where sh is.
package parentwatchtest
