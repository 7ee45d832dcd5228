package domain

// Helpers only this package's tests use, kept out of its production files (deadcode without -test
// reports what is reachable from tests alone; scripts/test.sh runs it as the lint suite).

// len reports the number of stored entries, expired ones included until they are next touched.
func (c *cache[V]) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.order.Len()
}
