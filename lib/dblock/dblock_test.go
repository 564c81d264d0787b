package dblock

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/syndtr/goleveldb/leveldb"
)

// TestHeld: a second open of an open database is held; other failures are not.
func TestHeld(t *testing.T) {
	dir := t.TempDir()
	db, err := leveldb.OpenFile(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	_, err = leveldb.OpenFile(dir, nil)
	if err == nil || !Held(err) || !Held(fmt.Errorf("open: %w", err)) {
		t.Fatalf("second open: %v, want held", err)
	}
	for _, e := range []error{nil, os.ErrNotExist, os.ErrExist, errors.New("resource temporarily unavailable"), errors.New("lock")} {
		if Held(e) {
			t.Errorf("%v taken for a held database", e)
		}
	}
}
