//go:build !linux

package bolt

// lowerApplierPriority does nothing where threads have no priority of their own.
func lowerApplierPriority() {}
