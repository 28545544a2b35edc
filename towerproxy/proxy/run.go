package proxy

import (
	"context"
	"crypto/tls"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// A Server is a Proxy on its listeners: the proxied traffic on
// Config.Listen, and the admin handler on Config.Admin.
type Server struct {
	proxy    *Proxy
	main     *http.Server
	admin    *http.Server
	draining atomic.Bool
}

// NewServer returns the Server of p, with the listeners of the Config in
// force, not yet listening. admin is the handler of the admin listener
// (nil: only /healthz); Serve adds /healthz to it.
func NewServer(p *Proxy, admin http.Handler) (*Server, error) {
	cfg := p.Config()
	s := &Server{proxy: p}
	s.main = &http.Server{
		Addr:              cfg.Listen,
		Handler:           p,
		ReadHeaderTimeout: time.Duration(cfg.Server.ReadHeaderTimeout),
		IdleTimeout:       time.Duration(cfg.Server.IdleTimeout),
		MaxHeaderBytes:    int(cfg.Server.MaxHeaderBytes),
		Protocols:         new(http.Protocols),
		ErrorLog:          slog.NewLogLogger(p.log.Handler(), slog.LevelWarn),
		ConnContext:       withConnState,
		// HTTP/2's own default frame size, 16KiB (RFC 9113, 4.2), as
		// nginx and HAProxy offer, not Go's 1MiB: a client's frame is
		// read whole before any of it is used, and a larger one is
		// refused with FRAME_SIZE_ERROR, as h2spec checks.
		HTTP2: &http.HTTP2Config{MaxReadFrameSize: 16 << 10},
	}
	s.main.Protocols.SetHTTP1(true)
	if cfg.TLS != nil {
		cert, err := tls.LoadX509KeyPair(cfg.TLS.Cert, cfg.TLS.Key)
		if err != nil {
			return nil, err
		}
		s.main.TLSConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		s.main.Protocols.SetHTTP2(true)
	}
	if cfg.H2C {
		s.main.Protocols.SetUnencryptedHTTP2(true)
	}
	if cfg.Admin != "off" {
		mux := http.NewServeMux()
		mux.HandleFunc("/healthz", s.healthz)
		if admin != nil {
			mux.Handle("/", admin)
		}
		s.admin = &http.Server{Addr: cfg.Admin, Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	}
	return s, nil
}

// healthz answers 200 while the proxy takes requests, and 503 once it
// drains, so that a load balancer in front stops sending it any.
func (s *Server) healthz(w http.ResponseWriter, r *http.Request) {
	if s.draining.Load() {
		http.Error(w, "draining", http.StatusServiceUnavailable)
		return
	}
	w.Write([]byte("ok\n"))
}

// Serve listens and serves until ctx ends, then drains: it stops
// accepting connections (a new request goes to another instance), lets
// the requests in flight finish within the Config's drain timeout, and
// closes the upstreams. It returns the first error of a listener, or nil
// after a drain.
func (s *Server) Serve(ctx context.Context) error {
	lns := []net.Listener{}
	for _, srv := range []*http.Server{s.main, s.admin} {
		if srv == nil {
			continue
		}
		ln, err := net.Listen("tcp", srv.Addr)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			return err
		}
		lns = append(lns, ln)
		s.proxy.log.Info("proxy: listening", "addr", ln.Addr().String(), "admin", srv == s.admin)
	}
	return s.ServeListeners(ctx, lns[0], adminListener(lns))
}

func adminListener(lns []net.Listener) net.Listener {
	if len(lns) > 1 {
		return lns[1]
	}
	return nil
}

// ServeListeners is Serve on listeners the caller opened: main for the
// proxied traffic, admin (nil if the admin listener is off) for the
// admin handler.
func (s *Server) ServeListeners(ctx context.Context, main, admin net.Listener) error {
	errs := make(chan error, 2)
	go func() {
		if s.main.TLSConfig != nil {
			errs <- s.main.ServeTLS(main, "", "")
		} else {
			errs <- s.main.Serve(main)
		}
	}()
	if admin != nil && s.admin != nil {
		go func() { errs <- s.admin.Serve(admin) }()
	}
	select {
	case err := <-errs:
		if !errors.Is(err, http.ErrServerClosed) {
			s.shutdown()
			return err
		}
	case <-ctx.Done():
	}
	return s.shutdown()
}

// Addr returns the address the proxied traffic is served on.
func (s *Server) Addr() string { return s.main.Addr }

// shutdown drains as Serve says.
func (s *Server) shutdown() error {
	s.draining.Store(true)
	drain := time.Duration(s.proxy.Config().Server.DrainTimeout)
	ctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := s.main.Shutdown(ctx)
	if cerr := s.proxy.Close(ctx); err == nil {
		err = cerr
	}
	if s.admin != nil {
		s.admin.Close()
	}
	return err
}
