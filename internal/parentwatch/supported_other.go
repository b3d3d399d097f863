//go:build !unix

package parentwatch

// Elsewhere a process keeps its parent's pid after the parent exits (windows
// records it at creation and never updates it; the pid may even be reused), so
// a change of getppid says nothing. Waiting on a handle to the parent would
// work on windows; nothing here needs it yet.
const supported = false
