package types

import (
	"fmt"

	"github.com/cointoolkit/coin/lib/bincode"
)

// VouchPayload is the payload of a Vouch transaction.
type VouchPayload struct{ Target Hash }

// ContractCreatePayload is the payload of a ContractCreate transaction.
type ContractCreatePayload struct {
	Counterparty Hash
	ExpiryBlocks uint32
}

// ContractRefPayload is the payload of ContractFulfil and ContractRefund.
type ContractRefPayload struct{ ContractID Hash }

// ReviewPayload is the payload of a Review transaction.
type ReviewPayload struct {
	ContractID Hash
	Subject    Hash
	Score      uint8
}

// Bytes is the payload's bincode.
func (p VouchPayload) Bytes() []byte { return append([]byte(nil), p.Target[:]...) }

// Bytes is the payload's bincode.
func (p ContractCreatePayload) Bytes() []byte {
	w := bincode.NewWriter(nil)
	w.Raw(p.Counterparty[:])
	w.U32(p.ExpiryBlocks)
	return w.Bytes()
}

// Bytes is the payload's bincode.
func (p ContractRefPayload) Bytes() []byte { return append([]byte(nil), p.ContractID[:]...) }

// Bytes is the payload's bincode.
func (p ReviewPayload) Bytes() []byte {
	w := bincode.NewWriter(nil)
	w.Raw(p.ContractID[:])
	w.Raw(p.Subject[:])
	w.U8(p.Score)
	return w.Bytes()
}

func finish(r *bincode.Reader, what string) error {
	if err := r.Finish(); err != nil {
		return fmt.Errorf("decode %s payload: %w", what, err)
	}
	return nil
}

// DecodeVouchPayload decodes a Vouch payload.
func DecodeVouchPayload(b []byte) (p VouchPayload, err error) {
	r := bincode.NewReader(b)
	r.Raw(p.Target[:])
	return p, finish(r, "vouch")
}

// DecodeContractCreatePayload decodes a ContractCreate payload.
func DecodeContractCreatePayload(b []byte) (p ContractCreatePayload, err error) {
	r := bincode.NewReader(b)
	r.Raw(p.Counterparty[:])
	p.ExpiryBlocks = r.U32()
	return p, finish(r, "contract create")
}

// DecodeContractRefPayload decodes a ContractFulfil or ContractRefund payload.
func DecodeContractRefPayload(b []byte) (p ContractRefPayload, err error) {
	r := bincode.NewReader(b)
	r.Raw(p.ContractID[:])
	return p, finish(r, "contract")
}

// DecodeReviewPayload decodes a Review payload.
func DecodeReviewPayload(b []byte) (p ReviewPayload, err error) {
	r := bincode.NewReader(b)
	r.Raw(p.ContractID[:])
	r.Raw(p.Subject[:])
	p.Score = r.U8()
	return p, finish(r, "review")
}
