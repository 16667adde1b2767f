package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"

	"github.com/tairseach/tairseach-mcp/protocol"
	"github.com/tairseach/tairseach-mcp/protocol/safetext"
)

// maxQuestions bounds the questions waiting for the owner at once; past
// it one more is refused as if no one were there.
const maxQuestions = 64

// question is one question waiting for the owner.
type question struct {
	ID        string
	Confirm   bool
	Message   string  // as asked, its lines kept (safetext.Text)
	Fields    []field // of a form
	Tool      string  // the call's, when known
	Client    string
	Principal string
	Asked     time.Time
	answer    chan jsontext.Value // buffered: the owner's answer, once
}

// field is one field of a provider's form, as elicitation/create's
// requestedSchema describes it: flat, of a string, a number, an integer,
// a boolean, or one of an enum.
type field struct {
	Name, Title, Description string
	Type                     string // string, number, integer, boolean
	Enum                     []string
	Required                 bool
}

// asks are the questions waiting for the owner. It is safe for
// concurrent use.
type asks struct {
	live *live

	mu      sync.Mutex
	waiting map[string]*question
	closed  bool
	away    chan struct{} // closed, and made anew, when the owner goes away
}

func newAsks(l *live) *asks {
	a := &asks{live: l, waiting: map[string]*question{}, away: make(chan struct{})}
	l.onAway = a.ownerAway
	return a
}

// Ask is the console's protocol.Owner.
func (c *Console) Ask(ctx context.Context, call *protocol.Call, q protocol.OwnerQuestion) (jsontext.Value, error) {
	a := c.asks
	away := fmt.Errorf("%w: the owner can answer on the console at %s (open the address the bridge logged, with its secret, or the one 'tairseach-mcp doctor' prints)",
		protocol.ErrOwnerAway, c.PublicURL())
	if !a.live.present() {
		return nil, away
	}
	qu := &question{ID: randomHex(8), Confirm: q.Confirm, Message: safetext.Cut(safetext.Text(q.Message), 4000), Tool: a.live.toolOf(call),
		Client: who(call.Principal().String(), call.Client().Name), Principal: call.Principal().String(), Asked: time.Now(),
		answer: make(chan jsontext.Value, 1)}
	if !q.Confirm {
		var err error
		if qu.Fields, err = fieldsOf(q.Params); err != nil {
			return nil, err
		}
	}
	a.mu.Lock()
	if a.closed || len(a.waiting) >= maxQuestions {
		a.mu.Unlock()
		return nil, away
	}
	a.waiting[qu.ID] = qu
	gone := a.away
	a.mu.Unlock()
	a.changed()
	defer func() {
		a.mu.Lock()
		delete(a.waiting, qu.ID)
		a.mu.Unlock()
		a.changed()
	}()
	select {
	case res := <-qu.answer:
		return res, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-gone:
		select {
		case res := <-qu.answer: // answered meanwhile
			return res, nil
		default:
		}
		return nil, fmt.Errorf("%w (it was closed while the question waited)", away)
	}
}

// changed tells the event streams that the questions changed.
func (a *asks) changed() {
	a.live.publish("questions", struct {
		Waiting int `json:"waiting"`
	}{a.count()})
}

func (a *asks) count() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.waiting)
}

// list returns the questions waiting, the oldest first.
func (a *asks) list() []*question {
	a.mu.Lock()
	defer a.mu.Unlock()
	qs := slices.Collect(maps.Values(a.waiting))
	slices.SortFunc(qs, func(x, y *question) int {
		if c := x.Asked.Compare(y.Asked); c != 0 {
			return c
		}
		return strings.Compare(x.ID, y.ID)
	})
	return qs
}

// errNoQuestion answers an answer to a question no longer waiting.
var errNoQuestion = errors.New("this question is no longer waiting: it was answered, withdrawn or timed out")

// answer gives the owner's answer to the question id.
func (a *asks) answer(id string, res jsontext.Value) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	q, ok := a.waiting[id]
	if !ok {
		return errNoQuestion
	}
	delete(a.waiting, id)
	q.answer <- res
	return nil
}

// ownerAway refuses the questions waiting: no console has been open for
// presenceGrace.
func (a *asks) ownerAway() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		close(a.away)
		a.away = make(chan struct{})
	}
}

func (a *asks) close() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if !a.closed {
		a.closed = true
		close(a.away)
	}
}

// fieldsOf reads the fields of a form from elicitation/create's params.
func fieldsOf(params jsontext.Value) ([]field, error) {
	var p struct {
		RequestedSchema struct {
			Properties jsontext.Value `json:"properties"`
			Required   []string       `json:"required"`
		} `json:"requestedSchema"`
	}
	if err := json.Unmarshal(params, &p, json.RejectUnknownMembers(false)); err != nil {
		return nil, fmt.Errorf("a form the console cannot show: %w", err)
	}
	var fs []field
	dec := jsontext.NewDecoder(bytes.NewReader(p.RequestedSchema.Properties))
	if tok, err := dec.ReadToken(); err != nil || tok.Kind() != '{' {
		return nil, nil // no fields
	}
	for dec.PeekKind() == '"' {
		tok, err := dec.ReadToken()
		if err != nil {
			return nil, err
		}
		name := tok.String()
		v, err := dec.ReadValue()
		if err != nil {
			return nil, err
		}
		var s struct {
			Type        string   `json:"type"`
			Title       string   `json:"title"`
			Description string   `json:"description"`
			Enum        []string `json:"enum"`
		}
		if err := json.Unmarshal(v, &s, json.RejectUnknownMembers(false)); err != nil {
			return nil, fmt.Errorf("a form the console cannot show: field %q: %w", name, err)
		}
		switch s.Type {
		case "string", "number", "integer", "boolean":
		default:
			return nil, fmt.Errorf("a form the console cannot show: field %q of type %q", name, s.Type)
		}
		fs = append(fs, field{Name: name, Title: s.Title, Description: s.Description, Type: s.Type, Enum: s.Enum,
			Required: slices.Contains(p.RequestedSchema.Required, name)})
		if len(fs) > 32 {
			return nil, errors.New("a form the console cannot show: more than 32 fields")
		}
	}
	return fs, nil
}

// formAnswer makes the elicitation result of a form the owner sent: each
// field's value as its type says; an error names a field whose value
// does not fit.
func formAnswer(fs []field, get func(string) (string, bool)) (jsontext.Value, error) {
	content := map[string]any{}
	for _, f := range fs {
		v, ok := get("f_" + f.Name)
		if f.Type == "boolean" {
			content[f.Name] = ok && v == "on"
			continue
		}
		if v == "" {
			if f.Required {
				return nil, fmt.Errorf("%s is required", f.label())
			}
			continue
		}
		switch f.Type {
		case "string":
			if len(f.Enum) > 0 && !slices.Contains(f.Enum, v) {
				return nil, fmt.Errorf("%s must be one of the choices", f.label())
			}
			content[f.Name] = v
		case "integer":
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				return nil, fmt.Errorf("%s must be a whole number", f.label())
			}
			content[f.Name] = n
		case "number":
			n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
			if err != nil {
				return nil, fmt.Errorf("%s must be a number", f.label())
			}
			content[f.Name] = n
		}
	}
	b, err := json.Marshal(map[string]any{"action": "accept", "content": content}, json.Deterministic(true))
	return jsontext.Value(b), err
}

func (f field) label() string {
	if f.Title != "" {
		return f.Title
	}
	return f.Name
}
