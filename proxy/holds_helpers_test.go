package proxy

// Helpers only this package's tests use, kept out of its production files (deadcode without -test
// reports what is reachable from tests alone; scripts/test.sh runs it as the lint suite).

func (w *holdWaiters) count() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, s := range w.subs {
		n += len(s)
	}
	return n
}
