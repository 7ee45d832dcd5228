package domain

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseRegistration(t *testing.T) {
	tests := []struct {
		name, body string
		want       time.Time
		err        string
	}{
		{"z.com", `{"objectClassName":"domain","ldhName":"Z.COM","events":[{"eventAction":"registration","eventDate":"1995-08-14T04:00:00Z"}]}`,
			time.Date(1995, 8, 14, 4, 0, 0, 0, time.UTC), ""},
		{"z.cz", `{"ldhName":"z.cz","events":[{"eventAction":"expiration","eventDate":"2019-08-30T12:00:00+00:00"},{"eventAction":"registration","eventDate":"2004-08-30T22:55:00+00:00"}]}`,
			time.Date(2004, 8, 30, 22, 55, 0, 0, time.UTC), ""},
		{"z.de", `{"events":[{"eventAction":"registration","eventDate":"2020-01-02T03:04:05.123+02:00"}]}`,
			time.Date(2020, 1, 2, 1, 4, 5, 123e6, time.UTC), ""},
		{"z.com", `{"events":[{"eventAction":"last changed","eventDate":"2020-01-01T00:00:00Z"}]}`, time.Time{}, "no registration event"},
		{"z.com", `{"events":[{"eventAction":"registration","eventDate":"14 Aug 1995"}]}`, time.Time{}, "not RFC 3339"},
		{"z.com", `{"objectClassName":"entity"}`, time.Time{}, "not a domain"},
		{"z.com", `{"ldhName":"other.com","events":[{"eventAction":"registration","eventDate":"1995-08-14T04:00:00Z"}]}`, time.Time{}, "not \"z.com\""},
		{"z.com", `[1,2]`, time.Time{}, "not RDAP JSON"},
		{"z.com", `{"events":[{"eventAction":"registration","eventDate":"0001-01-01T00:00:00Z"}]}`, time.Time{}, "before the DNS"},
	}
	for _, tt := range tests {
		got, err := parseRegistration([]byte(tt.body), tt.name)
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want %q", tt.body, err, tt.err)
			}
			continue
		}
		if err != nil || !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("%s: %v, %v; want %v UTC", tt.body, got, err, tt.want)
		}
	}
}

func FuzzParseRegistration(f *testing.F) {
	for _, name := range []string{"verisign-com-domain-example.com.json", "verisign-com-domain-google.com.json",
		"cznic-domain-example.cz.json", "centralnic-design-domain-notfound-404.json"} {
		body, err := os.ReadFile(filepath.Join("domaintest", "testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(body, "example.com")
	}
	f.Fuzz(func(t *testing.T, body []byte, name string) {
		at, err := parseRegistration(body, name)
		if err == nil && (at.Before(firstRegistration) || at.Location() != time.UTC) {
			t.Fatalf("accepted date %v (zero or implausible, or not UTC) from %q", at, body)
		}
	})
}
