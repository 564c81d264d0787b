package wallet

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/syndtr/goleveldb/leveldb"
	"github.com/syndtr/goleveldb/leveldb/opt"
	"github.com/syndtr/goleveldb/leveldb/util"
	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/cointoolkit/coin/lib/dblock"
	"github.com/cointoolkit/coin/lib/params"
	"github.com/cointoolkit/coin/lib/types"
)

// Store errors.
var (
	ErrNoWallet        = errors.New("no wallet in this directory (create or restore one first)")
	ErrWalletExists    = errors.New("a wallet already exists in this directory")
	ErrWrongPassphrase = errors.New("wrong passphrase (or corrupted wallet)")
	ErrLocked          = errors.New("the directory is in use by another process")
	ErrEmptyPassphrase = errors.New("the passphrase is empty")
)

// KDF is the argon2id cost of deriving the seed's encryption key from the passphrase.
type KDF struct {
	Time      uint32 `json:"time"`
	MemoryKiB uint32 `json:"memory_kib"`
	Threads   uint8  `json:"threads"`
}

// DefaultKDF is RFC 9106's second recommended option (64 MiB), with 3 passes.
var DefaultKDF = KDF{Time: 3, MemoryKiB: 64 * 1024, Threads: 4}

// storeFormat is the version of the record layout, bound into the AEAD's associated data.
const storeFormat = 1

const (
	keyMeta   = "meta"
	keySeed   = "seed"
	prefixAdr = "addr/"
)

type metaRecord struct {
	Format  int    `json:"format"`
	Network string `json:"network"`
	Account uint32 `json:"account"`
	Created string `json:"created"`
}

type seedRecord struct {
	KDF        string `json:"kdf"`
	Params     KDF    `json:"params"`
	Salt       string `json:"salt"`
	Cipher     string `json:"cipher"`
	Nonce      string `json:"nonce"`
	Ciphertext string `json:"ciphertext"`
}

// AddressRecord is one derived address as the store keeps it (public data only).
type AddressRecord struct {
	Index      uint32     `json:"index"`
	Address    string     `json:"address"`
	PubKeyHash types.Hash `json:"pubkey_hash"`
}

// Store is an open wallet directory. It is safe for use by one goroutine at a time.
type Store struct {
	db   *leveldb.DB
	dir  string
	meta metaRecord
	net  *params.Network
}

// openDB opens a LevelDB directory, translating the "in use" and existence errors.
func openDB(dir string, o *opt.Options) (*leveldb.DB, error) {
	db, err := leveldb.OpenFile(dir, o)
	if err == nil {
		return db, nil
	}
	switch {
	case dblock.Held(err):
		return nil, fmt.Errorf("%w: %s", ErrLocked, dir)
	case o != nil && o.ErrorIfMissing && errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s", ErrNoWallet, dir)
	case o != nil && o.ErrorIfExist && errors.Is(err, fs.ErrExist):
		return nil, fmt.Errorf("%w: %s", ErrWalletExists, dir)
	}
	return nil, fmt.Errorf("open %s: %w", dir, err)
}

func sealAD(network string, account uint32) []byte {
	return fmt.Appendf(nil, "coin-wallet seed v%d network=%s account=%d", storeFormat, network, account)
}

// Create makes a new wallet in dir (which must not hold one) for net and account, storing
// seed encrypted under passphrase and the address of index 0.
func Create(dir string, net *params.Network, account uint32, seed []byte, passphrase string, kdf KDF) (*Store, error) {
	if passphrase == "" {
		return nil, ErrEmptyPassphrase
	}
	ring, err := NewKeyring(seed, net, account)
	if err != nil {
		return nil, err
	}
	defer ring.Wipe()
	k0, err := ring.Key(0)
	if err != nil {
		return nil, err
	}
	k0.Wipe()
	if kdf.Time == 0 || kdf.MemoryKiB == 0 || kdf.Threads == 0 {
		return nil, fmt.Errorf("invalid argon2id parameters %+v", kdf)
	}

	salt := make([]byte, 16)
	nonce := make([]byte, chacha20poly1305.NonceSizeX)
	if _, err := rand.Read(salt); err != nil {
		return nil, err
	}
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	key := argon2.IDKey([]byte(passphrase), salt, kdf.Time, kdf.MemoryKiB, kdf.Threads, chacha20poly1305.KeySize)
	aead, err := chacha20poly1305.NewX(key)
	clear(key)
	if err != nil {
		return nil, err
	}
	ct := aead.Seal(nil, nonce, seed, sealAD(net.Name, account))
	meta := metaRecord{Format: storeFormat, Network: net.Name, Account: account, Created: time.Now().UTC().Format(time.RFC3339)}
	sr := seedRecord{KDF: "argon2id", Params: kdf, Salt: hex.EncodeToString(salt), Cipher: "xchacha20-poly1305",
		Nonce: hex.EncodeToString(nonce), Ciphertext: hex.EncodeToString(ct)}

	if err := makePrivateDir(dir); err != nil {
		return nil, err
	}
	db, err := openDB(dir, &opt.Options{ErrorIfExist: true})
	if err != nil {
		return nil, err
	}
	b := new(leveldb.Batch)
	mb, _ := json.Marshal(meta)
	sb, _ := json.Marshal(sr)
	b.Put([]byte(keyMeta), mb)
	b.Put([]byte(keySeed), sb)
	ab, _ := json.Marshal(AddressRecord{Index: 0, Address: k0.Address, PubKeyHash: k0.PKH})
	b.Put(addrKey(0), ab)
	if err := db.Write(b, &opt.WriteOptions{Sync: true}); err != nil {
		db.Close()
		return nil, fmt.Errorf("write wallet: %w", err)
	}
	if _, err := tightenFiles(dir); err != nil {
		db.Close()
		return nil, fmt.Errorf("wallet file modes: %w", err)
	}
	return &Store{db: db, dir: dir, meta: meta, net: net}, nil
}

// Open opens the wallet in dir and checks that it belongs to net.
//
// It refuses (ErrPermissions) a directory that other users can read or enter, and sets the
// files inside to mode 0600 (perms.go).
//
// A directory that does not exist, or holds no LevelDB (no CURRENT file), is ErrNoWallet,
// and nothing is created: goleveldb would make the directory and its lock and log files
// before finding no database.
func Open(dir string, net *params.Network) (*Store, error) {
	if err := checkDirPrivate(dir); err != nil {
		return nil, err
	}
	if _, err := os.Stat(filepath.Join(dir, "CURRENT")); errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNoWallet, dir)
	}
	db, err := openDB(dir, &opt.Options{ErrorIfMissing: true})
	if err != nil {
		return nil, err
	}
	if _, err := tightenFiles(dir); err != nil {
		db.Close()
		return nil, fmt.Errorf("wallet file modes: %w", err)
	}
	s := &Store{db: db, dir: dir, net: net}
	b, err := db.Get([]byte(keyMeta), nil)
	if err != nil {
		db.Close()
		if errors.Is(err, leveldb.ErrNotFound) {
			return nil, fmt.Errorf("%w: %s", ErrNoWallet, dir)
		}
		return nil, fmt.Errorf("read wallet: %w", err)
	}
	if err := json.Unmarshal(b, &s.meta); err != nil {
		db.Close()
		return nil, fmt.Errorf("read wallet: corrupted metadata: %w", err)
	}
	if s.meta.Format != storeFormat {
		db.Close()
		return nil, fmt.Errorf("wallet format %d is not supported (want %d)", s.meta.Format, storeFormat)
	}
	if s.meta.Network != net.Name {
		db.Close()
		return nil, fmt.Errorf("%w: the wallet in %s is for %s, not %s", ErrWrongNetwork, dir, s.meta.Network, net.Name)
	}
	return s, nil
}

// Close closes the store and sets the files goleveldb created meanwhile to mode 0600.
func (s *Store) Close() error {
	err := s.db.Close()
	if _, terr := tightenFiles(s.dir); err == nil && terr != nil {
		err = fmt.Errorf("wallet file modes: %w", terr)
	}
	return err
}

// Network is the wallet's network.
func (s *Store) Network() *params.Network { return s.net }

// Account is the wallet's account.
func (s *Store) Account() uint32 { return s.meta.Account }

// Unlock decrypts the seed with passphrase and returns the wallet's keyring. Call Wipe on
// it when done.
func (s *Store) Unlock(passphrase string) (*Keyring, error) {
	b, err := s.db.Get([]byte(keySeed), nil)
	if err != nil {
		return nil, fmt.Errorf("read wallet seed: %w", err)
	}
	var sr seedRecord
	if err := json.Unmarshal(b, &sr); err != nil {
		return nil, fmt.Errorf("read wallet seed: %w", err)
	}
	if sr.KDF != "argon2id" || sr.Cipher != "xchacha20-poly1305" {
		return nil, fmt.Errorf("wallet seed uses %s/%s, want argon2id/xchacha20-poly1305", sr.KDF, sr.Cipher)
	}
	salt, err1 := hex.DecodeString(sr.Salt)
	nonce, err2 := hex.DecodeString(sr.Nonce)
	ct, err3 := hex.DecodeString(sr.Ciphertext)
	if err := errors.Join(err1, err2, err3); err != nil || len(nonce) != chacha20poly1305.NonceSizeX {
		return nil, fmt.Errorf("read wallet seed: corrupted record")
	}
	p := sr.Params
	if p.Time == 0 || p.Time > 100 || p.MemoryKiB == 0 || p.MemoryKiB > 4<<20 || p.Threads == 0 {
		return nil, fmt.Errorf("read wallet seed: unreasonable argon2id parameters %+v", p)
	}
	key := argon2.IDKey([]byte(passphrase), salt, p.Time, p.MemoryKiB, p.Threads, chacha20poly1305.KeySize)
	aead, err := chacha20poly1305.NewX(key)
	clear(key)
	if err != nil {
		return nil, err
	}
	seed, err := aead.Open(nil, nonce, ct, sealAD(s.meta.Network, s.meta.Account))
	if err != nil {
		return nil, ErrWrongPassphrase
	}
	defer clear(seed)
	return NewKeyring(seed, s.net, s.meta.Account)
}

func addrKey(index uint32) []byte {
	k := make([]byte, len(prefixAdr)+4)
	copy(k, prefixAdr)
	binary.BigEndian.PutUint32(k[len(prefixAdr):], index)
	return k
}

// Addresses lists the derived addresses by index.
func (s *Store) Addresses() ([]AddressRecord, error) {
	it := s.db.NewIterator(util.BytesPrefix([]byte(prefixAdr)), nil)
	defer it.Release()
	var out []AddressRecord
	for it.Next() {
		var r AddressRecord
		if err := json.Unmarshal(it.Value(), &r); err != nil {
			return nil, fmt.Errorf("read wallet addresses: %w", err)
		}
		out = append(out, r)
	}
	if err := it.Error(); err != nil {
		return nil, fmt.Errorf("read wallet addresses: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("read wallet addresses: none stored")
	}
	return out, nil
}

// NewAddress derives the next unused index with ring (from Unlock) and stores it.
func (s *Store) NewAddress(ring *Keyring) (AddressRecord, error) {
	recs, err := s.Addresses()
	if err != nil {
		return AddressRecord{}, err
	}
	next := recs[len(recs)-1].Index + 1
	k, err := ring.Key(next)
	if err != nil {
		return AddressRecord{}, err
	}
	k.Wipe()
	r := AddressRecord{Index: next, Address: k.Address, PubKeyHash: k.PKH}
	b, _ := json.Marshal(r)
	if err := s.db.Put(addrKey(next), b, &opt.WriteOptions{Sync: true}); err != nil {
		return AddressRecord{}, fmt.Errorf("write wallet address: %w", err)
	}
	return r, nil
}

// UnlockKeys unlocks the wallet with passphrase and returns the keys of its addresses (Keys);
// the keyring is wiped before it returns.
func (s *Store) UnlockKeys(passphrase string) ([]Key, error) {
	ring, err := s.Unlock(passphrase)
	if err != nil {
		return nil, err
	}
	defer ring.Wipe()
	return s.Keys(ring)
}

// Keys derives the private keys of every stored address with ring. Call Wipe on each.
func (s *Store) Keys(ring *Keyring) ([]Key, error) {
	recs, err := s.Addresses()
	if err != nil {
		return nil, err
	}
	out := make([]Key, 0, len(recs))
	for _, r := range recs {
		k, err := ring.Key(r.Index)
		if err != nil {
			return nil, err
		}
		if k.Address != r.Address {
			k.Wipe()
			for i := range out {
				out[i].Wipe()
			}
			return nil, fmt.Errorf("wallet address %d does not match its seed (corrupted wallet)", r.Index)
		}
		out = append(out, k)
	}
	return out, nil
}
