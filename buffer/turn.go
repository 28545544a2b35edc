package buffer

import "context"

// The turn is a first-come, first-served lock, held by the request the
// Buffer is readying. Its word counts turnHeld while a request holds it,
// and turnWaiter for each request in the line. A free turn is taken, and
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
	b.line.push(p)
	b.mu.Unlock()
	done := ctx.Done()
	if done == nil {
		<-p.turn
		return p.took()
	}
	select {
	case <-p.turn:
		return p.took()
	case <-done:
		return b.leaveLine(p, ctx.Err())
	}
}

// took returns what p was handed on p.turn: nil if the turn, or the error
// the Buffer stopped with.
func (p *permit[Req, Res]) took() error {
	err := p.handed
	p.granted, p.handed = false, nil
	return err
}

// leaveLine takes p out of the line as its caller leaves with err, and
// returns err; unless p was handed something meanwhile: then it returns
// what, as took does.
func (b *Buffer[Req, Res]) leaveLine(p *permit[Req, Res], err error) error {
	b.mu.Lock()
	if !p.granted {
		b.line.remove(p)
		b.turn.Add(-turnWaiter)
		b.mu.Unlock()
		return err
	}
	b.mu.Unlock()
	<-p.turn // sent under b.mu, as granted was set
	return p.took()
}

// hand hands p the turn (nil), or the Buffer's error. b.mu must be held,
// and p taken out of the line.
func (p *permit[Req, Res]) hand(err error) {
	p.granted, p.handed = true, err
	p.turn <- struct{}{} // never blocks: a record is handed one thing at most
}

// closeLine hands every request in the line the error the Buffer stopped
// with. b.mu must be held.
func (b *Buffer[Req, Res]) closeLine() {
	for b.line.head != nil {
		b.line.pop().hand(b.err)
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
		b.line.pop().hand(nil)
		b.turn.Add(-turnWaiter)
		return
	}
}

// A line is a first-in, first-out list of the requests waiting for the
// turn, linked through their records, so that it allocates nothing and a
// request leaves it from anywhere at once. b.mu guards it.
type line[Req, Res any] struct {
	head, tail *permit[Req, Res]
}

// push adds p at the back.
func (l *line[Req, Res]) push(p *permit[Req, Res]) {
	p.prev, p.next = l.tail, nil
	if l.tail != nil {
		l.tail.next = p
	} else {
		l.head = p
	}
	l.tail = p
}

// pop removes the oldest request, of at least one, and returns it.
func (l *line[Req, Res]) pop() *permit[Req, Res] {
	p := l.head
	l.remove(p)
	return p
}

// remove takes p out of the line, wherever it is.
func (l *line[Req, Res]) remove(p *permit[Req, Res]) {
	if p.prev != nil {
		p.prev.next = p.next
	} else {
		l.head = p.next
	}
	if p.next != nil {
		p.next.prev = p.prev
	} else {
		l.tail = p.prev
	}
	p.prev, p.next = nil, nil
}
