package towerhttp_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"

	"github.com/towergo/tower/filter"
	"github.com/towergo/tower/towerhttp"
)

// errExportRunning is the error of a user's own middleware. Its method
// Overloaded is all a Handler needs to answer it as it answers a request
// that package loadshed sheds: 503, with Retry-After.
type errExportRunning struct{}

func (errExportRunning) Error() string    { return "an export is running" }
func (errExportRunning) Overloaded() bool { return true }

// A Handler answers an error by what it says it is, not by who made it:
// here a filter of the user's turns requests away while an export runs,
// with an error of its own that answers Overloaded.
func Example_overloadedError() {
	var exporting atomic.Bool
	refuseDuringExport := filter.NewLayer[*http.Request, towerhttp.Response](func(r *http.Request) (*http.Request, error) {
		if exporting.Load() {
			return nil, errExportRunning{}
		}
		return r, nil
	})
	hello := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "hello") })
	h := towerhttp.NewHandler(hello, refuseDuringExport)

	for _, export := range []bool{false, true} {
		exporting.Store(export)
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
		fmt.Printf("%d Retry-After=%s %s\n", rec.Code, rec.Header().Get("Retry-After"), strings.TrimSpace(rec.Body.String()))
	}
	// Output:
	// 200 Retry-After= hello
	// 503 Retry-After=1 service overloaded
}
