package protocol

import (
	"bytes"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"sync"
	"time"

	"github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// In protocol 2026-07-28 the server asks the client nothing by a request
// of its own: the request's result is input_required, holding the
// questions and a requestState, and the client sends the request again
// with the answers and that state. The state is the server's memory of
// the question: signed with a key of the process (HMAC-SHA256), it names
// the request it was made for (method, tool or URI, a digest of the exact
// arguments) and who made it (the principal), expires with AskTimeout,
// and is redeemed once. It names the parked call that waits for the
// answers, if any (see parked.go), or says that it asked to confirm.

// inputState is what a requestState carries, under its signature.
type inputState struct {
	Method    string `json:"m"`
	Name      string `json:"n"`
	Args      string `json:"a"`           // SHA-256 of the canonical arguments, hex
	Principal string `json:"p"`           // who asked: only they may answer
	Expiry    int64  `json:"e"`           // Unix milliseconds
	Nonce     string `json:"r"`           // random, so that each state is redeemed once
	Park      string `json:"k,omitempty"` // the parked call waiting for the answers
	Confirm   bool   `json:"c,omitempty"` // it asks to confirm the call
}

// stateKey is what a requestState is bound to: the request it was issued
// for.
type stateKey struct {
	method, name string
	args         jsontext.Value
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

// issue returns a new state for the request k of who, naming park (or
// none), or saying that it asks to confirm.
func (s *inputStates) issue(k stateKey, who Principal, park string, confirm bool) (string, error) {
	digest, err := argsDigest(k.args)
	if err != nil {
		return "", err
	}
	var nonce [16]byte
	rand.Read(nonce[:])
	payload, err := json.Marshal(inputState{Method: k.method, Name: k.name, Args: digest, Principal: statePrincipal(who),
		Expiry: time.Now().Add(s.ttl).UnixMilli(), Nonce: hex.EncodeToString(nonce[:]), Park: park, Confirm: confirm})
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
	StateOtherCall = "other_call" // issued for another request, or another principal
	StateTooMany   = "too_many"   // too many states redeemed of late to remember more
)

// stateError is the refusal of a requestState: its reason, and what the
// client is told.
type stateError struct{ reason, msg string }

func (e *stateError) Error() string { return e.msg }

var (
	errStateForged   = &stateError{StateForged, "requestState is not one this server issued; call again without it"}
	errStateExpired  = &stateError{StateExpired, "requestState has expired; call again without it to be asked anew"}
	errStateReused   = &stateError{StateReplayed, "requestState was used already; call again without it to be asked anew"}
	errStateOtherUse = &stateError{StateOtherCall, "requestState was issued for another call; send it only with the call that received it"}
)

// verify checks that state is one s issued for the request k of who, in
// time, and returns what it says; spend then redeems it.
func (s *inputStates) verify(state string, k stateKey, who Principal) (*inputState, error) {
	enc := base64.RawURLEncoding
	p64, sig64, ok := bytes.Cut([]byte(state), []byte("."))
	payload, err1 := enc.DecodeString(string(p64))
	sig, err2 := enc.DecodeString(string(sig64))
	if !ok || err1 != nil || err2 != nil || !hmac.Equal(sig, s.sign(payload)) {
		return nil, errStateForged
	}
	var st inputState
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, errStateForged // signed by us, so never: but a state is only trusted whole
	}
	digest, err := argsDigest(k.args)
	switch {
	case time.Now().UnixMilli() > st.Expiry:
		return nil, errStateExpired
	case st.Method != k.method || st.Name != k.name || err != nil || digest != st.Args || st.Principal != statePrincipal(who):
		return nil, errStateOtherUse
	}
	return &st, nil
}

// statePrincipal is who a state binds: the holder of a token, a named
// client or the process, whom every request names the same; not a session
// or a connection, which a 2026-07-28 retry does not keep.
func statePrincipal(who Principal) string {
	switch who.Kind {
	case PrincipalToken, PrincipalClient, PrincipalProcess:
		return who.String()
	}
	return ""
}

// spend redeems st: a state is answered once.
func (s *inputStates) spend(st *inputState) error {
	now := time.Now().UnixMilli()
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
			return &stateError{StateTooMany, fmt.Sprintf("too many questions answered in the last %s; try again shortly", s.ttl)}
		}
	}
	s.used[st.Nonce] = st.Expiry
	return nil
}

// modernAsk is how a 2026-07-28 call asks the user to confirm: it answers
// from the request's inputResponses when they hold the answer (with the
// state that asked), and otherwise keeps the question for the
// input_required result. The provider does not wait: it starts again when
// the answer comes.
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
	Method string         `json:"method"`
	Params jsontext.Value `json:"params"`
}

// inputRequiredResult is a result of protocol 2026-07-28 that asks the
// client first.
type inputRequiredResult struct {
	InputRequests map[string]inputRequest `json:"inputRequests"`
	RequestState  string                  `json:"requestState"`
	resultTail
}

// confirmation is the result that asks q, the confirmation the call kept.
func (ss *Session) confirmation(q *Question, call *Call, key stateKey) (*inputRequiredResult, error) {
	state, err := ss.srv.inputStates().issue(key, call.principal, "", true)
	if err != nil {
		return nil, fmt.Errorf(`%w: %s: "arguments": %s`, ErrInvalidParams, key.method, describe(err))
	}
	params, err := json.Marshal(confirmParams(*q, call.version), encodeOpts)
	if err != nil {
		return nil, err
	}
	return &inputRequiredResult{
		InputRequests: map[string]inputRequest{confirmKey: {Method: "elicitation/create", Params: params}},
		RequestState:  state,
	}, nil
}
