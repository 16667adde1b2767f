package protocol

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"sync"

	"github.com/go-json-experiment/json/jsontext"
)

// listed is an item of a list that clients page through: a tool, a
// resource, a resource template, a prompt.
type listed interface {
	// encode returns the item's JSON as a client of shape s sees it.
	encode(s shape) jsontext.Value
}

// catalogue is an immutable list of items, in the order clients see
// them. It keeps each item's JSON per protocol shape once it has been
// asked for, so one catalogue should be built per change of the list and
// shared. It is safe for concurrent use.
type catalogue[T listed] struct {
	items []T
	enc   [numShapes]struct {
		once  sync.Once
		items []jsontext.Value
	}
	genOnce sync.Once
	gen     uint64
}

func newCatalogue[T listed](items []T) *catalogue[T] { return &catalogue[T]{items: items} }

// encoded returns each item's JSON for shape s, encoding once per catalogue.
func (c *catalogue[T]) encoded(s shape) []jsontext.Value {
	e := &c.enc[s]
	e.once.Do(func() {
		e.items = make([]jsontext.Value, len(c.items))
		for i, it := range c.items {
			e.items[i] = it.encode(s)
		}
	})
	return e.items
}

// generation identifies what clients see of the list, for pagination
// cursors: equal lists have the same generation, so a reload that
// changes nothing keeps cursors valid.
func (c *catalogue[T]) generation() uint64 {
	c.genOnce.Do(func() {
		h := fnv.New64a()
		for _, it := range c.encoded(shapeStructured) {
			h.Write(it)
			h.Write([]byte{'\n'})
		}
		c.gen = h.Sum64()
	})
	return c.gen
}

// equal reports whether two lists look the same to clients of any version.
func (c *catalogue[T]) equal(other *catalogue[T]) bool {
	return len(c.items) == len(other.items) &&
		slices.EqualFunc(c.encoded(shapeStructured), other.encoded(shapeStructured),
			func(a, b jsontext.Value) bool { return string(a) == string(b) })
}

// page answers one page of a list method from the list's encodings for
// the request's shape: the page the cursor asks for (the first without
// one), and the cursor of the next page ("" at the end). Cursors are
// opaque to clients: base64 of the list's generation and the offset of
// the next item. A cursor from another list is refused rather than read
// as an offset into the new one, which would skip or repeat items.
func page[T listed](ss *Session, rq *request, c *catalogue[T], cursor *string, what string) ([]jsontext.Value, string, error) {
	enc := c.encoded(rq.shape())
	start := 0
	if cursor != nil {
		gen, n, err := decodeCursor(*cursor)
		if err != nil || n > len(enc) {
			return nil, "", fmt.Errorf("%w: %s: invalid cursor %q", ErrInvalidParams, rq.method, *cursor)
		}
		if gen != c.generation() {
			return nil, "", fmt.Errorf("%w: %s: the %s changed since this cursor was issued; list again from the start", ErrInvalidParams, rq.method, what)
		}
		start = n
	}
	end := len(enc)
	ps := ss.srv.PageSize
	if ps == 0 && len(enc) > DefaultPageSize {
		ps = DefaultPageSize
	}
	if ps > 0 && end-start > ps {
		end = start + ps
	}
	next := ""
	if end < len(enc) {
		next = encodeCursor(c.generation(), end)
	}
	return enc[start:end], next, nil
}

func encodeCursor(generation uint64, offset int) string {
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "g%do%d", generation, offset))
}

// decodeCursor reads a cursor encodeCursor made; anything else is an error.
func decodeCursor(c string) (generation uint64, offset int, err error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		_, err = fmt.Sscanf(string(b), "g%do%d", &generation, &offset)
	}
	if err != nil || offset < 0 || encodeCursor(generation, offset) != c {
		return 0, 0, errors.New("malformed cursor")
	}
	return generation, offset, nil
}

// splicedList is the result of a list method, whose items are the
// encodings of a catalogue.
type splicedList interface {
	result
	// takeItems returns the name of the result's member that holds the
	// items, and the items, leaving the member empty.
	takeItems() (member string, items []jsontext.Value)
}

// encodeList encodes the response carrying a list. Its items are a
// catalogue's encodings, made by the same encoder: they are spliced into
// the response as they are, since encoding them again (the encoder checks
// a raw value byte by byte) would be most of the cost of a long list.
func encodeList(id jsontext.Value, res splicedList) (Message, error) {
	member, items := res.takeItems() // the member is encoded as []
	b, err := encodeResult(id, res)
	if err != nil {
		return Message{}, err
	}
	// The first match is the member: it is the result's first, and
	// quotes in an id are escaped.
	empty := []byte(`"` + member + `":[]`)
	at := bytes.Index(b, empty) + len(empty) - 1
	n := len(b)
	for _, it := range items {
		n += len(it) + 1
	}
	out := append(make([]byte, 0, n), b[:at]...)
	for i, it := range items {
		if i > 0 {
			out = append(out, ',')
		}
		out = append(out, it...)
	}
	return msgOf(append(out, b[at:]...), nil), nil
}
