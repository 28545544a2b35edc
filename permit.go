package tower

import (
	"context"
	"sync/atomic"
)

// usedPermit is the panic message for calling a permit that was already
// used, released, or never issued.
const usedPermit = "tower: Call on a Permit that was already called or released (or is the zero Permit)"

// A Permit is a reservation of capacity for exactly one request, returned by
// [Service.Ready]: call it to send the request, or release it to give the
// capacity back (the package doc states the rules). Call, Release and
// Split empty the variable they are called on, not its copies.
//
// The zero Permit holds nothing: Release does nothing and Call panics.
// A Permit is a small value and getting one need not allocate.
type Permit[Req, Res any] struct {
	r     Reserver[Req, Res]
	token uint64
}

// NewPermit returns a Permit whose Call and Release are served by r, with
// token identifying the reservation among those r holds. It is for
// implementers of [Service]; see [Reserver]. It panics if r is nil.
func NewPermit[Req, Res any](r Reserver[Req, Res], token uint64) Permit[Req, Res] {
	if r == nil {
		panic("tower.NewPermit: nil Reserver")
	}
	return Permit[Req, Res]{r: r, token: token}
}

// Call sends req using the capacity p reserved and returns the response.
// ctx carries the request's deadline, cancellation and values to the
// service. Call panics if p was already called or released.
func (p *Permit[Req, Res]) Call(ctx context.Context, req Req) (Res, error) {
	r, token := p.r, p.token
	if r == nil {
		panic(usedPermit)
	}
	*p = Permit[Req, Res]{}
	return r.CallReserved(ctx, token, req)
}

// Release gives back the capacity p reserved, if p has not been called or
// released yet; otherwise it does nothing.
func (p *Permit[Req, Res]) Release() {
	r, token := p.r, p.token
	if r != nil {
		*p = Permit[Req, Res]{}
		r.ReleaseReserved(token)
	}
}

// Split empties p and returns the Reserver and token it carried, for a
// middleware that keeps an inner permit as two fields; [NewPermit] puts
// them back together. Split of an empty Permit returns a nil Reserver.
func (p *Permit[Req, Res]) Split() (Reserver[Req, Res], uint64) {
	r, token := p.r, p.token
	*p = Permit[Req, Res]{}
	return r, token
}

// Held reports whether p still holds a reservation through this variable:
// it was issued and has not been called or released through it.
func (p *Permit[Req, Res]) Held() bool { return p.r != nil }

// A Reserver serves the permits a [Service] issues with [NewPermit]. It
// usually keeps a record per outstanding reservation; a permit's token
// names the record and which use of it the permit stands for, so a stale
// copy carries a token that is no longer current. Implementations must be
// safe for concurrent use.
type Reserver[Req, Res any] interface {
	// CallReserved serves req under the reservation identified by token,
	// consuming it. If token is not current (the permit was already called
	// or released through a copy), CallReserved must panic, with
	// [Ticket.MustRedeem] or a message that starts "tower:".
	CallReserved(ctx context.Context, token uint64, req Req) (Res, error)
	// ReleaseReserved gives back the reservation identified by token if it
	// is current, and does nothing otherwise.
	ReleaseReserved(token uint64)
}

// A Ticket is a generation counter that makes a reservation record safe to
// reuse. The owner issues a permit with the record's current [Ticket.Token];
// the first use redeems that token and moves the ticket on, so every other
// copy of the permit is refused. Tokens never repeat within a Ticket, so a
// record can go back to a pool as soon as it is redeemed.
//
// The zero Ticket is ready to use. A Ticket is safe for concurrent use and
// must not be copied after first use.
type Ticket struct {
	gen atomic.Uint64
}

// Token returns the token to put in the next permit issued for this record.
func (t *Ticket) Token() uint64 { return t.gen.Load() }

// Redeem consumes token and reports whether it was current. Exactly one of
// any number of concurrent Redeems of the current token succeeds.
func (t *Ticket) Redeem(token uint64) bool { return t.gen.CompareAndSwap(token, token+1) }

// MustRedeem is Redeem for Call: it panics, with the contract's message,
// if token is not current.
func (t *Ticket) MustRedeem(token uint64) {
	if !t.Redeem(token) {
		panic(usedPermit)
	}
}
