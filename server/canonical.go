package server

import (
	"fmt"
	"net/http"
	"path"

	"github.com/payguard/payguard/server/core"
)

// canonical answers the requests that http.ServeMux would answer on its own with the service's JSON error:
// a path that is not in clean form (a doubled slash, a "." or ".." segment), which the mux redirects with a
// small HTML page, and a target that is not a path at all ("GET *"), which it refuses with an empty 400.
// Every answer then has the one error shape and states data_as_of, and no client is sent elsewhere by a
// redirect it might follow with another method, or with a payment meant for the path it asked for.
func (s *Server) canonical(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodConnect { // the mux routes CONNECT by host and path as given
			next.ServeHTTP(w, r)
			return
		}
		p := r.URL.Path
		if p == "" || p[0] != '/' {
			s.writeError(w, errorf(http.StatusBadRequest, core.CodeInvalidParameter,
				fmt.Sprintf("the request target must be a path starting with /; see %s", s.absURL("/openapi.json"))))
			return
		}
		if c := cleanPath(p); c != p {
			detail := ": the path is not in canonical form"
			if len(c) <= maxPathHint {
				detail += fmt.Sprintf(" (did you mean %s?)", c)
			}
			s.writeError(w, s.notFound(detail))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// maxPathHint bounds the cleaned path an error message repeats: every route is far shorter.
const maxPathHint = 128

// cleanPath is p as http.ServeMux cleans it before routing: path.Clean, keeping a trailing slash.
func cleanPath(p string) string {
	np := path.Clean(p)
	if p[len(p)-1] == '/' && np != "/" {
		np += "/"
	}
	return np
}
