// Package notify tells people that a hold is waiting for them: it builds one event per hold change (created,
// approved, denied, expired) from the store's holds, and delivers it to webhooks in the background, signed
// with HMAC-SHA256, retried with backoff from a bounded queue. Nothing here is on a decision's path: the
// proxy only kicks the watcher (a non-blocking send), and a hung receiver fills its own queue, never the
// proxy's. An event carries the one hold view (proxy/view.Hold), as the admin API, the CLI and the console
// show it.
//
// Fleet: the watcher reads holds from the store, so holds created or resolved by any proxy sharing it are
// seen; every event is claimed once in the store (Claimer) before it is queued, so a fleet sends it once.
package notify

import (
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/payguard/payguard/proxy/view"
)

// Event types.
const (
	HoldCreated  = "hold.created"
	HoldApproved = "hold.approved"
	HoldDenied   = "hold.denied"
	HoldExpired  = "hold.expired"
)

// Event is what a webhook receives. Text is Slack's incoming-webhook field (plain text, one message); every
// other member is for programs.
type Event struct {
	ID         string       `json:"id"` // <hold id>:<type>, the same across retries and fleet members
	Type       string       `json:"type"`
	At         time.Time    `json:"at"`
	Text       string       `json:"text"`
	Hold       view.Hold    `json:"hold"`
	Budget     *view.Budget `json:"budget,omitempty"`
	ApproveURL string       `json:"approve_url,omitempty"`
}

// New makes the event of type typ for hold h. consoleURL "" leaves out the approve link.
func New(typ string, h view.Hold, b *view.Budget, consoleURL string, at time.Time) Event {
	ev := Event{ID: h.ID + ":" + typ, Type: typ, At: at.UTC(), Hold: h, Budget: b}
	if consoleURL != "" {
		// The hold id goes in the fragment: it never reaches a server log, and the console signs in first.
		ev.ApproveURL = strings.TrimRight(consoleURL, "/") + "/#hold=" + url.QueryEscape(h.ID)
	}
	ev.Text = text(ev)
	return ev
}

// text is the one-message summary for chat webhooks. Every string a seller (or an approver) controls is
// shown by quoted: inside an inline code span, where Slack (and Markdown renderers generally) make no link,
// mention or formatting, with its own backticks, newlines and invisible characters made visible, so it
// cannot end the span, start a line of its own (a forged "approved by" line) or hide a part of itself.
func text(ev Event) string {
	h := ev.Hold
	var b strings.Builder
	switch ev.Type {
	case HoldCreated:
		fmt.Fprintf(&b, "payguard: payment of $%s held for approval", h.AmountUSD)
	case HoldApproved:
		fmt.Fprintf(&b, "payguard: held payment of $%s approved by %s", h.AmountUSD, quoted(h.ResolvedBy))
	case HoldDenied:
		fmt.Fprintf(&b, "payguard: held payment of $%s denied by %s", h.AmountUSD, quoted(h.ResolvedBy))
	case HoldExpired:
		fmt.Fprintf(&b, "payguard: held payment of $%s expired unanswered", h.AmountUSD)
	}
	fmt.Fprintf(&b, "\nhold %s: %s %s", h.ID, quoted(h.Method), quoted(h.URL))
	if h.Description != "" {
		fmt.Fprintf(&b, "\nfor %s", quoted(h.Description))
	}
	if h.PayTo != "" {
		fmt.Fprintf(&b, "\npay to %s on %s", quoted(h.PayTo), named(h.NetworkName, h.Network))
		if h.Asset != "" {
			fmt.Fprintf(&b, " in %s", named(h.AssetName, h.Asset))
		}
	}
	for _, r := range h.Reasons {
		fmt.Fprintf(&b, "\n- %s", quoted(r))
	}
	if h.Note != "" {
		fmt.Fprintf(&b, "\nnote: %s", quoted(h.Note))
	}
	if ev.Type == HoldCreated {
		fmt.Fprintf(&b, "\nexpires %s", h.ExpiresAt.UTC().Format(time.RFC3339))
		if ev.ApproveURL != "" {
			fmt.Fprintf(&b, "\n%s", ev.ApproveURL)
		}
	}
	return b.String()
}

// named is a network's or asset's known name with the raw value quoted beside it ("Base `eip155:8453`"),
// or the raw value alone.
func named(name, raw string) string {
	if name == "" {
		return quoted(raw)
	}
	return name + " " + quoted(raw)
}

// maxQuoted bounds one quoted value in the text (the event's other members carry it whole).
const maxQuoted = 512

// quoted shows s as text in a chat message: Slack's own escaping of & < > (its documented control
// characters), then inside a code span (no links, mentions or formatting), with a backtick shown as ˋ
// (U+02CB) so s cannot close the span, and every control, format or separator character (a newline, a
// right-to-left override, a zero-width space) written as its escape (\n, \u202E), so s stays on its line
// and shows all of itself. Cut at maxQuoted bytes.
func quoted(s string) string {
	if s == "" {
		return "(none)"
	}
	var b strings.Builder
	b.WriteByte('`')
	n := 0
	for _, r := range s {
		if n >= maxQuoted {
			b.WriteString("…")
			break
		}
		n += utf8.RuneLen(r)
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '`':
			b.WriteRune('ˋ')
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == utf8.RuneError || unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp, unicode.Co) ||
			unicode.IsSpace(r) && r != ' ':
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('`')
	return b.String()
}
