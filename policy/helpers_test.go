package policy

// Helpers only this package's tests use, kept out of its production files (deadcode without -test
// reports what is reachable from tests alone; scripts/test.sh runs it as the lint suite).

// Choose returns the index of the option Evaluate will choose, or -1 when no option is acceptable.
func Choose(f Facts) int {
	chosen, _, _ := choose(f)
	return chosen
}
