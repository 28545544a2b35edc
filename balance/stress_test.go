package balance_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"testing/synctest"

	"github.com/towergo/tower"
	"github.com/towergo/tower/balance"
	"github.com/towergo/tower/towertest"
)

// randomLoad is a mock endpoint whose load is random at every read, as in
// tower's stress test.
type randomLoad struct {
	*towertest.Mock[string, string]
	rng *rand.Rand // used only under the balancer's lock
}

func (r randomLoad) Load() float64 { return r.rng.Float64() }

// stressModel is what the test expects of the balancer.
type stressModel struct {
	services map[int]*stressSvc // in the balancer and not failed, by key
	doomed   map[int]*handle    // failed while ready: still ready, until taken
	failures int                // failures the balancer must have reported
}

type stressSvc struct {
	h     *handle
	ready bool
}

func (m *stressModel) ready() int {
	n := len(m.doomed)
	for _, s := range m.services {
		if s.ready {
			n++
		}
	}
	return n
}

// randomKey returns a key in services, chosen by rng.
func (m *stressModel) randomKey(rng *rand.Rand) int {
	keys := make([]int, 0, len(m.services))
	for k := range m.services {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys[rng.IntN(len(keys))]
}

// tower: balance stress. Random operations on a P2C fed by a channel of
// changes, with keys reused as in tower's slab, over mocks whose load is
// random: ready an endpoint (Allow(1)), send a request through the
// balancer, add an endpoint (not ready), remove one, or break one. After
// every operation the balancer's ready and total counts must match the
// model exactly, and a request must reach an endpoint the model holds
// ready. tower runs 100,000 rounds; 10,000 here (up to 7 operations each).
//
// Unlike tower, where a removed endpoint chosen by an earlier poll_ready
// can still get a request, a removed endpoint here gives its reservation
// back at once and never gets one; and an endpoint that breaks while ready
// keeps the permit it holds (it was granted), so it stays ready until it is
// taken: its next Ready then fails, and it is dropped and reported.
func TestP2CStress(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		loads := rand.New(rand.NewPCG(3, 4))
		changes := make(scripted)
		e := &errs{}
		bal := balance.NewP2C(changes, balance.WithRand(rand.New(rand.NewPCG(5, 6))), balance.WithErrorHandler(e.add))
		defer bal.Close()
		m := &stressModel{services: map[int]*stressSvc{}, doomed: map[int]*handle{}}
		doom := errors.New("doom")

		check := func(round int, op string) {
			t.Helper()
			synctest.Wait()
			if got, want := bal.ReadyLen(), m.ready(); got != want {
				t.Fatalf("round %d, after %s: got ReadyLen() %d, want %d", round, op, got, want)
			}
			if got, want := bal.Len(), len(m.services)+len(m.doomed); got != want {
				t.Fatalf("round %d, after %s: got Len() %d, want %d", round, op, got, want)
			}
			e.mu.Lock()
			reported := len(e.list)
			e.mu.Unlock()
			if reported != m.failures {
				t.Fatalf("round %d, after %s: got %d failures reported, want %d", round, op, reported, m.failures)
			}
		}

		for round := range 10000 {
			for range rng.IntN(8) {
				nready := m.ready()
				switch {
				case len(m.services) > 0 && rng.IntN(2) == 0:
					if nready == 0 || rng.IntN(4) != 0 {
						// Ready an endpoint: the first one that is not.
						keys := make([]int, 0, len(m.services))
						for k := range m.services {
							keys = append(keys, k)
						}
						slices.Sort(keys)
						for _, k := range keys {
							if s := m.services[k]; !s.ready {
								s.h.Allow(1)
								s.ready = true
								break
							}
						}
						check(round, "ready")
						continue
					}
					// Use the balancer.
					p, ok, err := tower.ReadyNow(bal)
					if err != nil {
						t.Fatalf("round %d: ReadyNow: %v", round, err)
					}
					if !ok {
						t.Fatalf("round %d: got not ready with %d endpoints ready", round, nready)
					}
					handles := map[string]*handle{}
					for k, s := range m.services {
						if s.ready {
							handles[fmt.Sprintf("ready %d", k)] = s.h
						}
					}
					for k, h := range m.doomed {
						handles[fmt.Sprintf("doomed %d", k)] = h
					}
					var kind string
					var k int
					fmt.Sscanf(callWhich(t, p, "hello", handles), "%s %d", &kind, &k)
					if kind == "doomed" {
						delete(m.doomed, k)
						m.failures++ // its next Ready, asked at once, failed
					} else {
						m.services[k].ready = false
					}
					check(round, "use")
				case len(m.services) == 0 || rng.IntN(2) == 0:
					if len(m.services) == 0 || nready == 0 || rng.IntN(2) == 0 {
						// Add an endpoint under the lowest free key.
						k := 0
						for m.services[k] != nil {
							k++
						}
						mock, h := towertest.NewMock[string, string]()
						h.Allow(0)
						delete(m.doomed, k) // the insert replaces a doomed endpoint
						m.services[k] = &stressSvc{h: h}
						changes <- insert(k, randomLoad{Mock: mock, rng: loads})
						check(round, "add")
					} else {
						k := m.randomKey(rng)
						delete(m.services, k)
						changes <- remove(k)
						check(round, "remove")
					}
				default:
					// Break an endpoint.
					k := m.randomKey(rng)
					s := m.services[k]
					delete(m.services, k)
					s.h.FailReady(doom)
					if s.ready {
						m.doomed[k] = s.h
					} else {
						m.failures++ // its goroutine waiting in Ready sees it
					}
					check(round, "fail")
				}
			}
			check(round, "the round")
		}
		t.Logf("%d failures, %d endpoints at the end", len(e.list), bal.Len())
		if len(e.list) < 100 {
			t.Errorf("only %d failures in the run, want the scenario exercised", len(e.list))
		}
	})
}
