package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	neturl "net/url"
	"strconv"
	"strings"
	"time"

	"github.com/payguard/payguard/index"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/preflight"
	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// Decision values as on the wire.
const (
	allow = "allow"
	hold  = "hold"
	block = "block"
)

// verdict is what the proxy does with one challenge or payment, with everything the response, the log line
// and the metrics need.
type verdict struct {
	Decision string // allow | hold | block
	Reasons  []string
	Result   *preflight.Result // nil when the engine was never reached (decode errors, ledger down)
	Chosen   int               // index of the allowed option in the challenge
	Option   *x402.Requirement // the allowed (or held) option
	Amount   int64             // micro-dollars reserved on allow
	Hold     *store.Hold       // the hold involved, if any
	Release  *release          // allow: what to commit when the seller settles
	Class    string            // reason class for metrics
	// Judged is the option the decision judged (judged.go), so that a block's log line names the amount and
	// payee it refused although it chose none.
	Judged *x402.Requirement
	// Shadow is "would_block" or "would_hold" when a report-mode agent's refusal was let through (shadow.go).
	Shadow string
	// Agent is the agent the decision was made for; rs and ag the rule set and agent rules it used (agents.go).
	Agent string
	rs    *RuleSet
	ag    *agentRules
}

// release is a reservation whose payment may go to the seller; settlement commits it.
type release struct {
	Budget, Day, ReservationID string
	AmountMicros               int64
	Via                        string // "ticket" or "preflight"
	// ReceiptID is the receipt of the decision that allowed the payment, sent back with the seller's
	// response so the agent can tie what it paid to the decision that let it.
	ReceiptID string
	// Option is the option the payment pays (its scheme decides how the settlement is read: settle.go);
	// Payer signed the authorization and Host is the seller's host, for a settlement alarm.
	Option *x402.Requirement
	Payer  string
	Host   string
	// AgentBudget and AgentReservationID are the agent's own reservation of the same amount, when the agent
	// has its own cap (agentledger.go); settled with the global one.
	AgentBudget, AgentReservationID string
}

// failClosed is a block that never reached a decision (undecodable input, ledger or engine down).
func failClosed(class, reason string) verdict {
	return verdict{Decision: block, Reasons: []string{"block: " + reason}, Chosen: -1, Class: class}
}

// receiptID is the receipt of the decision behind v: the engine's, or for a payment released on a ticket
// the receipt of the decision that allowed the ticket.
func (v verdict) receiptID() string {
	switch {
	case v.Result != nil:
		return v.Result.Receipt.ID
	case v.Release != nil:
		return v.Release.ReceiptID
	}
	return ""
}

// decisionTimeout bounds one decision's store, engine and domain work (its context's deadline): a slow
// ledger or lookup fails closed instead of holding its agent's request for good.
const decisionTimeout = 15 * time.Second

// maxDecideAttempts bounds how often one challenge is decided afresh after the ledger refused the
// reservation of an allow (decideOnce): each refusal means another decision reserved the room meanwhile, so
// a few attempts follow the ledger's latest figures; the last refusal is the daily-cap block as the ledger
// gave it (capBlock).
const maxDecideAttempts = 4

// decide runs the preflight for a challenge: read the ledger, decide, and on allow reserve. No lock is held
// across those steps: decisions on one budget run side by side (on this proxy as on every proxy of a fleet
// sharing the store), and the daily cap holds because the store's reservation checks it atomically with
// the reservation itself (store.Ledger's Reserve and ReserveTicket, ErrBudgetExceeded), for the global
// budget and the agent's own (agentledger.go). A reservation the ledger refuses is decided afresh on the
// ledger's new figures (decideOnce), so the refusal is the engine's own daily-cap block, its receipt's input
// naming the spend it was decided on. (A hold is not decided again: it reserves nothing, and its approval is
// released only through the same atomic reservation, so a hold judged on a spend that another decision has
// since raised past the cap is refused at the cap when approved.) The receipt a refusal or hold shows is
// hashed and signed last.
// withTicket: an allowed challenge also gets its payment ticket, written with the reservation in one store
// write.
func (p *Proxy) decide(ctx context.Context, method, url string, pr *x402.PaymentRequired, withTicket bool) verdict {
	return p.decideWith(ctx, method, url, pr, withTicket, nil)
}

// decideWith is decide with the memo's entry pr is an unchanged view of (nil: none), whose encoding of
// the chosen option the ticket takes (challengememo.go).
func (p *Proxy) decideWith(ctx context.Context, method, url string, pr *x402.PaymentRequired, withTicket bool, entry *memoChallenge) verdict {
	ctx, cancel := context.WithTimeout(ctx, decisionTimeout)
	defer cancel()
	rs := p.ruleSet() // one load: the whole decision uses this rule set
	ag := rs.agent(agentIDOf(ctx))
	if ag == nil {
		v := failClosed("agent_refused", "agent "+agentIDOf(ctx)+" is not configured (removed by a reload?)")
		v.Agent, v.rs = agentIDOf(ctx), rs
		return v
	}
	in := decisionChallenge(pr, url)
	at := targetOf(url) // the URL parsed once for the whole decision, its retries included
	// The domain facts are the engine's to ask (domainFacts): its first attempt fills the checker's cache,
	// which a retry then reads. (Asked here first when decisions held a budget lock, to keep the DNS and
	// RDAP lookups outside it; no lock is held now, and asking twice cost a cache lookup per decision.)
	p.prefetchIndex(ctx, method, url) // observe.go: the Index read, once per challenge
	var v verdict
	var input *preflight.Input
	var sign, again bool
	for attempt := 1; ; attempt++ {
		ahead := attempt == 1 && p.canDecideAhead(ag, at.alarmSite, withTicket) // ahead.go: one round trip for a plain allow
		v, input, sign, again = p.decideOnce(ctx, rs, ag, in, method, at, pr, entry, withTicket, ahead, attempt == maxDecideAttempts)
		if !again {
			break
		}
	}
	v.Agent, v.rs, v.ag = ag.id, rs, ag
	if sign || p.opts.Journal != nil && v.Result != nil && v.Result.Receipt.JWS == "" {
		// A journal keeps every receipt signed, allowed ones too, so that an auditor can verify each.
		v = p.signed(v, input)
		v.Agent, v.rs, v.ag = ag.id, rs, ag
	}
	p.journal(method, url, v, input) // journal.go
	return v
}

// decideOnce reads the ledger, decides the challenge in (decisionChallenge's) on its figures and, on allow,
// reserves. sign: the verdict shows its receipt, which the caller signs. again: the ledger refused the
// allow's reservation under the cap the engine judged (another decision took the room since the ledger was
// read), so the challenge is to be decided afresh on the ledger's new figures; never when last.
func (p *Proxy) decideOnce(ctx context.Context, rs *RuleSet, ag *agentRules, in *x402.PaymentRequired, method string, at target, pr *x402.PaymentRequired, entry *memoChallenge, withTicket, ahead, last bool) (v verdict, input *preflight.Input, sign, again bool) {
	day, url := p.day(), at.url
	var state store.BudgetState
	var alarm *alarmRead
	var err error
	if !ahead { // ahead: decided on an assumed spend of 0, the figures read with the reservation (ahead.go)
		if state, alarm, err = p.readState(ctx, day, at.alarmSite); err != nil {
			return failClosed("ledger_error", "budget ledger unavailable: "+err.Error()), nil, false, false
		}
	}
	spent := state.Spent + state.Reserved
	if ag.capMicros > 0 { // the engine judges the agent's cap; the ledger enforces both (agentledger.go)
		if spent, err = p.agentSpent(ctx, ag, day); err != nil {
			return failClosed("ledger_error", "agent budget ledger unavailable: "+err.Error()), nil, false, false
		}
	}
	// The input and its context in one allocation (issue 36).
	both := &struct {
		in  preflight.Input
		ctx preflight.Context
	}{in: preflight.Input{Challenge: in, ResourceURL: url, ResourceMethod: method},
		ctx: preflight.Context{SpentTodayUSD: policy.USD(spent), AgentID: ag.id, ConfigSHA256: rs.hash}}
	both.in.Context = &both.ctx
	input = &both.in
	res, err := p.deciderOf(ag).DecideUnsigned(ctx, input)
	if err != nil || res == nil {
		return failClosed("engine_error", fmt.Sprintf("preflight unavailable: %v", err)), nil, false, false
	}
	if ahead && res.Decision != allow {
		return verdict{}, nil, false, true // not a plain allow: decided again on the ledger's read
	}
	if !ahead { // ahead, the reservation's script reads the alarm and reserves nothing under one
		p.holdForAlarm(ctx, res, at.alarmSite, alarm) // alarms.go: a seller whose settlement broke its authorization is held
	}
	v = verdict{Decision: res.Decision, Reasons: res.Reasons, Result: res, Chosen: res.ChosenIndex,
		Option: res.ChosenOption, Class: reasonClass(res), Judged: judgedOption(pr, res), rs: rs, ag: ag}
	if res.ChosenIndex >= 0 && res.ChosenIndex < len(pr.Accepts) {
		// The option as the seller wrote it (the engine saw the copy with the real resource URL): the entry
		// of pr itself, which nothing changes once decoded (no copy: issue 36).
		v.Option = &pr.Accepts[res.ChosenIndex]
	}
	var tk *ticketFor
	if withTicket {
		tk = &ticketFor{method: method, url: url, site: at.ticketSite, entry: entry, view: pr}
		if ahead {
			tk.ahead = &aheadTicket{host: at.alarmSite}
		}
	}
	switch res.Decision {
	case allow:
		out, judgedCap := p.reserve(ctx, v, day, tk)
		if out.Decision == allow {
			if ahead { // the receipt's input names the ledger's figures, read with the reservation
				input.Context.SpentTodayUSD = policy.USD(tk.ahead.before.Spent + tk.ahead.before.Reserved)
			}
			return out, input, false, false // released with the receipt id alone: nothing shows its signature
		}
		if ahead {
			// Not reserved (an alarm stored for the seller, the cap, the site's unpaid bound, an error): a
			// refusal's receipt must name the ledger's figures, so it is decided again on the ledger's read.
			return verdict{}, nil, false, true
		}
		if judgedCap && !last {
			return out, input, false, true
		}
		// The ledger refused (daily cap) or failed: a refusal shows its receipt, so it is signed. In report
		// mode the cap's refusal is shadowed (shadow.go).
		return p.shadow(ctx, out, pr, day, tk), input, true, false
	case hold, block:
		return p.shadow(ctx, v, pr, day, tk), input, true, false
	default:
		// SPEC §4.5: a future, unknown outcome is never allow.
		v.Decision = block
		v.Reasons = append(v.Reasons, "block: unknown preflight decision "+fmt.Sprintf("%q", res.Decision))
		v.Class = "unknown_decision"
		return v, input, true, false
	}
}

// signed signs the receipt of a verdict that will be shown (a refusal's body, a hold's record). A receipt that
// cannot be signed is not shown unsigned: the verdict becomes a fail-closed block, as when the engine cannot
// decide at all.
func (p *Proxy) signed(v verdict, in *preflight.Input) verdict {
	if v.Result == nil {
		return v
	}
	if err := p.deciderOf(v.ag).SignReceipt(v.Result, in); err != nil {
		return failClosed("engine_error", fmt.Sprintf("preflight unavailable: %v", err))
	}
	return v
}

// decisionChallenge is the challenge as the engine must see it: its resource URLs (v2 resource.url, v1
// accepts[].resource) are the seller's own claims, and the merchant domain the rules judge (domain
// blocklist, allowlist, age) must be the host the agent really pays, not one the seller names. The v2
// resource.url becomes the URL the proxy requested; v1 entries' resource is emptied, so the engine falls
// back to the input's resource_url (that same URL): the URL is never repeated per option, where a long one
// (a 16 KB URL reached by a redirect) would multiply into the receipt's input hash.
func decisionChallenge(pr *x402.PaymentRequired, url string) *x402.PaymentRequired {
	// The copy, its resource and (for the usual one option) its accepts in one allocation (issue 36).
	c := &struct {
		pr  x402.PaymentRequired
		res x402.ResourceInfo
		one [1]x402.Requirement
	}{pr: *pr}
	if pr.Resource != nil || pr.X402Version == x402.V2 {
		if pr.Resource != nil {
			c.res = *pr.Resource
		}
		c.res.URL = url
		c.pr.Resource = &c.res
	}
	if len(pr.Accepts) == 1 {
		c.pr.Accepts = c.one[:]
	} else {
		c.pr.Accepts = make([]x402.Requirement, len(pr.Accepts))
	}
	for i, a := range pr.Accepts {
		if a.Version == x402.V1 || pr.X402Version == x402.V1 {
			a.Resource = ""
		}
		c.pr.Accepts[i] = a
	}
	return &c.pr
}

func hostOf(rawURL string) string {
	u, err := neturl.Parse(rawURL)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// target is a decision's URL with what the decision keys on it, parsed once (issue 36: a decided 402
// parsed its URL for each of them, and again on each retry of the decision): alarmSite a seller alarm's key
// (alarmSite), ticketSite the unpaid-ticket bound's (siteOfTicket).
type target struct{ url, alarmSite, ticketSite string }

func targetOf(url string) target {
	if !strings.Contains(url, "://") {
		return target{url: url, alarmSite: alarmSite(url), ticketSite: siteOfTicket(url)}
	}
	// alarmSite and siteOfTicket of an absolute URL are both index.SiteOf (siteOfTicket falls back to the URL
	// itself): found once.
	t := target{url: url, alarmSite: index.SiteOf(url)}
	if t.ticketSite = t.alarmSite; t.ticketSite == "" {
		t.ticketSite = url
	}
	return t
}

// ticketFor names the request an allowed challenge answers, so that its paid retry can be matched; holdID
// is the approved hold the payment will spend, if any; site is the unpaid bound's site of url when known
// (siteOfTicket), else reserve finds it.
type ticketFor struct {
	method, url, holdID, site string
	ahead                     *aheadTicket // ahead.go: reserved with the day's figures and the seller's alarm in one step
	// entry is the memo's entry view is an unchanged view of (challengememo.go), when there is one: an
	// option of view is encoded for the ticket as the entry keeps it.
	entry *memoChallenge
	view  *x402.PaymentRequired
}

// optionJSON is opt's encoding from tk's memo entry when opt is an option of tk's view, else nil (the
// ticket encodes it: newTicket).
func (tk *ticketFor) optionJSON(opt *x402.Requirement) []byte {
	if tk == nil || tk.entry == nil || tk.view == nil || opt == nil {
		return nil
	}
	for i := range tk.view.Accepts {
		if opt == &tk.view.Accepts[i] {
			if raw, err := tk.entry.optionJSON(i); err == nil {
				return raw
			}
			return nil
		}
	}
	return nil
}

// reserve reserves an allowed amount, and with tk records the payment ticket in the same store write. The
// store checks each cap atomically with the reservation, so no lock is needed for the cap to hold. judgedCap:
// the verdict is the refusal of the cap the engine judged (the agent's own when it has one, else the
// global one), which the caller may decide afresh on the ledger's new figures.
func (p *Proxy) reserve(ctx context.Context, v verdict, day string, tk *ticketFor) (out verdict, judgedCap bool) {
	res := v.Result
	if res.ChosenOption == nil || res.ChosenIndex < 0 {
		return failClosed("engine_error", "preflight allowed without a chosen option"), false
	}
	if res.AmountMicros < 0 {
		return failClosed("engine_error", "preflight allowed a negative amount"), false
	}
	capMicros := int64(p.rulesOf(v).rules.DailyCapUSD)
	var site string
	if tk != nil {
		// A place under the site's bound is claimed before anything is reserved, so that decisions side by
		// side never pass the bound together (unpaid.go).
		if site = tk.site; site == "" {
			site = siteOfTicket(tk.url)
		}
		if ok, n := p.unpaid.claim(site, p.opts.Now()); !ok {
			return p.unpaidBlock(v, site, n), false
		}
	}
	agentRes, t, blocked, agentCap := p.reserveAgent(ctx, v, day, tk) // agentledger.go: the agent's own cap first
	if blocked != nil {
		if tk != nil {
			p.unpaid.unclaim(site)
		}
		return *blocked, agentCap
	}
	var id string
	var err error
	if tk == nil {
		id, err = p.opts.Store.Reserve(ctx, p.opts.Budget, day, res.AmountMicros, capMicros)
	} else {
		if tk.ahead != nil {
			t, err = p.reserveTicketAhead(ctx, day, res.AmountMicros, capMicros, t, tk.ahead)
		} else {
			t, err = p.opts.Store.ReserveTicket(ctx, p.opts.Budget, day, res.AmountMicros, capMicros, t)
		}
		id = t.ReservationID
		if err == nil {
			p.unpaid.add(site, t, p.opts.Now())
		} else {
			p.unpaid.unclaim(site)
		}
	}
	if err != nil {
		p.giveBackAgent(ctx, v, day, agentRes) // the global ledger refused: the agent's reservation goes back
	}
	if errors.Is(err, store.ErrBudgetExceeded) {
		st, _ := p.opts.Store.State(ctx, p.opts.Budget, day)
		// The engine judged the global cap only for an agent without a cap of its own (decideOnce).
		return p.capBlock(v, p.rulesOf(v).rules.DailyCapUSD, st.Spent+st.Reserved), v.ag == nil || v.ag.capMicros <= 0
	}
	if errors.Is(err, store.ErrLedgerLost) {
		return failClosed("ledger_lost", "the budget ledger lost what it had recorded; no payment until an operator acts: "+err.Error()), false
	}
	if err != nil {
		return failClosed("ledger_error", "budget reservation or payment ticket failed: "+err.Error()), false
	}
	v.Decision = allow
	v.Amount = res.AmountMicros
	v.Release = &release{Budget: p.opts.Budget, Day: day, ReservationID: id, AmountMicros: res.AmountMicros,
		ReceiptID: res.Receipt.ID, Option: v.Option, AgentReservationID: agentRes}
	if agentRes != "" {
		v.Release.AgentBudget = p.agentBudget(v.ag.id)
	}
	return v, false
}

// capBlock turns v into the daily-cap block, spent being what the ledger holds (spent and reserved). The
// refusal shows v's receipt. Not yet signed (an allow), it is restated as the decision payguard made: the
// block the engine itself gives when the spend it is told about leaves no room under the cap. A signed one
// (an approved hold's) is shown as it was signed.
func (p *Proxy) capBlock(v verdict, capUSD policy.USD, spent int64) verdict {
	v.Decision = block
	v.Reasons = []string{policy.DailyCapReason(capUSD, policy.USD(spent)).String()}
	v.Class = classOfCode[policy.CodeDailyCap]
	v.Option = nil
	if res := v.Result; res != nil && res.Receipt.JWS == "" {
		res.Decision, res.Reasons, res.ReasonCodes, res.Receipt.Decision = block, v.Reasons, []string{policy.CodeDailyCap}, block
	}
	return v
}

// unpaidBlock turns v into the block of a site with n unpaid tickets outstanding, at the bound
// (unpaid.go). As capBlock, an allow not yet signed is restated as the block payguard made.
func (p *Proxy) unpaidBlock(v verdict, site string, n int) verdict {
	v.Decision = block
	v.Reasons = []string{policy.UnpaidTicketsReason(site, n).String()}
	v.Class = classOfCode[policy.CodeUnpaidTickets]
	v.Option = nil
	if res := v.Result; res != nil && res.Receipt.JWS == "" {
		res.Decision, res.Reasons, res.ReasonCodes, res.Receipt.Decision = block, v.Reasons, []string{policy.CodeUnpaidTickets}, block
	}
	return v
}

// newTicket is the ticket for an allowed option of a challenge to method url, so that exactly one matching
// paid retry may pass; the store fills in the reservation (ReserveTicket).
// raw, when not nil, is opt's encoding already made (ticketFor.optionJSON).
func (p *Proxy) newTicket(method, url string, opt *x402.Requirement, raw []byte, receiptID string) (store.Ticket, error) {
	if opt == nil {
		return store.Ticket{}, errors.New("no chosen option")
	}
	// The option's own encoding (x402's writer: valid JSON), without json.Marshal's second pass over it.
	if raw == nil {
		var err error
		if raw, err = opt.MarshalJSON(); err != nil {
			return store.Ticket{}, fmt.Errorf("encode chosen option: %w", err)
		}
	}
	// The ticket holds budget while it lives, so a seller's maxTimeoutSeconds is bounded by the setting; an
	// agent that pays later is decided afresh (decidePayment). Compared in seconds: a huge value must not
	// overflow a Duration.
	ttl := p.opts.TicketTTLMax
	if opt.MaxTimeoutSeconds < int64(ttl/time.Second) {
		ttl = time.Duration(opt.MaxTimeoutSeconds) * time.Second
	}
	if ttl < time.Minute {
		ttl = time.Minute
	}
	key, err := ticketKey(method, url, opt.Scheme, opt.Network, ticketPayee(opt), opt.Amount)
	if err != nil {
		return store.Ticket{}, err
	}
	return store.Ticket{ID: newID("tkt"), Key: key, Option: raw, ReceiptID: receiptID,
		ExpiresAt: p.opts.Now().Add(ttl)}, nil
}

// ticketPayee is the payee a ticket is keyed by: what the retry will name. A v1 Solana payment names no payee
// and pays a token account, so its ticket is keyed by the mint its transfer moves instead (svmV1Payee); the
// payment is then bound to the whole option at the ticket (matchTicket).
func ticketPayee(opt *x402.Requirement) string {
	if opt.Version == x402.V1 && x402.IsSolanaNetwork(opt.Network) {
		return svmV1Payee(opt.Asset)
	}
	return opt.PayTo
}

// ticketKey names a payment (hashed: URLs are long and stores want plain keys) by what both v1 and v2 retries carry: method, URL, scheme, network (CAIP-2),
// payee and atomic amount. The asset is checked separately: a v2 retry's `accepted` must equal the ticket's
// option; a v1 payload names no asset, and its EIP-3009 signature binds the token the seller settles.
func ticketKey(method, url, scheme, network, payTo, amount string) (string, error) {
	n, ok := x402.CAIP2(network)
	if !ok {
		return "", fmt.Errorf("unknown network %q", network)
	}
	a, err := x402.ParseAtomic(amount)
	if err != nil {
		return "", fmt.Errorf("amount %q: %w", amount, err)
	}
	// The parts joined by NUL, as strings.Join wrote them, into one buffer (keys are kept in stores, so the
	// bytes hashed must not change); the key is written into one string with its prefix.
	// A common key's parts fit the stack buffer (no allocation: issue 36); a longer URL grows it on the heap.
	var buf [512]byte
	b := append(buf[:0], strings.ToUpper(method)...)
	b = append(b, 0)
	b = append(append(b, url...), 0)
	b = append(append(b, scheme...), 0)
	b = append(append(b, n...), 0)
	b = append(x402.AppendCanonicalAddress(b, payTo), 0)
	b = strconv.AppendUint(b, a, 10)
	sum := sha256.Sum256(b)
	var key [len("tk1:") + 2*sha256.Size]byte
	copy(key[:], "tk1:")
	hex.Encode(key[len("tk1:"):], sum[:])
	return string(key[:]), nil
}

// holdKey names a held request: method, URL and the option it would pay (or the whole offer when the
// engine chose none), so that the same request's next 402 finds an approval.
func holdKey(method, url string, v verdict, pr *x402.PaymentRequired) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00", strings.ToUpper(method), url)
	if v.Option != nil {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s", v.Option.Scheme, v.Option.Network,
			x402.CanonicalAddress(v.Option.Asset), x402.CanonicalAddress(v.Option.PayTo), v.Option.Amount)
	} else {
		for _, r := range pr.Accepts {
			fmt.Fprintf(h, "%s\x00%s\x00%s\x00%s\x00%s\x01", r.Scheme, r.Network,
				x402.CanonicalAddress(r.Asset), x402.CanonicalAddress(r.PayTo), r.Amount)
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// newID is a hold or ticket id: the prefix and store.NewID (time-ordered, so the bolt store appends them),
// written into one string (issue 36).
func newID(prefix string) string {
	var buf [48]byte
	b := append(append(buf[:0], prefix...), '_')
	return string(store.AppendNewID(b))
}
