package domain

import (
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
)

// embeddedBootstrap is IANA's RDAP DNS bootstrap registry (RFC 9224), publication 2026-03-23T19:00:02Z;
// see domaintest/testdata/PROVENANCE.md and testdata/README.md. It is the fallback whenever a refresh fails.
//
//go:embed iana-dns-bootstrap.json
var embeddedBootstrap []byte

// DefaultBootstrapURL is where IANA publishes the RDAP DNS bootstrap registry.
const DefaultBootstrapURL = "https://data.iana.org/rdap/dns.json"

// maxBootstrapBytes bounds a fetched bootstrap file (IANA's is about 70 KB).
const maxBootstrapBytes = 4 << 20

// bootstrap maps DNS suffixes (normally TLDs, in A-label form) to RDAP base URLs.
type bootstrap struct {
	publication time.Time
	bases       map[string][]string
}

// parseBootstrap reads an RFC 9224 DNS bootstrap file. Only https base URLs are kept: a registration date
// fetched over plain http could be rewritten by anyone on the path, and an old date is positive evidence.
// A file without a single usable service is an error, so a broken download never replaces a good file.
func parseBootstrap(data []byte) (*bootstrap, error) {
	var doc struct {
		Publication string       `json:"publication"`
		Services    [][][]string `json:"services"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("rdap bootstrap: %v", err)
	}
	b := &bootstrap{bases: make(map[string][]string)}
	if doc.Publication != "" {
		t, err := time.Parse(time.RFC3339, doc.Publication)
		if err != nil {
			return nil, fmt.Errorf("rdap bootstrap: publication %q: %v", doc.Publication, err)
		}
		b.publication = t
	}
	for _, svc := range doc.Services {
		if len(svc) != 2 {
			return nil, errors.New("rdap bootstrap: a service is not a [suffixes, urls] pair")
		}
		var urls []string
		for _, u := range svc[1] {
			if strings.HasPrefix(strings.ToLower(u), "https://") {
				urls = append(urls, withSlash(u))
			}
		}
		if len(urls) == 0 {
			continue
		}
		for _, suffix := range svc[0] {
			suffix = strings.ToLower(strings.Trim(suffix, "."))
			if suffix != "" {
				b.bases[suffix] = urls
			}
		}
	}
	if len(b.bases) == 0 {
		return nil, errors.New("rdap bootstrap: no service with an https URL")
	}
	return b, nil
}

// lookup returns the RDAP base URLs for a domain: the service whose suffix matches the most labels
// (RFC 9224 section 4).
func (b *bootstrap) lookup(domain string) []string {
	for rest := domain; rest != ""; {
		if urls, ok := b.bases[rest]; ok {
			return urls
		}
		i := strings.IndexByte(rest, '.')
		if i < 0 {
			break
		}
		rest = rest[i+1:]
	}
	return nil
}

func withSlash(u string) string {
	if strings.HasSuffix(u, "/") {
		return u
	}
	return u + "/"
}

// mustEmbeddedBootstrap is the parsed embedded file, parsed once and shared (a bootstrap is never
// modified after parsing). A broken embedded file is a build defect.
var mustEmbeddedBootstrap = sync.OnceValue(func() *bootstrap {
	b, err := parseBootstrap(embeddedBootstrap)
	if err != nil {
		panic("domain: embedded RDAP bootstrap: " + err.Error())
	}
	return b
})
