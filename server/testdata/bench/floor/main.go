// Command floor is the calibration server for rate.sh (FLOOR=1): Go's net/http reading the request body and
// answering 2.4 KB of JSON (a preflight answer's size) with no other work. What the load tool measures
// against it is the floor this machine, net/http and the tool give any Go server at that rate.
package main

import (
	"io"
	"log"
	"net/http"
	"os"
	"strings"
)

func main() {
	addr := "127.0.0.1:18091"
	if len(os.Args) > 1 {
		addr = os.Args[1]
	}
	body := []byte(`{"floor":"` + strings.Repeat("a", 2400) + `"}`)
	log.Fatal(http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/health" {
			return
		}
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	})))
}
