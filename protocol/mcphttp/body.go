package mcphttp

import (
	"context"
	"errors"
	"io"
	"net/http"

	"github.com/tairseach/tairseach-mcp/protocol"
)

// bodyPiece is how much of a request body is read, and counted against
// the byte budget before it is held, at a time.
const bodyPiece = 64 << 10

// errBodyWait is the end of a body that waited for room in the byte
// budget for longer than the server gives a request to be read.
var errBodyWait = errors.New("waited too long for room to read the request body")

// readBody reads r's body, at most MaxBodySize bytes, a piece at a time,
// each counted against res before it is held: clients that send large
// bodies slowly, or never finish them, hold what the budget allows, no
// more (see protocol.Reservation), and the rest wait with their bodies
// unread. The wait for room, with the reading, is bounded by the
// server's ReadTimeout. A body whose Content-Length is past the limit is
// refused before any of it is read.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, res *protocol.Reservation) ([]byte, error) {
	limit := h.opts.MaxBodySize
	if r.ContentLength > limit {
		return nil, &http.MaxBytesError{Limit: limit}
	}
	ctx := r.Context()
	if hs, ok := ctx.Value(http.ServerContextKey).(*http.Server); ok && hs.ReadTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, hs.ReadTimeout)
		defer cancel()
	}
	body := http.MaxBytesReader(w, r.Body, limit)
	var pieces [][]byte
	size, end := 0, false
	for !end {
		n := bodyPiece
		if r.ContentLength >= 0 { // read to its end exactly, so nothing is held unused
			if n = min(n, int(r.ContentLength)-size); n == 0 {
				break
			}
		}
		if err := res.Grow(ctx, n); err != nil {
			return nil, errBodyWait
		}
		p, err := readPiece(body, n)
		switch {
		case errors.Is(err, io.EOF): // its end, when its length was not said
			end = true
		case err != nil:
			return nil, err
		}
		pieces, size = append(pieces, p), size+len(p)
	}
	if len(pieces) == 1 {
		return pieces[0], nil
	}
	// Joined once whole: the pieces are garbage from then on, so the
	// bytes are not held twice for long.
	whole := make([]byte, 0, size)
	for _, p := range pieces {
		whole = append(whole, p...)
	}
	return whole, nil
}

// readPiece reads up to n bytes of body, fewer at its end (io.EOF). Not
// io.ReadFull, which makes an end within the piece io.ErrUnexpectedEOF,
// as a chunked body cut short is.
func readPiece(body io.Reader, n int) ([]byte, error) {
	p := make([]byte, n)
	k := 0
	for k < n {
		m, err := body.Read(p[k:])
		if k += m; err != nil {
			return p[:k], err
		}
	}
	return p, nil
}
