package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// DefaultInputStateTTL is how long a 2026-07-28 requestState may be
// answered, when Server.InputStateTTL is zero.
const DefaultInputStateTTL = 5 * time.Minute

// In protocol 2026-07-28 the server asks the user nothing by a request of
// its own: the call's result is input_required, holding the question and
// a requestState, and the client calls again with the user's answer and
// that state. The state is the server's memory of the question: signed
// with a key of the process (HMAC-SHA256), it names the call it was made
// for (method, tool, a digest of the canonical arguments), expires, and
// is redeemed once.

// inputState is what a requestState carries, under its signature.
type inputState struct {
	Method string `json:"m"`
	Name   string `json:"n"`
	Args   string `json:"a"` // SHA-256 of the canonical arguments, hex
	Expiry int64  `json:"e"` // Unix milliseconds
	Nonce  string `json:"r"` // random, so that each state is redeemed once
}

// inputStates issues and redeems requestStates. It is safe for concurrent
// use.
type inputStates struct {
	key [32]byte
	ttl time.Duration

	mu   sync.Mutex
	used map[string]int64 // nonces redeemed, until their expiry
}

// maxRedeemed bounds the nonces remembered; past it, once the expired are
// forgotten, no more states are redeemed until some expire.
const maxRedeemed = 100_000

func newInputStates(ttl time.Duration) *inputStates {
	s := &inputStates{ttl: ttl, used: map[string]int64{}}
	rand.Read(s.key[:]) // never fails
	return s
}

// argsDigest is the digest of a call's arguments in their canonical form,
// so that spacing, member order and the spelling of a number do not matter
// but its exact value does (see canonical).
func argsDigest(args jsontext.Value) (string, error) {
	v := jsontext.Value("{}")
	if t := bytes.TrimSpace(args); len(t) > 0 && string(t) != "null" {
		v = t
	}
	c, err := canonical(v)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(c)
	return hex.EncodeToString(sum[:]), nil
}

// issue returns a new state for the call of name with args.
func (s *inputStates) issue(method, name string, args jsontext.Value) (string, error) {
	digest, err := argsDigest(args)
	if err != nil {
		return "", err
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	payload, err := json.Marshal(inputState{Method: method, Name: name, Args: digest,
		Expiry: time.Now().Add(s.ttl).UnixMilli(), Nonce: hex.EncodeToString(nonce[:])})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.sign(payload)), nil
}

func (s *inputStates) sign(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key[:])
	m.Write(payload)
	return m.Sum(nil)
}

// Why a requestState is refused, as Server.Refused is told.
const (
	StateForged    = "forged"     // not one this server issued
	StateExpired   = "expired"    // past its time
	StateReplayed  = "replayed"   // redeemed already
	StateOtherCall = "other_call" // issued for another tool or other arguments
	StateTooMany   = "too_many"   // too many states redeemed of late to remember more
)

// stateError is the refusal of a requestState: its reason, and what the
// client is told.
type stateError struct{ reason, msg string }

func (e *stateError) Error() string { return e.msg }

var (
	errStateForged   = &stateError{StateForged, "requestState is not one this server issued; call the tool again without it"}
	errStateExpired  = &stateError{StateExpired, "requestState has expired; call the tool again without it to be asked anew"}
	errStateReused   = &stateError{StateReplayed, "requestState was used already; call the tool again without it to be asked anew"}
	errStateOtherUse = &stateError{StateOtherCall, "requestState was issued for another call; send it only with the call that received it"}
)

// redeem checks that state is one s issued for the call of name with
// args, in time, and not redeemed before; then it is spent.
func (s *inputStates) redeem(state, method, name string, args jsontext.Value) error {
	enc := base64.RawURLEncoding
	p64, sig64, ok := bytes.Cut([]byte(state), []byte("."))
	payload, err1 := enc.DecodeString(string(p64))
	sig, err2 := enc.DecodeString(string(sig64))
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(sig, s.sign(payload)) {
		return errStateForged
	}
	var st inputState
	if err := json.Unmarshal(payload, &st); err != nil {
		return errStateForged // signed by us, so never: but a state is only trusted whole
	}
	digest, err := argsDigest(args)
	now := time.Now().UnixMilli()
	switch {
	case now > st.Expiry:
		return errStateExpired
	case st.Method != method || st.Name != name || err != nil || digest != st.Args:
		return errStateOtherUse
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, spent := s.used[st.Nonce]; spent {
		return errStateReused
	}
	if len(s.used) >= maxRedeemed {
		for n, exp := range s.used {
			if exp < now {
				delete(s.used, n)
			}
		}
		if len(s.used) >= maxRedeemed {
			return &stateError{StateTooMany, fmt.Sprintf("too many confirmations answered in the last %s; try again shortly", s.ttl)}
		}
	}
	s.used[st.Nonce] = st.Expiry
	return nil
}

// modernAsk is how a 2026-07-28 call asks the user to confirm: it answers
// from the request's inputResponses when they hold the answer, and
// otherwise keeps the question for the input_required result.
type modernAsk struct {
	answer   *Answer
	question *Question
}

func (m *modernAsk) ask(q Question) (Answer, error) {
	if m.answer != nil {
		return *m.answer, nil
	}
	m.question = &q
	return Answer{}, ErrInputRequired
}

// inputRequest is one entry of a result's inputRequests.
type inputRequest struct {
	Method string       `json:"method"`
	Params elicitParams `json:"params"`
}

// inputRequiredResult is a tools/call result of protocol 2026-07-28 that
// asks the user first.
type inputRequiredResult struct {
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  string                  `json:"requestState"`
	resultTail
}

// modernAsker returns how a 2026-07-28 tools/call asks, or nil when
// the client cannot elicit a form. A requestState in the request is
// checked first: a refused one fails the request, the tool provider is
// not called, and Server.Refused is told why.
func (ss *Session) modernAsker(call *Call, p *callParams, args jsontext.Value) (*modernAsk, error) {
	if p.RequestState != nil {
		if err := ss.srv.inputStates().redeem(*p.RequestState, "tools/call", p.Name, args); err != nil {
			var se *stateError
			if errors.As(err, &se) && ss.srv.Refused != nil {
				ss.srv.Refused(call, &CallToolRequest{Name: p.Name, Arguments: args}, se.reason)
			}
			return nil, fmt.Errorf("%w: tools/call: %w", ErrInvalidParams, err)
		}
	}
	if !canElicitForm(p.Meta.ClientCapabilities) {
		return nil, nil
	}
	m := &modernAsk{}
	var responses map[string]jsontext.Value
	if p.RequestState != nil && p.InputResponses != nil {
		if err := json.Unmarshal(p.InputResponses, &responses); err != nil {
			return nil, fmt.Errorf(`%w: tools/call: "inputResponses": %s`, ErrInvalidParams, describe(err))
		}
	}
	if raw, ok := responses[confirmKey]; ok {
		a, err := answerOf(raw)
		if err != nil {
			return nil, fmt.Errorf(`%w: tools/call: "inputResponses": %w`, ErrInvalidParams, err)
		}
		m.answer = &a
	}
	return m, nil
}

// inputRequired is the result that asks q, the question the call kept.
func (ss *Session) inputRequired(q *Question, p *callParams, args jsontext.Value, version string) (*callToolResult, error) {
	state, err := ss.srv.inputStates().issue("tools/call", p.Name, args)
	if err != nil {
		return nil, fmt.Errorf(`%w: tools/call: "arguments": %s`, ErrInvalidParams, describe(err))
	}
	return &callToolResult{input: &inputRequiredResult{
		InputRequests: map[string]inputRequest{confirmKey: {Method: "elicitation/create", Params: confirmParams(*q, version)}},
		RequestState:  state,
	}, resultTail: resultTail{ResultType: "input_required"}}, nil
}
