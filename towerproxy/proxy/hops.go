package proxy

import (
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
)

// The proxy is a gateway in the sense of RFC 9110 (section 7.6), and does
// to the requests it forwards what one must:
//
//   - Via (7.6.3): each request forwarded gets one more entry, the
//     protocol version the client spoke and the proxy's pseudonym, "1.1
//     towerproxy" or "2 towerproxy", after the entries it had.
//   - Max-Forwards (7.6.2): an OPTIONS request with Max-Forwards 0 is
//     answered by the proxy itself, 200 with no body; one with more goes
//     on with one less.
//   - TRACE is answered 405 and never forwarded: a backend would echo
//     back what the client sent, its cookies and credentials included,
//     to a script that could not read them otherwise (cross-site
//     tracing); nginx refuses it too.
//   - An HTTP/1.0 client gets no informational response (1xx) a backend
//     sends, such as 103 Early Hints: HTTP/1.0 has none, and a server
//     must not send one to it (15.2). HTTP/1.1 and HTTP/2 clients get
//     them, as a proxy must pass them on.
//   - An HTTP/1.0 request, and a chunked HTTP/1.1 one, is the last on
//     its connection: see mustClose.
//   - A response's field name followed by spaces before its colon loses
//     them (RFC 9112, 5.1): see trimNames.
//   - CONNECT is answered 405: a reverse proxy sends requests to its
//     routes' upstreams, not tunnels to whatever host a client names
//     (an open proxy). Upgrade requests (WebSocket) are tunnelled; see
//     tunnel.go.
//
// A request without a Via costs no allocation: the values are shared.

// via is the proxy's pseudonym in Via.
const via = "towerproxy"

var (
	via10 = []string{"1.0 " + via}
	via11 = []string{"1.1 " + via}
	via2  = []string{"2 " + via}
)

// setVia appends the proxy's entry to pr.Out's Via.
func setVia(pr *httputil.ProxyRequest) {
	in := pr.In
	own := via11
	switch {
	case in.ProtoMajor >= 2:
		own = via2
	case in.ProtoMinor == 0:
		own = via10
	}
	if prior := in.Header["Via"]; len(prior) > 0 {
		pr.Out.Header["Via"] = []string{strings.Join(prior, ", ") + ", " + own[0]}
		return
	}
	pr.Out.Header["Via"] = own
}

// answersItself answers r itself, and reports true, if r is a TRACE, a
// CONNECT or an OPTIONS with Max-Forwards 0.
func answersItself(w http.ResponseWriter, r *http.Request) bool {
	switch r.Method {
	case http.MethodTrace, http.MethodConnect:
		w.Header().Set("Allow", "GET, HEAD, POST, PUT, DELETE, OPTIONS, PATCH")
		http.Error(w, r.Method+" is not allowed", http.StatusMethodNotAllowed)
		return true
	case http.MethodOptions:
		if n, ok := maxForwards(r); ok && n == 0 {
			w.Header().Set("Content-Length", "0")
			w.WriteHeader(http.StatusOK)
			return true
		}
	}
	return false
}

// lastWriter is the ResponseWriter of a request after whose response the
// client's connection closes (see mustClose): it puts Connection: close
// on the final response, which net/http takes as its word to close, and
// for an HTTP/1.0 request drops the informational responses that
// httputil.ReverseProxy passes on.
type lastWriter struct {
	http.ResponseWriter
	http10 bool
	final  bool // the final response has begun
}

func (w *lastWriter) WriteHeader(code int) {
	if code >= 100 && code < 200 {
		if !w.http10 {
			w.ResponseWriter.WriteHeader(code)
		}
		return
	}
	w.closing()
	w.ResponseWriter.WriteHeader(code)
}

func (w *lastWriter) Write(b []byte) (int, error) {
	w.closing()
	return w.ResponseWriter.Write(b)
}

// closing sets Connection: close before the final response's header is
// written. ReverseProxy clears the header after each informational
// response, so it is set only now.
func (w *lastWriter) closing() {
	if !w.final {
		w.final = true
		w.Header().Set("Connection", "close")
	}
}

// Unwrap gives http.ResponseController the client's writer, so that
// flushes and a tunnel's hijack go through.
func (w *lastWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// mustClose reports whether r's connection must close after its response,
// for what net/http's server removed from r before the handler ran:
//
//   - An HTTP/1.0 request's Transfer-Encoding is removed and ignored, and
//     its chunked body would be read as the next request on a kept-alive
//     connection; RFC 9112 (6.1) says to take its framing as faulty and
//     close. Which HTTP/1.0 requests had one cannot be told, so none is
//     kept alive, as a server may choose (9.3).
//   - A Content-Length beside Transfer-Encoding: chunked is removed; RFC
//     9112 (6.1) says to close after such a request, since a front proxy
//     may have framed it by the Content-Length. Which chunked requests had
//     one cannot be told, so each closes: a chunked upload's connection
//     is not used again.
//
// Either way, what follows such a request on its connection is never
// read as a request: the request smuggling of CL.TE, and of HTTP/1.0's
// Transfer-Encoding, goes nowhere.
func mustClose(r *http.Request) bool {
	return r.ProtoMajor == 1 && (r.ProtoMinor == 0 || len(r.TransferEncoding) > 0)
}

// trimNames is the reverse proxies' ModifyResponse. net/http's parser
// keeps the spaces of "X-A : b" in the field's name, and its server drops
// a field with such a name; a proxy must remove them and forward the
// field (RFC 9112, 5.1): trimNames moves it to X-A.
func trimNames(res *http.Response) error {
	for k, v := range res.Header {
		if k == "" || k[len(k)-1] != ' ' {
			continue
		}
		delete(res.Header, k)
		if n := strings.TrimRight(k, " "); n != "" { // a name of spaces alone is dropped
			n = http.CanonicalHeaderKey(n)
			res.Header[n] = append(res.Header[n], v...)
		}
	}
	return nil
}

// setMaxForwards gives pr.Out, an OPTIONS request, one less Max-Forwards
// than pr.In had, if it had one; answersItself answered one with 0.
func setMaxForwards(pr *httputil.ProxyRequest) {
	if pr.In.Method != http.MethodOptions {
		return
	}
	if n, ok := maxForwards(pr.In); ok && n > 0 {
		pr.Out.Header["Max-Forwards"] = []string{strconv.FormatUint(n-1, 10)}
	}
}

// maxForwards returns r's Max-Forwards, and whether it has one that is a
// number; one that is not is passed on as it is.
func maxForwards(r *http.Request) (uint64, bool) {
	v, ok := r.Header["Max-Forwards"]
	if !ok || len(v) != 1 {
		return 0, false
	}
	n, err := strconv.ParseUint(strings.TrimSpace(v[0]), 10, 32)
	return n, err == nil
}
