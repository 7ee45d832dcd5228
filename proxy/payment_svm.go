package proxy

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"

	"github.com/payguard/payguard/x402"
	"github.com/payguard/payguard/x402/svm"
)

// maxSVMTransactionText is the base64 length of Solana's largest transaction: longer text is refused before
// it is decoded.
var maxSVMTransactionText = base64.StdEncoding.EncodedLen(svm.MaxTransactionSize)

// svmTerms binds a Solana "exact" payment (a partially signed transaction) to the option its payload names
// (docs/SPEC.md §11.9): one TransferChecked of exactly the amount of the asset (the mint) to payTo's
// associated token account, fee payer = extra.feePayer, the memo extra.memo names if any, nothing else that
// moves value (svm.CheckExact). The payment is remembered by its signed message, which holds the blockhash.
//
// A v1 payload names neither payee nor asset, and its transfer pays a token account, from which the payee
// cannot be recovered: it is found by the mint and amount its transfer moves (the key its ticket was made
// under, svmV1Payee) and bound in full to the ticket's option (matchTicket); with no ticket it is refused.
func svmTerms(pl *x402.PaymentPayload, t terms) (terms, error) {
	if t.scheme != "exact" {
		return t, fmt.Errorf("Solana payment in scheme %q cannot be checked (payguard reads exact)", t.scheme)
	}
	tx, err := svmTransaction(pl)
	if err != nil {
		return t, err
	}
	network, _ := x402.CAIP2(t.network)
	sum := tx.MessageHash()
	t.authorization = "x402-svm-message\x00" + network + "\x00" + hex.EncodeToString(sum[:])
	if t.version == x402.V1 {
		tr, err := svm.ReadTransfer(tx)
		if err != nil {
			return t, fmt.Errorf("Solana payment does not do what an exact payment does: %v", err)
		}
		t.payTo, t.amount, t.payer, t.svmTx = svmV1Payee(tr.Mint.String()), fmt.Sprint(tr.Amount), tr.Authority.String(), tx
		return t, nil
	}
	want, err := svmWant(t.accepted)
	if err != nil {
		return t, err
	}
	p, err := svm.CheckExact(tx, want)
	if err != nil {
		return t, fmt.Errorf("Solana payment does not do what it names: %v", err)
	}
	t.payer = p.Payer.String()
	return t, nil
}

// svmV1Payee is what stands for the payee in the ticket key of a v1 Solana option: its mint, the one thing
// of the option a v1 payment's transaction names (ticketPayee).
func svmV1Payee(mint string) string { return "svm-v1-mint:" + mint }

// bindSVMTicket binds a v1 Solana payment to the option of the ticket it matched.
func bindSVMTicket(tx *svm.Transaction, opt *x402.Requirement) error {
	want, err := svmWant(opt)
	if err != nil {
		return err
	}
	if _, err := svm.CheckExact(tx, want); err != nil {
		return fmt.Errorf("Solana payment does not do what payguard allowed: %v", err)
	}
	return nil
}

// svmTransaction reads payload.transaction: strict standard base64 of at most Solana's largest transaction.
func svmTransaction(pl *x402.PaymentPayload) (*svm.Transaction, error) {
	text, err := pl.ExactSVM()
	if err != nil {
		return nil, fmt.Errorf("payment payload unreadable: %v", err)
	}
	if len(text) > maxSVMTransactionText {
		return nil, fmt.Errorf("payload.transaction is %d characters, longer than any Solana transaction (%d)", len(text), maxSVMTransactionText)
	}
	raw, err := base64.StdEncoding.Strict().DecodeString(text)
	if err != nil {
		return nil, fmt.Errorf("payload.transaction is not standard base64: %v", err)
	}
	tx, err := svm.Decode(raw)
	if err != nil {
		return nil, fmt.Errorf("payload.transaction unreadable: %v", err)
	}
	return tx, nil
}

// svmWant reads what a Solana option lets a transaction do.
func svmWant(a *x402.Requirement) (svm.Terms, error) {
	var want svm.Terms
	var err error
	if want.PayTo, err = svm.ParseKey(a.PayTo); err != nil {
		return want, fmt.Errorf("payTo is not a Solana address: %v", err)
	}
	if want.Mint, err = svm.ParseKey(a.Asset); err != nil {
		return want, fmt.Errorf("asset is not a Solana mint: %v", err)
	}
	feePayer, ok, err := a.ExtraString("feePayer")
	if err != nil || !ok {
		return want, fmt.Errorf("Solana option names no extra.feePayer string (%v)", err)
	}
	if want.FeePayer, err = svm.ParseKey(feePayer); err != nil {
		return want, fmt.Errorf("extra.feePayer is not a Solana address: %v", err)
	}
	if want.Memo, want.HasMemo, err = a.ExtraString("memo"); err != nil {
		return want, fmt.Errorf("extra.memo: %v", err)
	}
	if want.HasMemo && want.Memo == "" {
		want.HasMemo = false // the official client and facilitator treat an empty memo as none
	}
	if want.Amount, err = x402.ParseAtomic(a.Amount); err != nil { // at most 1e18: an SPL amount is a u64
		return want, fmt.Errorf("amount %q: %v", a.Amount, err)
	}
	return want, nil
}
