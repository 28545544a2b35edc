package spawnready_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/spawnready"
	"github.com/towergo/tower/towertest"
)

// faulty is a service whose Ready fails by a fault (a panic, or
// runtime.Goexit). A Ready that may wait does so until gate closes, or
// until its ctx ends if it heeds it, and then faults. A Ready with a done
// ctx ("ready now?") says not ready, or faults once faultNow is set.
type faulty struct {
	fault    func()
	gate     chan struct{}
	heedsCtx bool
	faultNow atomic.Bool
}

func newFaulty(fault func()) *faulty {
	return &faulty{fault: fault, gate: make(chan struct{})}
}

func (f *faulty) Ready(ctx context.Context) (permit, error) {
	if ctx.Err() != nil {
		if f.faultNow.Load() {
			f.fault()
		}
		return permit{}, ctx.Err()
	}
	if f.heedsCtx {
		select {
		case <-f.gate:
		case <-ctx.Done():
			return permit{}, ctx.Err()
		}
	} else {
		<-f.gate
	}
	f.fault()
	return permit{}, errors.New("faulty: the fault returned")
}

// A panic, or runtime.Goexit, in the inner service's Ready on a drive
// does not end the program: the SpawnReady fails for good with a
// PanicError, which the callers waiting get at once, and every later
// Ready gets too. The drive's goroutine exits (synctest checks it).
func TestReadyFaultOnDrive(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := newFaulty(f.Do)
				s := spawnready.New[string, string](inner)
				defer s.Close()
				var rds []*towertest.Outcome[permit]
				for range 3 {
					rds = append(rds, towertest.GoReady(t.Context(), s))
				}
				time.Sleep(20 * time.Millisecond)
				close(inner.gate)
				var first *tower.PanicError
				for i, rd := range rds {
					_, err := rd.Wait()
					pe := towertest.ExpectPanicError(t, err, "the inner service's Ready, on a SpawnReady's drive")
					if first == nil {
						first = pe
						f.Check(t, pe.Value)
					} else if pe != first {
						t.Errorf("caller %d got another PanicError than the first caller", i)
					}
					if got := rd.Elapsed(); got != 20*time.Millisecond {
						t.Errorf("caller %d: Ready returned at %v, want 20ms", i, got)
					}
				}
				if _, _, err := tower.ReadyNow(s); err != error(first) {
					t.Errorf("ReadyNow after the fault: got %v, want the same PanicError", err)
				}
			})
		})
	}
}

// A panic in the inner service's Ready on the caller's own goroutine (the
// direct question) goes on up to that caller, and fails the SpawnReady for
// good with the PanicError; runtime.Goexit ends the caller's goroutine,
// and fails the SpawnReady the same way. A drive that was waiting is
// stopped.
func TestReadyFaultOnCaller(t *testing.T) {
	for _, f := range towertest.Exits {
		t.Run(f.Name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				inner := newFaulty(f.Do)
				inner.heedsCtx = true
				s := spawnready.New[string, string](inner)
				defer s.Close()
				if _, ok, err := tower.ReadyNow(s); ok || err != nil {
					t.Fatalf("ReadyNow: got %t, %v; want false, nil", ok, err)
				}
				synctest.Wait() // the drive waits
				inner.faultNow.Store(true)
				var (
					wg       sync.WaitGroup
					returned bool
					raised   any
				)
				wg.Go(func() {
					defer func() { raised = recover() }()
					tower.ReadyNow(s)
					returned = true
				})
				wg.Wait()
				if returned || (f.Name == "Panic" && raised != towertest.ExitValue) {
					t.Errorf("the caller's goroutine: returned %t, panicked with %v; want the fault to reach it", returned, raised)
				}
				_, _, err := tower.ReadyNow(s)
				pe := towertest.ExpectPanicError(t, err, "the inner service's Ready, on the goroutine of a SpawnReady's caller")
				f.Check(t, pe.Value)
				if _, err := s.Ready(t.Context()); err != error(pe) {
					t.Errorf("Ready after the fault: got %v, want the same PanicError", err)
				}
			})
		})
	}
}

// A panic on a drive that nobody is left to hear of (the SpawnReady was
// closed while the inner service's Ready ignored its ctx) is logged.
func TestReadyPanicAfterCloseIsLogged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		log := towertest.CaptureLog(t)
		inner := newFaulty(func() { panic(towertest.ExitValue) })
		s := spawnready.New[string, string](inner)
		tower.ReadyNow(s)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
		defer cancel()
		if err := s.Shutdown(ctx); err != context.DeadlineExceeded {
			t.Fatalf("Shutdown: got %v, want %v", err, context.DeadlineExceeded)
		}
		close(inner.gate)
		synctest.Wait()
		for _, want := range []string{"recovered a panic that no caller is left to hear of", "on a SpawnReady's drive", towertest.ExitValue.Error()} {
			if !strings.Contains(log.String(), want) {
				t.Errorf("the log does not say %q:\n%s", want, log.String())
			}
		}
		if _, _, err := tower.ReadyNow(s); err != spawnready.ErrClosed {
			t.Errorf("ReadyNow: got %v, want %v", err, spawnready.ErrClosed)
		}
	})
}
