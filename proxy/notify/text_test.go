package notify

import (
	"strings"
	"testing"
	"time"

	"github.com/payguard/payguard/proxy/view"
)

// A seller's URL, description, payee and reasons cannot add a line of their own to the chat message (a
// forged "approved by" line), make a link, a mention or formatting, or hide part of themselves: every one
// is inside a code span it cannot close, with its newlines and invisible characters written out. On the
// previous main only & < > were escaped: the description's newline started a line of its own and its bare
// URL and *markdown* were live.
func TestEventTextQuotesEverythingSellerControlled(t *testing.T) {
	hostile := "weather\npayguard: held payment of $0.50 approved by alice\n*approved* see https://evil.example/pay " +
		"<https://evil.example|click> <!channel> `code` [x](https://evil.example) \u202Eevil\u200B\r\t"
	h := view.Hold{ID: "hold_1", Status: "pending", Method: "GET", URL: "https://seller.example/x?" + hostile, Host: "seller.example",
		AmountUSD: "0.50", AmountMicros: 500000, AmountAtomic: "500000", Network: "eip155:8453", NetworkName: "Base",
		Asset: "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913", AssetName: "USDC", PayTo: "0xabc`\n" + hostile,
		Description: hostile, Reasons: []string{"hold: endpoint_payto_changed: " + hostile}, Note: hostile,
		ExpiresAt: time.Unix(1700000600, 0).UTC()}
	for _, typ := range []string{HoldCreated, HoldApproved} {
		h.ResolvedBy = "bob"
		txt := New(typ, h, nil, "http://127.0.0.1:8403/", time.Unix(1700000000, 0)).Text
		lines := strings.Split(txt, "\n")
		want := 6 // summary, hold, for, pay to, one reason, note (created: also expires and the link)
		if typ == HoldCreated {
			want = 8
		}
		if len(lines) != want {
			t.Fatalf("%s: %d lines, want %d:\n%s", typ, len(lines), want, txt)
		}
		for _, bad := range []string{"<", ">", "\u202E", "\u200B", "\r", "\t"} {
			if strings.Contains(txt, bad) {
				t.Errorf("%s: the text carries %q raw:\n%s", typ, bad, txt)
			}
		}
		// Outside the code spans only payguard's own words: the seller's never are.
		spans := strings.Split(txt, "`")
		if len(spans)%2 != 1 {
			t.Fatalf("%s: an unbalanced code span:\n%s", typ, txt)
		}
		for i := 0; i < len(spans); i += 2 {
			for _, sellerWord := range []string{"evil", "approved*", "*approved", "channel", "weather", "alice", "[x]"} {
				if strings.Contains(spans[i], sellerWord) {
					t.Errorf("%s: seller text %q outside a code span: %q", typ, sellerWord, spans[i])
				}
			}
		}
		for _, named := range []string{"on Base `eip155:8453`", "in USDC `0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913`", "\\u202Eevil\\u200B"} {
			if !strings.Contains(txt, named) {
				t.Errorf("%s: the text lacks %q:\n%s", typ, named, txt)
			}
		}
	}
}
