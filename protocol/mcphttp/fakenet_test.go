package mcphttp

import (
	"context"
	"net"
	"net/http"
	"sync"
	"testing"
	"testing/synctest"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// pipeNet is an in-memory network for tests in a synctest bubble, where
// the clock is fake and synctest.Wait says when nothing more can happen:
// a listener whose connections are net.Pipe ends, and the dialer of the
// other ends.
type pipeNet struct {
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newPipeNet() *pipeNet { return &pipeNet{conns: make(chan net.Conn), closed: make(chan struct{})} }

func (p *pipeNet) Accept() (net.Conn, error) {
	select {
	case c := <-p.conns:
		return c, nil
	case <-p.closed:
		return nil, net.ErrClosed
	}
}

func (p *pipeNet) Close() error {
	p.once.Do(func() { close(p.closed) })
	return nil
}

func (p *pipeNet) Addr() net.Addr { return pipeAddr{} }

func (p *pipeNet) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case p.conns <- server:
		return client, nil
	case <-p.closed:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "127.0.0.1:8411" }

// inBubble runs f in a synctest bubble with a bridge served over a
// pipeNet: the bridge's b.url answers, and b.ts is nil. Everything is
// shut down before the bubble ends.
func inBubble(t *testing.T, opts Options, edit func(*protocol.Server), f func(t *testing.T, b *bridge)) {
	inBubbleOn(t, &http.Server{}, opts, edit, f)
}

// inBubbleOn is inBubble with hs, whose handler it sets, as the HTTP
// server.
func inBubbleOn(t *testing.T, hs *http.Server, opts Options, edit func(*protocol.Server), f func(t *testing.T, b *bridge)) {
	synctest.Test(t, func(t *testing.T) {
		tools := newTools()
		srv := &protocol.Server{
			Info:             protocol.Implementation{Name: "tairseach-mcp", Version: "1.2.3"},
			Tools:            tools,
			ListChanged:      true,
			ProgressInterval: -1,
		}
		if edit != nil {
			edit(srv)
		}
		h := NewHandler(srv, opts)
		pn := newPipeNet()
		hs.Handler = h
		h.CountConnections(hs)
		served := make(chan struct{})
		go func() { hs.Serve(pn); close(served) }() // ends at hs.Close
		tr := &http.Transport{DialContext: pn.dial}
		b := &bridge{t: t, srv: srv, h: h, tools: tools, url: "http://127.0.0.1:8411" + Path, hc: &http.Client{Transport: tr}}
		defer func() {
			tools.open()
			h.Shutdown(context.Background())
			hs.Close()
			tr.CloseIdleConnections()
			<-served
			synctest.Wait()
		}()
		f(t, b)
	})
}
