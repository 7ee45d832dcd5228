//go:build !unix

package bolt

// notInUse cannot tell on this platform; bbolt's own lock still stops a second writer.
func notInUse(string) error { return nil }
