package server

// Helpers only this package's tests use, kept out of its production files (deadcode without -test
// reports what is reachable from tests alone; scripts/test.sh runs it as the lint suite).

import "net/http"

// Handler is the whole API with logging and panic recovery around it.
func (s *Server) Handler() http.Handler { return s.handler }
