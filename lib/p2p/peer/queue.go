package peer

import "sync"

// sendQueue is the bounded queue of encoded frames between the senders and the write loop.
// It is bounded in frames and in bytes; a frame larger than the byte bound still goes
// through when the queue is empty.
type sendQueue struct {
	mu       sync.Mutex
	frames   [][]byte
	bytes    int
	maxBytes int
	maxMsgs  int
	ready    chan struct{} // something was queued
	space    chan struct{} // something was taken
}

func newSendQueue(maxMsgs, maxBytes int) *sendQueue {
	return &sendQueue{maxBytes: maxBytes, maxMsgs: maxMsgs, ready: make(chan struct{}, 1), space: make(chan struct{}, 1)}
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// push queues f. With wait it blocks until there is room or done closes; without, it
// reports false at once when the queue is full.
func (q *sendQueue) push(f []byte, wait bool, done <-chan struct{}) bool {
	for {
		select {
		case <-done:
			return false
		default:
		}
		q.mu.Lock()
		if len(q.frames) == 0 || (q.bytes+len(f) <= q.maxBytes && len(q.frames) < q.maxMsgs) {
			q.frames = append(q.frames, f)
			q.bytes += len(f)
			q.mu.Unlock()
			signal(q.ready)
			return true
		}
		q.mu.Unlock()
		if !wait {
			return false
		}
		select {
		case <-q.space:
		case <-done:
			return false
		}
	}
}

// pop takes the oldest frame, waiting until one is queued or done closes. more reports
// whether further frames are waiting.
func (q *sendQueue) pop(done <-chan struct{}) (f []byte, more bool, ok bool) {
	for {
		q.mu.Lock()
		if len(q.frames) > 0 {
			f = q.frames[0]
			q.frames[0] = nil
			q.frames = q.frames[1:]
			q.bytes -= len(f)
			more = len(q.frames) > 0
			q.mu.Unlock()
			signal(q.space)
			return f, more, true
		}
		q.mu.Unlock()
		select {
		case <-q.ready:
		case <-done:
			return nil, false, false
		}
	}
}

func (q *sendQueue) len() (int, int) {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.frames), q.bytes
}
