package preflight

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"sync"
	"time"
	"unsafe"

	"github.com/payguard/payguard/internal/timefmt"
	"github.com/payguard/payguard/policy"
	"github.com/payguard/payguard/receipts"
	"github.com/payguard/payguard/screening"
	"github.com/payguard/payguard/x402"
)

// Signer signs a receipt payload as a compact JWS. *receipts.KeySet implements it.
type Signer interface {
	Sign(payload []byte) (jws string, err error)
}

// Options configure an Engine.
type Options struct {
	Rules     policy.Rules        // the deployment's rules; Input.Rules overlays them
	Sanctions screening.Sanctions // nil or !Ready() -> sanctions facts unknown
	Domains   screening.Domains   // nil -> domain age and DNS unknown (offline)
	Signer    Signer              // nil -> Decide returns receipts.ErrSigningUnavailable
	Now       func() time.Time    // nil -> time.Now
	// Index, when set, is where the Endpoint Index rules read observations (nil: no Index evidence, and
	// results carry no index_evidence). IndexMaxAge drops older observations (0 keeps all). Two optional
	// capabilities widen the evidence, each a documented index interface (index.Cache has both):
	// index.SitePayeeReader (a payee new at the seller's site counts for hold_on_payto_change) and
	// index.CategoryReader (the category median for max_price_multiple). An Index without one decides
	// with the endpoint's own history for that rule.
	Index       IndexReader
	IndexMaxAge time.Duration
}

// Engine decides preflight inputs. It is safe for concurrent use.
type Engine struct {
	opts  Options
	lists *policy.Lists   // opts.Rules' lists prepared once: a decision on the deployment's rules uses them
	asOf  timefmt.RFC3339 // the receipt's data_as_of, formatted once per list
	ts    timefmt.Seconds // the receipt's ts, formatted once per second
}

// New returns an Engine. Its rules are not changed once given (their lists are prepared here).
func New(opts Options) *Engine {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Engine{opts: opts, lists: opts.Rules.Lists()}
}

// DataUnknown is data_as_of when no sanctions list is loaded.
const DataUnknown = "unknown"

// Decide gathers the facts for in, lets policy decide, and returns the signed result: DecideUnsigned, then
// SignReceipt.
//
// Fail-closed behaviour, as decided for payguard:
//   - screen_sanctions on and no sanctions list loaded (Sanctions nil or not Ready) is a hold,
//     "hold: sanctions data unavailable": the rule asks for a protection that cannot be given, and SPEC §4.4's
//     "unknown is not low risk" applies. With no sanctions data configured the CLI therefore holds.
//   - a screener that panics is recovered and becomes "hold: sanctions screening failed" or
//     "hold: domain screening failed"; its facts are reported unknown.
//   - a domain checker that answers with unknown age or DNS adds no reason (SPEC §4.4: unknown age is reported,
//     not invented); the unknowns are stated in payee.domain.
//   - a failure inside evaluation itself is recovered into "hold: internal error: ...".
//
// The only error is receipts.ErrSigningUnavailable.
func (e *Engine) Decide(ctx context.Context, in *Input) (*Result, error) {
	res, err := e.DecideUnsigned(ctx, in)
	if err != nil {
		return nil, err
	}
	if err := e.SignReceipt(res, in); err != nil {
		return nil, err
	}
	return res, nil
}

// DecideUnsigned is Decide without the receipt's input hash and signature: Receipt has its id, time and
// decision, and InputSHA256 and JWS stay empty until SignReceipt. It is for a channel that shows the receipt
// for some outcomes only: the proxy sends an allowed challenge on with the receipt id alone and signs what it
// refuses, so an allowed 402 does not pay for a signature nobody receives. Like Decide it refuses to decide
// at all (receipts.ErrSigningUnavailable) when the engine has no signer, so that a misconfigured deployment fails
// closed the same way on every channel.
func (e *Engine) DecideUnsigned(ctx context.Context, in *Input) (*Result, error) {
	if e.opts.Signer == nil {
		return nil, receipts.ErrSigningUnavailable
	}
	now := e.opts.Now().UTC()
	b := new(resultBlock)
	res := &b.res
	res.ChosenIndex, res.DataAsOf = -1, e.dataAsOf()
	outcome, payee, evidence := e.evaluate(ctx, in, now, b)
	res.IndexEvidence = evidence
	res.Decision = string(outcome.Decision)
	res.Reasons, res.ReasonCodes = outcome.ReasonTexts()
	res.OptionsEvaluated = outcome.OptionsEvaluated
	res.Payee = payee
	if outcome.Chosen >= 0 {
		res.AmountMicros = int64(outcome.AmountUSD)
		if in.Challenge != nil && outcome.Chosen < len(in.Challenge.Accepts) {
			b.chosen = in.Challenge.Accepts[outcome.Chosen]
			res.ChosenOption, res.ChosenIndex = &b.chosen, outcome.Chosen
		}
	}
	id, err := receiptID()
	if err != nil {
		return nil, fmt.Errorf("%w: receipt id: %v", receipts.ErrSigningUnavailable, err)
	}
	res.Receipt = Receipt{ID: id, TS: e.ts.Format(now), Decision: res.Decision}
	return res, nil
}

// resultBlock is a result with the parts it points to, allocated at once (issue 36: a decision made each of
// them separately). They live as long as the result does, as they did.
type resultBlock struct {
	res    Result
	chosen x402.Requirement
	payee  Payee
	ev     IndexEvidence
	payTo  PayToEvidence
	price  PriceEvidence
}

// SignReceipt completes res, a result of DecideUnsigned for in: it sets Receipt.InputSHA256 and signs the
// result's JSON as it then stands into Receipt.JWS. Call it once, before anything changes res; the signature
// binds every field. Its only error is receipts.ErrSigningUnavailable, and res is then left unsigned.
func (e *Engine) SignReceipt(res *Result, in *Input) error {
	buf := payloadBuffers.Get().(*bytes.Buffer)
	defer putPayloadBuffer(buf)
	_, err := e.signReceipt(res, in, buf)
	return err
}

// payloadBuffers hold signed payloads between decisions: a payload is a few KB that the signature and the
// result's JSON copy, and is garbage once they are made.
var payloadBuffers = sync.Pool{New: func() any { return new(bytes.Buffer) }}

func putPayloadBuffer(b *bytes.Buffer) {
	if b.Cap() <= 64<<10 { // one large result does not pin its memory
		b.Reset()
		payloadBuffers.Put(b)
	}
}

// DecideJSON is Decide that also returns the signed result's JSON, exactly what json.Marshal(res) gives,
// built from the signed payload instead of a second encoding: the result is a few KB that reflection walks,
// and `payguard serve` answers every preflight with it (see signedJSON). With a Signer that appends
// (*receipts.KeySet), the JWS is written once, into the returned JSON, and res.Receipt.JWS shares those
// bytes: the caller must not modify the returned slice.
func (e *Engine) DecideJSON(ctx context.Context, in *Input) (*Result, []byte, error) {
	res, err := e.DecideUnsigned(ctx, in)
	if err != nil {
		return nil, nil, err
	}
	buf := payloadBuffers.Get().(*bytes.Buffer)
	defer putPayloadBuffer(buf)
	payload, err := e.signingPayload(res, in, buf)
	if err != nil {
		return nil, nil, err
	}
	end, found := receiptEnd(payload, res.Receipt)
	if s, ok := e.opts.Signer.(appendSigner); ok && found {
		out := make([]byte, 0, len(payload)+len(`,"jws":""`)+s.JWSLen(len(payload)))
		out = append(out, payload[:end]...)
		out = append(out, `,"jws":"`...)
		at := len(out)
		if out, err = s.AppendSign(out, payload); err != nil {
			res.Receipt.InputSHA256 = ""
			return nil, nil, fmt.Errorf("%w: %v", receipts.ErrSigningUnavailable, err)
		}
		if jws := out[at:]; len(jws) > 0 && (promisesPlain(s) || plainJWS(jws)) {
			out = append(out, '"')
			out = append(out, payload[end:]...)
			// The JWS is the bytes just written into out, which nothing writes to again (see above).
			res.Receipt.JWS = unsafe.String(&out[at], len(jws))
			return res, out, nil
		}
		// Not reached with receipts' signer: the JWS is not what JSON writes as it is; do not guess.
		res.Receipt.JWS = string(out[at:])
	} else if err := e.signPayload(res, payload); err != nil {
		return nil, nil, err
	}
	out, ok := signedJSON(payload, res.Receipt)
	if !ok { // not reached for a result encoding/json wrote; encode it again rather than guess
		if out, err = json.Marshal(res); err != nil {
			return nil, nil, fmt.Errorf("%w: encode result: %v", receipts.ErrSigningUnavailable, err)
		}
	}
	return res, out, nil
}

// appendSigner is a Signer that writes the JWS into the caller's buffer; *receipts.KeySet is one.
type appendSigner interface {
	AppendSign(dst, payload []byte) ([]byte, error)
	JWSLen(payloadLen int) int
}

// plainSigner is a signer that promises every JWS it writes is base64url and dots only (*receipts.KeySet:
// its header is checked when the key is loaded, the rest is base64url by construction), so DecideJSON
// need not scan the JWS it spliced into the answer; a scan was ~2 % of serve's CPU per trial preflight.
type plainSigner interface{ AppendsPlainJWS() bool }

func promisesPlain(s appendSigner) bool {
	p, ok := s.(plainSigner)
	return ok && p.AppendsPlainJWS()
}

// signReceipt is SignReceipt; it returns the signed payload (the result's JSON without receipt.jws), which
// is in buf: valid until buf is used again.
func (e *Engine) signReceipt(res *Result, in *Input, buf *bytes.Buffer) ([]byte, error) {
	payload, err := e.signingPayload(res, in, buf)
	if err != nil {
		return nil, err
	}
	return payload, e.signPayload(res, payload)
}

// signingPayload sets Receipt.InputSHA256 and encodes res, as it then stands, into buf: the payload a
// receipt signs (the result's JSON without receipt.jws), valid until buf is used again.
func (e *Engine) signingPayload(res *Result, in *Input, buf *bytes.Buffer) ([]byte, error) {
	if e.opts.Signer == nil {
		return nil, receipts.ErrSigningUnavailable
	}
	if res.Receipt.JWS != "" {
		return nil, fmt.Errorf("%w: receipt %s is already signed", receipts.ErrSigningUnavailable, res.Receipt.ID)
	}
	res.Receipt.InputSHA256 = inputHash(in)
	// What json.Marshal gives: written by appendResultJSON into buf's spare room (Write then copies it onto
	// itself, or into a larger buffer that the pool keeps), else by encoding/json.
	if out, ok := appendResultJSON(buf.AvailableBuffer(), res); ok {
		buf.Write(out)
		return buf.Bytes(), nil
	}
	// The encoder escapes HTML as Marshal does, and writes a newline that is not signed.
	if err := json.NewEncoder(buf).Encode(res); err != nil {
		res.Receipt.InputSHA256 = ""
		return nil, fmt.Errorf("%w: encode result: %v", receipts.ErrSigningUnavailable, err)
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// signPayload signs payload (signingPayload's) into res.Receipt.JWS.
func (e *Engine) signPayload(res *Result, payload []byte) error {
	jws, err := e.opts.Signer.Sign(payload)
	if err != nil {
		res.Receipt.InputSHA256 = ""
		return fmt.Errorf("%w: %v", receipts.ErrSigningUnavailable, err)
	}
	res.Receipt.JWS = jws
	return nil
}

// signedJSON is the signed result's JSON from its payload, the same result's JSON without receipt.jws: the
// receipt member is the only difference (jws is omitted when empty, and is Receipt's last field), so the
// signed receipt's JSON takes the place of the unsigned one (receiptEnd says where). ok is false if the
// unsigned receipt is not found exactly once or the JWS is empty or not plain base64url and dots.
func signedJSON(payload []byte, signed Receipt) (out []byte, ok bool) {
	end, ok := receiptEnd(payload, signed)
	if !ok || signed.JWS == "" || !plainJWS(unsafe.Slice(unsafe.StringData(signed.JWS), len(signed.JWS))) {
		return nil, false
	}
	// The JWS is base64url and dots, which JSON writes as they are: the signed receipt is the unsigned one
	// with `,"jws":"…"` before its closing brace.
	out = make([]byte, 0, len(payload)+len(`,"jws":""`)+len(signed.JWS))
	out = append(out, payload[:end]...)
	out = append(out, `,"jws":"`...)
	out = append(out, signed.JWS...)
	out = append(out, '"')
	return append(out, payload[end:]...), true
}

// receiptEnd is the index in payload (a result's JSON without receipt.jws) of the unsigned receipt's closing
// brace, where `,"jws":"…"` goes. The unsigned receipt's JSON occurs once in the payload: as a structure
// (its quotes are not escaped, so not inside a string) it could only be repeated by a seller's free-form
// JSON (the chosen option's extra), and it carries the SHA-256 of the input that contains that extra, which
// no input can contain. ok is false if it is not found exactly once, or r has a string JSON would escape.
func receiptEnd(payload []byte, r Receipt) (end int, ok bool) {
	var stack [256]byte
	was, ok := unsignedReceiptJSON(stack[:0], r)
	if !ok {
		return 0, false
	}
	// Found exactly once: no second occurrence after the first (bytes.Index is vectorized; LastIndex is not).
	at := bytes.Index(payload, was)
	if at < 0 || bytes.Contains(payload[at+1:], was) {
		return 0, false
	}
	return at + len(was) - 1, true
}

// plainJWS reports whether every byte of jws is base64url or a dot.
func plainJWS(jws []byte) bool {
	for _, c := range jws {
		if !jwsByte[c] {
			return false
		}
	}
	return true
}

// jwsByte is true for the bytes of a compact JWS: base64url and the dots.
var jwsByte = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.") {
		t[c] = true
	}
	return t
}()

// unsignedReceiptJSON appends to dst what json.Marshal writes for r without its jws: r's four strings are
// an id, a time, a hex digest and a decision, which JSON writes as they are, so they are copied between
// the member names. ok is false if one of them has a byte encoding/json would escape (a quote, a
// backslash, a control byte, <, >, &, or any non-ASCII byte, which it may); the caller then does not guess.
func unsignedReceiptJSON(dst []byte, r Receipt) (out []byte, ok bool) {
	for _, v := range [...]string{r.ID, r.TS, r.InputSHA256, r.Decision} {
		for i := 0; i < len(v); i++ {
			if c := v[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
				return nil, false
			}
		}
	}
	dst = append(dst, `{"id":"`...)
	dst = append(dst, r.ID...)
	dst = append(dst, `","ts":"`...)
	dst = append(dst, r.TS...)
	dst = append(dst, `","input_sha256":"`...)
	dst = append(dst, r.InputSHA256...)
	dst = append(dst, `","decision":"`...)
	dst = append(dst, r.Decision...)
	return append(dst, `"}`...), true
}

// evaluate gathers facts and runs policy; a panic anywhere in it becomes a hold that says so.
// The payee and evidence it returns are b's.
func (e *Engine) evaluate(ctx context.Context, in *Input, now time.Time, b *resultBlock) (out policy.Outcome, payee *Payee, evidence *IndexEvidence) {
	var f policy.Facts
	defer func() {
		if p := recover(); p != nil {
			out = policy.Outcome{
				Decision: policy.Hold, Chosen: -1, OptionsEvaluated: len(f.Options),
				Reasons: []policy.Reason{policy.InternalErrorReason(fmt.Sprintf("evaluation failed: %v", p))},
			}
		}
	}()
	// Without a patch the deployment's rules as they are: nothing writes to them (Apply would copy them).
	rules, err := e.opts.Rules, error(nil)
	if in.Rules != nil {
		rules, err = in.Rules.Apply(e.opts.Rules)
	}
	if err != nil {
		// The patch was vetted against the defaults; it can still fail over another base. Decide with the
		// deployment's rules and hold, saying why.
		rules = e.opts.Rules.Clone()
		defer func() {
			reasons := []policy.Reason{policy.InternalErrorReason("request rules do not apply: " + err.Error())}
			for _, r := range out.Reasons {
				if r.Decision != policy.Allow {
					reasons = append(reasons, r)
				}
			}
			// Keep block reasons first, as policy lists them.
			sort.SliceStable(reasons, func(i, j int) bool { return reasons[i].Decision.Stronger(reasons[j].Decision) })
			out.Reasons = reasons
			if policy.Hold.Stronger(out.Decision) {
				out.Decision = policy.Hold
			}
		}()
	}
	// The prepared lists are used only while they are rules' own (policy.Facts.Lists): a request's patch
	// that changes a list is compared entry by entry.
	f = policy.Facts{Rules: rules, Lists: e.lists, MerchantDomain: in.MerchantDomain()}
	if in.Challenge != nil {
		f.Options = make([]policy.Option, 0, len(in.Challenge.Accepts))
		for i := range in.Challenge.Accepts {
			f.Options = append(f.Options, policyOption(&in.Challenge.Accepts[i]))
		}
	} else if in.Cart != nil {
		f.Options = []policy.Option{cartOption(in.Cart)}
		f.MerchantName = in.Cart.MerchantName
	}
	if in.Context != nil {
		f.SpentToday = in.Context.SpentTodayUSD
	}
	if len(f.Options) == 0 {
		return policy.Evaluate(f), nil, nil
	}
	evidence = e.indexFacts(ctx, in, &f, now, &b.ev)

	payee = &b.payee
	*payee = Payee{MerchantDomain: f.MerchantDomain, MerchantName: f.MerchantName}
	f.Domain, payee.Domain = e.domainFacts(ctx, f.MerchantDomain, now)

	// The payee screened is the chosen option's, or a held option's (a person may approve it).
	judged := policy.Payee(f)
	payTo := ""
	if judged >= 0 {
		payTo = f.Options[judged].PayTo
		payee.PayTo, payee.Network = payTo, f.Options[judged].Network
	}
	f.Sanctions, payee.Sanctions = e.sanctionsFacts(rules.ScreenSanctions, payTo, f.MerchantName)
	judgedEvidence(evidence, &f, judged, b)
	return policy.Evaluate(f), payee, evidence
}

// domainFacts asks the domain checker, if there is one, and turns its answer into policy facts and the
// payee's report. Ages are recomputed from the registration date with the engine's clock, so a cached
// answer never reports a stale age.
func (e *Engine) domainFacts(ctx context.Context, domain string, now time.Time) (pf policy.DomainFacts, info PayeeDomainInfo) {
	switch {
	case domain == "":
		info.Note = "merchant domain unknown"
		return
	case e.opts.Domains == nil:
		info.Note = "domain facts not gathered (offline, or no domain checker configured)"
		return
	}
	info.Checked = true
	var facts screening.DomainFacts
	failed := func() (failed bool) {
		defer func() {
			if p := recover(); p != nil {
				failed = true
				info.Note = fmt.Sprintf("domain checker failed: %v", p)
			}
		}()
		facts = e.opts.Domains.Facts(ctx, domain)
		return false
	}()
	if failed {
		pf.Failed = true
		return
	}
	valid := facts.Valid
	info.Valid = &valid
	info.HasA, info.HasMX = facts.HasA, facts.HasMX
	switch {
	case facts.RegisteredAt != nil && !facts.RegisteredAt.After(now):
		reg := facts.RegisteredAt.UTC()
		days := int(now.Sub(reg) / (24 * time.Hour))
		info.RegisteredAt, info.AgeDays = &reg, &days
	case facts.RegisteredAt != nil:
		info.Note = joinNote(info.Note, "registration date is in the future; age unknown")
	case facts.AgeDays != nil && *facts.AgeDays >= 0:
		days := *facts.AgeDays
		info.AgeDays = &days
	}
	if info.AgeDays == nil {
		info.Note = joinNote(info.Note, orDefault(facts.AgeError, "registration age unknown"))
	}
	if facts.HasA == nil {
		info.Note = joinNote(info.Note, orDefault(facts.DNSError, "DNS A record unknown"))
	}
	pf.AgeDays, pf.HasA = info.AgeDays, info.HasA
	return
}

// sanctionsFacts screens the chosen payTo and the merchant name.
func (e *Engine) sanctionsFacts(enabled bool, payTo, name string) (pf policy.SanctionsFacts, info PayeeSanctions) {
	info = PayeeSanctions{Status: SanctionsUnknown, Matches: []screening.SanctionsMatch{}}
	s := e.opts.Sanctions
	switch {
	case !enabled:
		info.Note = "sanctions screening disabled by rules (screen_sanctions: false)"
		pf.State = policy.SanctionsNothingToScreen
		return
	case payTo == "" && name == "":
		info.Note = "nothing to screen: no payee chosen and no merchant name"
		pf.State = policy.SanctionsNothingToScreen
		return
	case s == nil || !ready(s):
		info.Note = "no sanctions list loaded"
		pf.State = policy.SanctionsNoData
		return
	}
	var addr []screening.SanctionsMatch
	var names screening.NameResult
	failed := func() (failed bool) {
		defer func() {
			if p := recover(); p != nil {
				failed = true
				info.Note = fmt.Sprintf("sanctions screening failed: %v", p)
			}
		}()
		if payTo != "" {
			addr = s.ScreenAddress(payTo)
		}
		if name != "" {
			names = s.ScreenName(name)
		}
		return false
	}()
	if failed {
		pf.State = policy.SanctionsFailed
		return
	}
	pf = policy.SanctionsFacts{
		State:        policy.SanctionsScreened,
		AddressMatch: len(addr) > 0,
		NameExact:    len(names.Exact) > 0,
		NamePossible: len(names.Possible) > 0,
	}
	info.Screened = true
	info.Matches = append(append(append(info.Matches, addr...), names.Exact...), names.Possible...)
	switch {
	case pf.AddressMatch || pf.NameExact:
		info.Status = SanctionsMatch
	case pf.NamePossible:
		info.Status = SanctionsPossible
	default:
		info.Status = SanctionsClear
	}
	return
}

// ready asks Ready, treating a panic as not ready.
func ready(s screening.Sanctions) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s.Ready()
}

// dataAsOf is the sanctions list's freshness, or "unknown" when no list is loaded.
func (e *Engine) dataAsOf() (s string) {
	defer func() {
		if recover() != nil {
			s = DataUnknown
		}
	}()
	if e.opts.Sanctions == nil || !e.opts.Sanctions.Ready() {
		return DataUnknown
	}
	t := e.opts.Sanctions.DataAsOf()
	if t.IsZero() {
		return DataUnknown
	}
	return e.asOf.Format(t)
}

// inputHash is the hex SHA-256 of the input body as ParseInput received it (what the caller can recompute
// over what it sent); for an Input built in code, of its JSON encoding.
func inputHash(in *Input) string {
	b := in.raw
	if b == nil {
		var err error
		if b, err = json.Marshal(in); err != nil {
			b = []byte(err.Error())
		}
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

func receiptID() (string, error) {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", err
	}
	var id [len("rcpt_") + 2*len(b)]byte
	copy(id[:], "rcpt_")
	hex.Encode(id[len("rcpt_"):], b[:])
	return string(id[:]), nil
}

func joinNote(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
