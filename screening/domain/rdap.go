package domain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxRDAPBytes bounds one RDAP answer; real domain answers are a few kilobytes.
const maxRDAPBytes = 1 << 20

// firstRegistration bounds plausible registration dates: the first .com was registered on 1985-03-15.
var firstRegistration = time.Date(1985, 1, 1, 0, 0, 0, 0, time.UTC)

// registration is what RDAP said about a domain's registration date.
type registration struct {
	at     time.Time // zero when unknown
	reason string    // why at is unknown
	// definite is true for answers worth caching with the positive TTL (a date was found). Not-found
	// answers and failures are kept only for the negative TTL.
	definite bool
}

// rdapClient asks a registry's RDAP server for a domain's registration event.
type rdapClient struct {
	http *http.Client
}

func newRDAPClient(transport http.RoundTripper) *rdapClient {
	return &rdapClient{http: &http.Client{
		Transport: transport,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= 3 {
				return errors.New("more than 3 redirects")
			}
			// A redirect may not downgrade to plain http: the answer could then be rewritten on the path.
			if via[0].URL.Scheme == "https" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect from https to %s refused", req.URL.Scheme)
			}
			return nil
		},
	}}
}

// registration fetches {base}domain/{name} and reads its "registration" event. Every failure becomes an
// unknown date with the reason; nothing is guessed.
func (c *rdapClient) registration(ctx context.Context, base, name string) registration {
	u := withSlash(base) + "domain/" + url.PathEscape(name)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return registration{reason: fmt.Sprintf("RDAP request for %s: %v", name, err)}
	}
	req.Header.Set("Accept", "application/rdap+json, application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return registration{reason: fmt.Sprintf("RDAP lookup at %s timed out", hostOfURL(u))}
		}
		return registration{reason: fmt.Sprintf("RDAP lookup at %s failed: %v", hostOfURL(u), unwrapURLError(err))}
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		// RFC 9082: a 404 from the authoritative server means the object does not exist.
		return registration{reason: fmt.Sprintf("not registered (RDAP 404 from %s)", resp.Request.URL.Host)}
	case resp.StatusCode != http.StatusOK:
		return registration{reason: fmt.Sprintf("RDAP server %s answered %s", resp.Request.URL.Host, resp.Status)}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxRDAPBytes+1))
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return registration{reason: fmt.Sprintf("RDAP lookup at %s timed out", resp.Request.URL.Host)}
		}
		return registration{reason: fmt.Sprintf("reading RDAP answer from %s: %v", resp.Request.URL.Host, err)}
	}
	if len(body) > maxRDAPBytes {
		return registration{reason: fmt.Sprintf("RDAP answer from %s is larger than %d bytes", resp.Request.URL.Host, maxRDAPBytes)}
	}
	at, err := parseRegistration(body, name)
	if err != nil {
		return registration{reason: fmt.Sprintf("RDAP answer from %s: %v", resp.Request.URL.Host, err)}
	}
	return registration{at: at, definite: true}
}

// parseRegistration reads the eventDate of the "registration" event of an RDAP domain object
// (RFC 9083 section 4.5). RFC 3339 dates with "Z" and with numeric offsets ("+00:00") are both read.
func parseRegistration(body []byte, name string) (time.Time, error) {
	var doc struct {
		ObjectClassName string `json:"objectClassName"`
		LDHName         string `json:"ldhName"`
		Events          []struct {
			Action string `json:"eventAction"`
			Date   string `json:"eventDate"`
		} `json:"events"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return time.Time{}, fmt.Errorf("not RDAP JSON: %v", err)
	}
	if doc.ObjectClassName != "" && doc.ObjectClassName != "domain" {
		return time.Time{}, fmt.Errorf("object class %q, not a domain", doc.ObjectClassName)
	}
	// Guard against a misrouted or misconfigured server vouching for a different domain.
	if doc.LDHName != "" && !strings.EqualFold(strings.TrimSuffix(doc.LDHName, "."), name) {
		return time.Time{}, fmt.Errorf("answer is for %q, not %q", doc.LDHName, name)
	}
	for _, e := range doc.Events {
		if !strings.EqualFold(e.Action, "registration") {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Date))
		if err != nil {
			return time.Time{}, fmt.Errorf("registration date %q is not RFC 3339", e.Date)
		}
		if t.Before(firstRegistration) {
			return time.Time{}, fmt.Errorf("registration date %s is before the DNS had registrations", e.Date)
		}
		return t.UTC(), nil
	}
	return time.Time{}, errors.New("no registration event")
}

func hostOfURL(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Host
	}
	return raw
}

// unwrapURLError drops net/http's `Get "URL":` prefix; the callers already name the server.
func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}
