package rpcauth

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Sizes of what Generate draws, as rpcauth.py: a 16-byte salt (32 hex characters) and a
// 32-byte password (43 base64url characters).
const (
	SaltBytes     = 16
	PasswordBytes = 32
)

// ErrMalformed is wrapped by the errors of Parse.
var ErrMalformed = errors.New("malformed rpcauth line")

// Entry is one parsed "USER:SALT$HASH" line.
type Entry struct {
	User string
	Salt string
	Hash [sha256.Size]byte
}

// String is the line again, "USER:SALT$HASH".
func (e Entry) String() string { return e.User + ":" + e.Salt + "$" + hex.EncodeToString(e.Hash[:]) }

// HMAC is hex(HMAC-SHA256(key = salt, message = password)), the HASH of a line.
func HMAC(salt, password string) string {
	m := hmac.New(sha256.New, []byte(salt))
	m.Write([]byte(password))
	return hex.EncodeToString(m.Sum(nil))
}

// Parse reads a line "USER:SALT$HASH". The user is not empty and holds no ':'; the salt is not
// empty and holds no '$'; the hash is 64 hex characters.
func Parse(line string) (Entry, error) {
	user, rest, ok := strings.Cut(line, ":")
	if !ok || user == "" {
		return Entry{}, fmt.Errorf("%w: want USER:SALT$HASH, got no USER: part", ErrMalformed)
	}
	salt, hash, ok := strings.Cut(rest, "$")
	if !ok || salt == "" {
		return Entry{}, fmt.Errorf("%w: want USER:SALT$HASH, got no SALT$ part (quote the value with single quotes: a shell expands $ in double quotes)", ErrMalformed)
	}
	var e Entry
	if len(hash) != 2*sha256.Size {
		return Entry{}, fmt.Errorf("%w: HASH has %d characters, want %d hex characters", ErrMalformed, len(hash), 2*sha256.Size)
	}
	if _, err := hex.Decode(e.Hash[:], []byte(hash)); err != nil {
		return Entry{}, fmt.Errorf("%w: HASH is not hex", ErrMalformed)
	}
	e.User, e.Salt = user, salt
	return e, nil
}

// Verify reports whether user and password match e, in time independent of where they differ.
func (e Entry) Verify(user, password string) bool {
	m := hmac.New(sha256.New, []byte(e.Salt))
	m.Write([]byte(password))
	hashOK := hmac.Equal(m.Sum(nil), e.Hash[:])
	userOK := subtle.ConstantTimeCompare([]byte(user), []byte(e.User)) == 1
	return hashOK && userOK
}

// Entries are the lines a node accepts.
type Entries []Entry

// Verify reports whether user and password match one of the entries. Every entry is checked,
// whichever matches, so the time does not say which one did.
func (es Entries) Verify(user, password string) bool {
	ok := 0
	for _, e := range es {
		if e.Verify(user, password) {
			ok = 1
		}
	}
	return ok == 1
}

// ParseAll parses every line; the error names the first bad one by position (never by
// content, though a line holds no secret).
func ParseAll(lines []string) (Entries, error) {
	es := make(Entries, 0, len(lines))
	for i, l := range lines {
		e, err := Parse(strings.TrimSpace(l))
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", i+1, err)
		}
		es = append(es, e)
	}
	return es, nil
}

// Generate makes the line for user with a fresh random salt and password, and returns both.
// The user must be valid for Parse (not empty, no ':').
func Generate(user string) (line, password string, err error) {
	if user == "" || strings.ContainsAny(user, ":\n\r") {
		return "", "", fmt.Errorf("user %q: want a non-empty name without ':'", user)
	}
	var salt [SaltBytes]byte
	var pass [PasswordBytes]byte
	if _, err := rand.Read(salt[:]); err != nil {
		return "", "", err
	}
	if _, err := rand.Read(pass[:]); err != nil {
		return "", "", err
	}
	password = base64.RawURLEncoding.EncodeToString(pass[:])
	s := hex.EncodeToString(salt[:])
	return user + ":" + s + "$" + HMAC(s, password), password, nil
}
