package wire

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzReadFrame: any byte stream either fails with an error or yields a frame whose payload
// matches its header, and a frame that decodes re-encodes to the same bytes.
func FuzzReadFrame(f *testing.F) {
	for _, m := range sampleMessages() {
		f.Add(Encode(magic, m))
	}
	f.Add([]byte("RCONping\x00\x00\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, payload, err := ReadFrame(bytes.NewReader(b), magic)
		if err != nil {
			return
		}
		if uint32(len(payload)) != h.Length || h.Length > MaxPayload(h.Command) || Checksum(payload) != h.Checksum {
			t.Fatalf("accepted an inconsistent frame %+v", h)
		}
		m, err := Decode(h.Command, payload)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrUnknownCommand) {
				t.Fatalf("unexpected decode error %v", err)
			}
			return
		}
		if !bytes.Equal(Encode(magic, m), b[:HeaderSize+len(payload)]) {
			t.Fatalf("%s: re-encoding differs", h.Command)
		}
	})
}

// FuzzDecode: every message decoder on arbitrary payloads: no panic, and what decodes
// re-encodes to the same bytes (bincode is canonical).
func FuzzDecode(f *testing.F) {
	cmds := []string{CmdVersion, CmdVerack, CmdPing, CmdPong, CmdGetAddr, CmdAddr, CmdInv, CmdGetData,
		CmdNotFound, CmdGetHeaders, CmdHeaders, CmdBlock, CmdTx}
	for i, m := range sampleMessages() {
		f.Add(uint8(i), Payload(m))
	}
	f.Fuzz(func(t *testing.T, which uint8, payload []byte) {
		cmd := cmds[int(which)%len(cmds)]
		m, err := Decode(cmd, payload)
		if err != nil {
			if !errors.Is(err, ErrMalformed) && !errors.Is(err, ErrOversize) {
				t.Fatalf("%s: unexpected error %v", cmd, err)
			}
			return
		}
		if !bytes.Equal(Payload(m), payload) {
			t.Fatalf("%s: re-encoding differs", cmd)
		}
	})
}
