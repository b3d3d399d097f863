//go:build unix

package parentwatch

// On unix the kernel gives an orphan a new parent, and getppid(2) shows it.
const supported = true
