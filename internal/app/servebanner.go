package app

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/payguard/payguard/config"
	"github.com/payguard/payguard/server"
	"github.com/payguard/payguard/server/fees"
)

// writeServeBanner is serve's start-up summary for the operator, as the proxy prints its own: where the API,
// its page, OpenAPI and MCP are, what fees are paid in and to whom, through which facilitator, who the
// contact is, and whether paid calls work now, asking the facilitator once first (bounded by its verify
// timeout) so a facilitator that cannot settle on the fee network is said here, not found by the first payer.
func writeServeBanner(ctx context.Context, w io.Writer, srv *server.Server, f *fees.Facilitator, sc config.ServerConfig, addr string, t fees.Terms) {
	if w == nil {
		return
	}
	facNote := "reachable, settles on " + t.Network
	if err := srv.CheckFacilitator(ctx, f); err != nil {
		facNote = "FAILED its check: " + err.Error()
	}
	base := strings.TrimRight(sc.BaseURL, "/")
	var b strings.Builder
	fmt.Fprintf(&b, `payguard serve is running (API %s)
  listening    %s
  page         %s/  (what this is, for people; links to everything below)
  OpenAPI      %s/openapi.json
  MCP          %s/mcp
  fees         USDC on %s to %s
  facilitator  %s  (%s)
  contact      %s
`, server.ServiceVersion, addr, base, base, base, t.Network, t.PayTo, f.URL(), facNote, sc.Contact)
	if sc.MetricsListen != "" {
		fmt.Fprintf(&b, "  metrics      http://%s/metrics\n", sc.MetricsListen)
	}
	if ok, why := srv.PaidCalls(ctx); ok {
		b.WriteString("Paid calls: READY. /health and /readyz say when that changes.\n")
	} else {
		fmt.Fprintf(&b, "\nPaid calls: NOT READY: %s.\n  Free calls (?trial=1) and documents still answer; /health and /readyz say the same.\n", why)
	}
	_, _ = io.WriteString(w, b.String())
}
