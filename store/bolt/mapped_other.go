//go:build !linux

package bolt

// dropMapped is a no-op where the map's pages are not released this way (see mapped_linux.go).
func (s *Store) dropMapped() {}
