package mempool

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/cointoolkit/coin/lib/consensus"
	"github.com/cointoolkit/coin/lib/types"
)

func TestConcurrentAccept(t *testing.T) {
	f := newFixture(t, Options{})
	const workers, each = 8, 40
	batches := make([][]*types.Transaction, workers)
	var all []*types.Transaction
	for w := range batches {
		for i := 0; i < each; i++ {
			// Half independent, half chained within the worker's batch.
			var tx *types.Transaction
			if i%2 == 1 {
				tx = f.transfer([]coin{out(batches[w][i-1], 0)}, 2_000, 1)
			} else {
				tx = f.transfer(f.take(1), 3_000, 2)
			}
			batches[w] = append(batches[w], tx)
			all = append(all, tx)
		}
	}
	var wg sync.WaitGroup
	errs := make(chan error, workers*each)
	stop := make(chan struct{})
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func(txs []*types.Transaction) {
			defer wg.Done()
			for _, tx := range txs {
				if _, err := f.pool.Accept(context.Background(), tx); err != nil {
					errs <- err
				}
			}
		}(batches[w])
	}
	// Readers run alongside.
	var rwg sync.WaitGroup
	rwg.Add(1)
	go func() {
		defer rwg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			f.pool.Info()
			f.pool.Select(consensus.MaxBlockSize)
			f.pool.OutputsTo(testPKH)
			f.pool.SpentBy(all[0].Inputs[0].Outpoint())
			f.pool.TxIDs()
		}
	}()
	wg.Wait()
	close(stop)
	rwg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	f.expect(all...)
	// And the same transactions again, concurrently: every one is a duplicate.
	var dup sync.WaitGroup
	for w := 0; w < workers; w++ {
		dup.Add(1)
		go func(txs []*types.Transaction) {
			defer dup.Done()
			for _, tx := range txs {
				if _, err := f.pool.Accept(context.Background(), tx); !errors.Is(err, ErrAlreadyInMempool) {
					t.Errorf("duplicate: %v", err)
				}
			}
		}(batches[w])
	}
	dup.Wait()
	f.expect(all...)
}

// TestConcurrentDoubleSpend has goroutines race to spend the same outputs: exactly one
// spend of each output wins, the others get ErrConflict.
func TestConcurrentDoubleSpend(t *testing.T) {
	f := newFixture(t, Options{})
	const workers, outputs = 8, 20
	ins := f.take(outputs)
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := map[types.Outpoint]*types.Transaction{}
	for w := 0; w < workers; w++ {
		txs := make([]*types.Transaction, outputs)
		for i := range txs {
			txs[i] = f.transfer(ins[i:i+1], uint64(2_000+w), 1)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			for _, tx := range txs {
				_, err := f.pool.Accept(context.Background(), tx)
				switch {
				case err == nil:
					mu.Lock()
					op := tx.Inputs[0].Outpoint()
					if won[op] != nil {
						t.Errorf("two spends of %s accepted", op)
					}
					won[op] = tx
					mu.Unlock()
				case !errors.Is(err, ErrConflict):
					t.Errorf("unexpected rejection: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	winners := make([]*types.Transaction, 0, len(won))
	for _, tx := range won {
		winners = append(winners, tx)
	}
	if len(winners) != outputs {
		t.Fatalf("%d spends accepted, want %d", len(winners), outputs)
	}
	f.expect(winners...)
}
