package towerhttp_test

import (
	"context"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/towergo/tower"
	"github.com/towergo/tower/loadshed"
	"github.com/towergo/tower/towerhttp"
	"github.com/towergo/tower/towertest"
)

// Every count and duration option, at the extremes of its type: a clear
// panic, or what the option promises, never a value that wrapped around.

// shedAll is a stack that sheds every request, so that the Handler answers
// with Retry-After.
var shedAll = tower.ServiceFunc[*http.Request, towerhttp.Response](func(context.Context, *http.Request) (towerhttp.Response, error) {
	return towerhttp.Response{}, loadshed.ErrOverloaded
})

// retryAfter returns the Retry-After a Handler with opts sends with a 503,
// and whether it sends one.
func retryAfter(opts ...towerhttp.HandlerOption) (string, bool) {
	rec := httptest.NewRecorder()
	towerhttp.NewServiceHandler(shedAll, opts...).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	v, ok := rec.Header()["Retry-After"]
	if !ok {
		return "", false
	}
	return strings.Join(v, ","), true
}

// WithRetryAfter(math.MaxInt64) sent "Retry-After: -9223372035": rounding
// up overflowed. It sends the whole seconds of math.MaxInt64 nanoseconds,
// rounded up.
func TestWithRetryAfterMaxInt64(t *testing.T) {
	if got, ok := retryAfter(towerhttp.WithRetryAfter(math.MaxInt64)); got != "9223372037" || !ok {
		t.Errorf("got Retry-After %q (sent %v), want %q", got, ok, "9223372037")
	}
}

func TestRetryAfterBounds(t *testing.T) {
	for _, tt := range []struct {
		name string
		d    time.Duration
		want string // "" for none
	}{
		{"MaxInt64", math.MaxInt64, "9223372037"},
		{"a whole number of seconds below MaxInt64", math.MaxInt64 / time.Second * time.Second, "9223372036"},
		{"one nanosecond", 1, "1"},
		{"zero sends none", 0, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := retryAfter(towerhttp.WithRetryAfter(tt.d))
			if got != tt.want || ok != (tt.want != "") {
				t.Errorf("got Retry-After %q (sent %v), want %q", got, ok, tt.want)
			}
		})
	}
}

func TestOptionBoundsPanic(t *testing.T) {
	for _, tt := range []struct {
		want string
		f    func()
	}{
		{"towerhttp.WithRetryAfter: d must not be negative, got -2562047h47m16.854775808s", func() { towerhttp.WithRetryAfter(math.MinInt64) }},
		{"towerhttp.WithRetryAfter: d must not be negative, got -1ns", func() { towerhttp.WithRetryAfter(-1) }},
		{"towerhttp.WithMaxBodyBytes: n must be positive, got -9223372036854775808", func() { towerhttp.WithMaxBodyBytes(math.MinInt64) }},
		{"towerhttp.WithMaxBodyBytes: n must be positive, got 0", func() { towerhttp.WithMaxBodyBytes(0) }},
		{fmt.Sprintf("towerhttp.WithMaxHosts: n must be at least 1, got %d", math.MinInt), func() { towerhttp.WithMaxHosts(math.MinInt) }},
		{"towerhttp.WithMaxHosts: n must be at least 1, got 0", func() { towerhttp.WithMaxHosts(0) }},
	} {
		t.Run(tt.want, func(t *testing.T) { towertest.Panics(t, tt.want, tt.f) })
	}
}

// WithMaxBodyBytes(math.MaxInt64) limits nothing: a body is read whole,
// whether it declares its length or not.
func TestMaxBodyBytesMaxInt64(t *testing.T) {
	h := towerhttp.NewHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			t.Errorf("reading the body: %v", err)
		}
		w.Write(b)
	}), tower.Stack[*http.Request, towerhttp.Response](), towerhttp.WithMaxBodyBytes(math.MaxInt64))
	for _, length := range []int64{5, -1} {
		r := httptest.NewRequest("POST", "/", strings.NewReader("hello"))
		r.ContentLength = length
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if rec.Code != 200 || rec.Body.String() != "hello" {
			t.Errorf("Content-Length %d: got %d %q, want 200 %q", length, rec.Code, rec.Body.String(), "hello")
		}
	}
}

// WithMaxHosts(math.MaxInt) keeps a stack for every host: none is
// dropped.
func TestMaxHostsMaxInt(t *testing.T) {
	tr := towerhttp.NewTransport(okBase, tower.Stack[*http.Request, *http.Response](), towerhttp.WithMaxHosts(math.MaxInt))
	for _, host := range []string{"a.example", "b.example", "c.example"} {
		req, _ := http.NewRequest("GET", "http://"+host+"/", nil)
		resp, err := tr.RoundTrip(req)
		if err != nil {
			t.Fatalf("GET %s: %v", host, err)
		}
		resp.Body.Close()
		okResponse.Body = http.NoBody
	}
	if n := tr.Hosts(); n != 3 {
		t.Errorf("got %d host stacks, want 3", n)
	}
}
