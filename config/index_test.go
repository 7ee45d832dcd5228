package config

import (
	"strings"
	"testing"
	"time"
)

// The Endpoint Index's defaults: observing on, the prober off (issue 20: opt-in), SPEC's seven days kept.
func TestIndexDefault(t *testing.T) {
	c, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	ix := c.Index
	if !ix.Observe || ix.Probe.Enabled || ix.Queue != 4096 || time.Duration(ix.Retention) != 720*time.Hour ||
		ix.MaxPerEndpoint != 256 || time.Duration(ix.Coalesce) != time.Hour {
		t.Fatalf("default index = %+v", ix)
	}
}

func TestIndexParse(t *testing.T) {
	for _, c := range []struct {
		name, yaml, wantErr string
	}{
		{"observing off", "index: {observe: false}", ""},
		{"every observation written", "index: {coalesce: 0s}", ""},
		{"prober with an endpoint and a private CIDR", "index: {probe: {enabled: true, endpoints: ['https://seller.example/x'], allow_private: ['10.0.0.0/8']}}", ""},
		{"prober with a discovery list", "index: {probe: {enabled: true, discovery_urls: ['https://facilitator.example/discovery/resources']}}", ""},
		{"retention under SPEC's seven days", "index: {retention: 100h}", "at least 168h"},
		{"queue of zero", "index: {queue: 0}", "index.queue"},
		{"max_per_endpoint of zero", "index: {max_per_endpoint: 0}", "index.max_per_endpoint"},
		{"negative coalesce", "index: {coalesce: -1s}", "must not be negative"},
		{"prober enabled with nothing to probe", "index: {probe: {enabled: true}}", "probe nothing"},
		{"probe endpoint not http(s)", "index: {probe: {endpoints: ['ftp://x/y']}}", "not an absolute http(s) URL"},
		{"allow_private not a CIDR", "index: {probe: {allow_private: ['10.0.0.1']}}", "not a CIDR"},
		{"prober timeout of zero", "index: {probe: {enabled: true, endpoints: ['https://a.example/'], timeout: 0s}}", "must be positive"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse([]byte(c.yaml))
			if c.wantErr == "" && err != nil {
				t.Fatalf("Parse: %v", err)
			}
			if c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)) {
				t.Fatalf("Parse error %v, want one containing %q", err, c.wantErr)
			}
		})
	}
}
