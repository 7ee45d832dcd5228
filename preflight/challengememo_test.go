package preflight

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/payguard/payguard/internal/slotmemo"
	"github.com/payguard/payguard/x402"
)

// memoChallenges are challenges with every kind of member x402 keeps: a resource with members it does not
// model, extensions, unknown top-level and requirement members, extra, v1's outputSchema and per-option
// resource fields, an empty extra object.
var memoChallenges = []string{
	`{"x402Version":2,"resource":{"url":"https://api.example.com/data"},"accepts":[{"scheme":"exact","network":"eip155:8453","amount":"10000","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":60,"extra":{"name":"USD Coin","version":"2"}}]}`,
	`{"x402Version":2,"error":"payment required","resource":{"url":"https://a.example.com/x","description":"d","mimeType":"application/json","serviceName":"S","tags":["a","b"]},"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"1","asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":30,"extra":{},"futureField":{"k":[1,2]}},{"scheme":"upto","network":"eip155:8453","amount":"99","asset":"0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913","payTo":"0x3C44CdDdB6a900fa2b585dd299e03d12FA4293BC","maxTimeoutSeconds":5}],"extensions":{"bazaar":{"info":{"x":1}}},"topLevelThing":"v"}`,
	`{"x402Version":1,"error":"X-PAYMENT header is required","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"10000","resource":"http://127.0.0.1:4021/weather","description":"Weather","mimeType":"application/json","outputSchema":{"input":{"type":"http"}},"payTo":"0xf54127927F219FB78C8D1A1fF3D7dc6D7f70C98E","maxTimeoutSeconds":60,"asset":"0x036CbD53842c5426634e7929541eC2318f3dCF7e","extra":{"name":"USDC","version":"2"}}]}`,
}

// The memo answers what x402.ParsePaymentRequired answers, for every challenge, however they collide in its
// table: the challenges above, rejections, one over the size bound, and more distinct challenges than it
// has slots, each asked again after the others have taken slots.
func TestChallengeMemoIsParse(t *testing.T) {
	in := append([]string{}, memoChallenges...)
	in = append(in, `{"x402Version":2,"accepts":[]}`, `{"x402Version":3,"accepts":[]}`, `{"accepts":"no"}`, `[]`, `{`,
		`{"x402Version":2,"resource":{"url":"https://x.example.com"},"accepts":[{"scheme":"exact"}]}`,
		strings.Replace(memoChallenges[0], `"extra":{`, `"pad":"`+strings.Repeat("p", maxMemoChallenge)+`","extra":{`, 1))
	for i := range 3 * challengeSlots {
		in = append(in, strings.Replace(memoChallenges[i%3], `"maxTimeoutSeconds":`, fmt.Sprintf(`"maxTimeoutSeconds":%d`, i), 1))
	}
	for round := range 3 {
		for _, c := range in {
			want, wantErr := x402.ParsePaymentRequired([]byte(c))
			got, err := parsePaymentRequiredMemo([]byte(c))
			if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
				t.Fatalf("round %d, %.80s: memo error %v, parse error %v", round, c, err, wantErr)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("round %d, %.80s:\nmemo  %+v\nparse %+v", round, c, got, want)
			}
		}
	}
}

// A challenge asked again is answered from the memo, without x402's decoder; a rejection, and a challenge
// over the size bound, are not kept.
func TestChallengeMemoAnswersRepeats(t *testing.T) {
	calls := 0
	parsePaymentRequired = func(b []byte) (*x402.PaymentRequired, error) { calls++; return x402.ParsePaymentRequired(b) }
	defer func() { parsePaymentRequired = x402.ParsePaymentRequired }()
	challengeTable = slotmemo.New[*x402.PaymentRequired](challengeSlots)
	for range 5 {
		if _, err := parsePaymentRequiredMemo([]byte(memoChallenges[1])); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 1 {
		t.Fatalf("decoded %d times for one challenge asked five times; want 1", calls)
	}
	for range 2 {
		parsePaymentRequiredMemo([]byte(`{"x402Version":9,"accepts":[]}`))
	}
	big := strings.Replace(memoChallenges[0], `"extra":{`, `"pad":"`+strings.Repeat("p", maxMemoChallenge)+`","extra":{`, 1)
	for range 2 {
		if _, err := parsePaymentRequiredMemo([]byte(big)); err != nil {
			t.Fatal(err)
		}
	}
	if calls != 5 {
		t.Fatalf("decoded %d times; want 5 (rejections and over-size challenges are decoded each time)", calls)
	}
}

// Every challenge the memo hands out is the caller's own: changing everything one caller can change (its
// byte slices in place, its maps, its strings and options) changes nothing another caller gets, and two
// hits share no byte slice, map or pointer.
func TestChallengeMemoHandsOutCopies(t *testing.T) {
	challengeTable = slotmemo.New[*x402.PaymentRequired](challengeSlots)
	raw := []byte(memoChallenges[1])
	want, err := x402.ParsePaymentRequired(raw)
	if err != nil {
		t.Fatal(err)
	}
	first, _ := parsePaymentRequiredMemo(raw) // the miss: the decoder's own result
	a, _ := parsePaymentRequiredMemo(raw)     // hits
	b, _ := parsePaymentRequiredMemo(raw)
	for _, p := range []*x402.PaymentRequired{first, a} {
		scribble(p)
	}
	c, _ := parsePaymentRequiredMemo(raw)
	for name, p := range map[string]*x402.PaymentRequired{"a later hit": b, "the next hit": c} {
		if !reflect.DeepEqual(p, want) {
			t.Fatalf("%s after another caller changed its copy:\n%+v\nwant %+v", name, p, want)
		}
	}
	if s := sharedMemory(reflect.ValueOf(b), reflect.ValueOf(c), map[uintptr]bool{}); s != "" {
		t.Fatalf("two hits share %s", s)
	}
}

// scribble changes every byte slice in place, every map and every field a caller can reach in p.
func scribble(p *x402.PaymentRequired) {
	junk := func(b json.RawMessage) {
		for i := range b {
			b[i] = 'X'
		}
	}
	junkMap := func(m map[string]json.RawMessage) {
		for k, v := range m {
			junk(v)
			m[k+"!"] = json.RawMessage(`1`)
		}
	}
	p.X402Version, p.Error = 7, "changed"
	junkMap(p.Extensions)
	junkMap(p.Unknown)
	if p.Resource != nil {
		p.Resource.URL = "https://evil.example"
		junkMap(p.Resource.Unknown)
	}
	for i := range p.Accepts {
		r := &p.Accepts[i]
		r.PayTo, r.Amount = "0xevil", "1"
		junk(r.Extra)
		junk(r.OutputSchema)
		junkMap(r.Unknown)
	}
	p.Accepts = append(p.Accepts[:cap(p.Accepts)], x402.Requirement{Scheme: "appended"})
}

// sharedMemory names a byte slice, map or pointer x and y both refer to (strings aside), or "".
func sharedMemory(x, y reflect.Value, seen map[uintptr]bool) string {
	switch x.Kind() {
	case reflect.Pointer:
		if x.IsNil() || y.IsNil() {
			return ""
		}
		if x.Pointer() == y.Pointer() {
			return "a pointer to " + x.Type().Elem().String()
		}
		return sharedMemory(x.Elem(), y.Elem(), seen)
	case reflect.Slice:
		if x.Cap() > 0 && y.Cap() > 0 && x.Pointer() == y.Pointer() {
			return "a " + x.Type().String()
		}
		for i := 0; i < x.Len() && i < y.Len(); i++ {
			if s := sharedMemory(x.Index(i), y.Index(i), seen); s != "" {
				return s
			}
		}
	case reflect.Map:
		if x.IsNil() || y.IsNil() {
			return ""
		}
		if x.Pointer() == y.Pointer() {
			return "a " + x.Type().String()
		}
		for _, k := range x.MapKeys() {
			if v := y.MapIndex(k); v.IsValid() {
				if s := sharedMemory(x.MapIndex(k), v, seen); s != "" {
					return s
				}
			}
		}
	case reflect.Struct:
		for i := range x.NumField() {
			if s := sharedMemory(x.Field(i), y.Field(i), seen); s != "" {
				return x.Type().Field(i).Name + ": " + s
			}
		}
	}
	return ""
}

// cloneChallenge copies the fields it knows: this fails when x402's challenge types gain, lose or change a
// field, so that a new byte slice, map or pointer cannot be shared between callers unnoticed.
func TestCloneChallengeKnowsEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]string{
		reflect.TypeFor[x402.PaymentRequired](): "X402Version:int Error:string Resource:ptr Accepts:slice Extensions:map Unknown:map",
		reflect.TypeFor[x402.ResourceInfo]():    "URL:string Description:string MimeType:string Unknown:map",
		reflect.TypeFor[x402.Requirement](): "Version:int Scheme:string Network:string Amount:string Asset:string PayTo:string " +
			"MaxTimeoutSeconds:int64 Extra:slice Resource:string Description:string MimeType:string OutputSchema:slice Unknown:map",
	} {
		var fields []string
		for f := range typ.Fields() {
			fields = append(fields, f.Name+":"+f.Type.Kind().String())
		}
		if got := strings.Join(fields, " "); got != want {
			t.Errorf("%v's fields are %q; cloneChallenge copies %q: update it (and this test)", typ, got, want)
		}
	}
}
