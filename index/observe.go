package index

import (
	"encoding/json"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/payguard/payguard/store"
	"github.com/payguard/payguard/x402"
)

// MaxMetadataBytes bounds the seller metadata kept per observation; larger metadata is not kept (the
// category, when it names one, still is).
const MaxMetadataBytes = 4 << 10

// maxCategoryBytes bounds a category name.
const maxCategoryBytes = store.MaxObservationCategory

// OfferOf is a payment option as the Index keeps it: the network as CAIP-2 when known.
func OfferOf(r *x402.Requirement) store.Offer {
	network := r.Network
	if n, ok := x402.CAIP2(r.Network); ok {
		network = n
	}
	return store.Offer{Scheme: r.Scheme, Network: network, Asset: r.Asset, Amount: r.Amount, PayTo: r.PayTo}
}

// FromChallenge is the observation of a decoded 402 challenge to method url (url already normalized).
func FromChallenge(url, method string, pr *x402.PaymentRequired, at time.Time) store.Observation {
	o := store.Observation{URL: url, Method: strings.ToUpper(method), ObservedAt: at.UTC(), Status: 402, Usable: true,
		Source: store.SourceChallenge}
	for i := range pr.Accepts {
		if len(o.Offers) == store.MaxObservedOffers {
			break
		}
		// An option with a field no real network, asset or address has is not kept (the store would refuse
		// the whole observation): its payee is then absent from the evidence, so offering it later reads as a
		// payee change, never as a match.
		if f := OfferOf(&pr.Accepts[i]); store.CheckOffer(f) == nil {
			o.Offers = append(o.Offers, f)
		}
	}
	o.Metadata, o.Category = sellerMetadata(pr)
	return o
}

// FromPaid is the observation of the seller's response to a payment the proxy released for offer; settled
// when that response carried a successful settlement.
func FromPaid(url, method string, offer store.Offer, status int, settled bool, at time.Time) store.Observation {
	p := offer
	usable := status >= 200 && status < 300
	return store.Observation{URL: url, Method: strings.ToUpper(method), ObservedAt: at.UTC(), Status: status,
		Usable: usable, Source: store.SourcePaid, Paid: &p, Settled: settled && usable}
}

// sellerMetadata is the seller's discovery metadata: v2 extensions.bazaar, else a v1 option's outputSchema
// (the role bazaar plays in v1); with the category it names, if any (bazaar info.category, or a top-level
// category).
func sellerMetadata(pr *x402.PaymentRequired) (meta []byte, category string) {
	raw := rawMetadata(pr)
	if len(raw) == 0 {
		return nil, ""
	}
	category = CategoryOf(raw)
	if len(raw) <= MaxMetadataBytes && json.Valid(raw) {
		meta = append([]byte(nil), raw...)
	}
	return meta, category
}

// CategoryOf reads a category from discovery metadata: info.category, metadata.category or category, the
// first that is a short valid string; lower-cased so that sellers spelling it differently compare.
func CategoryOf(raw []byte) string {
	var m struct {
		Category string `json:"category"`
		Info     struct {
			Category string `json:"category"`
		} `json:"info"`
		Metadata struct {
			Category string `json:"category"`
		} `json:"metadata"`
	}
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	for _, c := range []string{m.Info.Category, m.Metadata.Category, m.Category} {
		c = strings.ToLower(strings.TrimSpace(c))
		if c != "" && len(c) <= maxCategoryBytes && utf8.ValidString(c) {
			return c
		}
	}
	return ""
}

// ChallengeCategory is the category pr's seller declares in its discovery metadata, "" when none.
func ChallengeCategory(pr *x402.PaymentRequired) string {
	if pr == nil {
		return ""
	}
	if raw := rawMetadata(pr); len(raw) > 0 {
		return CategoryOf(raw)
	}
	return ""
}

// rawMetadata is pr's discovery metadata as sent: v2 extensions.bazaar, else the first v1 outputSchema.
func rawMetadata(pr *x402.PaymentRequired) []byte {
	if raw := pr.Extensions["bazaar"]; len(raw) > 0 {
		return raw
	}
	for _, a := range pr.Accepts {
		if len(a.OutputSchema) > 0 {
			return a.OutputSchema
		}
	}
	return nil
}
