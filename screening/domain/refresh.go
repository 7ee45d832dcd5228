package domain

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"
)

// bootstrapFetchTimeout bounds one download of the bootstrap file.
const bootstrapFetchTimeout = 30 * time.Second

// RefreshBootstrap downloads the IANA DNS bootstrap file from Options.BootstrapURL and uses it from now
// on. On any failure (network, status, size, a file that does not parse or has no https service, or a
// publication older than the one in use) the bootstrap in use, at first the embedded one, is kept and the
// error says why.
func (c *Checker) RefreshBootstrap(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, bootstrapFetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.opts.BootstrapURL, nil)
	if err != nil {
		return fmt.Errorf("rdap bootstrap: %v", err)
	}
	resp, err := c.rdap.http.Do(req)
	if err != nil {
		return fmt.Errorf("rdap bootstrap: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("rdap bootstrap: %s answered %s", c.opts.BootstrapURL, resp.Status)
	}
	data, err := io.ReadAll(io.LimitReader(resp.Body, maxBootstrapBytes+1))
	if err != nil {
		return fmt.Errorf("rdap bootstrap: reading %s: %v", c.opts.BootstrapURL, err)
	}
	if len(data) > maxBootstrapBytes {
		return fmt.Errorf("rdap bootstrap: %s is larger than %d bytes", c.opts.BootstrapURL, maxBootstrapBytes)
	}
	b, err := parseBootstrap(data)
	if err != nil {
		return err
	}
	if cur := c.bootstrap.Load(); b.publication.Before(cur.publication) {
		return fmt.Errorf("rdap bootstrap: %s is from %s, older than the one in use (%s)",
			c.opts.BootstrapURL, b.publication.Format(time.RFC3339), cur.publication.Format(time.RFC3339))
	}
	c.bootstrap.Store(b)
	return nil
}

// BootstrapPublication is the publication time of the bootstrap file in use.
func (c *Checker) BootstrapPublication() time.Time { return c.bootstrap.Load().publication }

// Run refreshes the bootstrap at once and then every Options.BootstrapRefresh until ctx ends, logging
// failures to log (nil: slog.Default()). It returns at once when no bootstrap is needed (offline, or a
// fixed RDAP base URL).
func (c *Checker) Run(ctx context.Context, log *slog.Logger) {
	if c.opts.Offline || c.opts.RDAPBaseURL != "" {
		return
	}
	if log == nil {
		log = slog.Default()
	}
	t := time.NewTicker(c.opts.BootstrapRefresh)
	defer t.Stop()
	for {
		if err := c.RefreshBootstrap(ctx); err != nil {
			log.Warn("rdap bootstrap refresh failed; keeping the one in use", "err", err,
				"publication", c.BootstrapPublication().Format(time.RFC3339))
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
