package buffer

import "context"

// The turn is a first-come, first-served lock, held by the request the
// Buffer is readying. Its word counts turnHeld while a request holds it,
// and turnWaiter for each request in b.line. A free turn is taken, and
// given back when nobody waits, with one compare-and-swap; otherwise, under
// b.mu, the holder hands it to the oldest waiter directly.
const (
	turnHeld   = 1
	turnWaiter = 2
)

// takeTurn waits until p's request holds the turn. It returns ctx.Err()
// if ctx ends first, and the Buffer's error if it stops first; a request
// handed the turn as its ctx ends takes it.
func (b *Buffer[Req, Res]) takeTurn(ctx context.Context, p *permit[Req, Res]) error {
	if b.turn.CompareAndSwap(0, turnHeld) {
		return nil
	}
	b.mu.Lock()
	if b.err != nil {
		b.mu.Unlock()
		return b.err
	}
	for {
		t := b.turn.Load()
		if t == 0 && b.turn.CompareAndSwap(0, turnHeld) {
			b.mu.Unlock()
			return nil
		}
		if t != 0 && b.turn.CompareAndSwap(t, t+turnWaiter) {
			break
		}
	}
	b.line.Push(&p.w)
	b.mu.Unlock()
	// p.w.Err is what it was handed: nil for the turn, or the Buffer's
	// error.
	done := ctx.Done()
	if done == nil {
		<-p.w.Ready
		return p.w.Err
	}
	select {
	case <-p.w.Ready:
		return p.w.Err
	case <-done:
	}
	b.mu.Lock()
	left := b.line.Remove(&p.w)
	if left {
		b.turn.Add(-turnWaiter)
	}
	b.mu.Unlock()
	if left {
		return ctx.Err()
	}
	<-p.w.Ready // handed something meanwhile, under b.mu
	return p.w.Err
}

// closeLine hands every request in the line the error the Buffer stopped
// with. b.mu must be held.
func (b *Buffer[Req, Res]) closeLine() {
	for b.line.Wake(0, b.err) {
		b.turn.Add(-turnWaiter)
	}
}

// passTurn gives the turn up: to the oldest request in the line, if there
// is one.
func (b *Buffer[Req, Res]) passTurn() {
	if b.turn.CompareAndSwap(turnHeld, 0) {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for {
		t := b.turn.Load()
		if t == turnHeld {
			if b.turn.CompareAndSwap(turnHeld, 0) {
				return
			}
			continue // a request joined the line meanwhile
		}
		b.line.Wake(0, nil)
		b.turn.Add(-turnWaiter)
		return
	}
}
