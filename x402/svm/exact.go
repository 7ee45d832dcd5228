package svm

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// The official facilitator's bounds (@x402/svm 2.27.0, exact/facilitator: verifyStaticPath).
const (
	// MaxComputeUnitPrice is the highest SetComputeUnitPrice, in micro-lamports per compute unit (5 lamports).
	MaxComputeUnitPrice = 5_000_000
	// minInstructions and maxInstructions bound the layout: two compute-budget instructions, the transfer,
	// and up to four optional ones.
	minInstructions, maxInstructions = 3, 7
	// MaxMemoBytes is the longest extra.memo the official client writes.
	MaxMemoBytes = 256
)

// Instruction discriminators (the first data byte).
const (
	ixSetComputeUnitLimit = 2  // ComputeBudget: u32 units
	ixSetComputeUnitPrice = 3  // ComputeBudget: u64 micro-lamports
	ixTransferChecked     = 12 // Token and Token-2022: u64 amount, u8 decimals
)

// Terms are what one payment requirement lets a transaction do: pay Amount atomic units of Mint to PayTo's
// associated token account, with FeePayer (the requirement's extra.feePayer) paying the fees, and, when the
// requirement names one (HasMemo), carry exactly the memo Memo.
type Terms struct {
	PayTo, Mint, FeePayer Key
	Amount                uint64
	Memo                  string
	HasMemo               bool
}

// Payment is what a transaction that passed CheckExact does.
type Payment struct {
	Payer        Key // the transfer's authority: the paying wallet, whose signature the transaction carries
	Source       Key // the token account debited
	Destination  Key // PayTo's associated token account
	TokenProgram Key // Token or Token-2022
	Amount       uint64
	Decimals     uint8
	// MessageHash is sha256 of the signed message. The message holds the blockhash, so the same bytes can land
	// on chain once within the blockhash's lifetime: it identifies the payment before the fee payer signs
	// (the transaction's own id, the fee payer's signature, does not exist yet).
	MessageHash [32]byte
}

// CheckExact binds a decoded transaction to the terms as the official facilitator's verification does, and
// stricter where a payment guard must be: the instructions are exactly SetComputeUnitLimit, SetComputeUnitPrice
// (at most MaxComputeUnitPrice), one TransferChecked of Token or Token-2022 moving exactly Amount of Mint from
// a signer to PayTo's associated token account under that program, then up to four Memo instructions (a memo
// moves nothing); the fee payer is FeePayer and is named by no instruction; every signature but the fee
// payer's is present and valid over the message; no account comes from an address lookup table (those live
// on chain and cannot be read here). Lighthouse instructions, which the facilitator lets wallets add, are
// refused: they can create accounts funded by a signer, and nothing offline can show what they do.
func CheckExact(tx *Transaction, want Terms) (Payment, error) {
	var p Payment
	if len(tx.Keys) == 0 || len(tx.Signatures) != tx.Header.RequiredSignatures {
		return p, errors.New("transaction is not a decoded one") // Decode guarantees both
	}
	if tx.LookupTables > 0 {
		return p, errors.New("transaction loads accounts from address lookup tables, which cannot be checked offline")
	}
	if tx.Keys[0] != want.FeePayer {
		return p, fmt.Errorf("transaction's fee payer is %s, not the requirement's feePayer %s", tx.Keys[0], want.FeePayer)
	}
	n := len(tx.Instructions)
	if n < minInstructions || n > maxInstructions {
		return p, fmt.Errorf("transaction has %d instructions; an exact payment has %d to %d", n, minInstructions, maxInstructions)
	}
	for i, in := range tx.Instructions {
		for _, a := range in.Accounts {
			if a == 0 {
				return p, fmt.Errorf("instruction %d names the fee payer as an account", i)
			}
		}
	}
	if err := tx.checkComputeBudget(0, ixSetComputeUnitLimit, 5); err != nil {
		return p, err
	}
	if err := tx.checkComputeBudget(1, ixSetComputeUnitPrice, 9); err != nil {
		return p, err
	}
	if price := binary.LittleEndian.Uint64(tx.Instructions[1].Data[1:]); price > MaxComputeUnitPrice {
		return p, fmt.Errorf("compute unit price %d micro-lamports is above the facilitator's bound %d", price, MaxComputeUnitPrice)
	}
	p, err := tx.checkTransfer(tx.Instructions[2], want)
	if err != nil {
		return p, err
	}
	memos := 0
	for i, in := range tx.Instructions[3:] {
		switch prog := tx.Keys[in.ProgramIndex]; prog {
		case MemoProgram:
			memos++
			if want.HasMemo && string(in.Data) != want.Memo {
				return p, fmt.Errorf("memo %.80q differs from the requirement's memo %q", in.Data, want.Memo)
			}
		case LighthouseProgram:
			return p, fmt.Errorf("instruction %d is a wallet-injected Lighthouse instruction; payguard does not release those", i+3)
		default:
			return p, fmt.Errorf("instruction %d calls program %s; after the transfer only Memo is allowed", i+3, prog)
		}
	}
	if want.HasMemo && memos != 1 {
		return p, fmt.Errorf("transaction carries %d memos; the requirement names one", memos)
	}
	if err := tx.verifySignatures(); err != nil {
		return p, err
	}
	p.MessageHash = tx.MessageHash()
	return p, nil
}

// MessageHash is sha256 of the signed message: the payment's identity before the fee payer signs (see
// Payment.MessageHash).
func (tx *Transaction) MessageHash() [32]byte { return sha256.Sum256(tx.Message) }

// Transfer is what a transaction's TransferChecked names, read without binding anything (ReadTransfer).
type Transfer struct {
	Mint, Authority Key
	Amount          uint64
}

// ReadTransfer reads the transaction's TransferChecked (instruction 2, where the exact scheme puts it)
// without binding anything: enough to find the approval a v1 payment (which names neither payee nor asset)
// answers, which CheckExact then binds it to.
func ReadTransfer(tx *Transaction) (Transfer, error) {
	var t Transfer
	if len(tx.Instructions) < minInstructions {
		return t, fmt.Errorf("transaction has %d instructions; an exact payment has at least %d", len(tx.Instructions), minInstructions)
	}
	in := tx.Instructions[2]
	prog := tx.Keys[in.ProgramIndex]
	if prog != TokenProgram && prog != Token2022Program || len(in.Data) != 10 || in.Data[0] != ixTransferChecked ||
		len(in.Accounts) != 4 || in.Accounts[1] >= len(tx.Keys) || in.Accounts[3] >= len(tx.Keys) {
		return t, errors.New("instruction 2 is not a TransferChecked of the Token or Token-2022 program")
	}
	t.Amount, _ = u64(in.Data, 1)
	t.Mint, t.Authority = tx.Keys[in.Accounts[1]], tx.Keys[in.Accounts[3]]
	return t, nil
}

// checkComputeBudget checks that instruction i is the compute-budget instruction disc, with its exact data
// size and no accounts.
func (tx *Transaction) checkComputeBudget(i int, disc byte, size int) error {
	in := tx.Instructions[i]
	name := map[byte]string{ixSetComputeUnitLimit: "SetComputeUnitLimit", ixSetComputeUnitPrice: "SetComputeUnitPrice"}[disc]
	if tx.Keys[in.ProgramIndex] != ComputeBudgetProgram || len(in.Data) != size || in.Data[0] != disc || len(in.Accounts) != 0 {
		return fmt.Errorf("instruction %d is not a ComputeBudget %s", i, name)
	}
	return nil
}

// checkTransfer reads the TransferChecked and binds it to the terms.
func (tx *Transaction) checkTransfer(in Instruction, want Terms) (Payment, error) {
	var p Payment
	p.TokenProgram = tx.Keys[in.ProgramIndex]
	if p.TokenProgram != TokenProgram && p.TokenProgram != Token2022Program {
		return p, fmt.Errorf("instruction 2 calls program %s, not the Token or Token-2022 program", p.TokenProgram)
	}
	// Exactly the four accounts the official client names: more would be multisig signers or transfer-hook
	// accounts, which the client never adds.
	if len(in.Data) != 10 || in.Data[0] != ixTransferChecked || len(in.Accounts) != 4 {
		return p, errors.New("instruction 2 is not a TransferChecked with source, mint, destination and authority")
	}
	source, mint, dest, authority := in.Accounts[0], in.Accounts[1], in.Accounts[2], in.Accounts[3]
	if authority >= len(tx.Keys) || !tx.Signed(authority) {
		return p, errors.New("the transfer's authority does not sign the transaction")
	}
	for _, a := range []int{source, mint, dest} {
		if a >= len(tx.Keys) {
			return p, errors.New("the transfer names an account from an address lookup table")
		}
	}
	if got := tx.Keys[mint]; got != want.Mint {
		return p, fmt.Errorf("transfer moves mint %s, not the requirement's asset %s", got, want.Mint)
	}
	ata, err := AssociatedTokenAddress(want.PayTo, want.Mint, p.TokenProgram)
	if err != nil {
		return p, fmt.Errorf("payTo's token account: %v", err)
	}
	if got := tx.Keys[dest]; got != ata {
		return p, fmt.Errorf("transfer pays token account %s, not %s (payTo %s's associated account for this mint)", got, ata, want.PayTo)
	}
	p.Amount, _ = u64(in.Data, 1)
	p.Decimals = in.Data[9]
	if p.Amount != want.Amount {
		return p, fmt.Errorf("transfer moves %d atomic units, not the requirement's amount %d", p.Amount, want.Amount)
	}
	if source == dest {
		return p, errors.New("transfer's source is its destination")
	}
	p.Payer, p.Source, p.Destination = tx.Keys[authority], tx.Keys[source], ata
	return p, nil
}

// verifySignatures checks every signature but the fee payer's (slot 0, which the facilitator adds when it
// settles) as ed25519 over the message, as the official facilitator does: a transaction missing one could
// never land, and its message hash would be a payment's identity without the payer having signed it.
func (tx *Transaction) verifySignatures() error {
	var zero [64]byte
	for i := 1; i < tx.Header.RequiredSignatures; i++ {
		sig := tx.Signatures[i]
		if bytes.Equal(sig[:], zero[:]) {
			return fmt.Errorf("signer %s has not signed the transaction", tx.Keys[i])
		}
		if !ed25519.Verify(tx.Keys[i][:], tx.Message, sig[:]) {
			return fmt.Errorf("signer %s's signature does not verify over the message", tx.Keys[i])
		}
	}
	return nil
}
