package patchsource

import (
	"context"
	"errors"
	"net"
	"net/http"
	"time"
)

// Timeouts bound every network call patchctl makes: a server that accepts
// and never answers, or stops half way, fails the call instead of hanging
// it.
type Timeouts struct {
	// Connect bounds the TCP connection and the TLS handshake.
	Connect time.Duration
	// Read bounds each wait for data: the response headers, and each
	// read of the body (a server that stalls mid-body).
	Read time.Duration
	// Overall bounds the whole request, body included.
	Overall time.Duration
}

// DefaultTimeouts are generous for a thread of a few megabytes over a
// slow link, and still end a dead server's call in a minute.
var DefaultTimeouts = Timeouts{Connect: 30 * time.Second, Read: 60 * time.Second, Overall: 10 * time.Minute}

// NewHTTPClient is an HTTP client with t's timeouts (proxies from the
// environment, as curl and b4 take them).
func NewHTTPClient(t Timeouts) *http.Client {
	dialer := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy: http.ProxyFromEnvironment,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			c, err := dialer.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &readTimeoutConn{Conn: c, timeout: t.Read}, nil
		},
		TLSHandshakeTimeout:   t.Connect,
		ResponseHeaderTimeout: t.Read,
		ExpectContinueTimeout: time.Second,
		IdleConnTimeout:       90 * time.Second,
		MaxIdleConns:          4,
	}
	return &http.Client{Transport: tr, Timeout: t.Overall}
}

// readTimeoutConn fails a read that waits longer than timeout for data.
type readTimeoutConn struct {
	net.Conn
	timeout time.Duration
}

func (c *readTimeoutConn) Read(b []byte) (int, error) {
	if c.timeout > 0 {
		if err := c.Conn.SetReadDeadline(time.Now().Add(c.timeout)); err != nil {
			return 0, err
		}
	}
	return c.Conn.Read(b)
}

// isTimeout reports whether err is a network call that timed out.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout() || errors.Is(err, context.DeadlineExceeded)
}
