package proxy

import (
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/svm"
)

// maxSVMTransactionText is the base64 length of Solana's largest transaction: longer text is refused before
// it is decoded.
var maxSVMTransactionText = base64.StdEncoding.EncodedLen(svm.MaxTransactionSize)

// svmTerms binds a Solana "exact" payment (a partially signed transaction) to the option its payload names
// (docs/SPEC.md §11.8): one TransferChecked of exactly the amount of the asset (the mint) to payTo's
// associated token account, fee payer = extra.feePayer, the memo extra.memo names if any, nothing else that
// moves value (svm.CheckExact). The payment is remembered by its signed message, which holds the blockhash.
//
// Only v2 is read: a v1 payload names neither payee nor asset, and its transaction pays a token account, from
// which the payee cannot be recovered, so nothing in it could be bound to an approved option.
func svmTerms(pl *x402.PaymentPayload, t terms) (terms, error) {
	if t.version != x402.V2 {
		return t, errors.New("a v1 Solana payment names no payTo or asset (its transaction pays a token account): payguard checks Solana payments under x402 v2")
	}
	if t.scheme != "exact" {
		return t, fmt.Errorf("Solana payment in scheme %q cannot be checked (payguard reads exact)", t.scheme)
	}
	a := t.accepted
	var want svm.Terms
	var err error
	if want.PayTo, err = svm.ParseKey(a.PayTo); err != nil {
		return t, fmt.Errorf("payTo is not a Solana address: %v", err)
	}
	if want.Mint, err = svm.ParseKey(a.Asset); err != nil {
		return t, fmt.Errorf("asset is not a Solana mint: %v", err)
	}
	feePayer, ok, err := a.ExtraString("feePayer")
	if err != nil || !ok {
		return t, fmt.Errorf("Solana option names no extra.feePayer string (%v)", err)
	}
	if want.FeePayer, err = svm.ParseKey(feePayer); err != nil {
		return t, fmt.Errorf("extra.feePayer is not a Solana address: %v", err)
	}
	if want.Memo, want.HasMemo, err = a.ExtraString("memo"); err != nil {
		return t, fmt.Errorf("extra.memo: %v", err)
	}
	if want.HasMemo && want.Memo == "" {
		want.HasMemo = false // the official client and facilitator treat an empty memo as none
	}
	if want.Amount, err = x402.ParseAtomic(a.Amount); err != nil { // at most 1e18: an SPL amount is a u64
		return t, fmt.Errorf("amount %q: %v", a.Amount, err)
	}
	text, err := pl.ExactSVM()
	if err != nil {
		return t, fmt.Errorf("payment payload unreadable: %v", err)
	}
	if len(text) > maxSVMTransactionText {
		return t, fmt.Errorf("payload.transaction is %d characters, longer than any Solana transaction (%d)", len(text), maxSVMTransactionText)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil {
		return t, fmt.Errorf("payload.transaction is not standard base64: %v", err)
	}
	tx, err := svm.Decode(raw)
	if err != nil {
		return t, fmt.Errorf("payload.transaction unreadable: %v", err)
	}
	p, err := svm.CheckExact(tx, want)
	if err != nil {
		return t, fmt.Errorf("Solana payment does not do what it names: %v", err)
	}
	network, _ := x402.CAIP2(t.network)
	t.authorization = "x402-svm-message\x00" + network + "\x00" + hex.EncodeToString(p.MessageHash[:])
	return t, nil
}
